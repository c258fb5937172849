package source

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/parallel"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Boilerplate is what the HTML documents of one collection (the files of
// one directory argument) repeat at their edges: navigation bars,
// sidebars, footers a generator writes on every page. A block is
// boilerplate when its shape — its text in lower case, digits as 0, the
// text of its links as # when it says more than its links — recurs in at
// least half the documents of a collection of three or more, before the
// document's first heading or among its last blocks. Reading a document
// with its collection's Boilerplate leaves those blocks out; a file read
// alone uses the element rules only.
type Boilerplate struct {
	// Collection names the collection: the folder its documents' names
	// share.
	Collection string `json:"collection"`
	// Documents is how many HTML documents were compared.
	Documents int `json:"documents"`
	// Blocks are the shapes found, sorted.
	Blocks []string `json:"blocks"`
	keys   map[string]bool
	words  []map[string]bool // the words of each found bar (partOf)
}

// Token identifies what a Boilerplate drops: it is part of a source's
// memo key, so a collection whose boilerplate changed is read again.
func (b *Boilerplate) Token() string {
	if b == nil || len(b.Blocks) == 0 {
		return ""
	}
	return canon.BLAKE3.Token([]byte(strings.Join(b.Blocks, "\x00")))
}

const (
	// maxShape is the most text a boilerplate block holds.
	maxShape = 2000
	// edgeBlocks is how many of a document's last blocks count as its edge.
	edgeBlocks = 6
	// maxNest bounds how many candidate blocks nest, so finding them is
	// linear in a document's bytes.
	maxNest = 4
)

// candidateTags are the elements a boilerplate block may be.
var candidateTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Table: true, atom.Tr: true, atom.Ul: true, atom.Ol: true, atom.Li: true,
	atom.Dl: true, atom.Section: true, atom.Address: true, atom.Blockquote: true, atom.Center: true,
}

type candidate struct {
	n     *html.Node
	key   string
	edge  bool
	top   int // index of its outermost candidate
	isTop bool
}

// candidates lists the blocks of a parsed document that could be
// boilerplate, in document order, each with its shape and whether it sits
// at the document's edge.
func candidates(root *html.Node) []candidate {
	lens := map[*html.Node]int{}
	// headed are the elements holding a heading: a part of the document
	// with a title of its own (rustdoc's "impl Copy for Spacing", whose
	// shape with its links as # recurs on most pages) is never a bar.
	headed := map[*html.Node]bool{}
	var size func(*html.Node) (int, bool)
	size = func(n *html.Node) (int, bool) {
		if n.Type == html.TextNode {
			return len(n.Data), false
		}
		s, h := 0, isHeading(n)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cs, ch := size(c)
			s += cs
			h = h || ch
		}
		lens[n] = s
		if h {
			headed[n] = true
		}
		return s, h
	}
	size(root)
	var out []candidate
	seenHeading := false
	tops := 0
	var walk func(n *html.Node, nest, top int)
	walk = func(n *html.Node, nest, top int) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || isChrome(c) {
				continue
			}
			switch c.DataAtom {
			case atom.H1, atom.H2, atom.H3:
				seenHeading = true
				continue
			case atom.Pre, atom.Script, atom.Style:
				continue
			}
			l := lens[c]
			if candidateTags[c.DataAtom] && l > 0 && l <= maxShape && nest < maxNest && lens[n] != l && !headed[c] {
				if k := shape(c); k != "" {
					t := top
					if nest == 0 {
						t = tops
						tops++
					}
					out = append(out, candidate{n: c, key: k, edge: !seenHeading, top: t, isTop: nest == 0})
					walk(c, nest+1, t)
					continue
				}
			}
			walk(c, nest, top)
		}
	}
	walk(root, 0, 0)
	for i := range out {
		if out[i].top >= tops-edgeBlocks {
			out[i].edge = true
		}
	}
	return out
}

// shape is a block's text as compared across documents: lower case,
// digits as 0, white space collapsed, and — when the block says more
// than its links (two words or more outside them) — each link's text as
// "#", so "Next: Types, Previous: Basics, Up: Using libffi" is the same
// bar on every page.
func shape(n *html.Node) string {
	var all, outside strings.Builder
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, inLink bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				all.WriteString(c.Data)
				if inLink {
					outside.WriteString("#")
				} else {
					outside.WriteString(c.Data)
				}
			case c.Type == html.ElementNode && !chrome[c.DataAtom]:
				walk(c, inLink || c.DataAtom == atom.A)
				if c.DataAtom != atom.A && c.DataAtom != atom.Span && c.DataAtom != atom.Code {
					all.WriteString(" ")
					outside.WriteString(" ")
				}
			}
		}
	}
	walk(n, false)
	text := all.String()
	if words := strings.Fields(strings.ReplaceAll(outside.String(), "#", " ")); len(words) >= 2 {
		text = outside.String()
	}
	var sb strings.Builder
	space := false
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsSpace(r) || r == '\u00a0':
			space = sb.Len() > 0
			continue
		case unicode.IsDigit(r):
			r = '0'
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	s := sb.String()
	for strings.Contains(s, "##") {
		s = strings.ReplaceAll(s, "##", "#")
	}
	if strings.Trim(s, "# ") == "" {
		return ""
	}
	return s
}

// contentRoot is the element a document's text is read from.
func contentRoot(doc *html.Node) *html.Node {
	for _, a := range []atom.Atom{atom.Main, atom.Article, atom.Body} {
		if r := find(doc, a); r != nil {
			return r
		}
	}
	return doc
}

// FindBoilerplate compares the HTML inputs of each collection (the files
// found in one directory argument) and returns, by Input.Collection, what
// each repeats. Collections of fewer than three HTML documents get none.
// Each document is parsed once, on every core; the cost is linear in
// their bytes.
func FindBoilerplate(inputs []Input) map[string]*Boilerplate {
	groups := map[string][]int{}
	var order []string
	for i, in := range inputs {
		if in.Collection == "" || KindOf(in.Name) != HTML {
			continue
		}
		if _, ok := groups[in.Collection]; !ok {
			order = append(order, in.Collection)
		}
		groups[in.Collection] = append(groups[in.Collection], i)
	}
	out := map[string]*Boilerplate{}
	for _, c := range order {
		idx := groups[c]
		if len(idx) < 3 {
			continue
		}
		// Each document's blocks, found on every core (a document's
		// are its own), then counted: the counts, and so what is
		// boilerplate, do not depend on which document was read first.
		keys := make([][]string, len(idx))
		parallel.For(len(idx), func(k int) {
			doc, err := html.Parse(bytes.NewReader(inputs[idx[k]].Data))
			if err != nil {
				return
			}
			seen := map[string]bool{}
			for _, cd := range candidates(contentRoot(doc)) {
				if cd.edge && !seen[cd.key] {
					seen[cd.key] = true
					keys[k] = append(keys[k], cd.key)
				}
			}
		})
		counts := map[string]int{}
		var names []string
		for k, i := range idx {
			names = append(names, inputs[i].Name)
			for _, key := range keys[k] {
				counts[key]++
			}
		}
		need := (len(idx) + 1) / 2
		label := commonFolder(names)
		if label == "" {
			label = filepath.ToSlash(filepath.Base(c))
		}
		b := &Boilerplate{Collection: label, Documents: len(idx), keys: map[string]bool{}}
		for k, n := range counts {
			if n >= need {
				b.Blocks = append(b.Blocks, k)
				b.keys[k] = true
			}
		}
		sort.Strings(b.Blocks)
		for _, k := range b.Blocks {
			if strings.Contains(k, "#") {
				b.words = append(b.words, shapeWords(k))
			}
		}
		if len(b.Blocks) > 0 {
			out[c] = b
		}
	}
	return out
}

// commonFolder is the folder every name lies in ("" when none).
func commonFolder(names []string) string {
	if len(names) == 0 {
		return ""
	}
	common := strings.Split(filepath.ToSlash(names[0]), "/")
	common = common[:len(common)-1]
	for _, n := range names[1:] {
		parts := strings.Split(n, "/")
		parts = parts[:len(parts)-1]
		i := 0
		for i < len(common) && i < len(parts) && common[i] == parts[i] {
			i++
		}
		common = common[:i]
	}
	return strings.Join(common, "/")
}

// skipped returns the nodes of a parsed document that b drops.
func (b *Boilerplate) skipped(doc *html.Node) map[*html.Node]bool {
	if b == nil || len(b.keys) == 0 {
		return nil
	}
	out := map[*html.Node]bool{}
	for _, cd := range candidates(contentRoot(doc)) {
		if cd.edge && (b.keys[cd.key] || b.partOf(cd.key)) {
			out[cd.n] = true
		}
	}
	return out
}

// partOf reports a shape that is a found bar with some of its links
// missing: it has links, and its words outside them are some of the
// words of one found shape ("previous: #, up: #" on the last page of a
// chapter, beside "next: #, previous: #, up: #" everywhere else).
func (b *Boilerplate) partOf(key string) bool {
	if !strings.Contains(key, "#") {
		return false
	}
	words := shapeWords(key)
	if len(words) == 0 {
		return false
	}
next:
	for _, ws := range b.words {
		for w := range words {
			if !ws[w] {
				continue next
			}
		}
		return true
	}
	return false
}

// shapeWords are the words of a shape outside its links.
func shapeWords(key string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(key, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

// ReadWith reads one source as Read does, leaving out the blocks of its
// collection's boilerplate (nil: none). The document records the
// boilerplate (Document.Boilerplate).
func ReadWith(name string, data []byte, kind Kind, b *Boilerplate) (*Document, error) {
	if b == nil || len(b.keys) == 0 {
		return Read(name, data, kind)
	}
	d, err := readWith(name, data, kind, b)
	if err == nil && d.Kind == HTML {
		d.Boilerplate = b
	}
	return d, err
}
