package source

import (
	"sort"
	"strings"
	"unicode"

	"github.com/prose-store/prose/internal/lazyre"
)

// Revision names how sources are read into documents, and is part of
// each source's memo key, so a vault's pages of a source read before a
// change are derived again on its next ingest. Revision 2 reads
// AsciiDoc's delimited blocks and one-line titles in plain text.
const Revision = "read-2"

// numbered and bulleted are the items' lines, as numberedItem and
// bulletedItem read them without the expressions.
var (
	numbered  = lazyre.New(`^\s*(?:\d{1,3}|[a-z])[.)]\s+(\S.*)$`)
	bulleted  = lazyre.New(`^\s*[-*•+]\s+(\S.*)$`)
	underline = lazyre.New(`^\s*(=+|-+)\s*$`)
)

// readText fills d from plain text: blank lines separate blocks; a line
// underlined with === or --- is a heading, and so is a short line in
// capitals standing alone or one led by "= " to "===== " (AsciiDoc's
// titles); the first short line is the title; runs of numbered lines are
// steps and bulleted lines a list; a block between two equal lines of
// four or more '-' or '.' (AsciiDoc's listing and literal blocks) is code,
// kept as it is — its lines are never headings, its delimiters never
// underlines.
func readText(d *Document, src string) {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " \t")
	}
	closers := delimiters(lines)
	var para []string
	flush := func() {
		if len(para) > 0 {
			d.addBlock(plainBlock(para))
			para = nil
		}
	}
	first := true
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		// AsciiDoc's anchor and attribute lines ("[[detached-head]]",
		// "[preface]", "[source,c]") before a title or a delimited block
		// belong to it: an anchor names the section, an attribute is
		// markup, and neither is text.
		attrs := len(para) > 0 && attributesOnly(para)
		if len(para) == 0 || attrs {
			// A delimiter starting a block (after a blank line: one
			// right under a line of text underlines it) opens one.
			if j := closers.after(line, i); j > i {
				para = nil
				if j > i+1 {
					d.addBlock(Block{Kind: Code, Text: strings.Join(lines[i+1:j], "\n")})
				}
				i, first = j, false
				continue
			}
		}
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		aloneAfter := i+1 >= len(lines) || strings.TrimSpace(next) == ""
		switch {
		case (len(para) == 0 || attrs) && titleLevel(line) > 0:
			ids := anchorsOf(para)
			para = nil
			d.addSection(titleLevel(line), strings.TrimSpace(strings.TrimLeft(line, "=")))
			d.Sections[len(d.Sections)-1].IDs = ids
		case (len(para) == 0 || attrs) && underline().MatchString(next) && shortLine(line) && !directive(line):
			ids := anchorsOf(para)
			para = nil
			level := 2
			if strings.Contains(next, "=") {
				level = 1
			}
			d.addSection(level, line)
			d.Sections[len(d.Sections)-1].IDs = ids
			i++
		case len(para) == 0 && first && aloneAfter && shortLine(line) && !directive(line):
			d.addSection(1, line)
		case len(para) == 0 && aloneAfter && shortLine(line) && isCapitals(line) && !directive(line):
			d.addSection(2, line)
		default:
			para = append(para, line)
		}
		first = false
	}
	flush()
}

// delimited finds the delimiters of a text's delimited blocks: by line,
// the lines of four or more '-' or '.' and nothing else, and where each
// occurs.
type delimited map[string][]int

func delimiters(lines []string) delimited {
	out := delimited{}
	for i, l := range lines {
		if isDelimiter(l) {
			out[l] = append(out[l], i)
		}
	}
	return out
}

func isDelimiter(l string) bool {
	if len(l) < 4 || l[0] != '-' && l[0] != '.' {
		return false
	}
	return strings.Count(l, l[:1]) == len(l)
}

// after is the line closing the block that line, at i, opens: the next
// line equal to it, or -1 when line is no delimiter or none follows.
func (dl delimited) after(line string, i int) int {
	at := dl[line]
	k := sort.SearchInts(at, i+1)
	if k < len(at) {
		return at[k]
	}
	return -1
}

// attributesOnly says whether every line is an AsciiDoc anchor or
// attribute line: one token in square brackets ("[[id]]", "[preface]",
// "[source,c]").
func attributesOnly(lines []string) bool {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if len(l) < 3 || l[0] != '[' || l[len(l)-1] != ']' || strings.ContainsAny(l, " \t") {
			return false
		}
	}
	return true
}

// anchorsOf is the names of the anchor lines ("[[detached-head]]") among
// lines, nil when none is.
func anchorsOf(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[[") && strings.HasSuffix(l, "]]") && len(l) > 4 {
			id, _, _ := strings.Cut(l[2:len(l)-2], ",")
			out = append(out, id)
		}
	}
	return out
}

// titleLevel is the level of an AsciiDoc one-line title ("== Usage": 2),
// 0 for any other line: one to five '=' then a space and a short line
// starting with a letter or digit.
func titleLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '=' {
		n++
	}
	if n == 0 || n > 5 || n+1 >= len(line) || line[n] != ' ' {
		return 0
	}
	rest := strings.TrimSpace(line[n:])
	r := []rune(rest)
	if len(r) == 0 || !unicode.IsLetter(r[0]) && !unicode.IsDigit(r[0]) || !shortLine(rest) {
		return 0
	}
	return n
}

// plainBlock reads a run of lines: steps, a list, or a paragraph (or
// definitions). Plain text is text: every character Markdown would read as
// markup is escaped (EscapeText).
func plainBlock(lines []string) Block {
	if items, ok := matchAll(lines, numberedItem); ok {
		return listBlock(escapeAll(items), true)
	}
	if items, ok := matchAll(lines, bulletedItem); ok {
		return listBlock(escapeAll(items), false)
	}
	return textBlock(escapeAll(lines))
}

func escapeAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = EscapeText(l)
	}
	return out
}

// matchAll returns the item of every line when each line is one (item
// is numberedItem or bulletedItem; a line that is not continues the item
// before it).
func matchAll(lines []string, item func(string) (string, bool)) ([]string, bool) {
	var items []string
	for _, l := range lines {
		if m, ok := item(l); ok {
			items = append(items, m)
		} else if len(items) > 0 && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) {
			items[len(items)-1] += " " + strings.TrimSpace(l)
		} else {
			return nil, false
		}
	}
	return items, len(items) > 0
}

// bulletedItem is bulleted's first submatch of line, and whether it
// matches, read without running the expression: what follows the white
// space after a bullet that the line's white space leads to.
func bulletedItem(line string) (string, bool) {
	i := reSpaces(line, 0)
	switch {
	case i < len(line) && (line[i] == '-' || line[i] == '*' || line[i] == '+'):
		i++
	case strings.HasPrefix(line[i:], "•"):
		i += len("•")
	default:
		return "", false
	}
	return itemAfter(line, i)
}

// numberedItem is numbered's first submatch of line, and whether it
// matches, read as bulletedItem reads a bullet: one to three digits or
// one lower-case ASCII letter, then '.' or ')'.
func numberedItem(line string) (string, bool) {
	i := reSpaces(line, 0)
	switch {
	case i < len(line) && 'a' <= line[i] && line[i] <= 'z':
		i++
	case i < len(line) && '0' <= line[i] && line[i] <= '9':
		j := i
		for j < len(line) && j-i < 3 && '0' <= line[j] && line[j] <= '9' {
			j++
		}
		i = j
	default:
		return "", false
	}
	if i >= len(line) || line[i] != '.' && line[i] != ')' {
		return "", false
	}
	return itemAfter(line, i+1)
}

// itemAfter is the item of a line whose marker ends at i: the text after
// the white space (at least one byte of it) that follows, which must
// not be empty; as (\S.*)$ reads it, no line end may follow.
func itemAfter(line string, i int) (string, bool) {
	j := reSpaces(line, i)
	if j == i || j == len(line) || strings.IndexByte(line[j:], '\n') >= 0 {
		return "", false
	}
	return line[j:], true
}

// reSpaces is the offset of the first byte at or after i that is not
// white space as \s reads it (tab, line feed, form feed, carriage return,
// space).
func reSpaces(s string, i int) int {
	for i < len(s) && reSpace(s[i]) {
		i++
	}
	return i
}

// shortLine is a line that could be a heading: at most twelve words, not
// ending like a sentence.
func shortLine(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && len(strings.Fields(s)) <= 12 && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, ",") &&
		!strings.HasSuffix(s, ";") && !isItem(bulletedItem, s) && !isItem(numberedItem, s)
}

// directive is a line of markup a text's own tool reads, not words: one
// token holding "::" or brackets (AsciiDoc's include::urls.txt[],
// REMOTES[[REMOTES]], a reST role). It is no heading and no title; it
// stays in the text, where the reader sees it as written.
// isItem reports whether line is an item as item reads it.
func isItem(item func(string) (string, bool), line string) bool {
	_, ok := item(line)
	return ok
}

func directive(s string) bool {
	s = strings.TrimSpace(s)
	return !strings.ContainsAny(s, " \t") && (strings.Contains(s, "::") || strings.ContainsAny(s, "[]{}<>"))
}

func isCapitals(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 3
}
