package ingest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/wiki"
)

// The meta keys a person owns as they own a slot: the pipeline's record
// (metaGenerated) keeps, beside each slot's token, the token of what it
// last wrote into each of these keys, under "meta.KEY" (slot ids never hold
// a dot). A key whose value no longer has that token — a person set it, or
// the page is a person's (wiki new) and the pipeline never wrote the key —
// is the person's: a model's set_meta of it, and a move_page of the page,
// go to the review queue instead.
var personMetaKeys = []string{wiki.KeyTitle, wiki.KeyTemplate}

// ReviewKeptMeta is the kind of the review item for a model's change of
// meta a person set, or a move of a person's page, that a run did not make.
const ReviewKeptMeta = "kept-meta"

// metaRecordKey is where metaGenerated records meta key k.
func metaRecordKey(k string) string { return "meta." + k }

// metaToken is the token the record keeps for a meta value (its canonical
// JSON).
func metaToken(v any) string {
	b, err := canon.Marshal(v)
	if err != nil {
		return ""
	}
	return canon.BLAKE3.Token(b)
}

func isPersonMetaKey(k string) bool {
	for _, p := range personMetaKeys {
		if p == k {
			return true
		}
	}
	return false
}

// createdPage notes a page the run created: its meta is the pipeline's.
func (g *guard) createdPage(rel string) {
	if g == nil {
		return
	}
	g.metaWrote(rel, personMetaKeys...)
}

func (g *guard) metaWrote(rel string, keys ...string) {
	if g.metaSet == nil {
		g.metaSet = map[string]map[string]bool{}
	}
	if g.metaSet[rel] == nil {
		g.metaSet[rel] = map[string]bool{}
	}
	for _, k := range keys {
		g.metaSet[rel][k] = true
	}
}

// metaIsPersons reports whether meta key k of page rel is a person's, from
// the page as the Tx shows it: the run did not write it, and its value is
// not what the pipeline's record says it last wrote there (a key the
// record does not name is not the pipeline's).
func (g *guard) metaIsPersons(tx *wiki.Tx, rel, k string) bool {
	if g.metaSet[rel][k] {
		return false
	}
	p, ok, err := tx.Page(rel)
	if err != nil || !ok {
		return false // no page: the Tx's own error follows
	}
	rec, _ := generatedOf(p.Meta)
	want, has := rec[metaRecordKey(k)]
	return !has || want != metaToken(p.Meta[k])
}

// keepMeta takes from a model's set_meta of page name the keys a person
// owns (personMetaKeys) whose value the call would change: they are not
// set, and go to the review queue. It returns the updates left and the
// keys kept; the keys it lets through are recorded as the pipeline's.
func (g *guard) keepMeta(tx *wiki.Tx, name string, set map[string]any, source string) (map[string]any, []string) {
	if g == nil {
		return set, nil
	}
	rel, err := tx.Resolve(name)
	if err != nil {
		return set, nil
	}
	p, ok, err := tx.Page(rel)
	if err != nil || !ok {
		return set, nil
	}
	var kept []string
	out := map[string]any{}
	for k, v := range set {
		if !isPersonMetaKey(k) {
			out[k] = v
			continue
		}
		if metaToken(p.Meta[k]) == metaToken(v) {
			continue // no change: nothing to decide
		}
		if g.metaIsPersons(tx, rel, k) {
			kept = append(kept, k)
			g.metaProposals = append(g.metaProposals, metaProposal{page: rel, detail: fmt.Sprintf(
				"meta %s was set by a person (or the page is a person's), so it was kept as %s; the model would set it to %s. Set it with prose wiki set-meta %s %s=… if the change is right, then resolve this item.",
				k, quoteValue(p.Meta[k]), quoteValue(v), strings.TrimSuffix(rel, ".html"), k), source: source})
			continue
		}
		out[k] = v
		g.metaWrote(rel, k)
	}
	sort.Strings(kept)
	return out, kept
}

// keepMove reports whether a model's move_page of page name is kept back:
// the page is a person's (its title or template is), so it stays where it
// is and the move goes to the review queue.
func (g *guard) keepMove(tx *wiki.Tx, name, to, source string) bool {
	if g == nil {
		return false
	}
	rel, err := tx.Resolve(name)
	if err != nil {
		return false
	}
	for _, k := range personMetaKeys {
		if g.metaIsPersons(tx, rel, k) {
			g.metaProposals = append(g.metaProposals, metaProposal{page: rel, detail: fmt.Sprintf(
				"the page is a person's (its %s was set by a person, or they created it), so it was not moved; the model would move it to %s. Move it with prose wiki mv %s %s if that is right, then resolve this item.",
				k, to, strings.TrimSuffix(rel, ".html"), strings.TrimSuffix(strings.Trim(to, "/"), ".html")), source: source})
			return true
		}
	}
	return false
}

// metaProposal is one change of a person's meta a run did not make.
type metaProposal struct{ page, detail, source string }

func quoteValue(v any) string {
	b, err := canon.Marshal(v)
	if err != nil {
		return "?"
	}
	s := string(b)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// recordMeta records in rec the tokens of the person-owned meta keys the
// run wrote on page p (created it, or set them).
func (g *guard) recordMeta(rel string, p *wiki.Page, rec map[string]string) {
	for k := range g.metaSet[rel] {
		rec[metaRecordKey(k)] = metaToken(p.Meta[k])
	}
}

// metaItems are the review items of the meta changes and moves kept back.
func (g *guard) metaItems() []plan.ReviewItem {
	var out []plan.ReviewItem
	for _, m := range g.metaProposals {
		out = append(out, plan.ReviewItem{Page: m.page, Kind: ReviewKeptMeta, Detail: m.detail})
	}
	return out
}
