package ingest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
)

// A source of a run is never an earlier version of another source of the
// same run: when the bytes once named notes.md come again under another
// name beside a new notes.md, their pages stay theirs, and the next run
// of the same sources is skipped.
func TestSupersedeNeverCrossesSourcesOfOneRun(t *testing.T) {
	v, w := newWiki(t)
	m := offline.Engine{}
	deploy := "# Deploy Notes\n\nAlpha deploys Mondays.\n\nCanary: a small first release.\n"
	first := readDoc(t, "notes.md", deploy)
	if _, err := ingest.Ingest(context.Background(), w, []*source.Document{first}, opts(m)); err != nil {
		t.Fatal(err)
	}
	page := pageOf(t, w, first.ID, "source")
	moved := readDoc(t, "old/notes.md", deploy)
	billing := readDoc(t, "notes.md", "# Billing Overview\n\nBilling runs nightly.\n\nInvoice: a bill sent to a customer.\n")
	docs := []*source.Document{moved, billing}
	if _, err := ingest.Ingest(context.Background(), w, docs, opts(m)); err != nil {
		t.Fatal(err)
	}
	_, p, err := w.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Meta.Strings("sources"); !slices.Equal(got, []string{first.ID}) {
		t.Errorf("%s sources %q after a run with a new notes.md, want only %s", page, got, first.ID)
	}
	if pageOf(t, w, billing.ID, "source") == page {
		t.Errorf("the new notes.md took over %s", page)
	}
	n := branchCommits(t, v)
	res, err := ingest.Ingest(context.Background(), w, docs, opts(m))
	if err != nil {
		t.Fatal(err)
	}
	for _, sr := range res.Sources {
		if sr.Status != "skipped" {
			t.Errorf("re-run: %s is %s, want skipped", sr.Name, sr.Status)
		}
	}
	if res.Status != "skipped" || branchCommits(t, v) != n {
		t.Errorf("a re-run of unchanged sources: %s, %d commits (was %d)", res.Status, branchCommits(t, v), n)
	}
}

// Two documents of other bytes under one name are refused before anything
// is written; the same document twice is one source.
func TestIngestRefusesTwoSourcesOfOneName(t *testing.T) {
	v, w := newWiki(t)
	m := offline.Engine{}
	a := readDoc(t, "README.md", "# Deploy Notes\n\nAlpha deploys Mondays.\n")
	b := readDoc(t, "README.md", "# Billing Overview\n\nBilling runs nightly.\n")
	n := branchCommits(t, v)
	_, err := ingest.Ingest(context.Background(), w, []*source.Document{a, b}, opts(m))
	if err == nil || !strings.Contains(err.Error(), `both named "README.md"`) || !strings.Contains(err.Error(), "name of its own") {
		t.Fatalf("two sources named README.md: %v", err)
	}
	if branchCommits(t, v) != n {
		t.Errorf("a refused run committed")
	}
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{a, a}, opts(m))
	if err != nil || res.Status != "rendered" {
		t.Fatalf("one document given twice: %v", err)
	}
}
