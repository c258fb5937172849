package ingest

import "testing"

// A removed page is known again by its path, or by its title from one of
// the sources it was written from wherever a model would put it; a page
// of that title from another source is another page.
func TestARemovedPageIsKnownByPathOrByTitleFromItsSource(t *testing.T) {
	b := &removedBook{Pages: map[string]*removedPage{
		"ops/canary.html": {Title: "Canary", SourceNames: []string{"src/deploy.md"}, Removed: "2026-01-31", By: "prose wiki rm"},
	}}
	for _, c := range []struct{ path, title, source, want string }{
		{"ops/canary", "Anything", "other.md", "ops/canary.html"},
		{"/ops/canary.html", "", "", "ops/canary.html"},
		{"elsewhere/canary-2.html", "canary", "src/deploy.md", "ops/canary.html"},
		{"elsewhere/canary-2.html", "Canary", "src/other.md", ""},
		{"ops/rollback.html", "Rollback", "src/deploy.md", ""},
	} {
		if got := b.removedAs(c.path, c.title, c.source); got != c.want {
			t.Errorf("removedAs(%q, %q, %q) = %q, want %q", c.path, c.title, c.source, got, c.want)
		}
	}
	g := newGoneWrites(b)
	if _, refused := g.refuseNew("elsewhere/canary-2.html", "Canary", "src/deploy.md"); !refused {
		t.Fatal("new_page of the removed page's title from its source was not refused")
	}
	if _, refused := g.refuseWrite("elsewhere/canary-2", "summary", "<p>New words.</p>", false); !refused {
		t.Fatal("a write to the refused path was not turned away")
	}
	if news := g.news("ops/canary.html"); news != "New words." {
		t.Fatalf("news = %q", news)
	}
	var nilGone *goneWrites // enrich: nothing is turned away
	if _, refused := nilGone.refuseNew("ops/canary.html", "Canary", "src/deploy.md"); refused {
		t.Fatal("a nil goneWrites refused")
	}
}
