package render

import (
	"html"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Term is a defined term and the page that defines it.
type Term struct {
	Title string
	Path  string // its wiki path
}

// Linker links the first mention of each term on a page to the term's
// page: in text outside links, code, headings and tags (a definition
// list's term included), as a whole phrase,
// ignoring ASCII case. It looks terms up by their first word, so a page
// costs its length, not its length times the number of terms.
//
// A term that is one plain lower-case word ("resolve", "ours": a merge
// strategy a definition list names) is linked only where the page names it
// as code (`<code>resolve</code>`): in running text the same word is the
// ordinary one ("you will have to resolve any such failure"). A term with
// a capital, a digit, a mark or two words links in text as above.
type Linker struct {
	byFirst map[string][]linkTerm
	// code are the plain one-word terms, by their lower-case title.
	code map[string]string
	seen map[string]bool // the titles added, HTML-escaped in lower case
}

// plainWord reports whether title is one word of lower-case letters only.
func plainWord(title string) bool {
	if title == "" {
		return false
	}
	for _, r := range title {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

type linkTerm struct {
	lower string // the HTML-escaped title in lower case
	path  string
}

// NewLinker is a Linker for terms; terms of fewer than four letters are
// left out (they would match inside too much text).
func NewLinker(terms []Term) *Linker {
	l := &Linker{byFirst: map[string][]linkTerm{}, code: map[string]string{}, seen: map[string]bool{}}
	l.Add(terms...)
	return l
}

// Add adds terms (a title already known is kept with its first page).
func (l *Linker) Add(terms ...Term) {
	seen := l.seen
	for _, t := range terms {
		if utf8.RuneCountInString(strings.TrimSpace(t.Title)) < 4 {
			continue
		}
		low := asciiLower(html.EscapeString(t.Title))
		if seen[low] {
			continue
		}
		seen[low] = true
		if title := strings.TrimSpace(t.Title); plainWord(title) {
			l.code[title] = t.Path
			continue
		}
		first := firstWord(low)
		if first == "" {
			continue
		}
		ts := append(l.byFirst[first], linkTerm{low, t.Path})
		sort.SliceStable(ts, func(i, j int) bool { return len(ts[i].lower) > len(ts[j].lower) })
		l.byFirst[first] = ts
	}
}

// Link returns page HTML (as render writes it) with the first mention of
// each term linked, relative to here, the page's wiki path; a term's own
// page is not linked to itself.
func (l *Linker) Link(h, here string) string {
	if l == nil || len(l.byFirst) == 0 && len(l.code) == 0 {
		return h
	}
	lower := asciiLower(h)
	linked := map[string]bool{}
	var sb strings.Builder
	skip := 0 // depth inside a, code, pre, h1–h6
	last := 0
	for i := 0; i < len(h); {
		if h[i] == '<' {
			end := strings.IndexByte(h[i:], '>')
			if end < 0 {
				break
			}
			tag := lower[i+1 : i+end]
			closing := strings.HasPrefix(tag, "/")
			name := strings.TrimPrefix(tag, "/")
			if j := strings.IndexAny(name, " \t\n/"); j >= 0 {
				name = name[:j]
			}
			if name == "code" && !closing && skip == 0 {
				if end2, path, ok := l.codeTerm(h, lower, i+end+1, here, linked); ok {
					linked[path] = true
					sb.WriteString(h[last:i])
					sb.WriteString(`<a class="term" href="` + html.EscapeString(relLink(here, path)) + `">` + h[i:end2] + `</a>`)
					last, i = end2, end2
					continue
				}
			}
			switch name {
			case "a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6":
				if closing {
					skip = max(skip-1, 0)
				} else {
					skip++
				}
			}
			i += end + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(h[i:])
		if skip > 0 || !isWord(r) || i > 0 && isWordBefore(h[:i]) {
			i += size
			continue
		}
		w := firstWord(lower[i:])
		done := false
		for _, t := range l.byFirst[w] {
			if linked[t.path] || t.path == here {
				continue
			}
			if !strings.HasPrefix(lower[i:], t.lower) {
				continue
			}
			end := i + len(t.lower)
			if end < len(h) {
				if a, _ := utf8.DecodeRuneInString(h[end:]); isWord(a) {
					continue
				}
			}
			if strings.Contains(h[i:end], "<") {
				continue
			}
			linked[t.path] = true
			sb.WriteString(h[last:i])
			sb.WriteString(`<a class="term" href="` + html.EscapeString(relLink(here, t.path)) + `">` + h[i:end] + `</a>`)
			last, i, done = end, end, true
			break
		}
		if !done {
			i += len(w)
			if len(w) == 0 {
				i += size
			}
		}
	}
	sb.WriteString(h[last:])
	return sb.String()
}

// codeTerm reports whether the code element whose content starts at from
// names a plain one-word term exactly (nothing else inside it, no markup)
// that is not linked yet and not the page itself; end is where the
// element's closing tag ends.
func (l *Linker) codeTerm(h, lower string, from int, here string, linked map[string]bool) (end int, path string, ok bool) {
	if len(l.code) == 0 {
		return 0, "", false
	}
	close := strings.Index(lower[from:], "</code>")
	if close < 0 || close > 64 {
		return 0, "", false
	}
	path, ok = l.code[h[from:from+close]]
	if !ok || linked[path] || path == here {
		return 0, "", false
	}
	return from + close + len("</code>"), path, true
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isWordBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWord(r)
}

// firstWord is the run of word characters s starts with.
func firstWord(s string) string {
	for i, r := range s {
		if !isWord(r) {
			return s[:i]
		}
	}
	return s
}

// asciiLower lowers A–Z only, so byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// relLink is the link from the page at from to the page at to (wiki
// paths).
func relLink(from, to string) string {
	var fd []string
	if i := strings.LastIndexByte(from, '/'); i >= 0 {
		fd = strings.Split(from[:i], "/")
	}
	tp := strings.Split(to, "/")
	common := 0
	for common < len(fd) && common < len(tp)-1 && fd[common] == tp[common] {
		common++
	}
	return strings.Repeat("../", len(fd)-common) + strings.Join(tp[common:], "/")
}
