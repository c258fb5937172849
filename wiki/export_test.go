package wiki

// SpilledPages counts the pages Txs spilled to their spill files.
func SpilledPages() int64 { return spilledPages.Load() }
