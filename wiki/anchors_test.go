package wiki

import (
	"strings"
	"testing"
)

// A rendered source keeps its headings' anchors (id="s-…" on h2–h6); no
// other id survives, so a source cannot clobber the page's own DOM (its
// slot sections, the shell) or shadow a name a script could read.
func TestHeadingAnchorsCannotClobberThePage(t *testing.T) {
	kept := []string{
		`<h2 id="s-introduction">Introduction</h2>`,
		`<h3 id="s-ffi-call">ffi_call</h3>`,
		`<h6 id="s-οδηγός-2">Οδηγός</h6>`,
	}
	for _, in := range kept {
		got, removed, err := Sanitize(in)
		if err != nil {
			t.Fatal(err)
		}
		if got != in || len(removed) != 0 {
			t.Errorf("Sanitize(%q) = %q (removed %q), want it kept", in, got, removed)
		}
	}
	dropped := []struct{ in, want string }{
		{`<h2 id="slot-summary">x</h2>`, `<h2>x</h2>`},         // the page's own slot section
		{`<h2 id="content">x</h2>`, `<h2>x</h2>`},              // outside the prefix
		{`<h2 id="s-">x</h2>`, `<h2>x</h2>`},                   // the prefix alone
		{`<h2 id="S-Intro">x</h2>`, `<h2>x</h2>`},              // not a slug
		{`<h2 id="s-a b">x</h2>`, `<h2>x</h2>`},                // two ids
		{`<h2 id="s-a&quot;x">x</h2>`, `<h2>x</h2>`},           // quote
		{`<p id="s-intro">x</p>`, `<p>x</p>`},                  // not a heading
		{`<div id="s-intro">x</div>`, `<div>x</div>`},          // not a heading
		{`<a name="s-intro">x</a>`, `x`},                       // name never
		{`<img name="body" src="a.png">`, `<img src="a.png">`}, // name never
		{`<h2 name="s-x">x</h2>`, `<h2>x</h2>`},
	}
	for _, c := range dropped {
		got, removed, err := Sanitize(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if len(removed) == 0 {
			t.Errorf("Sanitize(%q) reported no removal", c.in)
		}
	}
	// Through a page: a slot saying id="slot-summary" leaves one element
	// of that id, the page's own.
	clean, _, _ := Sanitize(`<h2 id="slot-summary">x</h2><h2 id="s-ok">y</h2>`)
	data := renderPage(t, "concept", "a/b.html", &Page{Meta: Meta{"title": "B", "template": "concept"},
		Slots: []Slot{{ID: "summary", HTML: "<p>s</p>"}, {ID: "body", HTML: clean}}})
	if n := strings.Count(string(data), `id="slot-summary"`); n != 1 {
		t.Errorf("the page has %d elements with id slot-summary, want 1:\n%s", n, data)
	}
	if !strings.Contains(string(data), `<h2 id="s-ok">y</h2>`) {
		t.Errorf("the anchor did not reach the page:\n%s", data)
	}
}
