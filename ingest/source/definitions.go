package source

import (
	"github.com/prose-store/prose/internal/lazyre"
	"strings"
	"unicode"
	"unicode/utf8"
)

// definitionLine is "term: meaning" or "term — meaning".
var definitionLine = lazyre.New(`^\s*([^:—–]{1,60}?)\s*(?::|\s[—–]\s|\s-\s)\s+(\S.*)$`)

// maySeparate reports whether definitionLine could match line, by what
// the expression needs near the line's start, found without running it:
// after the leading white space (\s: tab, newline, form feed, return,
// space), a term of at most 60 runes holding no ':', '—' or '–', then
// white space, then a separator followed by white space: ": ", or a
// white space, '-', '—' or '–' and two white spaces (" -  "). A long
// paragraph's line whose first colon is far into it is refused at once
// (the expression's backtracking over such lines was a tenth of reading
// a text).
func maySeparate(line string) bool {
	i := 0
	for i < len(line) && reSpace(line[i]) {
		i++
	}
	// stop: where the longest term can end (60 runes on, or at the first
	// ':', '—' or '–', which no term holds).
	stop, runes := i, 0
	for stop < len(line) && runes < 60 && line[stop] != ':' && !emDash(line, stop) {
		_, n := utf8.DecodeRuneInString(line[stop:])
		stop += n
		runes++
	}
	end := stop // the white space after the term may run on past stop
	for end < len(line) && reSpace(line[end]) {
		end++
	}
	for c := 0; c <= end && c < len(line); c++ {
		switch {
		case line[c] == ':':
			if c+1 < len(line) && reSpace(line[c+1]) {
				return true
			}
		case reSpace(line[c]) && c+1 < len(line):
			n := 0
			if line[c+1] == '-' {
				n = 1
			} else if emDash(line, c+1) {
				n = 3
			}
			if n > 0 && c+n+2 < len(line) && reSpace(line[c+n+1]) && reSpace(line[c+n+2]) {
				return true
			}
		}
	}
	return false
}

// reSpace is \s of Go's regular expressions.
func reSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// emDash reports whether line holds '—' or '–' at i.
func emDash(line string, i int) bool {
	return i+2 < len(line) && line[i] == 0xE2 && line[i+1] == 0x80 && (line[i+2] == 0x94 || line[i+2] == 0x93)
}

// notTerms are words that end in a colon without introducing a definition:
// a label of the text that follows.
var notTerms = map[string]bool{
	"note": true, "notes": true, "warning": true, "tip": true, "example": true, "examples": true,
	"caution": true, "important": true, "todo": true, "see": true, "see also": true, "source": true,
	"author": true, "date": true, "updated": true, "status": true, "result": true, "output": true,
	"input": true, "answer": true, "question": true, "q": true, "a": true, "user": true,
	"assistant": true, "system": true, "step": true, "usage": true, "error": true, "fix": true,
	"why": true, "how": true, "what": true, "when": true, "where": true, "for example": true,
	// the labels API references (Doxygen, Javadoc) give parts of an entry
	"returns": true, "return": true, "return value": true, "return values": true, "parameters": true,
	"params": true, "template parameters": true, "precondition": true, "postcondition": true,
	"invariant": true, "remarks": true, "remark": true, "exceptions": true, "throws": true,
	"deprecated": true, "since": true, "version": true, "attention": true, "bug": true,
}

// parseDefinition reads one "term: meaning" line. A term is at most five
// words, starts with a letter, digit, backtick or brace (an API's `{id}`;
// literal braces are kept), and is no URL scheme or time of day; the
// meaning has at least two words; the colon is never one inside a code
// span.
func parseDefinition(line string) (Definition, bool) {
	if !maySeparate(line) {
		// definitionLine needs one of its separators: a line without
		// any is no definition, found without running the expression
		// (a paragraph's line, most often).
		return Definition{}, false
	}
	m := definitionLine().FindStringSubmatch(line)
	if m == nil || strings.Count(m[1], "`")%2 == 1 && strings.Contains(m[2], "`") {
		// No line, or its colon is inside a code span (Change `EnvVar:
		// "X"` to …): code, not a term. A backtick the meaning never
		// closes is a literal one ("only present when `bigint").
		return Definition{}, false
	}
	term, meaning := strings.Trim(clean(Plain(m[1])), "*_`\""), clean(m[2])
	if !TermShaped(term) || len(strings.Fields(meaning)) < 2 {
		return Definition{}, false
	}
	return Definition{Term: term, Meaning: meaning}, true
}

// TermShaped reports whether a line's "term: meaning" could start with
// term (its marks of emphasis, code and quotation trimmed): at most five
// words, starting with a letter, a digit or a brace (an API's `{id}`),
// no label ("Note", "Step 2"), URL scheme, number, path or expression
// (".?!()[]<>=": "-c <key>=<value>", "%a", "fs.watch()"). The offline
// engine asks it of a definition list's terms too: an entry of any other
// shape stays on its source page.
func TermShaped(term string) bool {
	if term == "" || len(strings.Fields(term)) > 5 {
		return false
	}
	first := []rune(term)[0]
	if !unicode.IsLetter(first) && !unicode.IsDigit(first) && first != '{' {
		return false
	}
	lower := strings.ToLower(term)
	return !(notTerms[lower] || strings.HasPrefix(lower, "step ") || strings.Contains(term, "//") ||
		strings.HasSuffix(lower, "http") || strings.HasSuffix(lower, "https") || isNumber(term) ||
		strings.ContainsAny(term, ".?!()[]<>="))
}

func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) && r != ' ' {
			return false
		}
	}
	return true
}

// allDefinitions returns the definitions of lines when every line is one;
// it needs at least min lines.
func allDefinitions(lines []string, min int) ([]Definition, bool) {
	var defs []Definition
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		d, ok := parseDefinition(l)
		if !ok {
			return nil, false
		}
		defs = append(defs, d)
	}
	return defs, len(defs) >= min
}

// glossaryTable returns a table's rows as definitions when its header says
// it is a glossary: a first column named term, word, name or concept and a
// second named definition, meaning or description.
func glossaryTable(header []string, rows [][]string) ([]Definition, bool) {
	if len(header) < 2 {
		return nil, false
	}
	h0, h1 := strings.ToLower(clean(Plain(header[0]))), strings.ToLower(clean(Plain(header[1])))
	if !oneOf(h0, "term", "terms", "word", "name", "concept", "glossary") ||
		!oneOf(h1, "definition", "meaning", "description", "what it means", "explanation") {
		return nil, false
	}
	var defs []Definition
	for _, r := range rows {
		if len(r) >= 2 && clean(Plain(r[0])) != "" && clean(r[1]) != "" {
			defs = append(defs, Definition{Term: clean(Plain(r[0])), Meaning: clean(r[1])})
		}
	}
	return defs, len(defs) > 0
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// tableBlock is a table, or a definitions block for a glossary table. A
// header whose every cell is empty is none (the row Markdown needs above
// a table that has no header), and a row ends at its last cell holding
// anything (the page shows every row as wide as its table).
func tableBlock(header []string, rows [][]string) Block {
	empty := true
	for _, h := range header {
		empty = empty && strings.TrimSpace(h) == ""
	}
	if empty {
		header = nil
	}
	// A row's empty cells at its end are the padding Markdown gives a
	// short row: none.
	for i, r := range rows {
		n := len(r)
		for n > 0 && strings.TrimSpace(r[n-1]) == "" {
			n--
		}
		rows[i] = r[:n]
	}
	if defs, ok := glossaryTable(header, rows); ok {
		return Block{Kind: Definitions, Defs: defs}
	}
	return Block{Kind: Table, Header: header, Rows: rows}
}

// textBlock is a paragraph, or a definitions block when each of its lines
// is a definition.
func textBlock(lines []string) Block {
	if defs, ok := allDefinitions(lines, 1); ok {
		return Block{Kind: Definitions, Defs: defs}
	}
	return Block{Kind: Paragraph, Text: clean(strings.Join(lines, " "))}
}

// listBlock is a list of items: steps when numbered, definitions when every
// item is one (at least two), a plain list otherwise.
func listBlock(items []string, ordered bool) Block {
	if !ordered {
		if defs, ok := allDefinitions(items, 1); ok {
			return Block{Kind: Definitions, Defs: defs}
		}
	}
	for i := range items {
		items[i] = clean(items[i])
	}
	if ordered {
		return Block{Kind: Steps, Items: items}
	}
	return Block{Kind: List, Items: items}
}
