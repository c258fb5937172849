package ingest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
)

// TestNewerProposalSupersedesOlder: when the source of a kept slot
// changes twice, the second proposal closes the first (naming it), so the
// older text cannot be taken; the newer one is refused while the slot
// holds text written after it was queued, and written over it only when
// forced.
func TestNewerProposalSupersedesOlder(t *testing.T) {
	v, w := newWiki(t)
	ctx := context.Background()
	const page = "service/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	human := "<p>The canary is what we watch for ten minutes.</p>"
	writeSlot(t, w, page, "summary", human)

	v2 := strings.Replace(deployV1, "production traffic", "live traffic", 1)
	ingestDocs(t, w, readDoc(t, "deploy.md", v2))
	older := keptItem(t, v, page, "summary")
	v3 := strings.Replace(v2, "live traffic", "real traffic", 1)
	ingestDocs(t, w, readDoc(t, "deploy.md", v3))
	newer := keptItem(t, v, page, "summary") // the only open one
	if newer.ID == older.ID || !strings.Contains(newer.Proposed, "real traffic") {
		t.Fatalf("newer item %+v, older %+v", newer, older)
	}
	q, err := ingest.ReadReview(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range q.Items {
		if it.ID == older.ID && (it.SupersededBy != newer.ID || it.Resolved == "") {
			t.Fatalf("the older item is not closed by the newer: %+v", it)
		}
	}
	if _, _, err := ingest.Take(ctx, w, older.ID, "2026-12-01", false); err == nil || !strings.Contains(err.Error(), newer.ID) {
		t.Fatalf("take of the superseded item: %v", err)
	}
	if got := slotOf(t, w, page, "summary"); got != human {
		t.Fatalf("the superseded item was written: %q", got)
	}

	// A person writes the slot again after the item was queued: take
	// refuses, and changes nothing.
	later := "<p>Written after the item was queued.</p>"
	writeSlot(t, w, page, "summary", later)
	if _, _, err := ingest.Take(ctx, w, newer.ID, "2026-12-01", false); !errors.Is(err, ingest.ErrSlotChanged) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("take over a slot written after the item: %v", err)
	}
	if got := slotOf(t, w, page, "summary"); got != later {
		t.Fatalf("a refused take wrote the slot: %q", got)
	}
	if keptItem(t, v, page, "summary").ID != newer.ID {
		t.Fatal("a refused take closed the item")
	}
	if _, _, err := ingest.Take(ctx, w, newer.ID, "2026-12-01", true); err != nil {
		t.Fatal(err)
	}
	if got := slotOf(t, w, page, "summary"); got != newer.Proposed {
		t.Fatalf("forced take: %q, want %q", got, newer.Proposed)
	}
	for _, it := range openReview(t, v) {
		if it.Kind == ingest.ReviewKept {
			t.Fatalf("open kept-edit item after take: %+v", it)
		}
	}
}
