package ingest

import (
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// ReviewWatch brings the review queue along when a wiki operation moves
// or removes pages and rewrites the links to them (prose wiki mv, rm
// --unlink): the open items that name a moved page name its new path, the
// links of their proposals read right from there, and a kept-edit item
// whose slot the operation rewrote (its links only) records the rewritten
// slot, so take does not read the rewrite as a person's edit.
type ReviewWatch struct {
	q      *reviewQueue
	before map[int]string // open kept-edit item -> its slot's token before
}

// WatchReview reads the review queue and the slots its open kept-edit
// items name, as they stand in tx before the operation.
func WatchReview(v *vault.Vault, tx *wiki.Tx) (*ReviewWatch, error) {
	q, err := ReadReview(v)
	if err != nil {
		return nil, err
	}
	rw := &ReviewWatch{q: q, before: map[int]string{}}
	for i, it := range q.Items {
		if it.Resolved != "" || it.Kind != ReviewKept || it.Slot == "" {
			continue
		}
		if p, ok, err := tx.Page(it.Page); err == nil && ok {
			cur, _ := p.Slot(it.Slot)
			rw.before[i] = slotDigest(cur)
		}
	}
	return rw, nil
}

// Follow updates the queue after the operation, which moved the pages in
// moved (old path to new) and removed those in removed (true where the
// links to a page became text): open items of a removed page are closed
// on today, saying so. It returns the queue's new bytes, to be committed
// with the Tx, or nil when the queue names none of those pages.
func (rw *ReviewWatch) Follow(tx *wiki.Tx, moved map[string]string, removed map[string]bool, today string) []byte {
	changed := false
	unlinked := map[string]bool{}
	for p, unlink := range removed {
		if unlink {
			unlinked[p] = true
		}
	}
	for i := range rw.q.Items {
		it := &rw.q.Items[i]
		if it.Resolved != "" {
			continue
		}
		if _, gone := removed[it.Page]; gone {
			it.Resolved, it.Closed, changed = today, "its page was removed (prose wiki rm, or a deletion taken in with prose wiki commit)", true
			continue
		}
		page := it.Page
		if to, ok := moved[page]; ok {
			page = to
		}
		if it.Proposed != "" {
			if np := wiki.RelinkHTML(it.Proposed, it.Page, page, moved, unlinked); np != it.Proposed {
				it.Proposed, changed = np, true
			}
		}
		if b, ok := rw.before[i]; ok && it.Base == b {
			if p, found, err := tx.Page(page); err == nil && found {
				cur, _ := p.Slot(it.Slot)
				if d := slotDigest(cur); d != b {
					it.Base, changed = d, true
				}
			}
		}
		if page != it.Page {
			it.Page, changed = page, true
		}
	}
	if !changed {
		return nil
	}
	return rw.q.encode()
}
