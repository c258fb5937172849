package source

import (
	"html"
	"net/url"
	"strings"
)

// The text of a block — a paragraph, a quote, a list item or step, a
// definition's meaning, a table cell — is inline Markdown in one canonical
// form, whatever the source's format:
//
//   - literal text, with every character Markdown could read as markup
//     (\ ` * _ [ ] < > & ~) escaped with a backslash;
//   - code spans, `like this`, for the source's inline code;
//   - links, [text](<url>), for the source's hyperlinks.
//
// Nothing else: emphasis, images and raw HTML of a source are read as their
// text. So text that looks like markup (a `<script>` in a code span, an
// &lt; written as an entity) stays text through Markdown and back, and a
// page renders it with InlineHTML. Titles, headings and definition terms
// are plain text.

// inlineSpecial are the characters EscapeText escapes.
const inlineSpecial = "\\`*_[]<>&~"

// EscapeText writes plain text as canonical inline Markdown that reads
// back as the same text.
func EscapeText(s string) string {
	if !strings.ContainsAny(s, inlineSpecial) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		if escaped[s[i]] {
			sb.WriteByte('\\')
			sb.WriteByte(s[i])
			i++
			continue
		}
		// The run up to the next byte escaped, written at once.
		j := i + 1
		for j < len(s) && !escaped[s[j]] {
			j++
		}
		sb.WriteString(s[i:j])
		i = j
	}
	return sb.String()
}

// escaped are the bytes of inlineSpecial.
var escaped = func() (t [256]bool) {
	for i := range len(inlineSpecial) {
		t[inlineSpecial[i]] = true
	}
	return t
}()

// codeSpan writes code as a code span: a run of backticks longer or
// shorter than any in the code, padded with a space where the code starts
// or ends with a backtick or a space.
func codeSpan(code string) string {
	code = strings.ReplaceAll(code, "\n", " ")
	if strings.TrimSpace(code) == "" {
		return EscapeText(code)
	}
	runs := map[int]bool{}
	for i := 0; i < len(code); {
		if code[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(code) && code[j] == '`' {
			j++
		}
		runs[j-i] = true
		i = j
	}
	n := 1
	for runs[n] {
		n++
	}
	fence := strings.Repeat("`", n)
	if code[0] == '`' || code[len(code)-1] == '`' || code[0] == ' ' && code[len(code)-1] == ' ' {
		code = " " + code + " "
	}
	return fence + code + fence
}

// linkText writes a link: text (inline Markdown) and its URL.
func linkText(text, u string) string {
	if strings.TrimSpace(text) == "" {
		text = EscapeText(u)
	}
	return "[" + text + "](<" + linkURLEscaper.Replace(u) + ">)"
}

// linkURLEscaper writes a URL as the destination of a Markdown link in
// angle brackets.
var linkURLEscaper = strings.NewReplacer("\\", "\\\\", "<", "\\<", ">", "\\>", "\n", " ")

// unescapeMarkdown resolves the backslash escapes and character references
// of raw Markdown text: what the text says.
func unescapeMarkdown(s string) string {
	if !strings.ContainsAny(s, "\\&") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			sb.WriteByte(s[i+1])
			i++
			continue
		case c == '&':
			if n := entityLen(s[i:]); n > 0 {
				if dec := html.UnescapeString(s[i : i+n]); dec != s[i:i+n] {
					sb.WriteString(dec)
					i += n - 1
					continue
				}
			}
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// entityLen is the length of the character reference s starts with
// (&name; &#123; &#x1F;), or 0.
func entityLen(s string) int {
	for i := 1; i < len(s) && i < 40; i++ {
		c := s[i]
		switch {
		case c == ';':
			if i == 1 {
				return 0
			}
			return i + 1
		case c == '#' && i == 1:
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return 0
		}
	}
	return 0
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// span is one piece of inline Markdown: text, code, or a link.
type span struct {
	code bool
	text string // literal text or code
	url  string // a link's URL
	kids []span // a link's text
	link bool
}

// parseInline reads inline Markdown: escapes, code spans and links. Any
// other character is literal; a backtick run or bracket that opens
// nothing is literal too.
func parseInline(s string, inLink bool) []span {
	return (&inlineParser{noClose: map[int]bool{}}).parse(s, inLink)
}

// inlineParser remembers what a scan found missing from the rest of the
// text, so that text of many unclosed backtick runs or brackets is read in
// linear time.
type inlineParser struct {
	noClose    map[int]bool // no run of that many backticks follows
	noAngleEnd bool         // no '>' ends a <destination>
	noParenEnd bool         // no ')' ends a destination
}

// closing is closingTicks, remembering a run length that never closes.
func (p *inlineParser) closing(s string, from, n int) int {
	if p.noClose[n] {
		return -1
	}
	end := closingTicks(s, from, n)
	if end < 0 {
		p.noClose[n] = true
	}
	return end
}

func (p *inlineParser) parse(s string, inLink bool) []span {
	var out []span
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, span{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			lit.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := backticks(s[i:])
			if end := p.closing(s, i+n, n); end >= 0 {
				flush()
				code := s[i+n : end]
				if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
					code = code[1 : len(code)-1]
				}
				out = append(out, span{code: true, text: code})
				i = end + n
				continue
			}
			lit.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[' && !inLink:
			if text, u, n, ok := p.linkAt(s[i:]); ok {
				flush()
				out = append(out, span{link: true, url: u, kids: (&inlineParser{noClose: map[int]bool{}}).parse(text, true)})
				i += n
				continue
			}
		}
		// The literal text up to the next byte that may start an
		// escape, a code span or a link, written at once.
		j := i + 1
		for j < len(s) && !parseStarts[s[j]] {
			j++
		}
		lit.WriteString(s[i:j])
		i = j
	}
	flush()
	return out
}

// parseStarts are the bytes parse looks at: what may start an escape,
// a code span or a link.
var parseStarts = [256]bool{'\\': true, '`': true, '[': true}

func backticks(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// closingTicks is the offset of the next run of exactly n backticks in s
// from from, or -1.
func closingTicks(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := backticks(s[i:])
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// linkAt reads a [text](<url>) or [text](url) link at the start of s: its
// text, its URL with escapes resolved, and its length.
func (p *inlineParser) linkAt(s string) (text, u string, n int, ok bool) {
	i := 1
	for i < len(s) && s[i] != ']' {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '`':
			m := backticks(s[i:])
			if end := p.closing(s, i+m, m); end >= 0 {
				i = end + m
				continue
			}
			i += m
			continue
		case '[':
			return "", "", 0, false
		}
		i++
	}
	if i+1 >= len(s) || s[i] != ']' || s[i+1] != '(' {
		return "", "", 0, false
	}
	text = s[1:i]
	j := i + 2
	var dest strings.Builder
	if j < len(s) && s[j] == '<' {
		if p.noAngleEnd {
			return "", "", 0, false
		}
		for j++; j < len(s) && s[j] != '>'; j++ {
			if s[j] == '\\' && j+1 < len(s) && isASCIIPunct(s[j+1]) {
				j++
			} else if s[j] == '<' || s[j] == '\n' {
				return "", "", 0, false
			}
			dest.WriteByte(s[j])
		}
		if j >= len(s) {
			p.noAngleEnd = true
			return "", "", 0, false
		}
		j++
	} else {
		if p.noParenEnd {
			return "", "", 0, false
		}
		for ; j < len(s) && s[j] != ')' && s[j] != ' '; j++ {
			if s[j] == '\\' && j+1 < len(s) && isASCIIPunct(s[j+1]) {
				j++
			}
			dest.WriteByte(s[j])
		}
	}
	if j >= len(s) {
		p.noParenEnd = true
	}
	if j >= len(s) || s[j] != ')' {
		return "", "", 0, false
	}
	return text, dest.String(), j + 1, true
}

// Plain is the text inline Markdown says: escapes resolved, code spans as
// their code, links as their text.
func Plain(s string) string {
	var sb strings.Builder
	writePlain(&sb, parseInline(s, false))
	return sb.String()
}

func writePlain(sb *strings.Builder, spans []span) {
	for _, sp := range spans {
		if sp.link {
			writePlain(sb, sp.kids)
		} else {
			sb.WriteString(sp.text)
		}
	}
}

// InlineHTML renders inline Markdown as HTML: text escaped, code spans as
// <code>, links to http, https and mailto URLs as <a href>; a link to
// anything else (javascript:, data:, a path relative to the source's own
// site) is rendered as its text alone.
func InlineHTML(s string) string { return InlineHTMLLinked(s, nil) }

// InlineHTMLLinked is InlineHTML with each link SafeURL refuses offered
// to resolve (nil: none is): the href it returns, when ok, makes it a
// link (a page of the wiki in place of the source's own relative link).
func InlineHTMLLinked(s string, resolve func(url string) (string, bool)) string {
	var sb strings.Builder
	writeHTML(&sb, parseInline(s, false), resolve)
	return sb.String()
}

func writeHTML(sb *strings.Builder, spans []span, resolve func(string) (string, bool)) {
	for _, sp := range spans {
		switch {
		case sp.code:
			sb.WriteString("<code>" + html.EscapeString(sp.text) + "</code>")
		case sp.link:
			href, ok := SafeURL(sp.url)
			if !ok && resolve != nil {
				href, ok = resolve(sp.url)
			}
			if ok {
				sb.WriteString(`<a href="` + html.EscapeString(href) + `">`)
			}
			writeHTML(sb, sp.kids, resolve)
			if ok {
				sb.WriteString("</a>")
			}
		default:
			sb.WriteString(html.EscapeString(sp.text))
		}
	}
}

// SafeURL reports whether a source's link may become a link on a page: an
// absolute http or https URL with a host, or a mailto: address. It returns
// the URL as a page writes it.
func SafeURL(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.ContainsFunc(raw, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
	case "mailto":
		if u.Opaque == "" {
			return "", false
		}
	default:
		return "", false
	}
	return u.String(), true
}
