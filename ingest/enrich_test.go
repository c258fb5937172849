package ingest_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
)

var linkText = regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`)

// TestEnrichTwiceChangesNothing: enrich --all over an ingested wiki, run
// again, commits nothing; related notes stay one list, name each page
// once and never a folder's README.html.
func TestEnrichTwiceChangesNothing(t *testing.T) {
	v, w := newWiki(t)
	docs := append(fixtureDocs(t),
		readDoc(t, "a.md", networkDoc),
		readDoc(t, "b.md", "# Setup Guide\n\nSet up the worker before anything else.\n\n## Glossary\n\nGateway: the host that terminates TLS for workers.\nWorker: the process that runs jobs.\n"))
	if _, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	enrich := func() *ingest.Result {
		res, err := ingest.Enrich(context.Background(), w, ingest.Selection{All: true}, opts(offline.Engine{}))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := enrich(); len(res.Updated) == 0 {
		t.Fatalf("the first enrich changed nothing: %+v", res)
	}
	n := branchCommits(t, v)
	if res := enrich(); res.Status != "skipped" || len(res.Updated) != 0 || branchCommits(t, v) != n {
		t.Errorf("the second enrich changed %v (status %s)", res.Updated, res.Status)
	}
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, pi := range pages {
		_, p, err := w.Read(pi.Path)
		if err != nil {
			t.Fatal(err)
		}
		notes, ok := p.Slot("related_notes")
		if !ok || notes == "" {
			continue
		}
		if strings.Count(notes, "<ul>") != 1 {
			t.Errorf("%s: related notes are not one list:\n%s", pi.Path, notes)
		}
		seen := map[string]bool{}
		for _, m := range linkText.FindAllStringSubmatch(notes, -1) {
			if strings.HasSuffix(m[1], "README.html") || seen[m[2]] {
				t.Errorf("%s: related note %s (%s) is a folder index or named twice:\n%s", pi.Path, m[2], m[1], notes)
			}
			seen[m[2]] = true
		}
	}
	lintClean(t, w)
}
