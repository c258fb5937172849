package diffview

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prose-store/prose/canon"
)

// CommentLimit is the most characters a GitHub pull-request comment takes.
const CommentLimit = 65536

// Options shape a rendering.
type Options struct {
	// Range is the range as shown in the heading ("1a2b3c4d5e6f..7a8b…").
	Range string
	// Command is the prose command that shows this diff whole; the
	// markdown names it when it leaves something out.
	Command string
	// Verbose shows prose's bookkeeping key by key instead of one line
	// per page.
	Verbose bool
	// Limit bounds the markdown in bytes (so in characters too); 0 is
	// CommentLimit.
	Limit int
}

// style is how marks are written: markdown or plain text.
type style struct {
	md bool
}

func (s style) esc(t string) string {
	if !s.md {
		return t
	}
	var b strings.Builder
	for _, r := range t {
		if strings.ContainsRune("\\`*_~[]<>|#&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s style) code(t string) string {
	if !s.md {
		return t
	}
	t = strings.ReplaceAll(t, "`", "'")
	return "`" + strings.ReplaceAll(t, "|", "\\|") + "`"
}

func (s style) del(t string) string {
	if s.md {
		return "~~" + s.esc(t) + "~~"
	}
	return "[-" + t + "-]"
}

func (s style) ins(t string) string {
	if s.md {
		return "**" + s.esc(t) + "**"
	}
	return "{+" + t + "+}"
}

// words renders a word diff inline; side limits it to the old ("-") or
// new ("+") side, "" shows both.
func (s style) words(d WordDiff, side string) string {
	var parts []string
	for _, sp := range d.Spans {
		switch sp.Kind {
		case Same:
			parts = append(parts, s.esc(sp.Text))
		case Gap:
			parts = append(parts, "…")
		case Del:
			if side != Ins {
				parts = append(parts, s.del(sp.Text))
			}
		case Ins:
			if side != Del {
				parts = append(parts, s.ins(sp.Text))
			}
		}
	}
	out := strings.Join(parts, " ")
	if d.More > 0 {
		out += fmt.Sprintf(" … (%d more %s)", d.More, plural(d.More, "change", "changes"))
	}
	if d.Coarse {
		out += fmt.Sprintf(" (too long to compare word by word: %d words removed, %d added)", d.Removed, d.Added)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// SummaryLine is the one-line summary a report opens with.
func SummaryLine(r *Report) string {
	s := r.Summary
	var parts []string
	var pages []string
	for _, k := range []struct {
		n  int
		op string
	}{{s.PagesCreated, "created"}, {s.PagesChanged, "changed"}, {s.PagesMoved, "moved"}, {s.PagesRemoved, "removed"}} {
		if k.n == 0 {
			continue
		}
		if len(pages) == 0 {
			pages = append(pages, count(k.n, "page", "pages")+" "+k.op)
		} else {
			pages = append(pages, fmt.Sprintf("%d %s", k.n, k.op))
		}
	}
	if len(pages) > 0 {
		parts = append(parts, strings.Join(pages, ", "))
	}
	if s.ReviewOpened > 0 || s.ReviewResolved > 0 {
		var rv []string
		if s.ReviewOpened > 0 {
			rv = append(rv, fmt.Sprintf("%d opened", s.ReviewOpened))
		}
		if s.ReviewResolved > 0 {
			rv = append(rv, fmt.Sprintf("%d resolved", s.ReviewResolved))
		}
		parts = append(parts, strings.Replace(strings.Join(rv, ", "), " ", plural(s.ReviewOpened+s.ReviewResolved, " review item ", " review items "), 1))
	}
	if s.Nodes > 0 {
		parts = append(parts, fmt.Sprintf("%s changed (%s)", count(s.Nodes, "world-model node", "world-model nodes"), count(s.WorldModelChanges, "path", "paths")))
	}
	if s.FoldersTouched > 0 && len(pages) == 0 {
		parts = append(parts, count(s.FoldersTouched, "folder index", "folder indexes")+" regenerated")
	}
	if s.Receipts >= 0 {
		parts = append(parts, count(s.Receipts, "receipt", "receipts"))
	}
	if len(r.Changes) == 0 {
		parts = append([]string{"no material change"}, parts...)
	}
	return strings.Join(parts, " · ")
}

// out collects a rendering within a byte budget: an entry that would
// pass it is left out and counted under its section, and so is every
// entry after it, so what is shown is a prefix of the whole.
type out struct {
	b       strings.Builder
	limit   int
	full    bool
	omitted map[string]int
	order   []string
	heads   map[string]bool // sections and headings written
}

// reserve is the room kept for the note saying what was left out.
const reserve = 1200

func (o *out) entry(section, head, text string) {
	if head != "" && !o.heads[section+"\x00"+head] {
		text = head + text
	}
	if o.full || o.limit > 0 && o.b.Len()+len(text) > o.limit-reserve {
		o.full = true
		if o.omitted[section] == 0 {
			o.order = append(o.order, section)
		}
		o.omitted[section]++
		return
	}
	o.heads[section] = true
	o.heads[section+"\x00"+head] = true
	o.b.WriteString(text)
}

func newOut(limit int) *out {
	return &out{limit: limit, omitted: map[string]int{}, heads: map[string]bool{}}
}

// Markdown renders a report as a pull-request comment: the summary, then
// pages changed, moved, created and removed, folder indexes, review items
// and world-model changes, within opt.Limit.
func Markdown(r *Report, opt Options) string {
	limit := opt.Limit
	if limit <= 0 {
		limit = CommentLimit
	}
	return render(r, opt, style{md: true}, limit)
}

// Text renders a report for a terminal, whole.
func Text(r *Report, opt Options) string {
	return render(r, opt, style{}, 0)
}

func render(r *Report, opt Options, st style, limit int) string {
	o := newOut(limit)
	h := func(level int, t string) string {
		if st.md {
			return strings.Repeat("#", level) + " " + t + "\n\n"
		}
		return t + "\n"
	}
	title := "prose diff " + st.code(opt.Range)
	if r.Base != "" {
		title += " (since the merge base " + st.code(short(r.Base)) + ")"
	}
	o.b.WriteString(h(3, title))
	if st.md {
		o.b.WriteString("**" + SummaryLine(r) + "**\n\n")
	} else {
		o.b.WriteString(SummaryLine(r) + "\n\n")
	}
	byOp := map[string][]Page{}
	for _, p := range r.Pages {
		byOp[p.Op] = append(byOp[p.Op], p)
	}
	section := func(op, name string) string {
		return h(4, fmt.Sprintf("%s (%d)", name, len(byOp[op])))
	}
	var quiet []string
	for _, p := range byOp["changed"] {
		if !opt.Verbose && len(p.Slots) == 0 && len(p.Meta) == 0 {
			// Only prose's bookkeeping changed: one line for them all.
			quiet = append(quiet, st.code(p.Path)+" ("+bookkeepingLine(p.Bookkeeping)+")")
			continue
		}
		o.entry("pages changed", section("changed", "Pages changed"), pageDetail(st, p, opt.Verbose))
	}
	if len(quiet) > 0 {
		o.entry("pages changed", section("changed", "Pages changed"),
			"Only prose's bookkeeping changed on "+strings.Join(quiet, ", ")+"; `--verbose` shows it.\n\n")
	}
	for _, p := range byOp["moved"] {
		o.entry("pages moved", section("moved", "Pages moved"), pageDetail(st, p, opt.Verbose))
	}
	if ps := byOp["created"]; len(ps) > 0 {
		head := section("created", "Pages created")
		if st.md {
			head += "| page | title | template | tags | begins | bookkeeping |\n|---|---|---|---|---|---|\n"
		}
		for _, p := range ps {
			text := createdRow(st, p)
			if opt.Verbose && len(p.Bookkeeping) > 0 {
				text += bookkeepingFull(st, p)
			}
			o.entry("pages created", head, text)
		}
		if o.heads["pages created"] && !st.md && !o.full {
			o.b.WriteString("\n")
		}
		if o.heads["pages created"] && st.md {
			o.b.WriteString("\n")
			if !opt.Verbose && !o.full {
				o.b.WriteString("_bookkeeping_ counts the meta keys prose keeps for itself (generated, sources, source\\_\\*, origin, dates); `--verbose` shows them.\n\n")
			}
		}
	}
	for _, p := range byOp["removed"] {
		line := "- " + st.code(p.Path)
		if p.Title != "" {
			line += " — " + st.esc(p.Title)
		}
		if p.Template != "" {
			line += " (" + st.esc(p.Template) + ")"
		}
		o.entry("pages removed", section("removed", "Pages removed"), line+"\n")
	}
	if o.heads["pages removed"] {
		o.b.WriteString("\n")
	}
	if len(r.Folders) > 0 {
		if opt.Verbose {
			for _, p := range r.Folders {
				o.entry("folder indexes", h(4, fmt.Sprintf("Folder indexes (%d)", len(r.Folders))), pageDetail(st, p, true))
			}
		} else {
			var names []string
			for _, p := range r.Folders {
				dir := strings.TrimSuffix(p.Path, "README")
				if dir == "" {
					dir = "/"
				}
				names = append(names, st.code(dir)+" "+p.Op)
			}
			o.entry("folder indexes", h(4, fmt.Sprintf("Folder indexes (%d)", len(r.Folders))),
				"Regenerated listings (derived from the pages): "+strings.Join(names, ", ")+".\n\n")
		}
	}
	for _, rc := range r.Review {
		line := "- " + rc.Op + " " + st.code(rc.ID)
		if rc.Page != "" {
			line += " on " + st.code(strings.TrimSuffix(rc.Page, ".html"))
		}
		if rc.Kind != "" {
			line += " (" + st.esc(rc.Kind)
			if rc.Slot != "" {
				line += ", slot " + st.code(rc.Slot)
			}
			line += ")"
		}
		if rc.Detail != "" {
			line += ": " + st.esc(rc.Detail)
		}
		if rc.How != "" {
			line += " — " + st.esc(rc.How)
		}
		o.entry("review items", h(4, fmt.Sprintf("Review queue (%d)", len(r.Review)))+reviewHint(st), line+"\n")
	}
	if o.heads["review items"] {
		o.b.WriteString("\n")
	}
	if len(r.Nodes) > 0 {
		top := h(4, "World-model changes")
		for _, n := range r.Nodes {
			for _, f := range n.Facets {
				head := top
				if st.md {
					head += h(5, st.code(n.Node)+" · facet "+st.code(f.Facet)) + "| path | change | before | after |\n|---|---|---|---|\n"
				} else {
					head += n.Node + " [" + f.Facet + "]\n"
				}
				key := "world-model changes"
				top = ""
				for _, v := range f.Changes {
					o.entry(key, head, valueRow(st, v))
					head = ""
				}
				if st.md && !o.full {
					o.b.WriteString("\n")
				}
			}
		}
	}
	if len(o.order) > 0 {
		var left []string
		for _, s := range o.order {
			left = append(left, fmt.Sprintf("%d %s", o.omitted[s], s))
		}
		cmd := opt.Command
		if cmd == "" {
			cmd = "prose diff"
		}
		o.b.WriteString(h(4, "Left out"))
		fmt.Fprintf(&o.b, "To fit a pull-request comment (%d characters) this leaves out: %s. `%s` shows everything; `--node NODE` and `--facet FACET` narrow it, `--format json` gives it to tools.\n",
			CommentLimit, strings.Join(left, ", "), cmd)
	}
	return o.b.String()
}

func reviewHint(st style) string {
	if !st.md {
		return ""
	}
	return "`prose wiki review list` shows the open items, `prose wiki review show ID` one of them.\n\n"
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func pageDetail(st style, p Page, verbose bool) string {
	var b strings.Builder
	name := st.code(p.Path)
	if p.Op == "moved" {
		name = st.code(p.From) + " → " + st.code(p.Path)
	}
	if st.md {
		b.WriteString("**" + name + "**")
	} else {
		b.WriteString(p.Op + " " + name)
	}
	if p.Title != "" {
		b.WriteString(" — " + st.esc(p.Title))
	}
	b.WriteString("\n")
	bullet := "- "
	if !st.md {
		bullet = "  "
	}
	for _, s := range p.Slots {
		b.WriteString(bullet + slotLine(st, s) + "\n")
	}
	for _, m := range p.Meta {
		b.WriteString(bullet + "meta " + st.code(m.Key) + " " + metaChange(st, m) + "\n")
	}
	if p.Op == "moved" && len(p.Slots) == 0 && len(p.Meta) == 0 {
		b.WriteString(bullet + "text unchanged\n")
	}
	if len(p.Bookkeeping) > 0 {
		if verbose {
			b.WriteString(bookkeepingFull(st, p))
		} else {
			b.WriteString(bullet + "prose bookkeeping: " + bookkeepingLine(p.Bookkeeping) + " (`--verbose` shows it)\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

func slotLine(st style, s Slot) string {
	line := "slot " + st.code(s.Slot)
	switch s.Op {
	case "added":
		line += fmt.Sprintf(" written (%s): %s", count(s.Words, "word", "words"), st.esc(Excerpt(WordsText(s.Text, Ins), 40)))
	case "removed":
		line += fmt.Sprintf(" removed (%s): %s", count(s.Words, "word", "words"), st.del(Excerpt(WordsText(s.Text, Del), 40)))
	default:
		if s.MarkupOnly {
			line += ": markup only, the text is the same"
		} else {
			line += ": " + st.words(s.Text, "")
		}
	}
	if len(s.Markup) > 0 {
		var del, ins []string
		for _, m := range s.Markup {
			switch {
			case strings.HasPrefix(m, Del):
				del = append(del, st.code(m[1:]))
			case strings.HasPrefix(m, Ins):
				ins = append(ins, st.code(m[1:]))
			}
		}
		var ms []string
		if len(del) > 0 {
			ms = append(ms, "removed "+strings.Join(del, " "))
		}
		if len(ins) > 0 {
			ms = append(ms, "added "+strings.Join(ins, " "))
		}
		if s.Markup[len(s.Markup)-1] == "…" {
			ms = append(ms, "and more")
		}
		line += " (markup " + strings.Join(ms, "; ") + ")"
	}
	return line
}

// WordsText is the text of one side of a diff (Del: the old, Ins: the
// new), gaps left out.
func WordsText(d WordDiff, side string) string {
	var parts []string
	for _, sp := range d.Spans {
		if sp.Kind == Same || sp.Kind == side {
			parts = append(parts, sp.Text)
		}
	}
	return strings.Join(parts, " ")
}

func metaChange(st style, m Meta) string {
	switch m.Op {
	case "added":
		return "set to " + st.code(valueText(m.New))
	case "removed":
		return "removed (was " + st.code(valueText(m.Old)) + ")"
	}
	return st.code(valueText(m.Old)) + " → " + st.code(valueText(m.New))
}

// bookkeepingLine names the bookkeeping keys a page change touched, one
// entry per key: generated (3), sources, created.
func bookkeepingLine(ms []Meta) string {
	n := map[string]int{}
	var keys []string
	for _, m := range ms {
		k := strings.SplitN(strings.SplitN(m.Key, ".", 2)[0], "[", 2)[0]
		if n[k] == 0 {
			keys = append(keys, k)
		}
		n[k]++
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if n[k] > 1 {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, n[k]))
		} else {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, ", ")
}

func bookkeepingFull(st style, p Page) string {
	var b strings.Builder
	indent := "  - "
	if !st.md {
		indent = "    "
	}
	if st.md {
		b.WriteString("- prose bookkeeping of " + st.code(p.Path) + ":\n")
	} else {
		b.WriteString("  prose bookkeeping:\n")
	}
	for _, m := range p.Bookkeeping {
		b.WriteString(indent + st.code(m.Key) + " " + metaChange(st, m) + "\n")
	}
	return b.String()
}

func createdRow(st style, p Page) string {
	var begins string
	for _, s := range beginOrder(p.Slots) {
		if t := WordsText(s.Text, Ins); strings.TrimSpace(t) != "" {
			begins = Excerpt(t, 16)
			break
		}
	}
	var extra []string
	tags := ""
	for _, m := range p.Meta {
		switch m.Key {
		case "title", "template":
		case "tags":
			if l, ok := m.New.([]any); ok {
				var ts []string
				for _, t := range l {
					ts = append(ts, fmt.Sprint(t))
				}
				tags = strings.Join(ts, ", ")
				continue
			}
			fallthrough
		default:
			extra = append(extra, m.Key+"="+valueText(m.New))
		}
	}
	if !st.md {
		line := "  + " + p.Path
		if p.Title != "" {
			line += " — " + p.Title
		}
		line += " (" + p.Template + ")"
		if tags != "" {
			line += " tags: " + tags
		}
		if len(extra) > 0 {
			line += " " + strings.Join(extra, " ")
		}
		if begins != "" {
			line += ": " + begins
		}
		return line + "\n"
	}
	cell := st.esc
	title := cell(p.Title)
	if len(extra) > 0 {
		title += " (" + cell(strings.Join(extra, ", ")) + ")"
	}
	book := ""
	if n := len(strings.Split(bookkeepingLine(p.Bookkeeping), ", ")); len(p.Bookkeeping) > 0 {
		book = count(n, "key", "keys")
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", st.code(p.Path), title, cell(p.Template), cell(tags), cell(begins), book)
}

func valueText(v any) string {
	b, err := canon.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return Cut(string(b), 120)
}

func valueRow(st style, v Value) string {
	before, after := valueText(v.Old), valueText(v.New)
	if v.Text != nil {
		before, after = st.words(*v.Text, Del), st.words(*v.Text, Ins)
	}
	if !st.md {
		switch v.Op {
		case "added":
			return fmt.Sprintf("  + %s = %s\n", v.Path, after)
		case "removed":
			return fmt.Sprintf("  - %s (was %s)\n", v.Path, before)
		}
		return fmt.Sprintf("  ~ %s: %s -> %s\n", v.Path, before, after)
	}
	cell := func(s string, present bool, text bool) string {
		if !present {
			return ""
		}
		if text {
			return s
		}
		return st.code(s)
	}
	return fmt.Sprintf("| %s | %s | %s | %s |\n", st.code(v.Path), v.Op,
		cell(before, v.Op != "added", v.Text != nil), cell(after, v.Op != "removed", v.Text != nil))
}

// leadSlots are the slots a page's text begins with, in the order a
// reader meets them; a citation says where the text is from, not what
// it says, so it comes last.
var leadSlots = map[string]int{"summary": 1, "abstract": 2, "description": 3, "body": 4, "document": 5, "citation": 100}

// beginOrder returns a page's slots in the order its "begins" cell reads
// them: the lead slots first, then the rest as given.
func beginOrder(slots []Slot) []Slot {
	out := slices.Clone(slots)
	rank := func(id string) int {
		if r, ok := leadSlots[id]; ok {
			return r
		}
		return 50
	}
	slices.SortStableFunc(out, func(a, b Slot) int { return rank(a.Slot) - rank(b.Slot) })
	return out
}
