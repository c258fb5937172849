package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// The offline engine makes pages only of what the text declares:
// procedures of numbered lists under a heading that presents steps,
// term pages of definition lists of names; no steps or pitfalls from a
// sentence's shape, no page for a common word, a fragment, a lone
// "Term: meaning" line, an interface listing (a dl under Options) or a
// value ("0x2"), an identifier ("R-00013-…"), a caption's label ("Figure
// 15", also under a heading with "Terms" in its middle), or an API heading (which stays an anchored
// section of the source page), and a conversation's turns stay turns.
func TestOnlyDeclaredStructureBecomesPages(t *testing.T) {
	_, w := newWiki(t)
	doc := "# Library Manual\n\nNever call it twice. Avoid globals.\n\n" +
		"## Background\n\n1. No case conversion is performed.\n2. The path is resolved.\n\n" +
		"## Installation\n\n1. Download the archive.\n2. Run the installer.\n\n" +
		"## Options\n\n### Reading\n\n<dl><dt>Frobnicator</dt><dd>the option that frobnicates every input</dd><dt>Sieve</dt><dd>the option that drops short inputs</dd></dl>\n\n" +
		"## Layout\n\n<dl><dt>0x2</dt><dd>two object names follow</dd><dt>4-byte signature</dt><dd>the file's magic number</dd></dl>\n\n" +
		"## Words\n\n<dl><dt>off</dt><dd>turns the feature off entirely</dd><dt>bool</dt><dd>a true or false value</dd>" +
		"<dt>only present when `bigint</dt><dd>the field exists only then</dd><dt>pointer to above</dt><dd>the pointer of the struct above</dd>" +
		"<dt>Closure</dt><dd>a function together with the data it was made with</dd></dl>\n\n" +
		"## ffi_call\n\nImplementation restriction: A compiler may restrict the size of a call frame.\n\n" +
		"Implementation restriction: A compiler may refuse a byte order mark.\n\n" +
		"## Terminating statements\n\n1. A return statement.\n2. A goto statement.\n\n" +
		"## Requirements\n\n<dl><dt>R-00013-61831-22423</dt><dd>The key comes first.</dd><dt>R-00041-06536-06136</dt><dd>The table may omit rows.</dd></dl>\n\n" +
		"## 1.8. OR-Connected Terms In The WHERE Clause\n\nFigure 15: Query With OR Constraints\n\n" +
		"## 1.9. Joining Terms With AND\n\nThe planner reads each term.\n\nRowid lookup: the search of a table by its rowid\n\n" +
		"## Query plans\n\nFigure 1: The first plan of the query\n\nTable 2.1: The costs of the second plan\n\n" +
		"## 2.1 Terms used in this manual\n\nWidget: the part that holds a gadget\n\nFigure 3: The parts of a widget\n\n" +
		"There are three frame types: rows, groups and ranges\n\nNote to Windows users: the names are UTF-8\n"
	chat := `[{"role":"system","content":"You are a helpful site reliability assistant."},
{"role":"user","content":"How do I roll back?"},
{"role":"assistant","content":"Never roll back during the invoice run.\n\n1. Run deployctl rollback.\n2. Watch the dashboard."}]`
	d1 := readDoc(t, "manual.md", doc)
	d2 := readDoc(t, "chat.json", chat)
	ingestDocs(t, w, []*source.Document{d1, d2}...)
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, info := range pages {
		p := info.Path
		_, pg, err := w.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, "README.html") {
			continue
		}
		titles = append(titles, pg.Meta.Template()+":"+pg.Meta.Title())
		for _, s := range pg.Slots {
			if strings.Contains(s.HTML, "alert") {
				t.Errorf("%s slot %s holds a warning box: %s", p, s.ID, s.HTML)
			}
			if s.ID == "pitfalls" && s.HTML != "" {
				t.Errorf("%s has pitfalls the source never headed as such: %s", p, s.HTML)
			}
		}
	}
	got := "|" + strings.Join(titles, "|") + "|"
	for _, want := range []string{"|procedure:Installation|", "|concept:Closure|", "|source:Library Manual|", "|source:How do I roll back?|", "|concept:Widget|"} {
		if !strings.Contains(got, want) {
			t.Errorf("pages %s lack %s", got, want)
		}
	}
	for _, bad := range []string{":Background|", ":off|", ":bool|", "bigint", "pointer to above", "ffi_call", "Implementation restriction", "Steps:", "Terminating", "Frobnicator", "Sieve", ":0x2|", "4-byte", "R-000", "R-00041", ":Figure 15|", ":Figure 1|", ":Table 2.1|", ":Figure 3|", "three frame types", "Windows users", "Rowid lookup"} {
		if strings.Contains(got, bad) {
			t.Errorf("pages %s include %q", got, bad)
		}
	}
	if n := strings.Count(got, "procedure:"); n != 1 {
		t.Errorf("%d procedures (%s), want the one under Installation", n, got)
	}
	src := slotOf(t, w, pageOf(t, w, d1.ID, "source"), "document")
	if !strings.Contains(src, `<h3 id="s-ffi-call">ffi_call</h3>`) || !strings.Contains(src, "<dt>pointer to above</dt>") {
		t.Errorf("the source page lost its API section or a definition:\n%s", src)
	}
	turns := slotOf(t, w, pageOf(t, w, d2.ID, "source"), "document")
	if !strings.Contains(turns, `<div class="turn turn-system"><p class="speaker"><strong>System</strong></p><p>You are a helpful site reliability assistant.</p></div>`) {
		t.Errorf("the system prompt is not a turn:\n%s", turns)
	}
}

// An API reference's labelled parts (Doxygen's <dl class="section
// return">, Javadoc's "Returns:" lines) are labels of the text that
// follows, not terms, and a term that is an API name (size_t) is anchored
// on the source page, not given a glossary page: the source page keeps
// "Returns: …" as written.
func TestLabelledPartsAreNoTerms(t *testing.T) {
	_, w := newWiki(t)
	doc := `<html><head><title>Writer</title></head><body><h1>Writer</h1>
<h2>write()</h2><p>Write a value.</p><dl class="section pre"><dt>Precondition</dt><dd>sout != NULL</dd></dl>
<dl class="section return"><dt>Returns</dt><dd>zero on success, always</dd></dl>
<dl class="params"><dt>Parameters</dt><dd><table class="params"><tr><td class="paramname">sout</td><td>the stream written to</td></tr></table></dd></dl>
<h2>Types</h2><ul><li>size_t: the size type of the library</li><li>Gadget: the part that holds a widget</li></ul>
<h2>clear()</h2><p>Returns: nothing at all, ever.</p><p>Throws: an error when the value is frozen.</p></body></html>`
	d := readDoc(t, "writer.html", doc)
	ingestDocs(t, w, d)
	got := pageTitles(t, w)
	if !strings.Contains(got, "|concept:Gadget|") {
		t.Errorf("pages %s lack the declared term Gadget", got)
	}
	for _, bad := range []string{":Returns|", ":Precondition|", ":Parameters|", ":Throws|", ":size_t|"} {
		if strings.Contains(got, bad) {
			t.Errorf("pages %s include %q", got, bad)
		}
	}
	src := slotOf(t, w, pageOf(t, w, d.ID, "source"), "document")
	for _, want := range []string{"Returns: zero on success, always", "Precondition: sout != NULL", "the stream written to"} {
		if !strings.Contains(src, want) {
			t.Errorf("the source page lost %q:\n%s", want, src)
		}
	}
}

// Several numbered lists under one heading that presents steps make one
// procedure each, each with its own list: the pages are found by their
// origin, not by the title they share.
func TestEachProcedureHasItsOwnSteps(t *testing.T) {
	_, w := newWiki(t)
	doc := "# Service manual\n\nHow the service runs.\n\n## How to restart the service\n\nOn the primary:\n\n" +
		"1. Drain the primary.\n2. Restart the primary.\n\nOn a replica:\n\n1. Detach the replica.\n2. Restart the replica.\n3. Attach the replica.\n\n" +
		"Afterwards:\n\n1. Check the dashboard.\n2. Close the ticket.\n"
	d := readDoc(t, "manual.md", doc)
	ingestDocs(t, w, d)
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, info := range pages {
		_, pg, err := w.Read(info.Path)
		if err != nil {
			t.Fatal(err)
		}
		if pg.Meta.Template() == "procedure" {
			steps = append(steps, slotOf(t, w, info.Path, "steps"))
		}
	}
	got := strings.Join(steps, "\n")
	if len(steps) != 3 {
		t.Fatalf("%d procedures, want 3:\n%s", len(steps), got)
	}
	for _, want := range []string{"Drain the primary.", "Detach the replica.", "Check the dashboard."} {
		if strings.Count(got, want) != 1 {
			t.Errorf("the steps %q are on %d procedure pages, want 1:\n%s", want, strings.Count(got, want), got)
		}
	}
}

// revisedEngine is the offline engine under another revision.
type revisedEngine struct {
	offline.Engine
	rev string
}

func (e revisedEngine) Revision() string { return e.rev }

// A source ingested by one revision of the offline engine is worked again
// by the next revision (the revision is in its memo key), and skipped by
// the same revision.
func TestAnEngineRevisionWorksSourcesAgain(t *testing.T) {
	_, w := newWiki(t)
	d := readDoc(t, "manual.md", "# Service manual\n\nHow the service runs.\n")
	run := func(rev string) string {
		t.Helper()
		res, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, opts(revisedEngine{rev: rev}))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Sources) != 1 {
			t.Fatalf("%d sources in the result", len(res.Sources))
		}
		return res.Sources[0].Status
	}
	if got := run("r1"); got == "skipped" {
		t.Fatalf("first ingest: %s", got)
	}
	if got := run("r1"); got != "skipped" {
		t.Fatalf("the same revision again: %s, want skipped", got)
	}
	if got := run("r2"); got == "skipped" {
		t.Fatal("a new engine revision skipped the source its old revision worked")
	}
}

// A list that defines plain words or short labels — git add's interactive
// commands ("update", "quit"), a design note's steps "W1", "W2" — defines
// the text's vocabulary, not terms: they stay on the source page and get
// no glossary page; a name beside them ("Merge Base") does. The same
// words in a glossary get their pages.
func TestPlainWordsAndLabelsArePagesOnlyInAGlossary(t *testing.T) {
	_, w := newWiki(t)
	manual := readDoc(t, "git-add.html", `<html><head><title>git-add(1)</title></head><body><h1>git-add(1)</h1>
<h2>INTERACTIVE MODE</h2><dl><dt>update</dt><dd>This shows the status information and issues an update prompt.</dd>
<dt>quit</dt><dd>This lets you quit the interactive session.</dd><dt>W1</dt><dd>The worker reads the first entry.</dd>
<dt>Merge Base</dt><dd>The best common ancestor of two commits.</dd></dl></body></html>`)
	glossary := readDoc(t, "words.html", `<html><head><title>Words</title></head><body><h1>Words</h1>
<h2>Glossary</h2><dl><dt>stash</dt><dd>A place for changes set aside for later.</dd>
<dt>reflog</dt><dd>The record of where a ref has pointed.</dd></dl></body></html>`)
	ingestDocs(t, w, manual, glossary)
	got := pageTitles(t, w)
	for _, want := range []string{":Merge Base|", ":stash|", ":reflog|"} {
		if !strings.Contains(got, want) {
			t.Errorf("pages %s lack %q", got, want)
		}
	}
	for _, bad := range []string{":update|", ":quit|", ":W1|"} {
		if strings.Contains(got, bad) {
			t.Errorf("pages %s include %q", got, bad)
		}
	}
	src := slotOf(t, w, pageOf(t, w, manual.ID, "source"), "document")
	if !strings.Contains(src, "This lets you quit the interactive session.") {
		t.Errorf("the source page lost the definition of quit:\n%s", src)
	}
}

// TestNumberedLabelsAndCodeAreNoTerms: a definition list's numbered
// labels ("Case 2", "Merge 1"), a field beside its placeholder ("nonce
// <nonce>"), declarations and command lines are the text's cases and
// interface, not terms: no glossary page, their text stays on the source
// page. A name the same list defines still gets its page.
func TestNumberedLabelsAndCodeAreNoTerms(t *testing.T) {
	_, w := newWiki(t)
	doc := readDoc(t, "renames.html", `<html><head><title>Remembering renames</title></head><body><h1>Remembering renames</h1>
<h2>Cases</h2><dl><dt>Case 2</dt><dd>The upstream side renamed the file during the merge.</dd>
<dt>Merge 1</dt><dd>The first merge of the series replays the rename.</dd>
<dt><code>nonce</code> nonce</dt><dd>The nonce string the receiving side asked for.</dd>
<dt><code>show_commit_fn show_commit</code></dt><dd>A callback called for each commit of the walk.</dd>
<dt><code>git sparse-checkout set MY/DIR1 SUB/DIR2</code></dt><dd>Change to cone mode with those directories.</dd>
<dt>Rename detection</dt><dd>Finding the files a commit renamed by their content.</dd></dl></body></html>`)
	ingestDocs(t, w, doc)
	got := pageTitles(t, w)
	if !strings.Contains(got, ":Rename detection|") {
		t.Errorf("pages %s lack the term Rename detection", got)
	}
	for _, bad := range []string{":Case 2|", ":Merge 1|", ":nonce nonce|", ":show_commit_fn show_commit|", ":git sparse-checkout set MY/DIR1 SUB/DIR2|"} {
		if strings.Contains(got, bad) {
			t.Errorf("pages %s include %q", got, bad)
		}
	}
	src := slotOf(t, w, pageOf(t, w, doc.ID, "source"), "document")
	for _, kept := range []string{"The upstream side renamed the file", "A callback called for each commit"} {
		if !strings.Contains(src, kept) {
			t.Errorf("the source page lost %q:\n%s", kept, src)
		}
	}
}

// pageTitles lists the wiki's pages as "|template:title|…|".
func pageTitles(t *testing.T, w *wiki.Wiki) string {
	t.Helper()
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, info := range pages {
		_, pg, err := w.Read(info.Path)
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, pg.Meta.Template()+":"+pg.Meta.Title())
	}
	return "|" + strings.Join(titles, "|") + "|"
}

// A description of several blocks (Sphinx's class and its attributes, an
// option and its example) is kept as those blocks on the source page, and
// the attributes a class lists are no glossary terms; a glossary whose
// list holds an entry shaped as an option ("<pathspec>") keeps its terms.
func TestDescriptionsKeepTheirBlocksAndGlossariesTheirTerms(t *testing.T) {
	_, w := newWiki(t)
	api := readDoc(t, "envapi.html", `<html><head><title>Build environment API</title></head><body><h1>Build environment API</h1>
<dl class="py class"><dt id="env.BuildEnvironment">class env.BuildEnvironment</dt><dd><p>The environment in which the project is built.</p>
<p class="rubric">Attributes</p>
<dl class="py attribute"><dt id="env.app">app</dt><dd><p>Reference to the Sphinx application object.</p></dd>
<dt id="env.config">config</dt><dd><p>Reference to the Config object of the build.</p></dd></dl>
<div class="highlight"><pre>env.doc2path(docname)
    returns a path</pre></div></dd></dl></body></html>`)
	gloss := readDoc(t, "gitglossary.html", `<html><head><title>gitglossary(7)</title></head><body><h1>gitglossary(7)</h1><h2>DESCRIPTION</h2>
<dl><dt>bare repository</dt><dd><p>A repository without a working tree of its own.</p></dd>
<dt>&lt;pathspec&gt;</dt><dd><p>A pattern used to limit paths in Git commands.</p><p>Pathspecs are used on the command line.</p></dd>
<dt>detached HEAD</dt><dd><p>A HEAD that names a commit, not a branch.</p></dd>
<dt>major : non-negative integer</dt><dd><p>The major number of the version.</p></dd>
<dt>Example1:</dt><dd><p>A first example of the markup.</p></dd>
<dt>frobnicator</dt><dd><ul><li>a first thing it does</li><li>a second thing it does</li></ul></dd></dl>
<h2>Paragraph styles</h2><dl><dt>rststyle-blockindent</dt><dd>The style of an indented block of text.</dd>
<dt>rststyle-caption</dt><dd>The style of the caption of a figure.</dd></dl></body></html>`)
	ingestDocs(t, w, api, gloss)
	got := pageTitles(t, w)
	for _, bad := range []string{":app|", ":config|", ":major : non-negative integer|", ":Example1:|", ":frobnicator|", ":rststyle-caption|"} {
		if strings.Contains(got, bad) {
			t.Errorf("pages %s include the attribute %q", got, bad)
		}
	}
	for _, term := range []string{":bare repository|", ":detached HEAD|"} {
		if !strings.Contains(got, term) {
			t.Errorf("pages %s lack the glossary's term %q", got, term)
		}
	}
	src := slotOf(t, w, pageOf(t, w, api.ID, "source"), "document")
	for _, kept := range []string{
		"<dd><p>The environment in which the project is built.</p>",
		"<dt>app</dt><dd>Reference to the Sphinx application object.</dd>",
		"<pre><code>env.doc2path(docname)\n    returns a path</code></pre></dd>",
	} {
		if !strings.Contains(src, kept) {
			t.Errorf("the source page lacks %q:\n%s", kept, src)
		}
	}
}

// A glossary entry of several blocks is quoted whole on its term's page:
// the first paragraph is the summary, the later paragraphs, lists and
// code follow in the body in the source's order, before the line naming
// where it comes from.
func TestATermPageQuotesItsWholeDescription(t *testing.T) {
	_, w := newWiki(t)
	gloss := readDoc(t, "gitglossary.html", `<html><head><title>gitglossary(7)</title></head><body><h1>gitglossary(7)</h1><h2>DESCRIPTION</h2>
<dl><dt>detached HEAD</dt><dd><p>A HEAD that names a commit, not a branch.</p>
<p>Commands that build history still work while the HEAD is detached.</p>
<ul><li>commit moves the HEAD</li><li>branch names nothing</li></ul>
<pre>git switch --detach v1.0</pre></dd>
<dt>bare repository</dt><dd><p>A repository without a working tree of its own.</p></dd></dl></body></html>`)
	ingestDocs(t, w, gloss)
	if got := slotOf(t, w, "glossary/detached-head.html", "summary"); !strings.Contains(got, "A HEAD that names a commit, not a branch.") {
		t.Fatalf("summary %q", got)
	}
	body := slotOf(t, w, "glossary/detached-head.html", "body")
	want := []string{
		"<p>Commands that build history still work while the HEAD is detached.</p>",
		"<ul><li>commit moves the HEAD</li><li>branch names nothing</li></ul>",
		"<pre><code>git switch --detach v1.0</code></pre>",
		"defines detached HEAD under",
	}
	at := 0
	for _, s := range want {
		i := strings.Index(body[at:], s)
		if i < 0 {
			t.Fatalf("the term page's body lacks %q after byte %d:\n%s", s, at, body)
		}
		at += i + len(s)
	}
	if b := slotOf(t, w, "glossary/bare-repository.html", "body"); strings.Count(b, "<p") != 1 {
		t.Errorf("a description of one paragraph gives a body of the source line alone: %s", b)
	}
}
