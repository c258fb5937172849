package mergefile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/prose-store/prose/wiki"
)

// The meta keys prose keeps for itself, merged by rule rather than by
// value (docs/wiki-format.md).
const (
	keySources    = "sources"
	keySourceMark = "source_mark"
)

// isPage reports whether b is a page prose owns (a prose meta block).
func isPage(b []byte) bool {
	if b == nil {
		return false
	}
	_, err := wiki.Parse(b)
	return err == nil
}

// mergePage merges a wiki page slot by slot and its meta key by key.
// base may be nil (the page was added on both sides): it merges against
// an empty page.
func mergePage(p string, base, ours, theirs []byte, choose Chooser) (Result, error) {
	bp := &wiki.Page{Meta: wiki.Meta{}}
	if base != nil {
		if pg, err := wiki.Parse(base); err == nil {
			bp = pg
		}
		// A base prose cannot read merges as an empty page: every change
		// on both sides is then compared with nothing.
	}
	op, oerr := wiki.Parse(ours)
	tp, terr := wiki.Parse(theirs)
	if oerr != nil || terr != nil {
		side, err := Ours, oerr
		if oerr == nil {
			side, err = Theirs, terr
		}
		c := Conflict{Path: p, Kind: "page", Detail: fmt.Sprintf("%s side is not a page prose can read (%v)", side, err)}
		switch choose(c) {
		case Ours:
			return whole(ours), nil
		case Theirs:
			return whole(theirs), nil
		}
		r := whole(ours)
		r.Conflicts = []Conflict{c}
		return r, nil
	}
	m := &pageMerge{path: p, base: bp, ours: op, theirs: tp, choose: choose, slotSide: map[string]string{}, keySide: map[string]string{}}
	merged := m.merge()
	out, err := layout(merged, ours, theirs)
	if err != nil {
		return Result{}, fmt.Errorf("merge %s: %w", p, err)
	}
	return Result{Merged: out, Conflicts: m.conflicts, Handled: true}, nil
}

type pageMerge struct {
	path               string
	base, ours, theirs *wiki.Page
	choose             Chooser
	conflicts          []Conflict
	// slotSide and keySide say which side each slot and each meta key was
	// taken from, for the generated record.
	slotSide, keySide map[string]string
}

func (m *pageMerge) merge() *wiki.Page {
	out := &wiki.Page{Meta: wiki.Meta{}}
	// Slots: ours' order, then slots only theirs holds, in theirs' order.
	var ids []string
	seen := map[string]bool{}
	for _, pg := range []*wiki.Page{m.ours, m.theirs, m.base} {
		for _, s := range pg.Slots {
			if !seen[s.ID] {
				seen[s.ID] = true
				ids = append(ids, s.ID)
			}
		}
	}
	for _, id := range ids {
		b, _ := m.base.Slot(id)
		o, _ := m.ours.Slot(id)
		t, _ := m.theirs.Slot(id)
		v, side := threeWay(b, o, t, func() Conflict {
			return Conflict{Path: m.path, Slot: id, Kind: "slot", Detail: "both sides changed the slot differently"}
		}, m.choose, &m.conflicts)
		m.slotSide[id] = side
		if v != "" {
			out.SetSlot(id, v)
		}
	}
	// Meta: every key of any side, by its rule.
	keys := map[string]bool{}
	for _, pg := range []*wiki.Page{m.base, m.ours, m.theirs} {
		for k := range pg.Meta {
			keys[k] = true
		}
	}
	for _, k := range sortedKeys(keys) {
		var v any
		var ok bool
		switch k {
		case wiki.KeyGenerated:
			continue // after every slot and key is decided
		case wiki.KeyCreated:
			v, ok = pickDate(m.ours.Meta[k], m.theirs.Meta[k], func(a, b string) bool { return a < b })
		case wiki.KeyUpdated:
			v, ok = pickDate(m.ours.Meta[k], m.theirs.Meta[k], func(a, b string) bool { return a > b })
		case keySources:
			v, ok = unionList(m.base.Meta[k], m.ours.Meta[k], m.theirs.Meta[k])
		case keySourceMark:
			// Which source text the page was rendered from: where the
			// sides disagree neither describes the merged page, so the
			// mark goes and the next ingest renders the page again.
			bv, bok := m.base.Meta[k]
			ov, ook := m.ours.Meta[k]
			tv, tok := m.theirs.Meta[k]
			switch {
			case ook == tok && equal(ov, tv), tok == bok && equal(tv, bv):
				v, ok = ov, ook
			case ook == bok && equal(ov, bv):
				v, ok = tv, tok
			}
		default:
			bv, bok := m.base.Meta[k]
			ov, ook := m.ours.Meta[k]
			tv, tok := m.theirs.Meta[k]
			key := k
			r, side := threeWay(opt{bv, bok}, opt{ov, ook}, opt{tv, tok}, func() Conflict {
				return Conflict{Path: m.path, Key: key, Kind: "meta", Detail: fmt.Sprintf("both sides set %s differently (here %s, there %s)", key, show(ov, ook), show(tv, tok))}
			}, m.choose, &m.conflicts)
			m.keySide[k] = side
			v, ok = r.v, r.ok
		}
		if ok {
			out.Meta[k] = v
		}
	}
	if g := m.generated(); len(g) > 0 {
		out.Meta[wiki.KeyGenerated] = g
	}
	return out
}

// opt is a meta value that may be absent.
type opt struct {
	v  any
	ok bool
}

// threeWay is the three-way rule for one value: a side that left the
// base as it was takes the other's; the same change on both is taken
// once; different changes are a conflict, settled by choose or left with
// ours (and added to out). It returns the value and the side it came
// from ("" when both sides hold it).
func threeWay[T any](b, o, t T, conflict func() Conflict, choose Chooser, out *[]Conflict) (T, string) {
	switch {
	case equal(o, t):
		return o, ""
	case equal(b, t):
		return o, Ours
	case equal(b, o):
		return t, Theirs
	}
	c := conflict()
	switch choose(c) {
	case Ours:
		return o, Ours
	case Theirs:
		return t, Theirs
	}
	*out = append(*out, c)
	return o, Ours
}

// generated is the record of what prose last wrote, per slot and per
// meta key: each entry the one of the side whose content was taken, so
// a slot a person edited on one side stays a person's.
func (m *pageMerge) generated() map[string]any {
	rec := func(pg *wiki.Page) map[string]any {
		g, _ := pg.Meta[wiki.KeyGenerated].(map[string]any)
		return g
	}
	og, tg := rec(m.ours), rec(m.theirs)
	out := map[string]any{}
	names := map[string]bool{}
	for k := range og {
		names[k] = true
	}
	for k := range tg {
		names[k] = true
	}
	for k := range names {
		side := ""
		if key, ok := strings.CutPrefix(k, "meta."); ok {
			side = m.keySide[key]
		} else {
			side = m.slotSide[k]
		}
		var v any
		var ok bool
		switch side {
		case Theirs:
			v, ok = tg[k]
		case Ours:
			v, ok = og[k]
		default: // the same content on both sides: either record fits it
			if v, ok = og[k]; !ok {
				v, ok = tg[k]
			}
		}
		if ok {
			out[k] = v
		}
	}
	return out
}

// pickDate takes the earlier or later of two dates (by better), either
// one when the other is absent.
func pickDate(o, t any, better func(a, b string) bool) (any, bool) {
	os, ook := o.(string)
	ts, tok := t.(string)
	switch {
	case ook && tok:
		if better(ts, os) {
			return ts, true
		}
		return os, true
	case ook:
		return os, true
	case tok:
		return ts, true
	case o != nil:
		return o, true
	case t != nil:
		return t, true
	}
	return nil, false
}

// unionList merges two lists three ways as sets: an item either side
// added is kept, an item either side removed goes; ours' order first.
func unionList(b, o, t any) (any, bool) {
	bl, _ := b.([]any)
	ol, ook := o.([]any)
	tl, tok := t.([]any)
	if !ook && !tok {
		return nil, false
	}
	in := func(l []any, x any) bool {
		for _, y := range l {
			if equal(x, y) {
				return true
			}
		}
		return false
	}
	out := []any{}
	for _, x := range ol {
		if in(tl, x) || !in(bl, x) {
			if !in(out, x) {
				out = append(out, x)
			}
		}
	}
	for _, x := range tl {
		if !in(ol, x) && !in(bl, x) && !in(out, x) {
			out = append(out, x)
		}
	}
	return out, true
}

// layout writes the merged page into one side's file: the one whose
// shell the merged meta renders the same (title, template, tags,
// related), ours when both or neither do. The shell is rendered again
// by the next write of the page; prose pull does it in the merge.
func layout(p *wiki.Page, ours, theirs []byte) ([]byte, error) {
	hosts := [][]byte{ours, theirs}
	if op, err := wiki.Parse(ours); err == nil && !sameShell(op, p) {
		if tp, err := wiki.Parse(theirs); err == nil && sameShell(tp, p) {
			hosts = [][]byte{theirs, ours}
		}
	}
	for _, h := range hosts {
		out, ok, err := wiki.Splice(h, p)
		if err != nil {
			return nil, err
		}
		if ok {
			return out, nil
		}
	}
	return nil, fmt.Errorf("neither side's file has a place for every slot of the merged page (the sides use different templates); resolve the page with --ours or --theirs")
}

func sameShell(a, b *wiki.Page) bool {
	for _, k := range []string{wiki.KeyTitle, wiki.KeyTemplate, wiki.KeyTags, wiki.KeyRelated, "lang"} {
		if !equal(a.Meta[k], b.Meta[k]) {
			return false
		}
	}
	return true
}

// equal compares two values of the value model (or two opts, or strings).
func equal(a, b any) bool {
	if x, ok := a.(opt); ok {
		y := b.(opt)
		return x.ok == y.ok && (!x.ok || equal(x.v, y.v))
	}
	return reflect.DeepEqual(a, b)
}

func show(v any, ok bool) string {
	if !ok {
		return "absent"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if r := []rune(string(b)); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return string(b)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
