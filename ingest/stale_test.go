package ingest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/wiki"
)

const (
	networkDoc = "# Network Basics\n\nThe network carries traffic between services.\n\n## Glossary\n\nGateway: the entry point that routes outside traffic to services.\n"
	setupDoc   = "# Setup Guide\n\nSet up the worker before anything else.\n\n## Glossary\n\nGateway: the host that terminates TLS for workers.\n"
)

func sourcesOf(t *testing.T, w *wiki.Wiki, rel string) []string {
	t.Helper()
	_, p, err := w.Read(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p.Meta.Strings("sources")
}

func staleItems(t *testing.T, res *ingest.Result) map[string]ingest.ReviewEntry {
	t.Helper()
	out := map[string]ingest.ReviewEntry{}
	for _, it := range res.Review {
		if it.Kind == ingest.ReviewStale {
			out[it.Page] = it
		}
	}
	return out
}

// TestSourceNoLongerDefiningATermLeavesItsPage: a source that added its
// definition to a page another source wrote, and then no longer defines
// the term, takes its paragraph off the page, and neither of its ids
// stays in the page's sources.
func TestSourceNoLongerDefiningATermLeavesItsPage(t *testing.T) {
	_, w := newWiki(t)
	const page = "glossary/gateway.html"
	a := readDoc(t, "a.md", networkDoc)
	b := readDoc(t, "b.md", setupDoc)
	ingestDocs(t, w, a)
	ingestDocs(t, w, b)
	if body := slotOf(t, w, page, "body"); !strings.Contains(body, "terminates TLS") {
		t.Fatalf("b's definition was not added:\n%s", body)
	}
	b2 := readDoc(t, "b.md", "# Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n\n- the worker host\n- the job queue\n")
	res := ingestDocs(t, w, b2)
	body := slotOf(t, w, page, "body")
	if strings.Contains(body, "terminates TLS") || strings.Contains(body, "from-") || !strings.Contains(slotOf(t, w, page, "summary"), "routes outside traffic") {
		t.Errorf("what b no longer says is still on the page, or a's part is gone:\n%s", body)
	}
	if got := sourcesOf(t, w, page); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("sources of %s: %v, want only a's %s", page, got, a.ID)
	}
	if !slices.Contains(res.Updated, page) {
		t.Errorf("the run does not say it updated %s: %v", page, res.Updated)
	}
	if _, ok := staleItems(t, res)[page]; ok {
		t.Errorf("a page whose added part was removed is called stale: %+v", res.Review)
	}
	lintClean(t, w)
}

// TestRemovalKeepsAParagraphAPersonEdited: when a person changed the slot
// holding the source's paragraph, the slot stays as they left it, the
// removal goes to review, and the page keeps the earlier version's id.
func TestRemovalKeepsAParagraphAPersonEdited(t *testing.T) {
	v, w := newWiki(t)
	const page = "glossary/gateway.html"
	a := readDoc(t, "a.md", networkDoc)
	b := readDoc(t, "b.md", setupDoc)
	ingestDocs(t, w, a, b)
	edited := slotOf(t, w, page, "body") + "\n<p>Ours runs on two hosts.</p>"
	writeSlot(t, w, page, "body", edited)
	b2 := readDoc(t, "b.md", "# Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n\n- the worker host\n- the job queue\n")
	ingestDocs(t, w, b2)
	if got := slotOf(t, w, page, "body"); got != edited {
		t.Errorf("the slot a person edited was written over:\n%s", got)
	}
	it := keptItem(t, v, page, "body")
	if strings.Contains(it.Proposed, "terminates TLS") || !strings.Contains(it.Proposed, "two hosts") {
		t.Errorf("the proposal does not remove just b's paragraph:\n%s", it.Proposed)
	}
	if got := sourcesOf(t, w, page); !slices.Contains(got, b.ID) || slices.Contains(got, b2.ID) {
		t.Errorf("sources of %s: %v, want b's earlier id %s and not %s", page, got, b.ID, b2.ID)
	}
}

// TestPagesAChangedSourceNoLongerWritesAreNotCreditedToIt: a retitled
// source keeps its pages (a page is found by its origin, never its
// title) and they are credited to its new version, with no stale item;
// a page an earlier version wrote that the new version does not write (a
// procedure whose steps the new version no longer has) keeps the earlier
// version's id, and a stale review item names it.
func TestPagesAChangedSourceNoLongerWritesAreNotCreditedToIt(t *testing.T) {
	v, w := newWiki(t)
	const steps = "\n## Steps\n\n1. Install the worker.\n2. Start the worker.\n"
	b := readDoc(t, "b.md", "# Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n"+steps)
	ingestDocs(t, w, b)
	oldSource, oldProc := pageOf(t, w, b.ID, "source"), pageOf(t, w, b.ID, "procedure")

	retitled := readDoc(t, "b.md", "# Worker Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n"+steps)
	res := ingestDocs(t, w, retitled)
	newSource, newProc := pageOf(t, w, retitled.ID, "source"), pageOf(t, w, retitled.ID, "procedure")
	if newSource != oldSource || newProc != oldProc {
		t.Fatalf("the retitled source made new pages: %s %s, was %s %s", newSource, newProc, oldSource, oldProc)
	}
	if len(res.Created) != 0 {
		t.Errorf("a retitle created %v", res.Created)
	}
	if stale := staleItems(t, res); len(stale) != 0 {
		t.Errorf("stale items after a retitle: %+v", stale)
	}
	for _, rel := range []string{oldSource, oldProc} {
		if got := sourcesOf(t, w, rel); !slices.Equal(got, []string{retitled.ID}) {
			t.Errorf("%s is credited to %v, want the new version %s", rel, got, retitled.ID)
		}
	}

	// The steps are gone: the procedure stays with the id of the version
	// that wrote it, and is queued as stale once.
	noSteps := readDoc(t, "b.md", "# Worker Setup Guide\n\nSet up the worker before anything else. The worker runs jobs.\n\n- the worker host\n- the job queue\n")
	res = ingestDocs(t, w, noSteps)
	if got := sourcesOf(t, w, newProc); !slices.Equal(got, []string{retitled.ID}) {
		t.Errorf("%s is credited to %v, want %s", newProc, got, retitled.ID)
	}
	if _, ok := staleItems(t, res)[newProc]; !ok || len(staleItems(t, res)) != 1 {
		t.Errorf("stale items after the steps went: %+v", res.Review)
	}
	if pageOf(t, w, noSteps.ID, "source") != newSource {
		t.Errorf("the source page moved")
	}
	// Ingesting the same source again queues nothing more.
	res = ingestDocs(t, w, readDoc(t, "b.md", strings.Replace(string(noSteps.Data), "runs jobs", "runs batch jobs", 1)))
	if len(staleItems(t, res)) != 0 {
		t.Errorf("a page already let go is queued again: %+v", res.Review)
	}
	n := 0
	for _, it := range openReview(t, v) {
		if it.Kind == ingest.ReviewStale {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d open stale items, want 1", n)
	}
	lintClean(t, w)
}
