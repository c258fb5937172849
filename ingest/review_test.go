package ingest_test

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/wiki"
)

// TestNewerProposalSupersedesOlder: when the source of a kept slot
// changes twice, the second proposal closes the first (naming it), so the
// older text cannot be taken; the newer one is refused while the slot
// holds text written after it was queued, and written over it only when
// forced.
func TestNewerProposalSupersedesOlder(t *testing.T) {
	v, w := newWiki(t)
	ctx := context.Background()
	const page = "glossary/canary.html"
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

// TestReviewFollowsRemoveUnlink: rm --unlink of a page turns the links to
// it into text in a kept slot and in its proposal; the item's record of
// the slot follows (the wiki's rewrite is no person's edit), so take
// writes the proposal.
func TestReviewFollowsRemoveUnlink(t *testing.T) {
	v, w := newWiki(t)
	ctx := context.Background()
	const page = "glossary/canary.html"
	ingestDocs(t, w, readDoc(t, "deploy.md", deployV1))
	body := slotOf(t, w, page, "body")
	target, ok := linkTarget(body)
	if !ok {
		t.Fatalf("the canary body links nowhere: %q", body)
	}
	writeSlot(t, w, page, "body", `<p>Ours; see <a href="`+target+`">the source</a>.</p>`)
	ingestDocs(t, w, readDoc(t, "deploy.md", strings.Replace(deployV1, "production traffic", "live traffic", 1)))
	it := keptItem(t, v, page, "body")
	if !strings.Contains(it.Proposed, `href="`+target+`"`) {
		t.Fatalf("the proposal does not link to %s: %q", target, it.Proposed)
	}
	removed := path.Join(path.Dir(page), target)
	if _, err := w.UpdateWith(ctx, func(tx *wiki.Tx) (wiki.CommitOptions, error) {
		watch, err := ingest.WatchReview(v, tx)
		if err != nil {
			return wiki.CommitOptions{}, err
		}
		if _, _, err := tx.Remove(removed, true); err != nil {
			return wiki.CommitOptions{}, err
		}
		data := watch.Follow(tx, nil, map[string]bool{removed: true}, "2026-12-01")
		if data == nil {
			return wiki.CommitOptions{}, errors.New("the queue did not follow rm --unlink")
		}
		return wiki.CommitOptions{Files: map[string][]byte{ingest.ReviewFile: data}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := slotOf(t, w, page, "body"); got != "<p>Ours; see the source.</p>" {
		t.Fatalf("the kept slot after rm --unlink: %q", got)
	}
	after := keptItem(t, v, page, "body")
	if after.ID != it.ID || strings.Contains(after.Proposed, target) {
		t.Fatalf("the item after rm --unlink: %+v", after)
	}
	if _, _, err := ingest.Take(ctx, w, it.ID, "2026-12-01", false); err != nil {
		t.Fatal(err)
	}
	if got := slotOf(t, w, page, "body"); got != after.Proposed {
		t.Fatalf("after take: %q, want %q", got, after.Proposed)
	}
}

// linkTarget returns the first href of html.
func linkTarget(html string) (string, bool) {
	_, rest, ok := strings.Cut(html, `href="`)
	if !ok {
		return "", false
	}
	target, _, ok := strings.Cut(rest, `"`)
	return target, ok
}
