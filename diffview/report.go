package diffview

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"golang.org/x/net/html"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// Input is what a report is made of.
type Input struct {
	Result *vault.DiffResult
	// Base is the merge base when the range was BASE...HEAD (then
	// Result.From is that base).
	Base string
	// Receipts counts the receipts the range records; -1 when unknown.
	Receipts int
	// ReviewOld and ReviewNew are review/queue.json on both sides (nil
	// when absent).
	ReviewOld, ReviewNew []byte
	// Page reads the meta of a wiki page file ("ml/attention.html") in
	// the old (old=true) or new tree; ok is false when the tree holds no
	// such page. Nil: a page is taken as created when its change adds a
	// title or template and removes nothing (and removed the other way
	// round), and a changed page's title is shown only when it changed.
	Page func(old bool, file string) (meta map[string]any, ok bool)
}

// Report is the reviewer's view of a diff.
type Report struct {
	From    string         `json:"from"`
	To      string         `json:"to"`
	Base    string         `json:"merge_base,omitempty"`
	Summary Summary        `json:"summary"`
	Pages   []Page         `json:"pages"`
	Folders []Page         `json:"folders"`
	Review  []ReviewChange `json:"review"`
	Nodes   []Node         `json:"nodes"`
	// Changes are the material changes themselves, one per path.
	Changes []vault.Change `json:"changes"`
}

// Summary counts what a report holds.
type Summary struct {
	PagesCreated      int `json:"pages_created"`
	PagesChanged      int `json:"pages_changed"`
	PagesMoved        int `json:"pages_moved"`
	PagesRemoved      int `json:"pages_removed"`
	FoldersTouched    int `json:"folder_indexes"`
	ReviewOpened      int `json:"review_opened"`
	ReviewResolved    int `json:"review_resolved"`
	Nodes             int `json:"world_model_nodes"`
	WorldModelChanges int `json:"world_model_changes"`
	Receipts          int `json:"receipts"`
}

// Page is one wiki page's change.
type Page struct {
	Path     string `json:"path"` // the page name, "ml/attention"
	Op       string `json:"op"`   // created | changed | moved | removed
	From     string `json:"from,omitempty"`
	Title    string `json:"title,omitempty"`
	Template string `json:"template,omitempty"`
	Folder   string `json:"folder"`
	Slots    []Slot `json:"slots,omitempty"`
	// Meta are the changes of the keys people set (title, tags,
	// template, related and any key of their own).
	Meta []Meta `json:"meta,omitempty"`
	// Bookkeeping are the changes of prose's own keys (generated,
	// sources, source_*, origin, dates).
	Bookkeeping []Meta `json:"bookkeeping,omitempty"`
}

// Slot is one slot's change, compared as the text a reader sees.
type Slot struct {
	Slot  string   `json:"slot"`
	Op    string   `json:"op"` // added | removed | changed
	Text  WordDiff `json:"text"`
	Words int      `json:"words"` // words of the new text (the old when removed)
	// Markup lists the tags added (+) or removed (-) when the markup
	// changed; MarkupOnly is set when the text did not.
	Markup     []string `json:"markup,omitempty"`
	MarkupOnly bool     `json:"markup_only,omitempty"`
	Old        string   `json:"old,omitempty"`
	New        string   `json:"new,omitempty"`
}

// Meta is one meta key's change; Key may name an element ("tags[1]") or a
// nested key ("generated.summary").
type Meta struct {
	Key string `json:"key"`
	Op  string `json:"op"`
	Old any    `json:"old,omitempty"`
	New any    `json:"new,omitempty"`
}

// ReviewChange is a review item the range opened or resolved.
type ReviewChange struct {
	ID     string `json:"id"`
	Op     string `json:"op"` // opened | resolved | closed
	Page   string `json:"page,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Slot   string `json:"slot,omitempty"`
	Detail string `json:"detail,omitempty"`
	How    string `json:"how,omitempty"`
}

// Node is a world-model node's change, by facet.
type Node struct {
	Node   string  `json:"node"`
	Facets []Facet `json:"facets"`
}

// Facet is the changes under one facet.
type Facet struct {
	Facet   string  `json:"facet"`
	Changes []Value `json:"changes"`
}

// Value is one path's change; Text is set when both sides are text and
// either is long: the word diff around the change.
type Value struct {
	Path string    `json:"path"`
	Op   string    `json:"op"`
	Old  any       `json:"old,omitempty"`
	New  any       `json:"new,omitempty"`
	Text *WordDiff `json:"text,omitempty"`
}

// longText is the length past which a changed text value is shown as a
// word diff rather than whole.
const longText = 80

// bookkeeping reports whether a meta key is prose's own record rather
// than something a person (or a model, on a person's behalf) set.
func bookkeeping(key string) bool {
	switch key {
	case "generated", "sources", "origin", "created", "updated":
		return true
	}
	return strings.HasPrefix(key, "source_")
}

// Build makes the report.
func Build(in Input) *Report {
	res := in.Result
	rep := &Report{From: res.From, To: res.To, Base: in.Base, Changes: res.Changes,
		Pages: []Page{}, Folders: []Page{}, Review: []ReviewChange{}, Nodes: []Node{}}
	if rep.Changes == nil {
		rep.Changes = []vault.Change{}
	}
	pages := map[string]*pageAcc{}
	var order []string
	nodeAt := map[string]int{}
	for _, ch := range res.Changes {
		if ch.Node == wiki.Node {
			if file, rest, ok := pageOf(ch.Path); ok {
				acc := pages[file]
				if acc == nil {
					acc = &pageAcc{file: file}
					pages[file] = acc
					order = append(order, file)
				}
				acc.changes = append(acc.changes, sub{rest, ch})
				continue
			}
		}
		i, ok := nodeAt[ch.Node]
		if !ok {
			i = len(rep.Nodes)
			nodeAt[ch.Node] = i
			rep.Nodes = append(rep.Nodes, Node{Node: ch.Node})
		}
		n := &rep.Nodes[i]
		if k := len(n.Facets) - 1; k < 0 || n.Facets[k].Facet != ch.Facet {
			n.Facets = append(n.Facets, Facet{Facet: ch.Facet})
		}
		f := &n.Facets[len(n.Facets)-1]
		f.Changes = append(f.Changes, valueOf(ch))
		rep.Summary.WorldModelChanges++
	}
	rep.Summary.Nodes = len(rep.Nodes)

	var created, removed []*pageAcc
	for _, file := range order {
		acc := pages[file]
		acc.classify(in.Page)
		switch acc.op {
		case "created":
			created = append(created, acc)
		case "removed":
			removed = append(removed, acc)
		}
	}
	// A page removed and one created with its title and template is a
	// move; the nearest name wins when several match.
	moved := map[*pageAcc]*pageAcc{}
	taken := map[*pageAcc]bool{}
	for _, r := range removed {
		var best *pageAcc
		for _, c := range created {
			if taken[c] || r.meta("title") == nil || !same(r.meta("title"), c.meta("title")) || !same(r.meta("template"), c.meta("template")) {
				continue
			}
			if best == nil || path.Base(c.file) == path.Base(r.file) && path.Base(best.file) != path.Base(r.file) {
				best = c
			}
		}
		if best != nil {
			taken[best] = true
			moved[best] = r
		}
	}
	for _, file := range order {
		acc := pages[file]
		if acc.op == "removed" && isTaken(moved, acc) {
			continue
		}
		var p Page
		if old, ok := moved[acc]; ok {
			p = movedPage(old, acc)
		} else {
			p = acc.page()
		}
		if path.Base(acc.file) == "README.html" {
			rep.Folders = append(rep.Folders, p)
			continue
		}
		rep.Pages = append(rep.Pages, p)
		switch p.Op {
		case "created":
			rep.Summary.PagesCreated++
		case "removed":
			rep.Summary.PagesRemoved++
		case "moved":
			rep.Summary.PagesMoved++
		default:
			rep.Summary.PagesChanged++
		}
	}
	rep.Summary.FoldersTouched = len(rep.Folders)
	sort.SliceStable(rep.Pages, func(i, j int) bool { return rep.Pages[i].Path < rep.Pages[j].Path })
	rep.Review = reviewChanges(in.ReviewOld, in.ReviewNew)
	for _, r := range rep.Review {
		if r.Op == "opened" {
			rep.Summary.ReviewOpened++
		} else {
			rep.Summary.ReviewResolved++
		}
	}
	rep.Summary.Receipts = in.Receipts
	return rep
}

func isTaken(moved map[*pageAcc]*pageAcc, r *pageAcc) bool {
	for _, old := range moved {
		if old == r {
			return true
		}
	}
	return false
}

// pageOf splits a wiki change path into the page file and what lies
// below it: "ml.attention\.html.slots.summary" is ("ml/attention.html",
// ["slots", "summary"]).
func pageOf(p string) (string, []string, bool) {
	// Array elements follow their key as "[N]", which is no path syntax:
	// cut them off and put them back on the last segment.
	idx := ""
	if i := strings.IndexByte(p, '['); i > 0 && strings.HasSuffix(p, "]") {
		p, idx = p[:i], p[i:]
	}
	segs, err := canon.ParsePath(p)
	if err != nil {
		return "", nil, false
	}
	for i, s := range segs {
		if strings.HasSuffix(s, ".html") && i+1 < len(segs) && (segs[i+1] == "meta" || segs[i+1] == "slots") {
			rest := append([]string{}, segs[i+1:]...)
			rest[len(rest)-1] += idx
			return strings.Join(segs[:i+1], "/"), rest, true
		}
	}
	return "", nil, false
}

type sub struct {
	rest []string // "meta", key... or "slots", id
	ch   vault.Change
}

type pageAcc struct {
	file    string
	changes []sub
	op      string
	now     map[string]any // the page's meta in the new tree, when read
}

func (a *pageAcc) name() string { return strings.TrimSuffix(a.file, ".html") }

func (a *pageAcc) classify(page func(bool, string) (map[string]any, bool)) {
	if page != nil {
		_, was := page(true, a.file)
		now, is := page(false, a.file)
		a.now = now
		switch {
		case !was && is:
			a.op = "created"
		case was && !is:
			a.op = "removed"
		default:
			a.op = "changed"
		}
		return
	}
	adds, removes, others, named := 0, 0, 0, false
	for _, s := range a.changes {
		switch s.ch.Op {
		case "added":
			adds++
		case "removed":
			removes++
		default:
			others++
		}
		if s.rest[0] == "meta" && len(s.rest) == 2 && (s.rest[1] == "title" || s.rest[1] == "template") {
			named = true
		}
	}
	switch {
	case named && others == 0 && removes == 0:
		a.op = "created"
	case named && others == 0 && adds == 0:
		a.op = "removed"
	default:
		a.op = "changed"
	}
}

// meta returns the value of a top-level meta key on the side the page
// change shows (the new one, or the old for a removal).
func (a *pageAcc) meta(key string) any {
	for _, s := range a.changes {
		if s.rest[0] == "meta" && len(s.rest) == 2 && s.rest[1] == key {
			if s.ch.New != nil {
				return s.ch.New
			}
			return s.ch.Old
		}
	}
	return nil
}

func (a *pageAcc) page() Page {
	p := Page{Path: a.name(), Op: a.op, Folder: path.Dir(a.name())}
	if p.Folder == "." {
		p.Folder = ""
	}
	p.Title, _ = a.meta("title").(string)
	p.Template, _ = a.meta("template").(string)
	if p.Title == "" {
		p.Title, _ = a.now["title"].(string)
	}
	if p.Template == "" {
		p.Template, _ = a.now["template"].(string)
	}
	for _, s := range a.changes {
		switch s.rest[0] {
		case "slots":
			if len(s.rest) < 2 {
				continue // the slots object itself (a page with none yet): no slot
			}
			old, _ := s.ch.Old.(string)
			new, _ := s.ch.New.(string)
			p.Slots = append(p.Slots, slotChange(strings.Join(s.rest[1:], "."), s.ch.Op, old, new))
		default:
			key := strings.Join(s.rest[1:], ".")
			m := Meta{Key: key, Op: s.ch.Op, Old: s.ch.Old, New: s.ch.New}
			if bookkeeping(s.rest[1]) || bookkeeping(strings.SplitN(s.rest[1], "[", 2)[0]) {
				p.Bookkeeping = append(p.Bookkeeping, m)
			} else {
				p.Meta = append(p.Meta, m)
			}
		}
	}
	return p
}

// movedPage is the change of a page from old's place to now's: its slots
// and meta compared across the move.
func movedPage(old, now *pageAcc) Page {
	p := now.page()
	p.Op, p.From = "moved", old.name()
	o := old.page()
	p.Slots = pairSlots(o.Slots, p.Slots)
	p.Meta = pairMeta(o.Meta, p.Meta)
	p.Bookkeeping = pairMeta(o.Bookkeeping, p.Bookkeeping)
	return p
}

func pairSlots(old, now []Slot) []Slot {
	was := map[string]string{}
	for _, s := range old {
		was[s.Slot] = s.Old
	}
	var out []Slot
	for _, s := range now {
		o, ok := was[s.Slot]
		delete(was, s.Slot)
		if !ok {
			out = append(out, s)
			continue
		}
		if o != s.New {
			out = append(out, slotChange(s.Slot, "changed", o, s.New))
		}
	}
	for _, s := range old {
		if _, ok := was[s.Slot]; ok {
			out = append(out, s)
		}
	}
	return out
}

func pairMeta(old, now []Meta) []Meta {
	was := map[string]any{}
	for _, m := range old {
		was[m.Key] = m.Old
	}
	var out []Meta
	for _, m := range now {
		o, ok := was[m.Key]
		delete(was, m.Key)
		switch {
		case !ok:
			out = append(out, m)
		case !same(o, m.New):
			out = append(out, Meta{Key: m.Key, Op: "changed", Old: o, New: m.New})
		}
	}
	for _, m := range old {
		if _, ok := was[m.Key]; ok {
			out = append(out, m)
		}
	}
	return out
}

func same(a, b any) bool {
	ja, _ := canon.Marshal(a)
	jb, _ := canon.Marshal(b)
	return string(ja) == string(jb)
}

// slotChange compares slot HTML as the text a reader sees, noting the
// tags that changed.
func slotChange(id, op, old, new string) Slot {
	s := Slot{Slot: id, Op: op, Old: old, New: new}
	to, tn := wiki.PlainText(old), wiki.PlainText(new)
	s.Text = Diff(to, tn)
	s.Words = len(Words(tn))
	if op == "removed" {
		s.Words = len(Words(to))
	}
	if op == "changed" {
		md := DiffTokens(tags(old), tags(new))
		for _, sp := range md.Spans {
			if sp.Kind == Del || sp.Kind == Ins {
				for _, t := range strings.Split(sp.Text, " ") {
					if len(s.Markup) < 6 {
						s.Markup = append(s.Markup, sp.Kind+Cut(strings.ReplaceAll(t, "\x00", " "), 80))
					}
				}
			}
		}
		if md.Removed+md.Added > 0 && len(s.Markup) == 6 {
			s.Markup = append(s.Markup, "…")
		}
		s.MarkupOnly = s.Text.Removed+s.Text.Added == 0 && old != new
	}
	return s
}

// tags lists the start tags of slot HTML with their attributes, one token
// each (spaces inside a tag are held as NUL so a token never splits).
func tags(s string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(s))
	for len(out) < maxWords {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			var b strings.Builder
			b.WriteString("<" + t.Data)
			for _, a := range t.Attr {
				fmt.Fprintf(&b, "\x00%s=%q", a.Key, a.Val)
			}
			b.WriteString(">")
			out = append(out, b.String())
		}
	}
	return out
}

func valueOf(ch vault.Change) Value {
	v := Value{Path: ch.Path, Op: ch.Op, Old: ch.Old, New: ch.New}
	a, okA := ch.Old.(string)
	b, okB := ch.New.(string)
	if ch.Op == "changed" && okA && okB && (len(a) > longText || len(b) > longText) {
		d := Diff(a, b)
		v.Text = &d
	}
	return v
}

// reviewChanges compares two review queues by item id.
func reviewChanges(old, now []byte) []ReviewChange {
	type item struct {
		ID, Page, Kind, Slot, Detail, Resolved, Closed string
		SupersededBy                                   string `json:"superseded_by"`
	}
	read := func(b []byte) map[string]item {
		var q struct{ Items []item }
		out := map[string]item{}
		if json.Unmarshal(b, &q) == nil {
			for _, it := range q.Items {
				out[it.ID] = it
			}
		}
		return out
	}
	rank := map[string]int{"opened": 0, "resolved": 1, "closed": 2}
	open := func(it item) bool { return it.Resolved == "" && it.Closed == "" && it.SupersededBy == "" }
	was, is := read(old), read(now)
	var out []ReviewChange
	for id, it := range is {
		prev, had := was[id]
		rc := ReviewChange{ID: id, Page: it.Page, Kind: it.Kind, Slot: it.Slot, Detail: Cut(it.Detail, 300)}
		switch {
		case open(it) && (!had || !open(prev)):
			rc.Op = "opened"
		case !open(it) && (!had || open(prev)):
			rc.Op = "resolved"
			switch {
			case it.SupersededBy != "":
				rc.Op, rc.How = "closed", "superseded by "+it.SupersededBy
			case it.Closed != "":
				rc.Op, rc.How = "closed", it.Closed
			default:
				rc.How = it.Resolved
			}
		default:
			continue
		}
		out = append(out, rc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Op != out[j].Op {
			return rank[out[i].Op] < rank[out[j].Op]
		}
		if out[i].Page != out[j].Page {
			return out[i].Page < out[j].Page
		}
		return out[i].ID < out[j].ID
	})
	if out == nil {
		out = []ReviewChange{}
	}
	return out
}
