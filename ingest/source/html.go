package source

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// chrome are elements that frame a page rather than say anything: scripts,
// styles, navigation, banners, footers, forms.
var chrome = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Nav: true,
	atom.Header: true, atom.Footer: true, atom.Aside: true, atom.Form: true, atom.Button: true,
	atom.Iframe: true, atom.Svg: true, atom.Head: true, atom.Select: true, atom.Object: true,
	atom.Embed: true, atom.Canvas: true, atom.Dialog: true, atom.Menu: true,
}

// chromeRoles and chromeClasses mark navigation chrome on ordinary elements.
var (
	chromeRoles   = map[string]bool{"navigation": true, "banner": true, "contentinfo": true, "search": true, "menu": true, "complementary": true}
	chromeClasses = map[string]bool{"nav": true, "navbar": true, "navigation": true, "menu": true, "sidebar": true,
		"breadcrumb": true, "breadcrumbs": true, "skip-link": true, "cookie-banner": true, "site-header": true, "site-footer": true}
)

// readHTML fills d from an HTML page: the <title>, then the content of
// <main> (or <article>, or <body>) with chrome dropped.
func readHTML(d *Document, src []byte, b *Boilerplate) error {
	doc, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		return err
	}
	title := ""
	if t := find(doc, atom.Title); t != nil {
		title = trimMarks(clean(textOf(t)))
		for _, sep := range []string{" | ", " · ", " — ", " – "} {
			if i := strings.Index(title, sep); i > 0 {
				title = title[:i]
			}
		}
	}
	if title == "" {
		title = commentTitle(doc)
	}
	if title == "" {
		title = headerTitle(doc)
	}
	root := find(doc, atom.Main)
	if root == nil {
		root = find(doc, atom.Article)
	}
	if root == nil {
		root = find(doc, atom.Body)
	}
	if root == nil {
		root = doc
	}
	r := htmlReader{d: d, skip: b.skipped(doc)}
	r.children(root)
	r.flush()
	r.settle(false)
	if title != "" {
		d.Title = title
	} else if d.Title == "" {
		for _, s := range d.Sections {
			if s.Heading != "" {
				d.Title = s.Heading
				break
			}
		}
	}
	return nil
}

// headerTitle is the title a Doxygen page gives in its header (<div
// class="headertitle"><div class="title">Json::Value Class Reference),
// for a page with no <title> of its own; "" when there is none.
func headerTitle(doc *html.Node) string {
	var found string
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && hasClass(n, "headertitle") {
			// Its labels ("abstract", "template") are no part of the name.
			var sb strings.Builder
			var text func(*html.Node)
			text = func(m *html.Node) {
				for c := m.FirstChild; c != nil; c = c.NextSibling {
					switch {
					case c.Type == html.TextNode:
						sb.WriteString(c.Data)
					case c.Type == html.ElementNode && !hasClass(c, "mlabels", "mlabel", "ingroups"):
						text(c)
					}
				}
			}
			text(n)
			found = trimMarks(clean(sb.String()))
			return true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(doc)
	return found
}

// commentTitle is the title a page gives in a leading comment holding a
// JSON object, as Go's documentation does (go_spec.html has no <title>
// and starts <!--{ "Title": "The Go Programming Language Specification",
// … }-->); "" when the page starts otherwise. Only a comment before the
// page's first content counts.
func commentTitle(doc *html.Node) string {
	title := ""
	var walk func(n *html.Node) bool // false: stop
	walk = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.CommentNode:
				t := strings.TrimSpace(c.Data)
				if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
					var head struct{ Title string }
					if json.Unmarshal([]byte(t), &head) == nil && clean(head.Title) != "" {
						title = trimMarks(clean(head.Title))
						return false
					}
				}
			case html.TextNode:
				if strings.TrimSpace(c.Data) != "" {
					return false
				}
			case html.ElementNode:
				switch c.DataAtom {
				case atom.Html, atom.Head, atom.Body:
					if !walk(c) {
						return false
					}
				case atom.Meta, atom.Link, atom.Style, atom.Script, atom.Base:
				default:
					return false
				}
			}
		}
		return true
	}
	walk(doc)
	return title
}

type htmlReader struct {
	d     *Document
	skip  map[*html.Node]bool // the collection's boilerplate
	loose strings.Builder     // inline text met directly inside a container
	// pending are ids met outside any block, not yet given a section:
	// the next heading's when no text comes first, else the section they
	// were met in.
	pending []pendingID
	// headingIDs are the ids of containers that name the heading they
	// hold first (mark).
	headingIDs map[*html.Node][]string
	// depth is how many descriptions (<dd>) deep the reader reads.
	depth int
}

// pendingID is an id met at a place of the document: sections and the
// last section's blocks counted then.
type pendingID struct {
	id               string
	sections, blocks int
}

func isChrome(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	if chrome[n.DataAtom] || isLinkChrome(n) {
		return true
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "role":
			if chromeRoles[strings.ToLower(a.Val)] {
				return true
			}
		case "aria-hidden":
			if a.Val == "true" {
				return true
			}
		case "hidden":
			return true
		case "class", "id":
			for _, c := range strings.Fields(strings.ToLower(a.Val)) {
				if chromeClasses[c] {
					return true
				}
			}
		}
	}
	return false
}

func (r *htmlReader) flush() {
	if t := clean(r.loose.String()); t != "" {
		r.d.addBlock(textBlock([]string{t}))
	}
	r.loose.Reset()
}

func (r *htmlReader) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.node(c)
	}
}

func (r *htmlReader) node(n *html.Node) {
	if n.Type == html.TextNode {
		r.loose.WriteString(EscapeText(n.Data))
		return
	}
	if n.Type != html.ElementNode || isChrome(n) || r.skip[n] {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		r.flush()
		ahead := r.settle(true)
		r.d.addSection(int(n.Data[1]-'0'), trimMarks(Plain(r.inline(n))))
		s := &r.d.Sections[len(r.d.Sections)-1]
		s.IDs = append(append(ahead, r.headingIDs[n]...), subtreeIDs(n, nil)...)
		return
	case atom.Div, atom.Section, atom.Article, atom.Main, atom.Body, atom.Html, atom.Figure, atom.Details, atom.A, atom.Span:
		r.mark(n)
	}
	defer r.own(n)
	switch n.DataAtom {
	case atom.P:
		r.flush()
		var lines []string
		for _, l := range strings.Split(r.inlineBreaks(n), "\n") {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			r.d.addBlock(textBlock(lines))
		}
	case atom.Ul, atom.Ol:
		r.flush()
		if pageContents(n) {
			return // the page's own contents: navigation, not text
		}
		var items []string
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Li && !isChrome(c) {
				items = append(items, r.inline(c))
			}
		}
		if len(items) > 0 {
			r.d.addBlock(listBlock(items, n.DataAtom == atom.Ol))
		}
	case atom.Dl:
		r.flush()
		if r.labelledList(n) {
			return
		}
		if items := r.contentsList(n); items != nil {
			r.d.addBlock(listBlock(items, false))
			return
		}
		var defs []Definition
		// terms are the <dt>s before a <dd>: several terms may share one
		// meaning (texinfo's @itemx), each defined by it.
		var terms, last []string
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				switch c.DataAtom {
				case atom.Dt:
					if t := clean(Plain(r.inline(c))); t != "" {
						terms = append(terms, t)
					}
				case atom.Dd:
					if len(terms) == 0 {
						terms = last // a second meaning of the same terms
					}
					meaning, body := r.description(c)
					for _, term := range terms {
						defs = append(defs, Definition{Term: term, Meaning: meaning, Body: body})
					}
					last, terms = terms, nil
				case atom.Div:
					walk(c)
				}
			}
		}
		walk(n)
		if len(defs) > 0 {
			r.d.addBlock(Block{Kind: Definitions, Defs: defs})
		}
	case atom.Table:
		r.flush()
		r.table(n)
	case atom.Pre:
		r.flush()
		lang := language(n)
		if c := find(n, atom.Code); c != nil && lang == "" {
			lang = language(c)
		}
		r.d.addBlock(Block{Kind: Code, Lang: lang, Text: strings.Trim(shownText(n), "\n")})
	case atom.Blockquote:
		r.flush()
		r.d.addBlock(Block{Kind: Quote, Text: r.inline(n)})
	case atom.Br:
		r.loose.WriteString(" ")
	case atom.A:
		r.loose.WriteString(" " + r.anchor(n) + " ")
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		r.loose.WriteString(codeSpan(textOf(n)))
	case atom.Div, atom.Section, atom.Article, atom.Main, atom.Body, atom.Html, atom.Figure, atom.Details:
		r.flush()
		if r.admonition(n) {
			return
		}
		if n.DataAtom == atom.Div && pageContents(n) {
			return // the page's own contents built of <div>s (SQLite's): navigation
		}
		if n.DataAtom == atom.Div && hasClass(n, "fragment") {
			// Doxygen's code listing: a <div class="line"> a line.
			var lines []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && hasClass(c, "line") {
					lines = append(lines, strings.TrimRight(textOf(c), " \t\n"))
				}
			}
			if len(lines) > 0 {
				r.d.addBlock(Block{Kind: Code, Text: strings.Join(lines, "\n")})
				return
			}
		}
		r.children(n)
		r.flush()
	default:
		r.children(n)
	}
}

// mark notes n's own id (or an <a>'s name) as pending; a container's id
// names the first heading inside it (a Sphinx or rustdoc <section id>
// holding a link or a label before its heading), when it holds one.
func (r *htmlReader) mark(n *html.Node) {
	ids := ownIDs(n)
	if len(ids) == 0 {
		return
	}
	if n.DataAtom != atom.A && n.DataAtom != atom.Span {
		if h := firstHeading(n); h != nil {
			if r.headingIDs == nil {
				r.headingIDs = map[*html.Node][]string{}
			}
			r.headingIDs[h] = append(r.headingIDs[h], ids...)
			return
		}
	}
	for _, id := range ids {
		r.pending = append(r.pending, pendingID{id, len(r.d.Sections), r.blocks()})
	}
}

// own gives the ids inside a block element n the section the block went
// to. Containers read through r.node (a <div>, a <section>) have had their
// children's ids noted already; their own was marked.
func (r *htmlReader) own(n *html.Node) {
	switch n.DataAtom {
	case atom.P, atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Pre, atom.Blockquote:
	default:
		return
	}
	if len(r.d.Sections) == 0 {
		return
	}
	s := &r.d.Sections[len(r.d.Sections)-1]
	s.IDs = subtreeIDs(n, s.IDs)
}

func (r *htmlReader) blocks() int {
	if len(r.d.Sections) == 0 {
		return 0
	}
	return len(r.d.Sections[len(r.d.Sections)-1].Blocks)
}

// settle gives each pending id its section: with heading (a heading is
// about to start a section), the ids no text followed are returned for
// it; the others go to the section they were met in.
func (r *htmlReader) settle(heading bool) (ahead []string) {
	for _, p := range r.pending {
		if heading && p.sections == len(r.d.Sections) && p.blocks == r.blocks() {
			ahead = append(ahead, p.id)
			continue
		}
		i := p.sections - 1
		if i < 0 {
			i = 0
		}
		if i < len(r.d.Sections) {
			r.d.Sections[i].IDs = append(r.d.Sections[i].IDs, p.id)
		}
	}
	r.pending = r.pending[:0]
	return ahead
}

// firstHeading is the first heading element below n, nil when none is.
func firstHeading(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if isHeading(c) {
			return c
		}
		if h := firstHeading(c); h != nil {
			return h
		}
	}
	return nil
}

// ownIDs are the names n gives its place: its id, an <a>'s name.
func ownIDs(n *html.Node) []string {
	var ids []string
	for _, a := range n.Attr {
		if a.Namespace == "" && (a.Key == "id" || a.Key == "name" && n.DataAtom == atom.A) {
			if v := strings.TrimSpace(a.Val); v != "" && len(v) <= maxIDLen {
				ids = append(ids, v)
			}
		}
	}
	return ids
}

// maxIDLen bounds an id kept: longer ones are no names a link uses.
const maxIDLen = 256

// subtreeIDs appends the ids of n and everything below it to ids.
func subtreeIDs(n *html.Node, ids []string) []string {
	if n.Type != html.ElementNode {
		return ids
	}
	ids = append(ids, ownIDs(n)...)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		ids = subtreeIDs(c, ids)
	}
	return ids
}

// admonitions are the classes DocBook gives a note box, and the word
// that titles it when the box has no title of its own.
var admonitions = map[string]string{"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important", "caution": "Caution"}

// admonition reads a DocBook admonition — <div class="warning"> holding
// either a layout table (an icon cell, a title cell, then the text cell)
// or a title heading and the text — as what it is: a note headed by its
// title, never a table with an empty cell. It reports whether n was one.
// A note of running text is one quotation ("Warning: …"); one that
// holds lists, code or tables is its title, then its blocks as they are.
func (r *htmlReader) admonition(n *html.Node) bool {
	kind := ""
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		if w, ok := admonitions[c]; ok {
			kind = w
		}
	}
	if kind == "" {
		return false
	}
	title := ""
	var body []*html.Node
	if t := onlyElement(n); t != nil && t.DataAtom == atom.Table {
		var cells func(*html.Node)
		cells = func(m *html.Node) {
			for c := m.FirstChild; c != nil; c = c.NextSibling {
				switch c.DataAtom {
				case atom.Thead, atom.Tbody, atom.Tfoot, atom.Tr:
					cells(c)
				case atom.Th:
					if title == "" {
						title = clean(Plain(r.inline(c)))
					}
				case atom.Td:
					if clean(textOf(c)) != "" {
						body = append(body, c)
					}
				}
			}
		}
		cells(t)
	} else {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode && strings.TrimSpace(c.Data) == "" || c.Type == html.CommentNode {
				continue
			}
			if title == "" && body == nil && c.Type == html.ElementNode && (isHeading(c) || hasClass(c, "title", "admonition-title")) {
				title = trimMarks(clean(Plain(r.inline(c))))
				continue
			}
			body = append(body, c)
		}
	}
	if title == "" {
		title = kind
	}
	r.labelled(title, body, true)
	return true
}

// labelled adds a box headed by title holding body: running text is one
// block "Title: …" (a quotation when quote, as a note box is; else a
// paragraph); a body holding lists, code or tables is its title, then its
// blocks as they are.
func (r *htmlReader) labelled(title string, body []*html.Node, quote bool) {
	label := EscapeText(title)
	if !strings.HasSuffix(title, ":") {
		label += ":"
	}
	if !holdsBlocks(body) {
		var parts []string
		for _, b := range body {
			if b.Type == html.TextNode {
				parts = append(parts, EscapeText(b.Data))
				continue
			}
			if t := r.inline(b); t != "" {
				parts = append(parts, t)
			}
		}
		text := clean(strings.Join(parts, " "))
		if text == "" {
			return // an empty box: nothing to keep
		}
		kind := Paragraph
		if quote {
			kind = Quote
		}
		r.d.addBlock(Block{Kind: kind, Text: label + " " + text})
		return
	}
	r.d.addBlock(Block{Kind: Paragraph, Text: label})
	for _, b := range body {
		if b.DataAtom == atom.Td {
			r.children(b)
		} else {
			r.node(b)
		}
		r.flush()
	}
}

// labelledLists are the classes Doxygen gives a <dl> that labels a part
// of an entry's text — Returns, Parameters, Note, Precondition,
// Exceptions, Deprecated — rather than defining terms.
var labelledLists = map[string]bool{"section": true, "params": true, "tparams": true, "retval": true, "exception": true,
	"deprecated": true, "todo": true, "test": true, "bug": true, "xrefsect": true}

// labelledList reads such a <dl> as what it is, each <dt> the label of
// the text its <dd> holds ("Returns: …", a note as a quotation), never as
// definitions: "Returns" and "Parameters" are no glossary terms. It
// reports whether n was one.
func (r *htmlReader) labelledList(n *html.Node) bool {
	note := false
	found := false
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		found = found || labelledLists[c]
		_, isNote := admonitions[c]
		note = note || isNote || c == "attention" || c == "remark"
	}
	if !found {
		return false
	}
	title := ""
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.DataAtom {
		case atom.Dt:
			title = trimMarks(clean(Plain(r.inline(c))))
		case atom.Dd:
			var body []*html.Node
			for b := c.FirstChild; b != nil; b = b.NextSibling {
				if b.Type == html.TextNode && strings.TrimSpace(b.Data) == "" || b.Type == html.CommentNode {
					continue
				}
				body = append(body, b)
			}
			if title == "" {
				r.node(c)
				r.flush()
				continue
			}
			r.labelled(title, body, note)
			title = ""
		}
	}
	return true
}

// description is what a <dd> says: the one run of text it holds, or, when
// it holds paragraphs, code, lists or definitions of its own (an option
// and its example, Sphinx's class and its attributes), its first
// paragraph and the blocks after it, in order (Definition.Body). Its ids
// are its list's (own); its links are the document's.
func (r *htmlReader) description(dd *html.Node) (string, []Block) {
	if r.depth >= MaxNesting || !describesInBlocks(dd) {
		return r.inline(dd), nil
	}
	sub := htmlReader{d: &Document{Kind: r.d.Kind}, skip: r.skip, depth: r.depth + 1}
	sub.children(dd)
	sub.flush()
	ss := sub.d.Sections
	if len(ss) != 1 || ss[0].Heading != "" || len(ss[0].Blocks) == 0 ||
		len(ss[0].Blocks) == 1 && ss[0].Blocks[0].Kind == Paragraph {
		// A heading inside, or one paragraph: one run of text, as a
		// description of one paragraph is.
		return r.inline(dd), nil
	}
	r.d.Links = append(r.d.Links, sub.d.Links...)
	if ss[0].Blocks[0].Kind != Paragraph {
		// A list or code first (Sphinx's "Parameters:" and the list of
		// them): no meaning of its own, all of it Body.
		return "", ss[0].Blocks
	}
	return ss[0].Blocks[0].Text, ss[0].Blocks[1:]
}

// describesInBlocks reports whether n holds more than one block element
// (paragraphs, code, lists, tables, quotes), or one that is no paragraph,
// found through the containers around them.
func describesInBlocks(n *html.Node) bool {
	count, other := 0, false
	var walk func(*html.Node) bool // true: found enough
	walk = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || isChrome(c) {
				continue
			}
			switch c.DataAtom {
			case atom.P, atom.Pre, atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Blockquote:
				count++
				other = other || c.DataAtom != atom.P
				if count > 1 || other {
					return true
				}
			default:
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	return walk(n)
}

// contentsList returns the entries of a definition list that is a table
// of contents (DocBook's <dl class="toc">, or one whose every term is a
// link to a place in the document and nothing else), nested chapters'
// entries included, in order; nil for any other list. Its terms are
// section titles ("How to make a commit"), not terms, and a <dd> holds the
// next level's entries, not a meaning: it is kept as the list of links it
// is.
func (r *htmlReader) contentsList(n *html.Node) []string {
	toc := false
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		toc = toc || c == "toc"
	}
	// First look (no text read: reading a term records its links), then
	// take the entries.
	all, dts := true, 0
	var look func(*html.Node)
	look = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.DataAtom {
			case atom.Dt:
				dts++
				all = all && onlyFragmentLink(c)
			case atom.Dd, atom.Div:
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					switch {
					case d.DataAtom == atom.Dl:
						look(d)
					case c.DataAtom == atom.Dd && (d.Type == html.ElementNode || d.Type == html.TextNode && strings.TrimSpace(d.Data) != ""):
						all = false // a meaning: a real definition list
					}
				}
			}
		}
	}
	look(n)
	if dts == 0 || !toc && !(all && dts >= 2) {
		return nil
	}
	var items []string
	var take func(*html.Node)
	take = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.DataAtom {
			case atom.Dt:
				if t := r.inline(c); strings.TrimSpace(t) != "" {
					items = append(items, t)
				}
			case atom.Dd, atom.Div:
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.DataAtom == atom.Dl {
						take(d)
					}
				}
			}
		}
	}
	take(n)
	return items
}

// onlyFragmentLink reports whether n's text is all inside one link to a
// place in the same document (href="#…").
func onlyFragmentLink(n *html.Node) bool {
	var link *html.Node
	var find func(*html.Node) bool
	find = func(m *html.Node) bool {
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				if strings.TrimSpace(c.Data) != "" {
					return false
				}
			case c.DataAtom == atom.A:
				if link != nil || !strings.HasPrefix(attr(c, "href"), "#") {
					return false
				}
				link = c
			case c.Type == html.ElementNode:
				if !find(c) {
					return false
				}
			}
		}
		return true
	}
	return find(n) && link != nil
}

// onlyElement is n's one child element when it has exactly one (white
// space aside), else nil.
func onlyElement(n *html.Node) *html.Node {
	var only *html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.ElementNode:
			if only != nil {
				return nil
			}
			only = c
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
			return nil
		}
	}
	return only
}

// hasClass reports whether n has one of the classes.
func hasClass(n *html.Node, classes ...string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		for _, want := range classes {
			if c == want {
				return true
			}
		}
	}
	return false
}

func isHeading(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// holdsBlocks reports nodes that hold a list, code, a table, a
// definition list or a quotation: blocks a quotation cannot keep.
func holdsBlocks(nodes []*html.Node) bool {
	for _, n := range nodes {
		for _, a := range []atom.Atom{atom.Ul, atom.Ol, atom.Pre, atom.Table, atom.Dl, atom.Blockquote} {
			if findAny(n, a) {
				return true
			}
		}
	}
	return false
}

// findAny reports an element a under n (n included), chrome or not.
func findAny(n *html.Node, a atom.Atom) bool {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if findAny(c, a) {
			return true
		}
	}
	return false
}

// pageContents reports a list that is the page's own table of contents:
// its items hold nothing but links within the page (href="#…"), nested
// lists alike, two links at least — Sphinx's "Contents" topic, a hand-made
// list of a page's sections. It is navigation: the wiki page lists its
// sections itself, and read as text its link words run together into a
// line no sentence would be ("Basic Example Members Example …"). A
// contents made of <div>s, one a link, under a label ("► Table Of
// Contents", a script's toggle: a link with no href) is one too.
func pageContents(n *html.Node) bool {
	links := 0
	var only func(*html.Node) bool
	only = func(m *html.Node) bool {
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				if strings.TrimSpace(c.Data) != "" && !contentsLabel(c.Data) {
					return false
				}
			case c.Type != html.ElementNode:
			case c.DataAtom == atom.A && !hasAttr(c, "href") && contentsLabel(textOf(c)):
				// the label of the contents, a toggle of a script
			case c.DataAtom == atom.A:
				if !strings.HasPrefix(strings.TrimSpace(attr(c, "href")), "#") || strings.TrimSpace(textOf(c)) == "" {
					return false
				}
				links++
			case c.DataAtom == atom.Li, c.DataAtom == atom.Ul, c.DataAtom == atom.Ol, c.DataAtom == atom.P, c.DataAtom == atom.Span, c.DataAtom == atom.Div:
				if !only(c) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	return only(n) && links >= 2
}

// contentsLabel reports a label that names a table of contents:
// "Contents", "Table Of Contents", "On this page", marks and punctuation
// around it aside.
func contentsLabel(s string) bool {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
	switch strings.Join(words, " ") {
	case "contents", "table of contents", "on this page", "in this article":
		return true
	}
	return false
}

func (r *htmlReader) table(n *html.Node) {
	var header []string
	var rows [][]string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.DataAtom {
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(c)
			case atom.Tr:
				var cells []string
				allTh := true
				for cell := c.FirstChild; cell != nil; cell = cell.NextSibling {
					if cell.DataAtom == atom.Td || cell.DataAtom == atom.Th {
						cells = append(cells, r.inline(cell))
						allTh = allTh && cell.DataAtom == atom.Th
					}
				}
				switch {
				case blankRow(cells):
					// A row of empty cells says nothing: Doxygen
					// separates each member of its tables by one.
				case header == nil && rows == nil && allTh:
					header = cells
				default:
					rows = append(rows, cells)
				}
			}
		}
	}
	walk(n)
	if emptyCells(header, rows) {
		return // a layout table around an image (DocBook's mediaobject): no text to keep
	}
	if header != nil || rows != nil {
		r.d.addBlock(tableBlock(header, rows))
	}
}

// emptyCells reports a table with no text in any cell.
func emptyCells(header []string, rows [][]string) bool {
	if !blankRow(header) {
		return false
	}
	for _, row := range rows {
		if !blankRow(row) {
			return false
		}
	}
	return true
}

// blankRow reports a row with no text in any cell.
func blankRow(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// anchor is a link as inline Markdown (its text alone for an in-page
// link), which it records.
func (r *htmlReader) anchor(a *html.Node) string {
	text := strings.ReplaceAll(r.inlineBreaks(a), "\n", " ")
	href := strings.TrimSpace(attr(a, "href"))
	if href == "" || strings.TrimSpace(text) == "" {
		return text // an anchor, or an icon's link: no text to show
	}
	if strings.HasPrefix(href, "#") {
		// An in-page link: kept for the page, which links its sections
		// (Section.IDs); no link to another document.
		return linkText(text, href)
	}
	r.d.Links = append(r.d.Links, Link{Text: clean(Plain(text)), URL: href})
	return linkText(text, href)
}

// inline is the content of n as inline Markdown (see EscapeText), with
// links recorded.
func (r *htmlReader) inline(n *html.Node) string {
	return clean(r.inlineBreaks(n))
}

// inlineBreaks is inline keeping <br> as line breaks.
func (r *htmlReader) inlineBreaks(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				sb.WriteString(EscapeText(strings.ReplaceAll(c.Data, "\n", " ")))
			case isChrome(c) || r.skip[c]:
			case c.DataAtom == atom.Br:
				sb.WriteString("\n")
			case c.DataAtom == atom.A:
				sb.WriteString(r.anchor(c))
			case c.DataAtom == atom.Code || c.DataAtom == atom.Kbd || c.DataAtom == atom.Samp || c.DataAtom == atom.Tt:
				sb.WriteString(codeSpan(textOf(c)))
			case c.Type == html.ElementNode:
				walk(c)
				if blockish[c.DataAtom] {
					sb.WriteString(" ") // the text of two blocks is two words
				}
			}
		}
	}
	walk(n)
	return strings.TrimSpace(sb.String())
}

// hasAttr reports whether n has the attribute key, empty or not.
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// language reads a "language-x" or "lang-x" class.
func language(n *html.Node) string {
	for _, c := range strings.Fields(attr(n, "class")) {
		for _, p := range []string{"language-", "lang-"} {
			if l, ok := strings.CutPrefix(c, p); ok {
				return l
			}
		}
	}
	return ""
}

// find returns the first element a under n, depth first, outside chrome
// (the <title> is found inside <head>).
func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	if isChrome(n) && n.DataAtom != atom.Head {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, a); f != nil {
			return f
		}
	}
	return nil
}

// textOf is every text node under n, chrome included.
func textOf(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}

// shownText is the text of n without its chrome: a code listing's copy
// button, Sphinx's "[docs]" link beside each definition of its code.
func shownText(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !isChrome(c) {
				walk(c)
			}
		}
	}
	walk(n)
	return sb.String()
}

// blockish are the elements whose text never runs into the next one's
// when a block's text is read inline (a table cell inside a definition).
var blockish = map[atom.Atom]bool{
	atom.Li: true, atom.P: true, atom.Div: true, atom.Td: true, atom.Th: true, atom.Tr: true, atom.Table: true,
	atom.Dt: true, atom.Dd: true, atom.Dl: true, atom.Ul: true, atom.Ol: true, atom.Section: true,
	atom.Blockquote: true, atom.Pre: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Caption: true, atom.Figcaption: true, atom.Address: true,
}
