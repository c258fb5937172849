// Package render writes a source's document as page HTML: every heading
// (with an anchor), paragraph, list, table, code block, definition list,
// quote and conversation turn, in the source's order, nothing left out.
// It is the faithful part of the wiki pipeline: prose renders it itself,
// with any model or none, outside the model's tool calls.
//
// A document whose rendering passes SplitAt bytes is split into parts at
// the shallowest heading level that keeps each part within SplitAt (a
// part that still passes it is split again at the next level, and a part
// with no heading left to split at, by its blocks at MaxPart); the
// source page then holds what comes before the first part and a table of
// contents, and each part becomes a section page of its own.
package render

import (
	"fmt"
	"html"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// Revision names how Document renders, and is part of each source's memo
// key: a source ingested before a change of it is read again by the next
// ingest, and its pages rendered the new way. Revision 2 links a
// collection's sources to each other (Options.Link) and gives a split
// source's contents its sections' anchors; revision 3 leaves out table
// rows whose cells are all empty; revision 4 links a plain one-word term
// only where a page names it as code (Linker), and reads a definition
// list that is a table of contents as the list of links it is; revision
// 5 renders a description of several paragraphs, code or lists as those
// blocks (Definition.Body), where it had been one run of text.
const Revision = "render-5"

// SplitAt is the size of rendered HTML past which a document is split
// into section pages.
const SplitAt = 64 << 10

// MaxPart is the most HTML a part holds when it has no heading left to
// split at: well within the 4 MiB a vault's text file may hold, with the
// page's shell and escaping around it.
const MaxPart = 1 << 20

// MaxContents bounds the table of contents of a split document: past it
// (a manual of thousands of headings), the contents list the remaining
// parts without the headings inside them, and past twice it they stop,
// saying how many parts follow (each part's page links the next).
const MaxContents = 256 << 10

// DocumentSlot is the slot of the source and section templates that holds
// the rendered text; prose writes it, never a model.
const DocumentSlot = "document"

// NavSlot is the slot of a section page holding its previous, up and next
// links.
const NavSlot = "nav"

// Part is one section page of a split document.
type Part struct {
	// Title is the heading the part starts with (the page's title).
	Title string
	// Anchor is that heading's anchor ("s-…"): the part's name.
	Anchor string
	// Level is that heading's level in the source.
	Level int
	// HTML is the part's text, its first heading left out (the page's
	// title says it).
	HTML string
	// Empty is a heading the source gives nothing under, not even
	// subsections: it gets no page, and the contents list it as text.
	Empty bool
	// headings are the anchors and text of the part's other headings, for
	// the table of contents.
	headings []tocEntry
}

type tocEntry struct {
	anchor, text string
	level        int
}

// Result is a rendered document.
type Result struct {
	// HTML is the whole document, or (split) what comes before its first
	// part: see Page.
	HTML string
	// Parts are the section pages of a split document, in order; nil when
	// the document fits one page.
	Parts []Part
}

// Page is the source page's document slot: the whole document, or (split)
// what comes before the first part and the table of contents, part i's
// page linked as href(i) (nil: the anchor's name and ".html").
func (r Result) Page(href func(i int) string) string {
	if len(r.Parts) == 0 {
		return r.HTML
	}
	return r.HTML + toc(r.Parts, href)
}

// PartOf is the index of the part whose page holds anchor (its own
// heading's or one inside it), -1 when none does (the source page's).
func (r Result) PartOf(anchor string) int {
	for i, p := range r.Parts {
		if p.Anchor == anchor {
			return i
		}
		for _, h := range p.headings {
			if h.anchor == anchor {
				return i
			}
		}
	}
	return -1
}

// Options tune a rendering.
type Options struct {
	// SplitAt overrides SplitAt (tests); 0 means SplitAt.
	SplitAt int
	// Link, when set, is offered each link of the source that is not a
	// web address (a path relative to the source, an in-page "#name"):
	// the href it returns, when ok, makes it a link — LinkScheme and a
	// wiki path, which Relink makes relative to the page it lands on;
	// else the link's text stays, as with no Link.
	Link func(url string) (string, bool)
}

// LinkScheme starts the href of a link Options.Link resolved, until
// Relink rewrites it: "prose-link:" and the wiki path of the page linked
// to (empty: the page of the document itself), then "#" and its anchor.
const LinkScheme = "prose-link:"

// Relink rewrites each LinkScheme href in h with to(path, anchor), the
// href that page writes (its own path relative to the page, its anchor).
func Relink(h string, to func(path, anchor string) string) string {
	return Hrefs(h, LinkScheme, func(raw string) string {
		p, a, _ := strings.Cut(html.UnescapeString(raw), "#")
		return html.EscapeString(to(p, a))
	})
}

// Hrefs rewrites each double-quoted href in h that starts with prefix:
// the attribute's value (prefix and all) becomes to(the rest of it, as
// written, entities kept).
func Hrefs(h, prefix string, to func(raw string) string) string {
	attr := `href="` + prefix
	if !strings.Contains(h, attr) {
		return h
	}
	var sb strings.Builder
	sb.Grow(len(h))
	for {
		i := strings.Index(h, attr)
		if i < 0 {
			sb.WriteString(h)
			return sb.String()
		}
		sb.WriteString(h[:i+len(`href="`)])
		h = h[i+len(attr):]
		j := strings.IndexByte(h, '"')
		if j < 0 {
			j = len(h)
		}
		sb.WriteString(to(h[:j]))
		h = h[j:]
	}
}

// section is one section of the document, rendered.
type section struct {
	level   int
	heading string
	anchor  string
	shown   bool     // its heading is rendered
	title   bool     // its heading is the document's title
	blocks  []string // each block's HTML
	size    int
}

// Document renders d.
func Document(d *source.Document, opt Options) Result {
	limit := opt.SplitAt
	if limit <= 0 {
		limit = SplitAt
	}
	link := func(s string) string { return source.InlineHTMLLinked(s, opt.Link) }
	secs := sections(d, link)
	total := 0
	for _, s := range secs {
		total += s.size
	}
	if total <= limit {
		var sb strings.Builder
		for _, s := range secs {
			s.write(&sb, true)
		}
		return Result{HTML: sb.String()}
	}
	lead, parts := split(secs, 0, limit)
	if len(parts) == 0 {
		// One section: its blocks are split.
		lead, parts = nil, blockParts(secs, d.Title)
	} else if size(lead) > limit {
		// What comes before the first part is long too (a text with
		// few headings): it is a part of its own, cut by its blocks.
		parts = append(blockParts(lead, d.Title), parts...)
		lead = nil
	}
	var sb strings.Builder
	for _, s := range lead {
		s.write(&sb, true)
	}
	for i := range parts {
		parts[i].HTML, parts[i].headings = parts[i].render()
	}
	out := Result{HTML: sb.String()}
	for i, p := range parts {
		empty := strings.TrimSpace(p.HTML) == "" && (i+1 == len(parts) || parts[i+1].level <= p.level)
		out.Parts = append(out.Parts, Part{Title: p.title, Anchor: p.anchor, Level: p.level, HTML: p.HTML, headings: p.headings, Empty: empty})
	}
	return out
}

// part is a run of sections that becomes one page.
type part struct {
	title, anchor string
	level         int
	secs          []*section
	skipFirst     bool // the first section's heading is the page's title
	HTML          string
	headings      []tocEntry
}

func (p *part) render() (string, []tocEntry) {
	var sb strings.Builder
	var hs []tocEntry
	// The part's page is titled by its first heading: the headings under
	// it move up, the first level below it becoming h2.
	shift := max(p.level, 0)
	n := 0 // the blocks' bytes, and room for the headings: one allocation
	for _, s := range p.secs {
		n += 64 + len(s.heading)
		for _, b := range s.blocks {
			n += len(b)
		}
	}
	sb.Grow(n)
	for i, s := range p.secs {
		first := i == 0 && p.skipFirst
		if !first && s.shown {
			sb.WriteString(headingAt(s, s.level-shift))
		}
		for _, b := range s.blocks {
			sb.WriteString(b)
		}
		if !first && s.shown {
			hs = append(hs, tocEntry{s.anchor, s.heading, s.level})
		}
	}
	return sb.String(), hs
}

// split cuts secs into the sections that come before the first part and
// the parts, at the shallowest heading level deeper than above that starts
// at least two of them; a part past limit is split again below its level.
func split(secs []*section, above, limit int) (lead []*section, parts []*part) {
	level := 0
	for l := above + 1; l <= 6 && level == 0; l++ {
		n := 0
		for _, s := range secs {
			if s.heading != "" && !s.title && s.level == l {
				n++
			}
		}
		if n >= 2 || n == 1 && secs[0].level != l {
			level = l
		}
	}
	if level == 0 {
		return secs, nil
	}
	var cur *part
	for _, s := range secs {
		if s.heading != "" && !s.title && s.level <= level && s.level > above {
			cur = &part{title: s.heading, anchor: s.anchor, level: s.level, skipFirst: true}
			parts = append(parts, cur)
		}
		if cur == nil {
			lead = append(lead, s)
			continue
		}
		cur.secs = append(cur.secs, s)
	}
	var out []*part
	for _, p := range parts {
		size := 0
		for _, s := range p.secs {
			size += s.size
		}
		if size <= limit || len(p.secs) < 2 {
			out = append(out, p)
			continue
		}
		subLead, sub := split(p.secs, p.level, limit)
		if len(sub) == 0 {
			out = append(out, p)
			continue
		}
		p.secs = subLead
		out = append(out, p)
		out = append(out, sub...)
	}
	// A part past MaxPart with no heading left is cut by its blocks.
	var final []*part
	for _, p := range out {
		size := 0
		for _, s := range p.secs {
			size += s.size
		}
		if size <= MaxPart {
			final = append(final, p)
			continue
		}
		final = append(final, cutBlocks(p)...)
	}
	return lead, final
}

// size is the HTML secs render to.
func size(secs []*section) int {
	n := 0
	for _, s := range secs {
		n += s.size
	}
	return n
}

// blockParts splits a document with no heading to split at by its blocks.
func blockParts(secs []*section, title string) []*part {
	p := &part{title: title, anchor: "s-" + plan.Slug(title), secs: secs}
	return cutBlocks(p)
}

// cutBlocks cuts a part into parts of at most about MaxPart bytes each,
// at block boundaries; the second and later are titled "… (2)" and so on.
func cutBlocks(p *part) []*part {
	var out []*part
	cur := &part{title: p.title, anchor: p.anchor, level: p.level, skipFirst: p.skipFirst}
	size := 0
	n := 1
	for _, s := range p.secs {
		piece := &section{level: s.level, heading: s.heading, anchor: s.anchor, shown: s.shown}
		if s.shown {
			piece.size = len(headingHTML(s))
		}
		for _, b := range s.blocks {
			if size+len(b) > MaxPart && size > 0 {
				if len(piece.blocks) > 0 {
					cur.secs = append(cur.secs, piece)
				}
				out = append(out, cur)
				n++
				cur = &part{title: fmt.Sprintf("%s (%d)", p.title, n), anchor: fmt.Sprintf("%s-%d", p.anchor, n), level: p.level}
				piece = &section{level: s.level}
				size = 0
			}
			piece.blocks = append(piece.blocks, b)
			piece.size += len(b)
			size += len(b)
		}
		cur.secs = append(cur.secs, piece)
	}
	return append(out, cur)
}

// toc is the table of contents of a split document: each part linked to
// its page, its headings to their anchors there.
func toc(parts []Part, href func(int) string) string {
	if href == nil {
		href = func(i int) string { return strings.TrimPrefix(parts[i].Anchor, "s-") + ".html" }
	}
	var sb strings.Builder
	sb.WriteString(`<div class="toc"><h2>Contents</h2><ol>`)
	for i, p := range parts {
		if sb.Len() > 2*MaxContents {
			// Thousands of parts: each page links the next.
			fmt.Fprintf(&sb, "<li>… and %d more parts: follow the next link from the last one listed</li>", len(parts)-i)
			break
		}
		if p.Empty {
			fmt.Fprintf(&sb, `<li id="%s">%s</li>`, p.Anchor, html.EscapeString(p.Title))
			continue
		}
		h := href(i)
		// Each entry carries its heading's anchor: a link to the source
		// page at a section now on a page of its own lands on the entry
		// that leads there.
		fmt.Fprintf(&sb, `<li id="%s"><a href="%s">%s</a>`, p.Anchor, html.EscapeString(h), html.EscapeString(p.Title))
		if len(p.headings) > 0 && sb.Len() < MaxContents {
			sb.WriteString("<ul>")
			for _, e := range p.headings {
				fmt.Fprintf(&sb, `<li class="toc-%d" id="%s"><a href="%s#%s">%s</a></li>`, min(e.level, 6), e.anchor, html.EscapeString(h), e.anchor, html.EscapeString(e.text))
			}
			sb.WriteString("</ul>")
		}
		sb.WriteString("</li>")
	}
	sb.WriteString("</ol></div>\n")
	return sb.String()
}

// Anchors are the anchors Document gives d's sections, one per section
// ("" for a section whose heading is not shown: none, the page's title,
// a conversation's question).
func Anchors(d *source.Document) []string {
	used := map[string]int{}
	out := make([]string, len(d.Sections))
	firstHeading := true
	for i, s := range d.Sections {
		if s.Heading == "" {
			continue
		}
		a := anchor(s.Heading, used)
		title := firstHeading && s.Level == 1 && s.Heading == d.Title
		firstHeading = false
		if d.Kind != source.Conversation && !title {
			out[i] = a
		}
	}
	return out
}

// sections renders each section of d: its heading (shown unless it is the
// document's title heading, or d is a conversation, whose headings are its
// questions, which its turns say) and its blocks.
func sections(d *source.Document, link func(string) string) []*section {
	used, names := map[string]int{}, map[string]int{}
	var out []*section
	firstHeading := true
	for _, s := range d.Sections {
		sec := &section{level: s.Level, heading: s.Heading}
		if s.Heading != "" {
			sec.anchor = anchor(s.Heading, used)
			sec.title = firstHeading && s.Level == 1 && s.Heading == d.Title
			sec.shown = d.Kind != source.Conversation && !sec.title
			firstHeading = false
		}
		for _, b := range s.Blocks {
			if d.Kind == source.Conversation && b.Kind != source.Turn {
				continue // the structure of an answer is in its turn's text
			}
			h := block(b, link, names)
			sec.blocks = append(sec.blocks, h)
			sec.size += len(h)
		}
		if sec.shown {
			sec.size += len(headingHTML(sec))
		}
		out = append(out, sec)
	}
	return out
}

func (s *section) write(sb *strings.Builder, heading bool) {
	if heading && s.shown {
		sb.WriteString(headingHTML(s))
	}
	for _, b := range s.blocks {
		sb.WriteString(b)
	}
}

// headingHTML is a section's heading one level down (the page's title is
// its only h1), h6 at most, with its anchor.
func headingHTML(s *section) string { return headingAt(s, s.level) }

// headingAt is headingHTML for a section shown at level.
func headingAt(s *section, level int) string {
	l := min(max(level+1, 2), 6)
	return fmt.Sprintf("<h%d id=\"%s\">%s</h%d>\n", l, s.anchor, html.EscapeString(s.heading), l)
}

// anchor is a heading's anchor: "s-" and the slug of its text, made
// distinct within the document by "-2", "-3"….
func anchor(heading string, used map[string]int) string {
	base := "s-" + plan.Slug(heading)
	used[base]++
	a := base
	if n := used[base]; n > 1 {
		a = fmt.Sprintf("%s-%d", base, n)
		for used[a] > 0 {
			n++
			a = fmt.Sprintf("%s-%d", base, n)
		}
		used[a]++
	}
	return a
}

// Anchor is the anchor Document gives the first heading with this text.
func Anchor(heading string) string { return "s-" + plan.Slug(heading) }

// Blocks renders blocks as a source page shows them, without anchors,
// their inline Markdown through link (a term page quotes a definition's
// description this way).
func Blocks(bs []source.Block, link func(string) string) string {
	var sb strings.Builder
	for _, b := range bs {
		sb.WriteString(block(b, link, nil))
	}
	return sb.String()
}

// wrap writes inner between open and end, without joining them first.
func wrap(sb *strings.Builder, open, inner, end string) {
	sb.WriteString(open)
	sb.WriteString(inner)
	sb.WriteString(end)
}

// block renders one block; a definition whose term names an API
// (wiki.APIName: ffi_call, "Function: void ffi_call (…)") gets an anchor
// "s-def-" and the name's slug, distinct by names (nil: no anchors), so
// a folder's index of names links to it.
func block(b source.Block, link func(string) string, names map[string]int) string {
	text := link // inline Markdown → HTML
	var sb strings.Builder
	switch b.Kind {
	case source.Paragraph:
		wrap(&sb, "<p>", text(b.Text), "</p>")
	case source.Quote:
		wrap(&sb, "<blockquote><p>", text(b.Text), "</p></blockquote>")
	case source.List, source.Steps:
		tag := "ul"
		if b.Kind == source.Steps {
			tag = "ol"
		}
		sb.WriteString("<" + tag + ">")
		for _, it := range b.Items {
			wrap(&sb, "<li>", text(it), "</li>")
		}
		sb.WriteString("</" + tag + ">")
	case source.Definitions:
		sb.WriteString("<dl>")
		for i, d := range b.Defs {
			id := ""
			if n := wiki.APIName(d.Term); n != "" && names != nil {
				id = ` id="` + anchor("def "+n, names) + `"`
			}
			sb.WriteString("<dt" + id + ">" + html.EscapeString(d.Term) + "</dt>")
			// Terms the source defines together (<dt>a</dt><dt>b</dt><dd>…)
			// share one meaning, shown once.
			if i+1 < len(b.Defs) && sameMeaning(b.Defs[i+1], d) {
				continue
			}
			if len(d.Body) == 0 {
				wrap(&sb, "<dd>", text(d.Meaning), "</dd>")
				continue
			}
			// A description of several blocks: its first paragraph, then
			// the rest in order, nested lists and code as they are.
			sb.WriteString("<dd>")
			if d.Meaning != "" {
				wrap(&sb, "<p>", text(d.Meaning), "</p>")
			}
			for _, x := range d.Body {
				sb.WriteString(strings.TrimSuffix(block(x, link, names), "\n"))
			}
			sb.WriteString("</dd>")
		}
		sb.WriteString("</dl>")
	case source.Table:
		sb.WriteString("<table>")
		if len(b.Header) > 0 {
			sb.WriteString("<thead><tr>")
			for _, h := range b.Header {
				wrap(&sb, "<th>", text(h), "</th>")
			}
			sb.WriteString("</tr></thead>")
		}
		sb.WriteString("<tbody>")
		cols := len(b.Header)
		for _, r := range b.Rows {
			cols = max(cols, len(r))
		}
		for _, r := range b.Rows {
			sb.WriteString("<tr>")
			for _, c := range r {
				wrap(&sb, "<td>", text(c), "</td>")
			}
			// A short row is as wide as its table.
			sb.WriteString(strings.Repeat("<td></td>", cols-len(r)))
			sb.WriteString("</tr>")
		}
		sb.WriteString("</tbody></table>")
	case source.Code:
		class := ""
		if l := langClass(b.Lang); l != "" {
			class = ` class="language-` + l + `"`
		}
		sb.WriteString("<pre><code" + class + ">" + html.EscapeString(b.Text) + "</code></pre>")
	case source.Turn:
		sb.WriteString(turn(b, link))
	}
	sb.WriteString("\n")
	return sb.String()
}

// sameMeaning reports whether two definitions say the same: terms the
// source defines together.
func sameMeaning(a, b source.Definition) bool {
	return a.Meaning == b.Meaning && reflect.DeepEqual(a.Body, b.Body)
}

// turn renders one message of a conversation: who said it, then what they
// said, its Markdown read as a document's blocks.
func turn(b source.Block, link func(string) string) string {
	role := roleName(b.Role)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<div class="turn turn-%s"><p class="speaker"><strong>%s</strong></p>`, roleClass(b.Role), html.EscapeString(role))
	body, err := source.Read("turn.md", []byte(b.Text), source.Markdown)
	if err != nil {
		sb.WriteString("<p>" + html.EscapeString(b.Text) + "</p>")
	} else {
		for _, s := range body.Sections {
			if s.Heading != "" {
				l := min(s.Level+3, 6)
				fmt.Fprintf(&sb, "<h%d>%s</h%d>", l, html.EscapeString(s.Heading), l)
			}
			for _, x := range s.Blocks {
				sb.WriteString(strings.TrimSuffix(block(x, link, nil), "\n"))
			}
		}
	}
	sb.WriteString("</div>")
	return sb.String()
}

// roleName is how a turn's speaker is shown: the role with a capital.
func roleName(role string) string {
	role = strings.TrimSpace(role)
	if role == "" {
		return "Unknown"
	}
	r, n := utf8.DecodeRuneInString(role)
	return string(unicode.ToUpper(r)) + role[n:]
}

// roleClass is the role as a class word (lower-case ASCII letters).
func roleClass(role string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(role) {
		if r >= 'a' && r <= 'z' {
			sb.WriteRune(r)
		}
	}
	if sb.Len() == 0 {
		return "other"
	}
	return sb.String()
}

// langClass is a code block's language as a class word, or "".
func langClass(lang string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if lang == "" || len(lang) > 32 {
		return ""
	}
	for _, r := range lang {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return ""
		}
	}
	return lang
}
