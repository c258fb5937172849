package source

import (
	"fmt"
	"strings"
	"testing"
)

// words is the text of inline Markdown as words, for comparing what a
// block says with the blocks it was cut into.
func words(s string) []string { return strings.Fields(Plain(s)) }

// A block past MaxBlock — a text of one long paragraph, with code spans
// and links, an HTML <pre> and <code> that never close, a long list — is
// read as several blocks of its kind, each within MaxBlock, that say, one
// after another, all the block said.
func TestLongBlocksAreCutAndKeepTheirText(t *testing.T) {
	var para strings.Builder
	for i := 0; para.Len() < 3*MaxBlock; i++ {
		fmt.Fprintf(&para, "word%d and *more* [text] ", i)
		if i%1000 == 0 {
			fmt.Fprintf(&para, "`code_%d` ", i)
		}
	}
	var pre strings.Builder
	for i := 0; pre.Len() < 2*MaxBlock; i++ {
		fmt.Fprintf(&pre, "line %d &lt;x&gt;\n", i)
	}
	var list strings.Builder
	for i := 0; list.Len() < 2*MaxBlock; i++ {
		fmt.Fprintf(&list, "- item %d of a long list\n", i)
	}
	unclosed := "<html><body><h1>Unclosed</h1><p><code>" + strings.Repeat("all of it is code ", MaxBlock/6) + "</body></html>"
	for _, tt := range []struct {
		name, text string
		kind       BlockKind
	}{
		{"para.txt", "Title\n\n" + para.String(), Paragraph},
		{"pre.html", "<title>Pre</title><pre>" + pre.String() + "</pre>", Code},
		{"list.md", "# List\n\n" + list.String(), List},
		{"code.html", unclosed, Paragraph},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(tt.name, []byte(tt.text), "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			n := 0
			for _, s := range d.Sections {
				for _, b := range s.Blocks {
					if size := blockSize(b); size > MaxBlock {
						t.Errorf("a %s block of %d bytes; the bound is %d", b.Kind, size, MaxBlock)
					}
					if b.Kind != tt.kind {
						t.Errorf("a %s block among the %s pieces", b.Kind, tt.kind)
					}
					n++
					switch b.Kind {
					case Code:
						got = append(got, strings.Fields(b.Text)...)
					case List:
						for _, it := range b.Items {
							got = append(got, words(it)...)
						}
					default:
						got = append(got, words(b.Text)...)
					}
				}
			}
			if n < 2 {
				t.Fatalf("the long block was read as %d block", n)
			}
			uncut := readUncut(t, tt.name, tt.text)
			if strings.Join(got, " ") != strings.Join(uncut, " ") {
				for i := range min(len(got), len(uncut)) {
					if got[i] != uncut[i] {
						t.Errorf("word %d is %q, not %q", i, got[i], uncut[i])
						break
					}
				}
				t.Errorf("the pieces say other words than the block (%d words, %d)", len(got), len(uncut))
			}
		})
	}
}

// readUncut is the words of the source's blocks as read without the bound.
func readUncut(t *testing.T, name, text string) []string {
	t.Helper()
	d := &Document{Name: name, Kind: KindOf(name), Data: []byte(text)}
	switch d.Kind {
	case Text:
		readText(d, text)
	case Markdown:
		readMarkdown(d, d.Data)
	case HTML:
		if err := readHTML(d, d.Data, nil); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			switch b.Kind {
			case Code:
				out = append(out, strings.Fields(b.Text)...)
			case List:
				for _, it := range b.Items {
					out = append(out, words(it)...)
				}
			default:
				out = append(out, words(b.Text)...)
			}
		}
	}
	return out
}

// CutInline never cuts inside an escape or a link, and each piece reads
// back as its share of the text.
func TestCutInlineKeepsEscapesAndLinks(t *testing.T) {
	s := strings.Repeat(`a\*b [the link](<https://example.com/x>) `+"`c d`"+` `, 400)
	pieces := CutInline(s, 1000)
	if len(pieces) < 10 {
		t.Fatalf("%d pieces", len(pieces))
	}
	var all []string
	for _, p := range pieces {
		if len(p) > 1000 {
			t.Errorf("a piece of %d bytes", len(p))
		}
		if strings.Count(p, "[the link](<https://example.com/x>)") != strings.Count(p, "[") {
			t.Errorf("a piece cuts a link: %.80q", p)
		}
		all = append(all, words(p)...)
	}
	if strings.Join(all, " ") != strings.Join(words(s), " ") {
		t.Error("the pieces say other words than the text")
	}
}

// MarkdownParts cuts the outline into parts within the limit that hold,
// in order, all the outline says.
func TestMarkdownPartsHoldTheWholeOutline(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Manual\n\nLead paragraph.\n\n")
	for c := 0; c < 40; c++ {
		fmt.Fprintf(&sb, "## Chapter %d\n\n", c)
		for p := 0; p < 5; p++ {
			fmt.Fprintf(&sb, "%s chapter %d paragraph %d.\n\n", strings.Repeat("text ", 100), c, p)
		}
	}
	sb.WriteString("```\n" + strings.Repeat("a line of code\n", 2000) + "```\n")
	d, err := Read("manual.md", []byte(sb.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	whole := d.Markdown()
	parts := d.MarkdownParts(8000)
	if len(parts) < 10 {
		t.Fatalf("%d parts of %d bytes", len(parts), len(whole))
	}
	for i, p := range parts {
		if len(p) > 8000 {
			t.Errorf("part %d is %d bytes", i+1, len(p))
		}
	}
	joined := strings.Join(parts, "")
	for _, w := range []string{"# Manual", "Lead paragraph.", "## Chapter 0\n", "## Chapter 39\n", "chapter 39 paragraph 4.", "(continued)"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no part holds %q", w)
		}
	}
	for _, w := range []string{"text", "a line of code", "paragraph"} {
		if strings.Count(joined, w) != strings.Count(whole, w) {
			t.Errorf("the parts hold %q %d times, the outline %d", w, strings.Count(joined, w), strings.Count(whole, w))
		}
	}
}
