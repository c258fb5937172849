package source

import (
	"bytes"
	"html"
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Raw HTML in a Markdown source is read for its text, never its markup:
//
//   - a tag of an HTML element (htmlElements), written in lower case or,
//     two letters or more, in capitals (<b>, </span>, <br/>, <DIV>), is
//     dropped and the text around it kept (a <br> as a space); so is a
//     comment;
//   - any other tag is literal text: List<String>, Optional<T>, <name>,
//     and a capitalised element name (Set<Object>, Pair<A>), which is how
//     a type or a placeholder is written, not HTML;
//   - the text between <script> or <style> tags is dropped with them;
//   - an HTML block is read as an HTML source's text is (html.go): its
//     paragraphs, lists, tables and headings become blocks, its markup and
//     chrome are dropped, and its tags that are not HTML stay text.

// htmlElements are the names of HTML's elements, obsolete ones included.
var htmlElements = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`a abbr acronym address area article aside audio b base basefont bdi bdo big
		blink blockquote body br button canvas caption center cite code col colgroup data datalist dd del details
		dfn dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4
		h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li link main map mark marquee
		menu meta meter nav nobr noembed noframes noscript object ol optgroup option output p param picture
		plaintext pre progress q rb rp rt rtc ruby s samp script search section select slot small source span
		strike strong style sub summary sup svg math table tbody td template textarea tfoot th thead time title
		tr track tt u ul var video wbr xmp`) {
		m[n] = true
	}
	return m
})

// htmlTag reads the raw tag s (<name …>, </name>, <name/>): its name and
// whether it closes; ok is false when s is no tag.
func htmlTag(s string) (name string, closing, ok bool) {
	if !strings.HasPrefix(s, "<") {
		return "", false, false
	}
	s = s[1:]
	if strings.HasPrefix(s, "/") {
		closing = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && (s[i] >= '0' && s[i] <= '9' || s[i] == '-')) {
		i++
	}
	if i == 0 {
		return "", false, false
	}
	return s[:i], closing, true
}

// isHTMLElement reports whether a tag's name, as written, is an HTML
// element's: in lower case, or in capitals when two letters or more.
func isHTMLElement(name string) bool {
	lower := strings.ToLower(name)
	if !htmlElements()[lower] {
		return false
	}
	return name == lower || len(name) >= 2 && name == strings.ToUpper(name)
}

// rawInline is what a span of raw inline HTML says as inline Markdown, and
// whether it opens (1) or closes (-1) a <script> or <style> whose content
// is dropped.
func rawInline(raw string) (string, int) {
	if strings.HasPrefix(raw, "<!--") {
		return "", 0
	}
	name, closing, ok := htmlTag(raw)
	if !ok || !isHTMLElement(name) {
		return EscapeText(strings.ReplaceAll(raw, "\n", " ")), 0
	}
	switch strings.ToLower(name) {
	case "br":
		return " ", 0
	case "script", "style":
		if closing {
			return "", -1
		}
		if !strings.HasSuffix(raw, "/>") {
			return "", 1
		}
	}
	return "", 0
}

// rawHTMLOf is the raw text of an inline raw HTML node.
func rawHTMLOf(n *ast.RawHTML, src []byte) string {
	var sb strings.Builder
	for i := 0; i < n.Segments.Len(); i++ {
		seg := n.Segments.At(i)
		sb.Write(seg.Value(src))
	}
	return sb.String()
}

// htmlBlockNodes parses an HTML block of a Markdown source as a fragment
// of a <body>, its tags that are not HTML turned into text first.
func htmlBlockNodes(n *ast.HTMLBlock, src []byte) []*xhtml.Node {
	var raw bytes.Buffer
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		raw.Write(seg.Value(src))
	}
	if n.HasClosure() {
		raw.Write(n.ClosureLine.Value(src))
	}
	var out bytes.Buffer
	z := xhtml.NewTokenizer(bytes.NewReader(raw.Bytes()))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		tok := z.Raw()
		if tt == xhtml.StartTagToken || tt == xhtml.EndTagToken || tt == xhtml.SelfClosingTagToken {
			if name, _, ok := htmlTag(string(tok)); ok && !isHTMLElement(name) {
				out.WriteString(html.EscapeString(string(tok)))
				continue
			}
		}
		out.Write(tok)
	}
	body := &xhtml.Node{Type: xhtml.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := xhtml.ParseFragment(&out, body)
	if err != nil {
		return nil
	}
	return nodes
}

// htmlBlock adds the blocks of an HTML block to d.
func (r *mdReader) htmlBlock(n *ast.HTMLBlock) {
	hr := htmlReader{d: r.d}
	for _, c := range htmlBlockNodes(n, r.src) {
		hr.node(c)
	}
	hr.flush()
}

// htmlBlockText is the text of an HTML block inside a list item or a
// quote, as inline Markdown.
func (r *mdReader) htmlBlockText(n *ast.HTMLBlock) string {
	hr := htmlReader{d: r.d}
	var parts []string
	for _, c := range htmlBlockNodes(n, r.src) {
		if c.Type == xhtml.TextNode {
			parts = append(parts, EscapeText(c.Data))
			continue
		}
		if c.Type != xhtml.ElementNode || isChrome(c) {
			continue
		}
		wrap := &xhtml.Node{Type: xhtml.ElementNode, Data: "div", DataAtom: atom.Div}
		wrap.AppendChild(c)
		parts = append(parts, hr.inline(wrap))
	}
	return clean(strings.Join(parts, " "))
}
