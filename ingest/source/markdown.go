package source

import (
	"bytes"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

var markdownParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.Table, extension.DefinitionList, extension.Strikethrough)).Parser()
})

// markdownParserNoTables reads a source whose tables would be too large.
var markdownParserNoTables = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.DefinitionList, extension.Strikethrough)).Parser()
})

// maxTableCells bounds the cells a source's tables may have once every row
// is padded to its table's width, as the Markdown parser pads them (a
// header thousands of columns wide over rows of one cell grows a small
// source into a huge one). Past it the source's tables are read as text.
const maxTableCells = 1 << 16

// tableCells counts the cells of src's tables, padded, stopping once past
// maxTableCells: a table starts at a delimiter row (| --- | :-: |) and runs
// to the next blank line.
func tableCells(src []byte) int {
	total, width := 0, 0
	for line := range bytes.Lines(src) {
		t := bytes.TrimSpace(line)
		switch {
		case len(t) == 0:
			width = 0
		case width > 0:
			total += width
		case isDelimiterRow(t):
			width = bytes.Count(t, []byte("|")) + 1
			total += 2 * width // the header and this row
		}
		if total > maxTableCells {
			break
		}
	}
	return total
}

func isDelimiterRow(t []byte) bool {
	if !bytes.Contains(t, []byte("|")) || !bytes.Contains(t, []byte("-")) {
		return false
	}
	for _, c := range t {
		if c != '|' && c != '-' && c != ':' && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// readMarkdown fills d from CommonMark with tables and definition lists.
// A YAML front matter block may give the title.
func readMarkdown(d *Document, src []byte) {
	body, fmTitle := frontMatter(src)
	p := markdownParser()
	if tableCells(body) > maxTableCells {
		p = markdownParserNoTables()
	}
	root := p.Parse(text.NewReader(body))
	r := mdReader{d: d, src: body}
	for n := root.FirstChild(); n != nil; {
		next := n.NextSibling()
		r.block(n)
		// A block read is let go of: the parser's tree of a 16 MiB
		// source (≈ 30 MB) and the blocks made of it are never held
		// whole at once.
		root.RemoveChild(root, n)
		n = next
	}
	if fmTitle != "" {
		d.Title = fmTitle
	}
	if d.Title == "" {
		for _, s := range d.Sections {
			if s.Heading != "" {
				d.Title = s.Heading
				break
			}
		}
	}
}

// frontMatter splits a leading "---" YAML block off src and returns its
// title: value, if any.
func frontMatter(src []byte) ([]byte, string) {
	if !bytes.HasPrefix(src, []byte("---\n")) && !bytes.HasPrefix(src, []byte("---\r\n")) {
		return src, ""
	}
	rest := src[bytes.IndexByte(src, '\n')+1:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return src, ""
	}
	title := ""
	for _, line := range strings.Split(string(rest[:end]), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "title:"); ok {
			title = clean(strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
	after := rest[end+4:]
	if i := bytes.IndexByte(after, '\n'); i >= 0 {
		after = after[i+1:]
	} else {
		after = nil
	}
	return after, title
}

type mdReader struct {
	d   *Document
	src []byte
	// depth is how many descriptions deep the reader reads.
	depth int
}

func (r *mdReader) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		r.d.addSection(n.Level, Plain(r.inline(n, " ")))
	case *ast.Paragraph, *ast.TextBlock:
		r.d.addBlock(textBlock(strings.Split(r.inline(n, "\n"), "\n")))
	case *ast.List:
		if b, ok := r.describedList(n); ok {
			r.d.addBlock(b)
			return
		}
		var items []string
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			items = append(items, r.item(it))
		}
		r.d.addBlock(listBlock(items, n.IsOrdered()))
	case *ast.FencedCodeBlock:
		r.d.addBlock(Block{Kind: Code, Lang: string(n.Language(r.src)), Text: r.lines(n)})
	case *ast.CodeBlock:
		r.d.addBlock(Block{Kind: Code, Text: r.lines(n)})
	case *ast.HTMLBlock:
		r.htmlBlock(n)
	case *ast.Blockquote:
		var parts []string
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			parts = append(parts, r.nested(c))
		}
		r.d.addBlock(Block{Kind: Quote, Text: clean(strings.Join(parts, " "))})
	case *east.Table:
		var header []string
		var rows [][]string
		for row := n.FirstChild(); row != nil; row = row.NextSibling() {
			var cells []string
			for c := row.FirstChild(); c != nil; c = c.NextSibling() {
				cells = append(cells, clean(r.inline(c, " ")))
			}
			if _, ok := row.(*east.TableHeader); ok {
				header = cells
			} else {
				rows = append(rows, cells)
			}
		}
		r.d.addBlock(tableBlock(header, rows))
	case *east.DefinitionList:
		var defs []Definition
		term := ""
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c.(type) {
			case *east.DefinitionTerm:
				term = clean(Plain(r.inline(c, " ")))
			case *east.DefinitionDescription:
				if term != "" {
					defs = append(defs, Definition{Term: term, Meaning: clean(r.item(c))})
				}
			}
		}
		if len(defs) > 0 {
			r.d.addBlock(Block{Kind: Definitions, Defs: defs})
		}
	}
}

// describedList reads a list of definitions: one whose every item starts
// "**term**: meaning" (the form Document.Markdown writes a definition in,
// whatever the term holds) or, when an item holds more than its first
// paragraph, is a "term: meaning" line; what an item holds after its first
// paragraph (paragraphs, code, lists indented under it) is the
// definition's Body. ok is false for any other list, read as its items'
// text.
func (r *mdReader) describedList(l *ast.List) (Block, bool) {
	if l.IsOrdered() {
		return Block{}, false
	}
	more, bold := false, true
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		switch it.FirstChild().(type) {
		case *ast.Paragraph, *ast.TextBlock:
		default:
			return Block{}, false
		}
		more = more || it.FirstChild().NextSibling() != nil
		bold = bold && boldTerm(it.FirstChild(), r.src)
	}
	if !more && !bold || more && r.depth >= MaxNesting {
		return Block{}, false // deeper, a description is one run of text
	}
	start := len(r.d.Links)
	var defs []Definition
	var firsts []string
	var bodies [][]Block
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		first := it.FirstChild()
		if bold {
			at := len(r.d.Links)
			lead := r.inline(first.FirstChild(), " ")
			r.d.Links = r.d.Links[:at] // recorded again with the item's text
			full := clean(r.inline(first, " "))
			meaning := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(full, clean(lead)), ":"))
			defs = append(defs, Definition{Term: clean(Plain(lead)), Meaning: meaning})
		} else {
			firsts = append(firsts, clean(r.inline(first, " ")))
		}
		sub := mdReader{d: &Document{Kind: r.d.Kind}, src: r.src, depth: r.depth + 1}
		for c := first.NextSibling(); c != nil; c = c.NextSibling() {
			sub.block(c)
		}
		ss := sub.d.Sections
		if len(ss) > 1 || (len(ss) == 1 && ss[0].Heading != "") {
			r.d.Links = r.d.Links[:start]
			return Block{}, false // a heading inside an item
		}
		var body []Block
		if len(ss) == 1 {
			body = ss[0].Blocks
		}
		bodies = append(bodies, body)
		r.d.Links = append(r.d.Links, sub.d.Links...)
	}
	if !bold {
		var ok bool
		if defs, ok = allDefinitions(firsts, 1); !ok || len(defs) != len(firsts) {
			r.d.Links = r.d.Links[:start] // read again as the list's items
			return Block{}, false
		}
	}
	for i := range defs {
		defs[i].Body = bodies[i]
	}
	return Block{Kind: Definitions, Defs: defs}, true
}

// boldTerm reports whether paragraph p starts with a term in strong
// emphasis and a colon after it: "**term**: meaning".
func boldTerm(p ast.Node, src []byte) bool {
	em, ok := p.FirstChild().(*ast.Emphasis)
	if !ok || em.Level != 2 {
		return false
	}
	t, ok := em.NextSibling().(*ast.Text)
	if !ok {
		return false
	}
	v := string(t.Segment.Value(src))
	return v == ":" || strings.HasPrefix(v, ": ")
}

// item is the text of a list item or description: its blocks joined, a
// nested list's items after a colon.
func (r *mdReader) item(n ast.Node) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if l, ok := c.(*ast.List); ok {
			var sub []string
			for it := l.FirstChild(); it != nil; it = it.NextSibling() {
				sub = append(sub, r.item(it))
			}
			parts = append(parts, strings.Join(sub, "; "))
			continue
		}
		parts = append(parts, r.nested(c))
	}
	return clean(strings.Join(parts, " "))
}

// nested is the text of a block inside a list item or a quote.
func (r *mdReader) nested(n ast.Node) string {
	if h, ok := n.(*ast.HTMLBlock); ok {
		return r.htmlBlockText(h)
	}
	return r.inline(n, " ")
}

// lines is the raw text of a code block.
func (r *mdReader) lines(n ast.Node) string {
	var sb strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		sb.Write(seg.Value(r.src))
	}
	return strings.TrimRight(sb.String(), "\n")
}

// inline is n's inline content as canonical inline Markdown (see
// EscapeText); soft line breaks become brk. Links are recorded. An
// image is its alt text; raw HTML is read as markdown_html.go says.
func (r *mdReader) inline(n ast.Node, brk string) string {
	sb := &strings.Builder{}
	// hidden holds the text written while a <script> or <style> is open.
	var shown *strings.Builder
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				sb.WriteString(EscapeText(unescapeMarkdown(string(c.Segment.Value(r.src)))))
				if c.SoftLineBreak() || c.HardLineBreak() {
					sb.WriteString(brk)
				}
			case *ast.String:
				v := string(c.Value)
				if !c.IsRaw() && !c.IsCode() {
					v = unescapeMarkdown(v)
				}
				sb.WriteString(EscapeText(v))
			case *ast.CodeSpan:
				var code strings.Builder
				for g := c.FirstChild(); g != nil; g = g.NextSibling() {
					switch t := g.(type) {
					case *ast.Text:
						code.Write(t.Segment.Value(r.src))
					case *ast.String:
						code.Write(t.Value)
					}
				}
				sb.WriteString(codeSpan(code.String()))
			case *ast.Link:
				outer := sb
				sb = &strings.Builder{}
				walk(c)
				text := strings.TrimSpace(sb.String())
				sb = outer
				u := unescapeMarkdown(string(c.Destination))
				r.d.Links = append(r.d.Links, Link{Text: clean(Plain(text)), URL: u})
				sb.WriteString(linkText(text, u))
			case *ast.AutoLink:
				label := string(c.Label(r.src))
				u := string(c.URL(r.src))
				if c.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
					u = "mailto:" + u
				}
				sb.WriteString(linkText(EscapeText(label), u))
				r.d.Links = append(r.d.Links, Link{Text: label, URL: u})
			case *ast.RawHTML:
				text, open := rawInline(rawHTMLOf(c, r.src))
				switch {
				case open > 0 && shown == nil:
					shown, sb = sb, &strings.Builder{}
				case open < 0 && shown != nil:
					sb, shown = shown, nil
				}
				sb.WriteString(text)
			default: // an image's alt text, emphasis: their text
				walk(c)
			}
		}
	}
	walk(n)
	if shown != nil {
		sb = shown
	}
	return strings.TrimSpace(sb.String())
}
