package ingest

import (
	"fmt"
	"sort"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
)

// ReviewStale is the kind of the review item a run queues for a page an
// earlier version of a source wrote that the source's new version no
// longer writes: the page may say what the source does not say any more.
const ReviewStale = "stale"

// metaMark is the page meta key naming, by its plan.SourceMark, the
// source that wrote the page itself (the engine sets it).
const metaMark = "source_mark"

// handover is a page supersede handed from an earlier version of a source
// (id, named name) to its new version.
type handover struct{ page, id, name string }

// letGo settles the pages handed over from earlier versions of d that d's
// plan p no longer names (nor the run wrote, tb):
//
//   - on a page another source wrote, the paragraph the earlier version
//     added (marked with its plan.SourceMark) is removed, and neither
//     version's id stays in the page's sources; a slot a person changed
//     since is kept, the removal going to the review queue as a kept-edit
//     item, and the page keeps the earlier version's id;
//   - any other page (one the earlier version wrote itself, or one whose
//     part of it carries no mark) is left as it is, keeps the earlier
//     version's id rather than being credited to the new one, and gets a
//     stale review item naming the page and the source. Nothing is
//     removed: a person may have edited the page, and other pages may
//     link to it.
func (r *run) letGo(d *source.Document, p *plan.Plan, tb *toolbox, handed []handover) error {
	said := map[string]bool{}
	for _, pg := range p.Pages {
		said[pg.Path] = true
	}
	for _, rel := range append(append([]string{}, tb.created...), tb.updated...) {
		said[rel] = true
	}
	for _, m := range tb.moved {
		said[m[0]], said[m[1]] = true, true
	}
	sort.Slice(handed, func(i, j int) bool {
		if handed[i].page != handed[j].page {
			return handed[i].page < handed[j].page
		}
		return handed[i].id < handed[j].id
	})
	for _, h := range handed {
		if said[h.page] {
			continue
		}
		pg, ok, err := r.tx.Page(h.page)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		mark := plan.SourceMark(h.name)
		found, kept := 0, 0
		if pg.Meta.String(metaMark) != mark {
			for _, s := range pg.Slots {
				next, n := plan.CutMarked(s.HTML, mark)
				if n == 0 {
					continue
				}
				found += n
				if r.guard.decide(r.tx, h.page, s.ID) {
					// A person changed the slot since: it stays, and the
					// removal is proposed for review.
					if err := r.guard.propose(r.tx, h.page, s.ID, next, false, d.Name); err != nil {
						return err
					}
					kept++
					continue
				}
				if _, err := r.tx.WriteSlot(h.page, s.ID, next); err != nil {
					return err
				}
			}
		}
		var ids []any
		for _, s := range pg.Meta.Strings(metaSources) {
			switch {
			case s != d.ID:
			case found > 0 && kept == 0:
				continue // its part is gone: neither version is a source
			default:
				s = h.id // the page is the earlier version's, not d's
			}
			if !containsAny(ids, s) {
				ids = append(ids, s)
			}
		}
		if ids == nil {
			ids = []any{}
		}
		if _, err := r.tx.SetMeta(h.page, map[string]any{metaSources: ids}, nil); err != nil {
			return err
		}
		r.cat.note(r.tx, h.page)
		if found == 0 {
			r.review = append(r.review, plan.ReviewItem{Page: h.page, Kind: ReviewStale, Detail: fmt.Sprintf(
				"written from an earlier version of %s, which no longer writes this page: it may say what the source does not say any more, and it keeps that version's id. Check it, remove it (prose wiki rm %s) or keep it, then resolve this item.",
				h.name, h.page)})
			continue
		}
		r.touched[h.page] = true
		if !contains(r.res.Created, h.page) {
			r.addOnce(&r.res.Updated, h.page)
		}
	}
	return nil
}
