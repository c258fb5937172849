package source

import (
	"fmt"
	"strings"
	"testing"
)

// A description holding paragraphs, code and lists of its own is read as
// its first paragraph and those blocks (Definition.Body), to MaxNesting
// descriptions deep, and its quotation reads back to the same blocks —
// whatever its terms hold ("-b", "<pathspec>").
func TestADescriptionOfBlocksReadsBack(t *testing.T) {
	deep := "innermost words"
	for i := 0; i < 6; i++ {
		deep = fmt.Sprintf("<dl><dt>level%d</dt><dd><p>Level %d says this.</p>%s</dd></dl>", i, i, deep)
	}
	src := `<html><head><title>Options</title></head><body><h1>Options</h1><dl>
<dt>-b</dt><dd>Show blank SHA-1 for boundary commits.</dd>
<dt>&lt;pathspec&gt;…</dt><dd><p>Files to add content from.</p><p>A second paragraph of it.</p>
<pre>	git add dir

  two spaces</pre>
<ul><li>one item</li><li>another item</li></ul>
<dl><dt>bool</dt><dd>canonicalize values as true or false</dd><dt>int</dt><dd>canonicalize values as decimal numbers</dd></dl></dd>
<dt>Parameters:</dt><dd><ul><li>node – a node class</li><li>override – install it even if one is there</li></ul></dd>
<dt>--deep</dt><dd><p>Nested far.</p>` + deep + `</dd></dl></body></html>`
	d, err := Read("options.html", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	var defs []Definition
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			defs = append(defs, b.Defs...)
		}
	}
	if len(defs) != 4 || defs[0].Term != "-b" || len(defs[0].Body) != 0 {
		t.Fatalf("definitions %+v", defs)
	}
	p := defs[1]
	kinds := ""
	for _, b := range p.Body {
		kinds += string(b.Kind) + " "
	}
	if p.Meaning != "Files to add content from." || kinds != "paragraph code list definitions " {
		t.Fatalf("%q: meaning %q, body %s", p.Term, p.Meaning, kinds)
	}
	if code := p.Body[1].Text; code != "\tgit add dir\n\n  two spaces" {
		t.Errorf("code %q", code)
	}
	// A description that starts with a list has no meaning of its own.
	if f := defs[2]; f.Meaning != "" || len(f.Body) != 1 || f.Body[0].Kind != List || len(f.Body[0].Items) != 2 {
		t.Errorf("%q: meaning %q, body %+v", f.Term, f.Meaning, f.Body)
	}
	// --deep: MaxNesting descriptions hold blocks; the next is one run of text.
	depth, x := 0, defs[3]
	for len(x.Body) > 0 {
		depth++
		x = x.Body[0].Defs[0]
	}
	if depth != MaxNesting || !strings.Contains(x.Meaning, "innermost words") {
		t.Errorf("nested %d deep (want %d), the deepest says %q", depth, MaxNesting, x.Meaning)
	}
	back, err := ReadQuoted("source.md", []byte(strings.TrimRight(d.Markdown(), "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameOutline(quotedOutline(d), back, true); diff != "" {
		t.Errorf("read back: %s\n%s", diff, d.Markdown())
	}
}

// A description past MaxBlock leaves its blocks after it in the section,
// each bounded, nothing of its text lost.
func TestALongDescriptionIsBounded(t *testing.T) {
	para := strings.Repeat("word ", MaxBlock/5/3)
	src := "<html><body><h1>Long</h1><dl><dt>term</dt><dd><p>First.</p><p>" + para + "</p><p>" + para + "</p><p>" + para + "</p><p>" + para + "</p></dd></dl></body></html>"
	d, err := Read("long.html", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if blockSize(b) > MaxBlock {
				t.Errorf("a %s block of %d bytes", b.Kind, blockSize(b))
			}
			n++
		}
	}
	if n < 2 || strings.Count(d.Prose(), "word") != 4*(MaxBlock/5/3) {
		t.Errorf("%d blocks, %d words", n, strings.Count(d.Prose(), "word"))
	}
}

// A table with no header and rows shorter than it reads back as it was:
// Markdown's empty header row and the padding of short rows are none.
func TestAHeaderlessRaggedTableReadsBack(t *testing.T) {
	src := `<html><body><h1>Notes</h1><table><tr><td>Notes: 1. Older versions omit them.</td><td>more</td></tr><tr><td>2. Test data unavailable.</td></tr></table></body></html>`
	d, err := Read("notes.html", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	b := d.Sections[len(d.Sections)-1].Blocks[0]
	if b.Kind != Table || b.Header != nil || len(b.Rows[1]) != 1 {
		t.Fatalf("table %+v", b)
	}
	back, err := ReadQuoted("source.md", []byte(strings.TrimRight(d.Markdown(), "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameOutline(quotedOutline(d), back, true); diff != "" {
		t.Errorf("read back: %s\n%s", diff, d.Markdown())
	}
}
