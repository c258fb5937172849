package ingest

import (
	"fmt"
	"testing"

	"github.com/prose-store/prose/ingest/source"
)

// TestIndexNarrowsPastTheBudget: a 10,000-page catalog does not fit a
// prompt; the index then holds the pages the source names and their
// folders' pages, within the budget, and the tree keeps the top level.
func TestIndexNarrowsPastTheBudget(t *testing.T) {
	c := &catalog{Pages: map[string]*pageRecord{}}
	for i := 0; i < 10_000; i++ {
		c.Pages[fmt.Sprintf("topic%03d/page-%05d.html", i%100, i)] = &pageRecord{Title: fmt.Sprintf("Page %05d", i), Template: "note"}
	}
	c.Pages["billing/rollback.html"] = &pageRecord{Title: "Rollback", Template: "concept"}
	c.Pages["billing/canary.html"] = &pageRecord{Title: "Canary", Template: "concept"}
	doc, err := source.Read("x.md", []byte("# Deploys\n\nA rollback undoes a release.\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	all, _, narrowed := c.index(doc, 10<<20)
	if narrowed || len(all) != 10_002 {
		t.Fatalf("a big budget narrowed: %d entries", len(all))
	}
	entries, folders, narrowed := c.index(doc, 8_000)
	if !narrowed {
		t.Fatal("not narrowed")
	}
	size := 0
	paths := map[string]bool{}
	for _, e := range entries {
		size += len(e.Path) + len(e.Title) + 48
		paths[e.Path] = true
	}
	if size > 8_000 || !paths["billing/rollback.html"] || !paths["billing/canary.html"] || len(entries) > 2 {
		t.Errorf("narrowed index: %d entries, %d bytes: %v", len(entries), size, entries)
	}
	if len(folders) != 101 {
		t.Errorf("narrowed tree: %d folders", len(folders))
	}
}

func TestSentenceEndsOnce(t *testing.T) {
	for in, want := range map[string]string{
		"Pages on canary, such as Why did it fail?": "<p>Pages on canary, such as Why did it fail?</p>",
		"Pages on billing, such as Canary":          "<p>Pages on billing, such as Canary.</p>",
		"Pages on x, such as A.":                    "<p>Pages on x, such as A.</p>",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
