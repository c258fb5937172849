package source

import (
	"github.com/prose-store/prose/internal/lazyre"
	"regexp"
	"strings"
	"unicode"
)

var (
	numbered  = lazyre.New(`^\s*(?:\d{1,3}|[a-z])[.)]\s+(\S.*)$`)
	bulleted  = lazyre.New(`^\s*[-*•+]\s+(\S.*)$`)
	underline = lazyre.New(`^\s*(=+|-+)\s*$`)
)

// readText fills d from plain text: blank lines separate blocks; a line
// underlined with === or --- is a heading, and so is a short line in
// capitals standing alone; the first short line is the title; runs of
// numbered lines are steps and bulleted lines a list.
func readText(d *Document, src string) {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			d.addBlock(plainBlock(para))
			para = nil
		}
	}
	first := true
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		aloneAfter := i+1 >= len(lines) || strings.TrimSpace(next) == ""
		switch {
		case len(para) == 0 && underline().MatchString(next) && shortLine(line):
			level := 2
			if strings.Contains(next, "=") {
				level = 1
			}
			d.addSection(level, line)
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

// plainBlock reads a run of lines: steps, a list, or a paragraph (or
// definitions). Plain text is text: every character Markdown would read as
// markup is escaped (EscapeText).
func plainBlock(lines []string) Block {
	if items, ok := matchAll(lines, numbered()); ok {
		return listBlock(escapeAll(items), true)
	}
	if items, ok := matchAll(lines, bulleted()); ok {
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

// matchAll returns the first submatch of every line when each line
// matches re (a line that does not match continues the item before it).
func matchAll(lines []string, re *regexp.Regexp) ([]string, bool) {
	var items []string
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			items = append(items, m[1])
		} else if len(items) > 0 && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) {
			items[len(items)-1] += " " + strings.TrimSpace(l)
		} else {
			return nil, false
		}
	}
	return items, len(items) > 0
}

// shortLine is a line that could be a heading: at most twelve words, not
// ending like a sentence.
func shortLine(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && len(strings.Fields(s)) <= 12 && !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, ",") &&
		!strings.HasSuffix(s, ";") && !bulleted().MatchString(s) && !numbered().MatchString(s)
}

// directive is a line of markup a text's own tool reads, not words: one
// token holding "::" or brackets (AsciiDoc's include::urls.txt[],
// REMOTES[[REMOTES]], a reST role). It is no heading and no title; it
// stays in the text, where the reader sees it as written.
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
