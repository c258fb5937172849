package source

import (
	"strings"
	"testing"
)

// A page whose head sends the reader on at once and that says little
// else is a redirect, with its target; a page that waits first, or says
// more than where it went, is a document.
func TestRedirect(t *testing.T) {
	cases := []struct {
		name, page, want string
		ok               bool
	}{
		{"rustdoc", `<!DOCTYPE html><html lang="en"><head><meta http-equiv="refresh" content="0;URL=../../syn/struct.File.html"><title>Redirection</title></head>
<body><p>Redirecting to <a href="../../syn/struct.File.html">../../syn/struct.File.html</a>...</p><script>location.replace("../../syn/struct.File.html" + location.search + location.hash);</script></body></html>`, "../../syn/struct.File.html", true},
		{"quoted, spaced", `<html><head><META HTTP-EQUIV="Refresh" CONTENT="0; url='cli.html'"></head><body></body></html>`, "cli.html", true},
		{"waits", `<html><head><meta http-equiv="refresh" content="5;URL=x.html"></head><body><p>Moved.</p></body></html>`, "", false},
		{"a document", `<html><head><meta http-equiv="refresh" content="0;URL=x.html"></head><body><p>` + string(make([]byte, 0)) + longText + `</p></body></html>`, "", false},
		{"no refresh", `<html><head><title>Refresh rates</title></head><body><p>Refresh.</p></body></html>`, "", false},
	}
	for _, c := range cases {
		got, ok := Redirect([]byte(c.page))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Redirect = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

var longText = func() string {
	s := ""
	for len(s) <= maxRedirectText {
		s += "This page says more than where it went. "
	}
	return s
}()

// A relative link names a file of the same collection; one with a scheme
// or host, an absolute path, or one leaving the collection names none.
func TestRelativeTarget(t *testing.T) {
	cases := []struct {
		from, link, name, frag string
		ok                     bool
	}{
		{"doc/syn/file/struct.File.html", "../struct.Span.html#method.new", "doc/syn/struct.Span.html", "method.new", true},
		{"doc/a.html", "#top", "doc/a.html", "top", true},
		{"a.html", "#top", "a.html", "top", true},
		{"doc/a.html", "sub/", "doc/sub/", "", true},
		{"doc/a.html", "../other/b.html", "", "", false},
		{"doc/a.html", "https://example.com/b.html", "", "", false},
		{"doc/a.html", "/etc/passwd", "", "", false},
		{"doc/a.html", "javascript:alert(1)", "", "", false},
		{"a.html", "b.html", "", "", false},
	}
	for _, c := range cases {
		name, frag, ok := RelativeTarget(c.from, c.link)
		if name != c.name || frag != c.frag || ok != c.ok {
			t.Errorf("RelativeTarget(%q, %q) = %q, %q, %v; want %q, %q, %v", c.from, c.link, name, frag, ok, c.name, c.frag, c.ok)
		}
	}
}

// A source's ids name the section they are in: a container's names the
// heading it holds first, an empty anchor right before a heading names
// that heading, one inside a paragraph the paragraph's section.
func TestSectionIDs(t *testing.T) {
	page := `<html><body><h1>T</h1><p>Lead <a name="inlead">x</a>.</p>
<section id="method.new"><a href="src.html">source</a><h2>new</h2><p>Makes one.</p></section>
<a name="old"></a><h2>Old</h2><p id="para">Text.</p><span id="late"></span><p>More.</p><h2>Last</h2></body></html>`
	d, err := Read("doc/a.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"T": {"inlead"}, "new": {"method.new"}, "Old": {"old", "para", "late"}, "Last": nil}
	for _, s := range d.Sections {
		w, ok := want[s.Heading]
		if !ok {
			continue
		}
		if len(w) != len(s.IDs) {
			t.Errorf("section %q has ids %q, want %q", s.Heading, s.IDs, w)
			continue
		}
		for i := range w {
			if s.IDs[i] != w[i] {
				t.Errorf("section %q has ids %q, want %q", s.Heading, s.IDs, w)
				break
			}
		}
	}
}

// A part of a page with a heading of its own is the page's text, however
// alike its shape is across the collection: rustdoc ends every type's page
// with "impl Copy for Spacing", "impl Eq for Spacing" … (links as #: "impl
// # for #" on each), which must not be left out as a bar.
func TestBoilerplateKeepsHeadedParts(t *testing.T) {
	var ins []Input
	for _, ty := range []string{"Span", "Ident", "Group", "Punct"} {
		page := `<html><body><div class="nav"><p>Crates: <a href="a.html">a</a> <a href="b.html">b</a></p></div><h1>` + ty + `</h1><p>The ` + ty + ` type holds ` + ty + `s.</p>` +
			`<section id="impl-Copy"><h3>impl <a href="../core/Copy.html">Copy</a> for <a href="x.html">` + ty + `</a></h3></section>` +
			`<section id="impl-Eq"><h3>impl <a href="../core/Eq.html">Eq</a> for <a href="x.html">` + ty + `</a></h3></section></body></html>`
		ins = append(ins, Input{Name: "doc/" + ty + ".html", Data: []byte(page), Found: true, Collection: "doc"})
	}
	b := FindBoilerplate(ins)["doc"]
	d, err := ReadWith(ins[0].Name, ins[0].Data, "", b)
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	if !strings.Contains(md, "impl Copy for Span") || !strings.Contains(md, "impl Eq for Span") {
		t.Errorf("the headed parts were left out:\n%s", md)
	}
}
