package source

import (
	"strings"
	"unicode/utf8"
)

// MaxBlock is the most text one block holds. A longer paragraph, quote,
// code block or turn (a source of one 16 MiB paragraph, a `<pre>` that
// never closes) is read as several blocks of its kind, cut between words
// (code between lines), and a longer list, table or definition list as
// several of at most MaxBlock each, so that every later step — rendering,
// a section page, the search index, a prompt's part — holds a bounded
// piece of it; nothing of the text is left out.
const MaxBlock = 256 << 10

// boundBlocks cuts every block of d past MaxBlock (see MaxBlock).
func boundBlocks(d *Document) {
	for si := range d.Sections {
		s := &d.Sections[si]
		big := false
		for _, b := range s.Blocks {
			if blockSize(b) > MaxBlock {
				big = true
				break
			}
		}
		if !big {
			continue
		}
		var out []Block
		for _, b := range s.Blocks {
			if blockSize(b) <= MaxBlock {
				out = append(out, b)
				continue
			}
			out = append(out, cutBlock(b)...)
		}
		s.Blocks = out
	}
}

// blockSize is the bytes of text a block holds.
func blockSize(b Block) int {
	n := len(b.Text)
	for _, it := range b.Items {
		n += len(it)
	}
	for _, df := range b.Defs {
		n += defSize(df)
	}
	for _, h := range b.Header {
		n += len(h)
	}
	for _, r := range b.Rows {
		for _, c := range r {
			n += len(c)
		}
	}
	return n
}

// defSize is the bytes of text a definition holds, its Body's with it.
func defSize(df Definition) int {
	n := len(df.Term) + len(df.Meaning)
	for _, x := range df.Body {
		n += blockSize(x)
	}
	return n
}

// cutBlock cuts b into blocks of its kind of at most about MaxBlock each.
func cutBlock(b Block) []Block {
	var out []Block
	switch b.Kind {
	case Paragraph, Quote:
		for _, t := range CutInline(b.Text, MaxBlock) {
			out = append(out, Block{Kind: b.Kind, Text: t})
		}
	case Code:
		for _, t := range cutLines(b.Text, MaxBlock, "\n") {
			out = append(out, Block{Kind: Code, Lang: b.Lang, Text: t})
		}
	case Turn:
		for _, t := range cutLines(b.Text, MaxBlock, "\n\n") {
			out = append(out, Block{Kind: Turn, Role: b.Role, Text: t})
		}
	case List, Steps:
		var items []string
		for _, it := range b.Items {
			items = append(items, CutInline(it, MaxBlock)...)
		}
		size := 0
		cur := Block{Kind: b.Kind}
		for _, it := range items {
			if size+len(it) > MaxBlock && len(cur.Items) > 0 {
				out = append(out, cur)
				cur, size = Block{Kind: b.Kind}, 0
			}
			cur.Items = append(cur.Items, it)
			size += len(it)
		}
		out = append(out, cur)
	case Definitions:
		size := 0
		cur := Block{Kind: Definitions}
		for _, df := range b.Defs {
			if len(df.Body) > 0 && defSize(df) <= MaxBlock {
				if n := defSize(df); size+n > MaxBlock && len(cur.Defs) > 0 {
					out = append(out, cur)
					cur, size = Block{Kind: Definitions}, 0
				}
				cur.Defs = append(cur.Defs, df)
				size += defSize(df)
				continue
			}
			for _, m := range CutInline(df.Meaning, MaxBlock) {
				n := len(df.Term) + len(m)
				if size+n > MaxBlock && len(cur.Defs) > 0 {
					out = append(out, cur)
					cur, size = Block{Kind: Definitions}, 0
				}
				cur.Defs = append(cur.Defs, Definition{Term: df.Term, Meaning: m})
				size += n
			}
			if len(df.Body) > 0 {
				// A description past MaxBlock: its later blocks follow the
				// definition in the section, each bounded in its turn.
				if len(cur.Defs) > 0 {
					out = append(out, cur)
				}
				cur, size = Block{Kind: Definitions}, 0
				for _, x := range df.Body {
					if blockSize(x) <= MaxBlock {
						out = append(out, x)
					} else {
						out = append(out, cutBlock(x)...)
					}
				}
			}
		}
		if len(cur.Defs) > 0 || len(out) == 0 {
			out = append(out, cur)
		}
	case Table:
		head := 0
		for _, h := range b.Header {
			head += len(h)
		}
		size := head
		cur := Block{Kind: Table, Header: b.Header}
		for _, r := range b.Rows {
			n := 0
			for _, c := range r {
				n += len(c)
			}
			if size+n > MaxBlock && len(cur.Rows) > 0 {
				out = append(out, cur)
				cur, size = Block{Kind: Table, Header: b.Header}, head
			}
			cur.Rows = append(cur.Rows, r)
			size += n
		}
		out = append(out, cur)
	default:
		out = append(out, b)
	}
	return out
}

// CutInline cuts inline Markdown (the canonical form of EscapeText) into
// pieces of at most about max bytes that read back, one after another, as
// the same text: cuts fall between words of its literal text, never inside
// an escape or a link (a link longer than max is a piece of its own); a
// code span longer than a piece becomes several; text with no space for
// max bytes is cut between characters.
func CutInline(s string, max int) []string {
	if len(s) <= max {
		return []string{s}
	}
	var out []string
	var cur strings.Builder
	push := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, sp := range parseInline(s, false) {
		if !sp.code && !sp.link {
			// Escaping at most doubles literal text.
			for _, piece := range cutText(sp.text, max/2) {
				w := EscapeText(piece)
				if cur.Len()+len(w) > max {
					push()
				}
				cur.WriteString(w)
			}
			continue
		}
		var w string
		if sp.code {
			// A code span longer than a piece (an element that never
			// closes) is several, cut between words.
			pieces := cutText(sp.text, max/2)
			for _, piece := range pieces[:len(pieces)-1] {
				w := codeSpan(piece)
				if cur.Len()+len(w) > max {
					push()
				}
				if strings.HasSuffix(cur.String(), "`") {
					cur.WriteString(" ") // two code spans, not one run of backticks
				}
				cur.WriteString(w)
			}
			w = codeSpan(pieces[len(pieces)-1])
			if strings.HasSuffix(cur.String(), "`") && len(pieces) > 1 {
				cur.WriteString(" ")
			}
		} else {
			var kid strings.Builder
			for _, k := range sp.kids {
				if k.code {
					kid.WriteString(codeSpan(k.text))
				} else {
					kid.WriteString(EscapeText(k.text))
				}
			}
			w = linkText(kid.String(), sp.url)
		}
		if cur.Len()+len(w) > max {
			push()
		}
		cur.WriteString(w)
	}
	push()
	return out
}

// cutText cuts literal text into pieces of at most max bytes, each
// ending after white space where there is some, else between characters.
func cutText(t string, max int) []string {
	var out []string
	for len(t) > max {
		cut := strings.LastIndexAny(t[:max], " \t\n")
		if cut < 0 {
			cut = max
			for cut > 1 && !utf8.RuneStart(t[cut]) {
				cut--
			}
		} else {
			cut++
		}
		out = append(out, t[:cut])
		t = t[cut:]
	}
	return append(out, t)
}

// cutLines cuts text into pieces of at most max bytes at the last sep (a
// line end, or a blank line) before the limit, else at the last line end,
// else between characters.
func cutLines(t string, max int, sep string) []string {
	var out []string
	for len(t) > max {
		cut := strings.LastIndex(t[:max], sep)
		if cut <= 0 && sep != "\n" {
			cut = strings.LastIndex(t[:max], "\n")
		}
		if cut <= 0 {
			cut = max
			for cut > 0 && !utf8.RuneStart(t[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimRight(t[:cut], "\n"))
		t = strings.TrimLeft(t[cut:], "\n")
	}
	return append(out, t)
}
