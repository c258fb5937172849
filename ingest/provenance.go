package ingest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/wiki"
)

// metaGenerated is the page meta key where the pipeline records what it
// last wrote into each slot (wiki.KeyGenerated): a mapping of slot id to
// the BLAKE3 token of the slot's HTML as the pipeline left it. A slot whose
// HTML no longer has that token was changed by someone else since (wiki
// write-slot, a hand edit taken in with wiki commit), and the pipeline does
// not write over it; the wiki keeps the record in step when it rewrites a
// slot's links itself (wiki mv, rm --unlink). prose keeps this key; a
// model's set_meta of it is ignored.
const metaGenerated = wiki.KeyGenerated

// ReviewKept is the kind of the review item a run queues for a slot it
// kept: the slot holds what a person wrote, and the item carries the text
// the run would have written (ReviewEntry.Proposed).
const ReviewKept = "kept-edit"

// slotDigest is the token the provenance record keeps for a slot's HTML.
func slotDigest(html string) string { return wiki.SlotToken(html) }

// generatedOf reads a page's provenance record; ok is false when the page
// has none (it was written before prose kept one, or by hand).
func generatedOf(m wiki.Meta) (rec map[string]string, ok bool) {
	raw, ok := m[metaGenerated].(map[string]any)
	if !ok {
		return map[string]string{}, false
	}
	rec = map[string]string{}
	for id, v := range raw {
		if s, isText := v.(string); isText {
			rec[id] = s
		}
	}
	return rec, true
}

// slotKey names one slot of one page.
type slotKey struct{ page, slot string }

// guard keeps a run from writing over what a person wrote. The first time
// a run writes a slot it decides, from the page as it stands, whether the
// slot is the pipeline's: it is when it is empty, or when its HTML is what
// the page's provenance record says the pipeline last wrote there. A slot
// that is not (a person changed it, or the page predates the record and
// the slot holds text of unknown origin) is kept: the run's writes to it
// go to a proposal instead, which ends up in the review queue.
type guard struct {
	kept     map[slotKey]bool   // decided slots: true when kept
	proposed map[slotKey]string // the run's text for a kept slot
	order    []slotKey          // decided slots, in the order first written
	source   map[slotKey]string // the source whose run proposed it
	// metaSet names, per page, the person-owned meta keys the run wrote
	// (metaguard.go); metaProposals are the changes it kept back.
	metaSet       map[string]map[string]bool
	metaProposals []metaProposal
}

func newGuard() *guard {
	return &guard{kept: map[slotKey]bool{}, proposed: map[slotKey]string{}, source: map[slotKey]string{}}
}

// decide reports whether slot id of page rel is kept, deciding it on the
// first write of the run.
func (g *guard) decide(tx *wiki.Tx, rel, id string) bool {
	k := slotKey{rel, id}
	if kept, ok := g.kept[k]; ok {
		return kept
	}
	kept := false
	if p, ok, err := tx.Page(rel); err == nil && ok {
		if cur, _ := p.Slot(id); cur != "" {
			rec, _ := generatedOf(p.Meta)
			kept = rec[id] != slotDigest(cur)
		}
	}
	g.kept[k] = kept
	g.order = append(g.order, k)
	return kept
}

// propose records what the run would write into kept slot id of page rel:
// html replaces the proposal, or is appended to it (to the slot's current
// HTML when there is no proposal yet), sanitized as a write would be.
func (g *guard) propose(tx *wiki.Tx, rel, id, html string, appendTo bool, source string) error {
	k := slotKey{rel, id}
	clean, _, err := wiki.Sanitize(html)
	if err != nil {
		return err
	}
	if appendTo {
		base, ok := g.proposed[k]
		if !ok {
			if p, found, err := tx.Page(rel); err == nil && found {
				base, _ = p.Slot(id)
			}
		}
		if base != "" && clean != "" && !strings.HasSuffix(base, "\n") {
			base += "\n"
		}
		if clean, _, err = wiki.Sanitize(base + clean); err != nil {
			return err
		}
	}
	g.proposed[k] = clean
	if source != "" {
		g.source[k] = source
	}
	return nil
}

// moved follows a page the run moved.
func (g *guard) moved(from, to string) {
	for i, k := range g.order {
		if k.page != from {
			continue
		}
		nk := slotKey{to, k.slot}
		g.kept[nk] = g.kept[k]
		delete(g.kept, k)
		if p, ok := g.proposed[k]; ok {
			g.proposed[nk] = p
			delete(g.proposed, k)
		}
		if s, ok := g.source[k]; ok {
			g.source[nk] = s
			delete(g.source, k)
		}
		g.order[i] = nk
	}
	if ks, ok := g.metaSet[from]; ok {
		g.metaSet[to] = ks
		delete(g.metaSet, from)
	}
}

// settle ends a run's writes: each page whose slots the run wrote records
// what it left in them; each kept slot whose proposal differs from what it
// holds becomes a review item (a proposal equal to the slot's HTML is the
// pipeline's own text, whoever put it there, and is recorded as such).
func (g *guard) settle(tx *wiki.Tx, today string) ([]ReviewEntry, error) {
	byPage := map[string][]slotKey{}
	var pages []string
	for _, k := range g.order {
		if _, ok := byPage[k.page]; !ok {
			pages = append(pages, k.page)
		}
		byPage[k.page] = append(byPage[k.page], k)
	}
	for rel := range g.metaSet {
		if _, ok := byPage[rel]; !ok {
			pages = append(pages, rel)
			byPage[rel] = nil
		}
	}
	sort.Strings(pages)
	var review []ReviewEntry
	for _, rel := range pages {
		p, ok, err := tx.Page(rel)
		if err != nil || !ok {
			continue // removed during the run: nothing to record
		}
		rec, _ := generatedOf(p.Meta)
		for _, k := range byPage[rel] {
			cur, _ := p.Slot(k.slot)
			switch {
			case !g.kept[k]:
				if cur == "" {
					delete(rec, k.slot)
				} else {
					rec[k.slot] = slotDigest(cur)
				}
			case g.proposed[k] == cur:
				rec[k.slot] = slotDigest(cur)
			default:
				e := keptEntry(rel, k.slot, g.proposed[k], g.source[k], today)
				e.Base = slotDigest(cur)
				review = append(review, e)
			}
		}
		g.recordMeta(rel, p, rec)
		var val any
		if len(rec) > 0 {
			m := map[string]any{}
			for id, d := range rec {
				m[id] = d
			}
			val = m
		}
		old, had := p.Meta[metaGenerated]
		if val == nil && !had || val != nil && had && sameRecord(old, rec) {
			continue
		}
		var err2 error
		if val == nil {
			_, err2 = tx.SetMeta(rel, nil, []string{metaGenerated})
		} else {
			_, err2 = tx.SetMeta(rel, map[string]any{metaGenerated: val}, nil)
		}
		if err2 != nil {
			return nil, fmt.Errorf("record what was written to %s: %w", rel, err2)
		}
	}
	return review, nil
}

func sameRecord(old any, rec map[string]string) bool {
	m, ok := old.(map[string]any)
	if !ok || len(m) != len(rec) {
		return false
	}
	for id, d := range rec {
		if m[id] != d {
			return false
		}
	}
	return true
}

// keptEntry is the review item for a kept slot: it names the page and
// slot and carries the proposed HTML, which `prose wiki review take`
// writes into the slot.
func keptEntry(rel, slot, proposed, source, today string) ReviewEntry {
	detail := fmt.Sprintf("slot %s was changed by hand since prose last wrote it, so it was kept; the new text prose would write is in this item (prose wiki review take ID writes it)", slot)
	proposed = receipt.RedactSecrets(proposed)
	tok := canon.BLAKE3.Token([]byte(rel + "\x00" + ReviewKept + "\x00" + slot + "\x00" + proposed))
	_, hex, _ := strings.Cut(tok, ":")
	return ReviewEntry{ID: "r" + hex[:8], Page: rel, Kind: ReviewKept, Slot: slot, Detail: detail, Proposed: proposed, Source: source, Added: today}
}

// ErrSlotChanged is Take's error for a slot that changed since its item
// was queued.
var ErrSlotChanged = errors.New("changed since the review item was queued")

// Take writes the text a kept-edit review item proposes into its slot,
// records it as the pipeline's (so a later run updates the slot again),
// and resolves the item, in one commit with one receipt. The slot's
// earlier text stays in the vault's history. When the slot changed since
// the item was queued (someone wrote it after), Take refuses with
// ErrSlotChanged unless force is true.
func Take(ctx context.Context, w *wiki.Wiki, id, today string, force bool) (*ReviewEntry, *wiki.Result, error) {
	tx, err := w.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Discard()
	q, err := ReadReview(w.Vault())
	if err != nil {
		return nil, nil, err
	}
	var it *ReviewEntry
	for i := range q.Items {
		if q.Items[i].ID == id {
			it = &q.Items[i]
		}
	}
	switch {
	case it == nil:
		return nil, nil, fmt.Errorf("no review item %q; `prose wiki review list` lists them", id)
	case it.Kind != ReviewKept || it.Slot == "":
		return nil, nil, fmt.Errorf("review item %s proposes no slot text (it is a %q item); check the page by hand, then `prose wiki review resolve %s`", id, it.Kind, id)
	case it.SupersededBy != "":
		return it, nil, fmt.Errorf("review item %s was superseded on %s by %s, which proposes newer text for %s slot %s; `prose wiki review show %s` prints it", id, it.Resolved, it.SupersededBy, it.Page, it.Slot, it.SupersededBy)
	case it.Closed != "":
		return it, nil, fmt.Errorf("review item %s was closed on %s: %s", id, it.Resolved, it.Closed)
	case it.Resolved != "":
		return it, nil, fmt.Errorf("review item %s was resolved on %s already", id, it.Resolved)
	}
	if _, p, err := tx.Read(it.Page); err != nil {
		return nil, nil, fmt.Errorf("review item %s: %w", id, err)
	} else if cur, _ := p.Slot(it.Slot); it.Base != "" && slotDigest(cur) != it.Base && !force {
		return it, nil, fmt.Errorf("review item %s: %s slot %s %w (someone wrote it after), and taking the item would write over that; `prose wiki review show %s` prints the proposal: write what should stay with `prose wiki write-slot %s %s` and then `prose wiki review resolve %s`, or write the proposal over the slot with `prose wiki review take --force %s`",
			id, it.Page, it.Slot, ErrSlotChanged, id, strings.TrimSuffix(it.Page, ".html"), it.Slot, id, id)
	}
	sr, err := tx.WriteSlot(it.Page, it.Slot, it.Proposed)
	if err != nil {
		return nil, nil, fmt.Errorf("review item %s: %w", id, err)
	}
	_, p, err := tx.Read(sr.Page)
	if err != nil {
		return nil, nil, err
	}
	rec, _ := generatedOf(p.Meta)
	cur, _ := p.Slot(sr.Slot)
	rec[sr.Slot] = slotDigest(cur)
	m := map[string]any{}
	for k, d := range rec {
		m[k] = d
	}
	if _, err := tx.SetMeta(sr.Page, map[string]any{metaGenerated: m}, nil); err != nil {
		return nil, nil, err
	}
	it.Resolved = today
	res, err := tx.CommitWith(wiki.CommitOptions{
		Who:   "prose wiki review",
		Body:  fmt.Sprintf("prose wiki review take %s: %s slot %s\n", id, sr.Page, sr.Slot),
		Files: map[string][]byte{ReviewFile: q.encode()},
	})
	if err != nil {
		return nil, nil, err
	}
	return it, res, nil
}
