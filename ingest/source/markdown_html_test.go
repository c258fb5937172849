package source

import (
	"strings"
	"testing"
)

// Raw HTML in a Markdown source keeps its text: tags that are no HTML
// element are text, an image is its alt text, an HTML block is read for
// its text; known tags, comments and script content are dropped; the
// outline quotes the same text and pages write it escaped.
func TestMarkdownKeepsTextThatLooksLikeMarkup(t *testing.T) {
	src := "# Generics Primer\n\n" +
		"A List<String> holds strings, and Optional<T> may be empty. See ![the architecture diagram](arch.png) for details.\n\n" +
		"<div>\nImportant: this paragraph must not vanish.\n</div>\n\n" +
		"<name> is the placeholder for your name.\n\n" +
		"Some <b>bold</b> and <span class=\"x\">spanned</span> text<br>here <!-- a comment --> and <script>alert(1)</script> done; a Set<Object> and <DIV>caps</DIV>.\n\n" +
		"<name>\n\n" +
		"<!-- a hidden note -->\n\n" +
		"<table><tr><th>Key</th><th>Value</th></tr><tr><td>x<Item></td><td><em>y</em></td></tr></table>\n\n" +
		"- an item\n\n  <p>with <i>HTML</i> inside</p>\n\n" +
		"> <p>quoted <Foo> html</p>\n"
	d, err := Read("g.md", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	var plain []string
	for _, b := range blockTexts(d) {
		plain = append(plain, Plain(b))
		checkInlineHTML(t, b, InlineHTML(b))
	}
	all := strings.Join(plain, "\n")
	for _, want := range []string{
		"A List<String> holds strings, and Optional<T> may be empty. See the architecture diagram for details.",
		"this paragraph must not vanish.",
		"<name> is the placeholder for your name.",
		"Some bold and spanned text here and done; a Set<Object> and caps.",
		"\n<name>\n",
		"x<Item>", "an item with HTML inside", "quoted <Foo> html",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the document lost %q:\n%s", want, all)
		}
	}
	for _, gone := range []string{"comment", "hidden note", "alert", "<b>", "<span", "<br>", "<div", "<DIV", "class=", "<em>", "<i>", "<p>"} {
		if strings.Contains(all, gone) {
			t.Errorf("the document keeps %q:\n%s", gone, all)
		}
	}
	found := false
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Kind == Table && len(b.Header) == 2 && Plain(b.Header[0]) == "Key" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the HTML block's table is no table: %+v", d.Sections)
	}
	// The quoted outline reads back to the same text.
	back, err := ReadQuoted("source.md", []byte(d.Markdown()))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(blockTexts(back), "\n"); got != strings.Join(blockTexts(d), "\n") {
		t.Errorf("the outline read back other text:\n%s\nwant\n%s", got, strings.Join(blockTexts(d), "\n"))
	}
	if h := InlineHTML(blockTexts(d)[0]); !strings.Contains(h, "List&lt;String&gt;") {
		t.Errorf("a page writes %q", h)
	}
}
