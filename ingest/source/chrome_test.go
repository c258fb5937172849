package source

import (
	"os"
	"strings"
	"testing"
)

// Generators' navigation is not text: texinfo's "Next: … Previous: … Up:"
// header (a real page of libffi's manual, with its copyright file), the
// pilcrow links Sphinx and MkDocs put after headings, "skip to content"
// links, breadcrumbs and DocBook's navigation tables are dropped; the
// text around them stays.
func TestGeneratorChromeIsDropped(t *testing.T) {
	data, err := os.ReadFile("testdata/libffi/Multiple-ABIs.html")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Read("Multiple-ABIs.html", data, "")
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	if strings.Contains(md, "Next:") || strings.Contains(md, "Previous:") || strings.Contains(md, "Index") {
		t.Errorf("texinfo's navigation header survived:\n%s", md)
	}
	if !strings.Contains(md, "A given platform may provide multiple different ABIs at once.") || !strings.Contains(md, "necessarily platform-specific") {
		t.Errorf("text lost:\n%s", md)
	}
	page := `<html><head><title>Setup ¶</title></head><body>
<a class="skip" href="#main">Skip to content</a><a href="#x">Skip to main content</a>
<ol aria-label="Breadcrumb"><li><a href="/">Docs</a></li><li>Setup</li></ol>
<div class="navheader"><table><tr><td><a href="a.html">Prev</a></td><td><a href="b.html">Next</a></td></tr></table></div>
<div class="body"><h1>Setup<a class="headerlink" href="#setup" title="Link to this heading">¶</a></h1>
<p>Install it.</p><h2 id="use">Use <a href="#use">§</a></h2><p>Use it.</p></div>
<div class="navfooter"><p>Prev Up Next</p></div>
<div class="footer">© Copyright 2024. Created using Sphinx.</div></body></html>`
	d, err = Read("setup.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	md = d.Markdown()
	want := "# Setup\n\nInstall it.\n\n## Use\n\nUse it.\n"
	if md != want {
		t.Errorf("got\n%q\nwant\n%q", md, want)
	}
}

// A link with no text (an icon's, as Doxygen writes before each file
// name) shows nothing, not its URL.
func TestAnIconLinkShowsNoURL(t *testing.T) {
	d, err := Read("files.html", []byte(`<body><h1>Files</h1><table><tr><td><a href="lmdb_8h_source.html"><span class="icondoc"></span></a><b>lmdb.h</b></td><td>The header</td></tr></table></body>`), "")
	if err != nil {
		t.Fatal(err)
	}
	if md := d.Markdown(); strings.Contains(md, "source.html") || !strings.Contains(md, "lmdb.h") {
		t.Errorf("got\n%s", md)
	}
}

// The cells of a table inside a definition stay cells, words apart
// (Doxygen's parameter tables: "[in]", "env", "An environment handle"),
// and a table inside a definition's text stays words apart.
func TestNestedBlocksKeepTheirWordsApart(t *testing.T) {
	d, err := Read("p.html", []byte(`<body><h1>P</h1><dl><dt>Parameters</dt><dd><table><tr><td>[in]</td><td>env</td><td>An environment handle</td></tr></table></dd></dl></body>`), "")
	if err != nil {
		t.Fatal(err)
	}
	if md := d.Markdown(); !strings.Contains(md, "| \\[in\\] | env | An environment handle |") {
		t.Errorf("got\n%s", md)
	}
	// Past MaxNesting a description is one run of text.
	deep := `<table><tr><td>[in]</td><td>env</td></tr></table>`
	for i := 0; i <= MaxNesting; i++ {
		deep = `<dl><dt>Parameters</dt><dd><p>The handle:</p>` + deep + `</dd></dl>`
	}
	d, err = Read("p.html", []byte(`<body><h1>P</h1>`+deep+`</body>`), "")
	if err != nil {
		t.Fatal(err)
	}
	if md := d.Markdown(); !strings.Contains(md, "[in\\] env") {
		t.Errorf("got\n%s", md)
	}
}

// Sphinx's links between an entry and its code ("[source]" after a
// signature, "[docs]" in a module's listing) and a listing's copy button
// are chrome: neither the term nor the code holds them.
func TestSphinxCodeLinksAreChrome(t *testing.T) {
	src := `<html><head><title>API</title></head><body><h1>API</h1><dl class="py class"><dt id="x.Env">class x.Env<a class="reference internal" href="_modules/x.html#Env"><span class="viewcode-link"><span class="pre">[source]</span></span></a></dt><dd><p>The environment of the build.</p></dd></dl>
<div class="highlight"><pre><a class="viewcode-back" href="api.html#x.Env">[docs]</a><span class="k">class</span> <span class="nc">Env</span>: pass<button class="copybtn">Copy</button></pre></div></body></html>`
	d, err := Read("api.html", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	var term, code string
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Kind == Definitions {
				term = b.Defs[0].Term
			}
			if b.Kind == Code {
				code = b.Text
			}
		}
	}
	if term != "class x.Env" || code != "class Env: pass" {
		t.Errorf("term %q, code %q", term, code)
	}
}
