package ingest

import (
	"fmt"
	"math/rand/v2"
	"path"
	"reflect"
	"sort"
	"strings"
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

// referenceIndex is index as first written: every page looked at for
// every source. The indexed version must give exactly the same prompt.
func referenceIndex(c *catalog, doc *source.Document, maxBytes int) ([]indexEntry, []string, bool) {
	paths := make([]string, 0, len(c.Pages))
	for p := range c.Pages {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	entry := func(p string) indexEntry {
		r := c.Pages[p]
		return indexEntry{Path: p, Title: r.Title, Template: r.Template, Sources: r.Sources}
	}
	folderSet := func(paths []string) []string {
		fs := map[string]bool{}
		for _, p := range paths {
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				fs[d] = true
			}
		}
		var out []string
		for f := range fs {
			out = append(out, f)
		}
		sort.Strings(out)
		return out
	}
	size := 0
	for _, p := range paths {
		size += len(p) + len(c.Pages[p].Title) + 48 + 72*len(c.Pages[p].Sources)
	}
	if size <= maxBytes {
		var entries []indexEntry
		for _, p := range paths {
			entries = append(entries, entry(p))
		}
		return entries, folderSet(paths), false
	}
	words := wordSet(doc.Title + " " + doc.Prose())
	var hits []string
	near := map[string]bool{}
	for _, p := range paths {
		if titleIn(c.Pages[p].titleWords(), words) {
			hits = append(hits, p)
			near[path.Dir(p)] = true
		}
	}
	for _, p := range paths {
		if near[path.Dir(p)] && !titleIn(c.Pages[p].titleWords(), words) {
			hits = append(hits, p)
		}
	}
	var entries []indexEntry
	size = 0
	for _, p := range hits {
		e := entry(p)
		size += len(e.Path) + len(e.Title) + 48 + 72*len(e.Sources)
		if size > maxBytes {
			break
		}
		entries = append(entries, e)
	}
	fs := map[string]bool{}
	for _, f := range folderSet(paths) {
		if !strings.Contains(f, "/") {
			fs[f] = true
		}
	}
	for _, e := range entries {
		for d := path.Dir(e.Path); d != "."; d = path.Dir(d) {
			fs[d] = true
		}
	}
	var folders []string
	for f := range fs {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	return entries, folders, true
}

// The page index gives the prompt the first implementation gave, for
// random wikis, sources and budgets, while pages are added, retitled and
// removed between the sources of one ingest.
func TestIndexMatchesEveryPageScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	vocab := []string{"rollback", "canary", "billing", "deploy", "cache", "alert", "the", "how", "to", "incident", "on", "call", "review", "plan", "x"}
	title := func() string {
		n := rng.IntN(4)
		var ws []string
		for i := 0; i < n; i++ {
			ws = append(ws, vocab[rng.IntN(len(vocab))])
		}
		return strings.Join(ws, " ")
	}
	pagePath := func() string {
		dirs := []string{"", "ops/", "ops/deploys/", "billing/", "guides/how-to/", "a/b/c/"}
		return fmt.Sprintf("%spage-%d.html", dirs[rng.IntN(len(dirs))], rng.IntN(300))
	}
	for round := 0; round < 60; round++ {
		c := &catalog{Pages: map[string]*pageRecord{}}
		for i := rng.IntN(250); i > 0; i-- {
			c.Pages[pagePath()] = &pageRecord{Title: title(), Template: "note"}
		}
		for src := 0; src < 8; src++ {
			doc, err := source.Read("s.md", []byte("# "+title()+"\n\n"+title()+" "+title()+" "+title()+".\n"), "")
			if err != nil {
				t.Fatal(err)
			}
			budget := []int{1 << 20, 3000, 800, 20000, 0}[rng.IntN(5)]
			ge, gf, gn := c.index(doc, budget)
			we, wf, wn := referenceIndex(c, doc, budget)
			if gn != wn || !reflect.DeepEqual(orEmpty(ge), orEmpty(we)) || !reflect.DeepEqual(orEmpty(gf), orEmpty(wf)) {
				t.Fatalf("round %d source %d budget %d: index gave %d entries %v narrowed=%v, every-page scan %d entries %v narrowed=%v\n%v\n%v",
					round, src, budget, len(ge), gf, gn, len(we), wf, wn, ge, we)
			}
			// Pages change between sources, as an ingest writes them.
			for k := rng.IntN(6); k > 0; k-- {
				p := pagePath()
				if len(c.Pages) > 0 && rng.IntN(2) == 0 {
					p = c.paths()[rng.IntN(len(c.Pages))] // an existing page
				}
				if rng.IntN(3) == 0 {
					c.set(p, nil)
				} else {
					c.set(p, &pageRecord{Title: title(), Template: "concept", Sources: []string{"blake3:x"}})
				}
			}
		}
	}
}

// Listing the pages for a source looks at the pages filed under its words
// and their folders, not at the whole wiki: the cost of an ingest of n
// sources into a wiki of m pages was n·m.
func TestIndexCostFollowsTheSourceNotTheWiki(t *testing.T) {
	examined := func(pages int) int {
		c := &catalog{Pages: map[string]*pageRecord{}}
		for i := 0; i < pages; i++ {
			c.Pages[fmt.Sprintf("topic%03d/page-%05d.html", i%100, i)] = &pageRecord{Title: fmt.Sprintf("Page %05d", i), Template: "note"}
		}
		c.Pages["billing/rollback.html"] = &pageRecord{Title: "Rollback", Template: "concept"}
		doc, _ := source.Read("x.md", []byte("# Deploys\n\nA rollback undoes a release.\n"), "")
		c.index(doc, 4000) // builds the index: linear once
		before := c.pages().examined.Load()
		c.index(doc, 4000)
		return int(c.pages().examined.Load() - before)
	}
	small, large := examined(1_000), examined(20_000)
	if small == 0 || large > small {
		t.Fatalf("pages looked at for one source: %d in a 1,000-page wiki, %d in a 20,000-page one; want the same", small, large)
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
