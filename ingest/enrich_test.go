package ingest_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/wiki"
)

var linkText = regexp.MustCompile(`<a href="([^"]*)">([^<]*)</a>`)

// TestEnrichTwiceChangesNothing: enrich --all right after an ingest
// commits nothing (the ingest left nothing undone); on a page a person
// made with empty slots it fills the summary and the related notes once,
// and run again it commits nothing; related notes stay one list, name
// each page once and never a folder's README.html.
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
	n := branchCommits(t, v)
	if res := enrich(); res.Status != "skipped" || len(res.Updated) != 0 || branchCommits(t, v) != n {
		t.Fatalf("enrich right after the ingest changed %v (status %s)", res.Updated, res.Status)
	}
	const mine = "glossary/gateway-notes.html"
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		_, _, err := tx.New(mine, wiki.NewOptions{Template: "concept", Title: "Gateway notes",
			Slots: map[string]string{"body": "<p>Our gateway runs on two hosts. It is patched monthly.</p>"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	res := enrich()
	if !slices.Equal(res.Updated, []string{mine}) {
		t.Fatalf("the first enrich after a person's page updated %v, want [%s]", res.Updated, mine)
	}
	_, p, err := w.Read(mine)
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := p.Slot("summary"); sum != "<p>Our gateway runs on two hosts.</p>" {
		t.Errorf("summary: %q", sum)
	}
	if notes, _ := p.Slot("related_notes"); !strings.Contains(notes, "Gateway</a>") {
		t.Errorf("related notes do not name the Gateway page: %q", notes)
	}
	n = branchCommits(t, v)
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
