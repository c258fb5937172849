package source

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// blockTexts are the inline Markdown texts of a document's blocks.
func blockTexts(d *Document) []string {
	var out []string
	for _, s := range d.Sections {
		out = appendBlockTexts(out, s.Blocks)
	}
	return out
}

// appendBlockTexts adds the inline texts of blocks, a description's Body
// with its definition, to out.
func appendBlockTexts(out []string, blocks []Block) []string {
	for _, b := range blocks {
		{
			switch b.Kind {
			case Paragraph, Quote:
				out = append(out, b.Text)
			case List, Steps:
				out = append(out, b.Items...)
			case Definitions:
				for _, df := range b.Defs {
					out = append(out, df.Meaning)
					out = appendBlockTexts(out, df.Body)
				}
			case Table:
				out = append(out, b.Header...)
				for _, r := range b.Rows {
					out = append(out, r...)
				}
			}
		}
	}
	return out
}

// Text that looks like markup is text: inline code keeps its code, an
// entity its character, in every format, and the page's HTML shows them
// literally.
func TestTextThatLooksLikeMarkup(t *testing.T) {
	tests := []struct {
		name, src string
		title     string
		html      []string // InlineHTML of the block texts, in order
	}{
		{"code.md", "# Notes\n\nUse `<script>` and a `<br>` here. Write &lt;tag&gt; \\*as\\* text &amp; more.\n\n- one `` a`b `` item\n- [spec](https://example.com/a?b=1&c=2) and [bad](javascript:alert(1)) and [d](data:text/html,x) and <https://auto.example.com>\n",
			"Notes", []string{
				"Use <code>&lt;script&gt;</code> and a <code>&lt;br&gt;</code> here. Write &lt;tag&gt; *as* text &amp; more.",
				"one <code>a`b</code> item",
				`<a href="https://example.com/a?b=1&amp;c=2">spec</a> and bad and d and <a href="https://auto.example.com">https://auto.example.com</a>`,
			}},
		{"page.html", `<html><head><title>Hostile &lt;Page&gt;</title></head><body><h1>Hostile &lt;Page&gt;</h1>
<p>Read <a href="https://example.com/x?a=1&amp;b=2">the <em>guide</em></a>, <a href="javascript:alert(1)">this</a>, <a href="data:text/html,x">that</a>. Use <code>&lt;div&gt;</code> and *stars* and [brackets](x) and &amp;lt;.</p>
<ul><li>alpha &lt;one&gt;</li><li>beta <kbd>Ctrl</kbd></li></ul></body></html>`,
			"Hostile <Page>", []string{
				`Read <a href="https://example.com/x?a=1&amp;b=2">the guide</a>, this, that. Use <code>&lt;div&gt;</code> and *stars* and [brackets](x) and &amp;lt;.`,
				"alpha &lt;one&gt;",
				"beta <code>Ctrl</code>",
			}},
		{"notes.txt", "Plain <Title>\n\nA line with <b>bold</b> and `tick` and *stars* and [x](javascript:y) &amp;.\n\n- <script>alert(1)</script>\n- 1. not a step\n- # not a heading\n- - not a list\n",
			"Plain <Title>", []string{
				"A line with &lt;b&gt;bold&lt;/b&gt; and `tick` and *stars* and [x](javascript:y) &amp;amp;.",
				"&lt;script&gt;alert(1)&lt;/script&gt;",
				"1. not a step",
				"# not a heading",
				"- not a list",
			}},
	}
	for _, tt := range tests {
		d, err := Read(tt.name, []byte(tt.src), "")
		if err != nil {
			t.Fatal(err)
		}
		if d.Title != tt.title {
			t.Errorf("%s: title %q, want %q", tt.name, d.Title, tt.title)
		}
		var got []string
		for _, s := range blockTexts(d) {
			got = append(got, InlineHTML(s))
		}
		if !reflect.DeepEqual(got, tt.html) {
			t.Errorf("%s: blocks render as\n%q\nwant\n%q", tt.name, got, tt.html)
		}
		// What prompts quote reads back to the same document.
		back, err := Read("back.md", []byte(d.Markdown()), Markdown)
		if err != nil {
			t.Fatal(err)
		}
		if back.Title != d.Title || !reflect.DeepEqual(back.Sections, d.Sections) {
			t.Errorf("%s: the round trip through Markdown changed the document:\n%s\n%s\nback:\n%s", tt.name, d.Markdown(), outline(d), outline(back))
		}
	}
}

// Every fixture reads back from its Markdown to the same outline.
func TestMarkdownRoundTripKeepsEveryBlock(t *testing.T) {
	inputs, _, err := Collect([]string{"../../fixtures/sources"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		d, err := Read(in.Name, in.Data, "")
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind == Conversation {
			continue // a transcript is quoted turn by turn
		}
		back, err := Read("x.md", []byte(d.Markdown()), Markdown)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Sections, d.Sections) {
			t.Errorf("%s: outline changed by the round trip:\n%s\nback:\n%s", in.Name, outline(d), outline(back))
		}
	}
}

func TestEscapeTextAndPlain(t *testing.T) {
	for _, s := range []string{"", "plain", `a\b`, "<script>alert(1)</script>", "&lt; &amp;", "*x* _y_ ~~z~~ [a](b) `c`", "# not a heading", "1. no"} {
		if got := Plain(EscapeText(s)); got != s {
			t.Errorf("Plain(EscapeText(%q)) = %q", s, got)
		}
		if got := Plain(codeSpan(s)); strings.TrimSpace(s) != "" && got != s {
			t.Errorf("Plain(codeSpan(%q)) = %q (%q)", s, got, codeSpan(s))
		}
	}
}

// checkInlineHTML fails unless h is text, <code> and <a href> to an http,
// https or mailto URL: nothing a source says becomes other markup.
func checkInlineHTML(t *testing.T, in, h string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(h))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "code":
				if len(tok.Attr) > 0 {
					t.Fatalf("InlineHTML(%q) = %q: <code> with attributes", in, h)
				}
			case "a":
				for _, a := range tok.Attr {
					lower := strings.ToLower(a.Val)
					if a.Key != "href" || !(strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "mailto:")) {
						t.Fatalf("InlineHTML(%q) = %q: unsafe link attribute %s=%q", in, h, a.Key, a.Val)
					}
				}
			default:
				t.Fatalf("InlineHTML(%q) = %q: element <%s>", in, h, tok.Data)
			}
		case html.CommentToken, html.DoctypeToken:
			t.Fatalf("InlineHTML(%q) = %q: a comment or doctype", in, h)
		}
	}
}

func FuzzInline(f *testing.F) {
	for _, s := range []string{"a `<b>` c", "[x](<https://e.com/\\>>) [y](javascript:z)", "\\`x` ``a`b`` &lt;", "<!-- prose:slot id=\"x\" -->", "[`a](b)`](https://x.y)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInlineHTML(t, s, InlineHTML(s))
		if got := Plain(EscapeText(s)); got != s {
			t.Fatalf("Plain(EscapeText(%q)) = %q", s, got)
		}
		if !strings.ContainsAny(s, "\n") && strings.TrimSpace(s) != "" {
			if got := Plain(codeSpan(s)); got != s {
				t.Fatalf("Plain(codeSpan(%q)) = %q (%q)", s, got, codeSpan(s))
			}
		}
	})
}

// Text of many unclosed backtick runs, brackets or destinations is read in
// linear time (a quadratic scan of a 1 MiB source would not finish).
func TestInlineOfUnclosedMarkupIsLinear(t *testing.T) {
	for _, unit := range []string{"` ``` ", "[`a` ", "[a](<b ", "[a](b", "x\\`y``z "} {
		s := strings.Repeat(unit, (1<<20)/len(unit))
		if got := Plain(s); len(got) == 0 {
			t.Fatalf("Plain of %q…: empty", unit)
		}
		_ = InlineHTML(s)
	}
}

// parseBefore is inlineParser.parse as it was before it wrote literal
// text a run at a time: byte by byte. The reference parse must match.
func (p *inlineParser) parseBefore(s string, inLink bool) []span {
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
				out = append(out, span{link: true, url: u, kids: (&inlineParser{noClose: map[int]bool{}}).parseBefore(text, true)})
				i += n
				continue
			}
		}
		lit.WriteByte(c)
		i++
	}
	flush()
	return out
}

func TestParseInlineAsByteWise(t *testing.T) {
	parts := []string{"a", "bc ", " ", "\\", "\\`", "\\[", "\\a", "`", "``", "[", "]", "(", ")", "<", ">", "](", "](<", "https://x.y", "*", "_", "é", "\n", "&amp;"}
	r := rand.New(rand.NewSource(5))
	for n := 0; n < 100000; n++ {
		var sb strings.Builder
		for k := r.Intn(14); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		for _, inLink := range []bool{false, true} {
			got := parseInline(s, inLink)
			want := (&inlineParser{noClose: map[int]bool{}}).parseBefore(s, inLink)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("parseInline(%q, %v) = %+v, want %+v", s, inLink, got, want)
			}
		}
	}
}

func FuzzParseInlineAsByteWise(f *testing.F) {
	f.Add("a `b` [c](d) \\[e\\] [`f`](<g>) h")
	f.Fuzz(func(t *testing.T, s string) {
		got := parseInline(s, false)
		want := (&inlineParser{noClose: map[int]bool{}}).parseBefore(s, false)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseInline(%q) = %+v, want %+v", s, got, want)
		}
	})
}

// escapeTextBefore is EscapeText as it was before it wrote runs at once:
// byte by byte. The reference EscapeText must match.
func escapeTextBefore(s string) string {
	if !strings.ContainsAny(s, inlineSpecial) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(inlineSpecial, s[i]) >= 0 {
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func TestEscapeTextAsByteWise(t *testing.T) {
	parts := []string{"a", "bc ", " ", "\\", "`", "*", "_", "[", "]", "<", ">", "&", "~", "#", "é", "\xff", "|", "word"}
	r := rand.New(rand.NewSource(8))
	for n := 0; n < 100000; n++ {
		var sb strings.Builder
		for k := r.Intn(12); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		s := sb.String()
		if got, want := EscapeText(s), escapeTextBefore(s); got != want {
			t.Fatalf("EscapeText(%q) = %q, want %q", s, got, want)
		}
	}
}
