package source

import (
	"strings"
	"testing"
)

// DocBook draws an admonition as a layout table — an icon cell, a title
// cell, then the text — or, without graphics, as a title heading and the
// text; Sphinx and MkDocs as a titled paragraph. Each is read as a note
// headed by its own title: never a table with an empty cell, never a
// section of its own. A layout table holding only an image (DocBook's
// mediaobject) is no empty table either.
func TestAdmonitionsAreNotes(t *testing.T) {
	for _, c := range []struct{ name, page, want string }{
		{"docbook table", `<div class="warning" style="margin-left: 0.5in; margin-right: 0.5in;"><table border="0" summary="Warning"><tr><td rowspan="2" align="center" valign="top" width="25"><img alt="[Warning]" src="images/warning.png" /></td><th align="left">Warning</th></tr><tr><td align="left" valign="top"><p>Keys kept on the mirror are <code>trusted</code> by apt.</p><p>Check them first.</p></td></tr></table></div>`,
			"> Warning: Keys kept on the mirror are `trusted` by apt. Check them first.\n"},
		{"docbook table with a list", `<div class="note"><table border="0" summary="Note"><tr><td rowspan="2"><img alt="[Note]" src="images/note.png" /></td><th align="left">Note</th></tr><tr><td><p>Two ways:</p><ul><li>press q</li><li>press x</li></ul></td></tr></table></div>`,
			"Note:\n\nTwo ways:\n\n- press q\n- press x\n"},
		{"docbook heading", `<div class="tip"><h3 class="title">Tip</h3><p>Press <kbd>?</kbd> for help.</p></div>`,
			"> Tip: Press `?` for help.\n"},
		{"docbook media table", `<div class="mediaobject"><table border="0" summary="manufactured viewport for HTML img" width="100%"><tr><td><img src="images/start-snapshot.png" width="100%" alt="[main screen]" /></td></tr></table></div>`,
			""},
		{"sphinx", `<div class="admonition note">
<p class="admonition-title">Note</p>
<p>The cache is rebuilt nightly.</p>
</div>`, "> Note: The cache is rebuilt nightly.\n"},
	} {
		page := "<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Before.</p>" + c.page + "<p>After.</p></body></html>"
		d, err := Read("guide.html", []byte(page), "")
		if err != nil {
			t.Fatal(err)
		}
		md := d.Markdown()
		want := "# Guide\n\nBefore.\n\n" + c.want + "\nAfter.\n"
		if c.want == "" {
			want = "# Guide\n\nBefore.\n\nAfter.\n"
		}
		if md != want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, md, want)
		}
	}
}

// A page's own contents — a list of links within the page, as Sphinx's
// "Contents" topic is — is navigation: it is left out, so its link words
// never run together into text a term page could quote. A list that says
// something beside its in-page links stays.
func TestPageContentsAreNavigation(t *testing.T) {
	page := `<html><head><title>Groups</title></head><body><section id="g"><h1>Groups</h1>
<div class="contents local topic" id="contents"><ul class="simple">
<li><p><a class="reference internal" href="#directive" id="id1">doxygengroup Directive</a></p>
<ul><li><p><a class="reference internal" href="#basic" id="id2">Basic Example</a></p></li>
<li><p><a class="reference internal" href="#members" id="id3">Members Example</a></p></li></ul></li></ul></div>
<p>Groups gather members.</p>
<ul><li>See <a href="#basic">Basic Example</a> first.</li><li><a href="#members">Members Example</a></li></ul>
<h2 id="basic">Basic Example</h2><p>The members option lists members.</p></section></body></html>`
	d, err := Read("group.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	want := "# Groups\n\nGroups gather members.\n\n- See [Basic Example](<#basic>) first.\n- [Members Example](<#members>)\n\n## Basic Example\n\nThe members option lists members.\n"
	if md != want {
		t.Errorf("got\n%s\nwant\n%s", md, want)
	}
}

// SQLite's pages build their contents of <div>s, one link each, under a
// script's toggle ("► Table Of Contents", a link with no href): that is
// the page's own contents too, and left out; a <div> of in-page links
// with words of its own beside them stays.
func TestPageContentsOfDivsAreNavigation(t *testing.T) {
	page := `<html><head><title>Atomic Commit</title></head><body>
<div class="fancy_title">Atomic Commit</div>
<div class="fancy_toc"><a onclick="toggle_toc()"><span class="fancy_toc_mark" id="toc_mk">&#x25ba;</span> Table Of Contents</a>
<div id="toc_sub"><div class="fancy-toc1"><a href="#_introduction">1.  Introduction</a></div>
<div class="fancy-toc2"><a href="#_initial_state">1.1. Initial State</a></div>
<div class="fancy-toc1"><a href="#_rollback">2.  Rollback</a></div></div></div>
<div>On this page: <a href="#_introduction">Introduction</a> <a href="#_rollback">Rollback</a></div>
<h1 id="_introduction">Introduction</h1><p>A commit is atomic.</p>
<div>Read <a href="#_rollback">Rollback</a> and <a href="#_initial_state">Initial State</a> first.</div>
<h1 id="_rollback">Rollback</h1><p>It undoes.</p></body></html>`
	d, err := Read("atomiccommit.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	md := d.Markdown()
	for _, bad := range []string{"Table Of Contents", "Initial State\n", "►", "On this page"} {
		if strings.Contains(md, bad) {
			t.Errorf("the contents %q stayed:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "Read [Rollback](<#_rollback>) and [Initial State](<#_initial_state>) first.") {
		t.Errorf("a div of in-page links with words of its own was lost:\n%s", md)
	}
}

// Go's documentation gives a page's title in a leading comment holding
// JSON (go_spec.html has no <title>): that is the title, not the first
// heading. A JSON comment later in the page names nothing.
func TestTitleFromALeadingJSONComment(t *testing.T) {
	spec := "<!--{\n\t\"Title\": \"The Go Programming Language Specification\",\n\t\"Subtitle\": \"Language version go1.26\",\n\t\"Path\": \"/ref/spec\"\n}-->\n\n<h2 id=\"Introduction\">Introduction</h2>\n\n<p>This is the reference manual.</p>\n"
	d, err := Read("go_spec.html", []byte(spec), "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "The Go Programming Language Specification" {
		t.Errorf("title %q", d.Title)
	}
	if !strings.Contains(d.Markdown(), "## Introduction\n\nThis is the reference manual.") {
		t.Errorf("text lost:\n%s", d.Markdown())
	}
	late := "<h2>Introduction</h2><p>Text.</p><!--{\"Title\": \"Not mine\"}-->"
	if d, err := Read("late.html", []byte(late), ""); err != nil || d.Title != "Introduction" {
		t.Errorf("a later comment: title %q, %v", d.Title, err)
	}
	titled := "<html><head><title>Own title</title></head><body><!--{\"Title\": \"Comment\"}--><h1>Heading</h1></body></html>"
	if d, err := Read("titled.html", []byte(titled), ""); err != nil || d.Title != "Own title" {
		t.Errorf("a <title> comes first: title %q, %v", d.Title, err)
	}
}

// A colon inside a code span is code, not the end of a term: "Change
// `EnvVar: "X"` to `EnvVars: …`" (urfave/cli's migration guide) stays a
// paragraph with its two code spans whole.
func TestACodeSpansColonIsNoDefinition(t *testing.T) {
	md := "# Migrate\n\nChange `EnvVar: \"XXXXX\"` to `EnvVars: []string{\"XXXXX\"}` (plural).\n\nColour: the hue a widget is painted.\n"
	d, err := Read("migrate.md", []byte(md), "")
	if err != nil {
		t.Fatal(err)
	}
	if defs := d.Definitions(); len(defs) != 1 || defs[0].Term != "Colour" {
		t.Errorf("definitions %+v", defs)
	}
	if got := d.Markdown(); !strings.Contains(got, "Change `EnvVar: \"XXXXX\"` to `EnvVars: []string{\"XXXXX\"}` (plural).") {
		t.Errorf("the code spans are not whole:\n%s", got)
	}
}

// Terms a definition list gives one meaning together (texinfo's @itemx:
// gettext's po-emacs-xterm.css, -xterm16.css, -xterm256.css) are each
// defined by it; none is lost to the last.
func TestTermsSharingAMeaning(t *testing.T) {
	page := `<html><body><h1>Styles</h1><dl>
<dt>&lsquo;<tt>po-emacs-x.css</tt>&rsquo;</dt><dd><p>The look of Emacs in an X11 window.</p></dd>
<dt>&lsquo;<tt>po-emacs-xterm.css</tt>&rsquo;</dt>
<dt>&lsquo;<tt>po-emacs-xterm16.css</tt>&rsquo;</dt>
<dd><p>The look of Emacs in a terminal.</p></dd><dd><p>With its colours.</p></dd></dl></body></html>`
	d, err := Read("styles.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, df := range d.Definitions() {
		got = append(got, df.Term+" = "+df.Meaning)
	}
	want := []string{"‘po-emacs-x.css’ = The look of Emacs in an X11 window.",
		"‘po-emacs-xterm.css’ = The look of Emacs in a terminal.", "‘po-emacs-xterm16.css’ = The look of Emacs in a terminal.",
		"‘po-emacs-xterm.css’ = With its colours.", "‘po-emacs-xterm16.css’ = With its colours."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A table row whose cells are all empty says nothing and is left out
// (Doxygen puts one between the members of its tables); the other rows
// stay as they were, empty cells and all.
func TestEmptyTableRowsAreLeftOut(t *testing.T) {
	page := `<html><head><title>Signal</title></head><body><h1>Signal</h1>
<table class="memberdecls"><tr class="heading"><td colspan="2"><h2 class="groupheader">Public Member Functions</h2></td></tr>
<tr class="memitem"><td class="memItemLeft">iterator</td><td class="memItemRight">connect (slot_type slot)</td></tr>
<tr class="memdesc"><td class="mdescLeft">&#160;</td><td class="mdescRight">Add a slot.</td></tr>
<tr class="separator"><td class="memSeparator" colspan="2">&#160;</td></tr>
<tr class="memitem"><td class="memItemLeft">void</td><td class="memItemRight">clear ()</td></tr>
<tr class="separator"><td class="memSeparator" colspan="2">&#160;</td></tr>
</table></body></html>`
	d, err := Read("signal.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	var tables []Block
	for _, sec := range d.Sections {
		for _, b := range sec.Blocks {
			if b.Kind == Table {
				tables = append(tables, b)
			}
		}
	}
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1:\n%s", len(tables), d.Markdown())
	}
	md := d.Markdown()
	for _, want := range []string{"connect (slot", "Add a slot.", "clear ()"} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lost %q:\n%s", want, md)
		}
	}
	if n := len(tables[0].Rows); n != 4 {
		t.Errorf("the table has %d rows, want 4 (the heading, two members and a description, no separators): %q", n, tables[0].Rows)
	}
}

// A definition list that is a table of contents — DocBook's <dl
// class="toc">, or one whose terms are all links to places in the page —
// defines nothing: git's user manual made "How to make a commit" a term
// whose meaning was the next chapter's entries. It is kept as a list of
// its links, nested chapters included; a list of links with meanings
// stays a definition list.
func TestAContentsListIsNoDefinitions(t *testing.T) {
	page := `<html><head><title>Git User Manual</title></head><body><h1>Git User Manual</h1>
<div class="toc"><dl class="toc"><dt><span class="chapter"><a href="#dev">Developing with Git</a></span></dt>
<dd><dl><dt><span class="section"><a href="#name">Telling Git your name</a></span></dt><dt><span class="section"><a href="#commit">How to make a commit</a></span></dt></dl></dd>
<dt><span class="chapter"><a href="#share">Sharing development</a></span></dt></dl></div>
<dl><dt><a href="sprocket.html">Sprocket</a></dt><dd>The wheel that drives a widget.</dd><dt><a href="gear.html">Gear</a></dt><dd>A toothed wheel.</dd></dl>
<dl><dt><a href="#x">One place</a></dt><dt><a href="#y">Another place</a></dt></dl>
<h2 id="commit">How to make a commit</h2><p>Stage and commit.</p></body></html>`
	d, err := Read("user-manual.html", []byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, df := range d.Definitions() {
		terms = append(terms, df.Term)
	}
	if strings.Join(terms, "|") != "Sprocket|Gear" {
		t.Errorf("definitions %q, want only Sprocket and Gear", terms)
	}
	seen := map[string]int{}
	for _, l := range d.Links {
		seen[l.URL]++
	}
	for _, u := range []string{"sprocket.html", "gear.html"} {
		if seen[u] != 1 {
			t.Errorf("link %s recorded %d times, want once: a list read as definitions is read once (links %+v)", u, seen[u], d.Links)
		}
	}
	md := d.Markdown()
	for _, want := range []string{"Telling Git your name", "How to make a commit", "Sharing development", "Another place"} {
		if !strings.Contains(md, want) {
			t.Errorf("the contents entry %q was lost:\n%s", want, md)
		}
	}
}
