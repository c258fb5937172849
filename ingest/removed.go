package ingest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// RemovedFile records the pages a person removed (prose wiki rm, or a
// deletion taken in with prose wiki commit), committed with the removal so
// that it holds in every clone: an ingest never re-creates such a page. A
// person who wants the page back creates it again (prose wiki new), which
// ends the record.
const RemovedFile = "sources/removed.json"

// ReviewRemoved is the kind of the review item a run queues when a source
// says something new about a page a person removed: the page is not
// re-created, and the item says what the source says now.
const ReviewRemoved = "removed-page"

// removedPage is what RemovedFile keeps of one removed page: enough to know
// it again when a source would write it (its path, or its title from one of
// its sources) and to tell whether a source says something the page did not
// (the tokens of its slots' HTML when it was removed).
type removedPage struct {
	Title string `json:"title"`
	// SourceNames are the names of the sources the page was written from.
	SourceNames []string          `json:"source_names,omitempty"`
	Slots       map[string]string `json:"slots,omitempty"`
	Removed     string            `json:"removed"`
	By          string            `json:"by"`
}

type removedBook struct {
	Version int                     `json:"version"`
	Pages   map[string]*removedPage `json:"pages"`
}

func readRemoved(read func(string) ([]byte, bool, error)) (*removedBook, error) {
	b := &removedBook{Version: 1, Pages: map[string]*removedPage{}}
	data, ok, err := read(RemovedFile)
	if err != nil || !ok {
		return b, err
	}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, fmt.Errorf("%s: %v (restore it from git)", RemovedFile, err)
	}
	if b.Pages == nil {
		b.Pages = map[string]*removedPage{}
	}
	return b, nil
}

func (b *removedBook) encode() []byte {
	data, _ := json.MarshalIndent(b, "", "  ")
	return append(data, '\n')
}

// NoteRemoved records pages (wiki path → the page as it was before; nil
// for one that did not parse) as removed by a person on today, through the
// command by. It returns the new bytes of RemovedFile, to be committed with
// the removal, or nil when pages is empty.
func NoteRemoved(v *vault.Vault, pages map[string]*wiki.Page, today, by string) ([]byte, error) {
	if len(pages) == 0 {
		return nil, nil
	}
	b, err := readRemoved(v.ReadFile)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	if data, ok, err := v.ReadFile(CatalogFile); err == nil && ok {
		var c catalog
		if json.Unmarshal(data, &c) == nil {
			for id, s := range c.Sources {
				names[id] = s.Name
			}
		}
	}
	for rel, p := range pages {
		rec := &removedPage{Removed: today, By: by}
		if p != nil {
			rec.Title = p.Meta.Title()
			for _, id := range p.Meta.Strings(metaSources) {
				if n := names[id]; n != "" && !contains(rec.SourceNames, n) {
					rec.SourceNames = append(rec.SourceNames, n)
				}
			}
			sort.Strings(rec.SourceNames)
			for _, s := range p.Slots {
				if s.HTML != "" {
					if rec.Slots == nil {
						rec.Slots = map[string]string{}
					}
					rec.Slots[s.ID] = slotDigest(s.HTML)
				}
			}
		}
		b.Pages[rel] = rec
	}
	return b.encode(), nil
}

// removedAs returns the record of the removed page a write to path, or a
// page of title from source, would re-create ("" when none): the same
// path, or the same title from one of the sources the page was written
// from.
func (b *removedBook) removedAs(path, title, source string) string {
	rel := strings.Trim(path, "/")
	if rel != "" && !strings.HasSuffix(rel, ".html") {
		rel += ".html"
	}
	if _, ok := b.Pages[rel]; ok {
		return rel
	}
	if title == "" || source == "" {
		return ""
	}
	var hits []string
	for p, rec := range b.Pages {
		if strings.EqualFold(rec.Title, title) && contains(rec.SourceNames, source) {
			hits = append(hits, p)
		}
	}
	sort.Strings(hits)
	if len(hits) > 0 {
		return hits[0]
	}
	return ""
}

// goneWrites are the writes a run's tools turned away because they would
// re-create a page a person removed: per removed page, the HTML the run
// would have written into each slot.
type goneWrites struct {
	book *removedBook
	// alias maps a path the model wrote to (as it wrote it, cleaned) to
	// the removed page it names.
	alias map[string]string
	slots map[string]map[string]string
	order []string
}

func newGoneWrites(b *removedBook) *goneWrites {
	return &goneWrites{book: b, alias: map[string]string{}, slots: map[string]map[string]string{}}
}

func cleanToolPath(p string) string {
	p = strings.Trim(p, "/")
	if p != "" && !strings.HasSuffix(p, ".html") {
		p += ".html"
	}
	return p
}

// refuseNew turns away a new_page call that would re-create a removed
// page: refused is true, and out is the tool's result saying so (a result,
// not an error: the model did nothing wrong, and there is nothing to fix).
func (g *goneWrites) refuseNew(path, title, source string) (out string, refused bool) {
	if g == nil {
		return "", false
	}
	rel := g.book.removedAs(path, title, source)
	if rel == "" {
		return "", false
	}
	g.alias[cleanToolPath(path)] = rel
	if _, ok := g.slots[rel]; !ok {
		g.slots[rel] = map[string]string{}
		g.order = append(g.order, rel)
	}
	return g.refusal(rel, "not_created"), true
}

func (g *goneWrites) refusal(rel, what string) string {
	rec := g.book.Pages[rel]
	return result(map[string]any{"page": rel, what: fmt.Sprintf("%s was removed by a person (%s, %s) and is not re-created; leave it out, or say what matters about it on another page", rel, rec.By, rec.Removed)})
}

// refuseWrite turns away a write to path when path names a removed page
// the run was turned away from; the slot's HTML is kept, to tell whether
// the source says something new about the page.
func (g *goneWrites) refuseWrite(path, slot, html string, appendTo bool) (out string, refused bool) {
	if g == nil {
		return "", false
	}
	rel, ok := g.alias[cleanToolPath(path)]
	if !ok {
		return "", false
	}
	if slot != "" {
		clean, _, err := wiki.Sanitize(html)
		if err == nil {
			if appendTo && g.slots[rel][slot] != "" {
				clean = g.slots[rel][slot] + "\n" + clean
			}
			g.slots[rel][slot] = clean
		}
	}
	return g.refusal(rel, "not_written"), true
}

// news returns, for removed page rel, the text the run would have written
// that the page did not hold when it was removed ("" when none).
func (g *goneWrites) news(rel string) string {
	rec := g.book.Pages[rel]
	had := map[string]bool{}
	for _, tok := range rec.Slots {
		had[tok] = true
	}
	var ids []string
	for id := range g.slots[rel] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		h := g.slots[rel][id]
		if strings.TrimSpace(h) == "" || had[slotDigest(h)] {
			continue
		}
		if t := strings.Join(strings.Fields(wiki.PlainText(h)), " "); t != "" && !contains(parts, t) {
			parts = append(parts, t)
		}
	}
	s := strings.Join(parts, " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:299]) + "…"
	}
	return s
}

// keepRemoved ends a source's run with respect to the pages a person
// removed that it would have written: each is reported as not re-created,
// a review item is queued when the source says something new about it, and
// the links the run wrote to it are turned into their text (in the slots
// the run wrote; a proposal for a kept slot likewise).
func (r *run) keepRemoved(tb *toolbox, sourceName string) error {
	g := tb.gone
	if g == nil || len(g.order) == 0 {
		return nil
	}
	gone := map[string]bool{}
	for _, rel := range g.order {
		gone[rel] = true
		r.addOnce(&r.res.NotRecreated, rel)
		if news := g.news(rel); news != "" {
			rec := g.book.Pages[rel]
			r.review = append(r.review, plan.ReviewItem{Page: rel, Kind: ReviewRemoved, Detail: fmt.Sprintf(
				"removed by a person (%s, %s) and not re-created; %s now says something the page did not: “%s”. If it belongs in the wiki, create the page again (prose wiki new) or add it to another page; then resolve this item.",
				rec.By, rec.Removed, sourceName, news)})
		}
	}
	for _, k := range r.guard.order {
		if p, ok := r.guard.proposed[k]; ok {
			r.guard.proposed[k] = wiki.RelinkHTML(p, k.page, k.page, nil, gone)
			continue
		}
		if r.guard.kept[k] {
			continue
		}
		pg, ok, err := r.tx.Page(k.page)
		if err != nil || !ok {
			continue
		}
		cur, _ := pg.Slot(k.slot)
		if next := wiki.RelinkHTML(cur, k.page, k.page, nil, gone); next != cur {
			if _, err := r.tx.WriteSlot(k.page, k.slot, next); err != nil {
				return err
			}
		}
	}
	return nil
}

// forgetRecreated drops from the book the pages that exist again (a
// person created them anew), and reports whether it dropped any.
func (b *removedBook) forgetRecreated(tx *wiki.Tx) bool {
	changed := false
	for rel := range b.Pages {
		if _, ok, err := tx.Page(rel); err == nil && ok {
			delete(b.Pages, rel)
			changed = true
		}
	}
	return changed
}
