package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

func read(t *testing.T, name, text string) *source.Document {
	t.Helper()
	d, err := source.Read(name, []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The whole document, in its order: every kind of block, headings with
// anchors (distinct when two headings share a text), inline code and safe
// links, unsafe links as text; the rendering passes the sanitizer as it is.
func TestDocumentKeepsEveryBlockInOrder(t *testing.T) {
	d := read(t, "guide.md", "# Guide\n\nIntro with `ffi_call` and a [link](https://example.com/x) and [bad](javascript:alert(1)).\n\n"+
		"## Setup\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted words\n\n```go\nfunc main() {}\n```\n\n"+
		"| a | b |\n|---|---|\n| 1 | 2 |\n\nTerm\n: what it means\n\n## Setup\n\nagain <b>bold</b>.\n")
	got := Document(d, Options{}).Page(nil)
	want := []string{
		`<p>Intro with <code>ffi_call</code> and a <a href="https://example.com/x">link</a> and bad.</p>`,
		`<h3 id="s-setup">Setup</h3>`,
		`<ul><li>one</li><li>two</li></ul>`,
		`<ol><li>first</li><li>second</li></ol>`,
		`<blockquote><p>quoted words</p></blockquote>`,
		`<pre><code class="language-go">func main() {}</code></pre>`,
		`<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>`,
		`<dl><dt>Term</dt><dd>what it means</dd></dl>`,
		`<h3 id="s-setup-2">Setup</h3>`,
		`<p>again bold.</p>`,
	}
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Fatalf("missing or out of order: %s\nin:\n%s", w, got)
		}
		at += i + len(w)
	}
	if strings.Contains(got, "<h2>Guide") || strings.Contains(got, ">Guide</h") {
		t.Errorf("the title heading is rendered again (the page's h1 says it):\n%s", got)
	}
	clean, removed, err := wiki.Sanitize(got)
	if err != nil || clean != got {
		t.Errorf("the sanitizer changed the rendering (removed %v):\n%s\n---\n%s", removed, got, clean)
	}
}

// A conversation keeps its turns as turns: who said it, then what, the
// system prompt included; its answer's steps stay inside the turn once.
func TestConversationKeepsItsTurns(t *testing.T) {
	d := read(t, "chat.json", `[{"role":"system","content":"You are a helpful site reliability assistant."},
{"role":"user","content":"Why did it fail?"},
{"role":"assistant","content":"Never do that again.\n\n1. Open the logs.\n2. Search."}]`)
	got := Document(d, Options{}).Page(nil)
	for _, w := range []string{
		`<div class="turn turn-system"><p class="speaker"><strong>System</strong></p><p>You are a helpful site reliability assistant.</p></div>`,
		`<div class="turn turn-user"><p class="speaker"><strong>User</strong></p><p>Why did it fail?</p></div>`,
		`<div class="turn turn-assistant"><p class="speaker"><strong>Assistant</strong></p><p>Never do that again.</p><ol><li>Open the logs.</li><li>Search.</li></ol></div>`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %s\nin:\n%s", w, got)
		}
	}
	if strings.Count(got, "Open the logs") != 1 || strings.Contains(got, "alert") {
		t.Errorf("a turn's structure is rendered twice, or as a warning:\n%s", got)
	}
}

// A long document is split at the shallowest heading level that keeps
// each part within the limit: the source page keeps its lead and a table
// of contents linking every part and the headings in it; a part still
// too long is split at the next level.
func TestLongDocumentSplitsIntoSections(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Manual\n\nThe lead paragraph.\n\n")
	para := strings.Repeat("word ", 60) + "\n\n"
	for c := 1; c <= 3; c++ {
		fmt.Fprintf(&sb, "## Chapter %d\n\n%s", c, para)
		n := 1
		if c == 2 {
			n = 6 // chapter 2 is too long for one page
		}
		for s := 1; s <= n; s++ {
			fmt.Fprintf(&sb, "### Part %d.%d\n\n%s%s", c, s, para, para)
		}
	}
	d := read(t, "manual.md", sb.String())
	res := Document(d, Options{SplitAt: 2000})
	var titles []string
	for _, p := range res.Parts {
		titles = append(titles, p.Title)
		if len(p.HTML) > 2000 && !strings.HasPrefix(p.Title, "Chapter 2") {
			t.Errorf("part %q is %d bytes, past the limit", p.Title, len(p.HTML))
		}
		if strings.Contains(p.HTML, ">"+p.Title+"</h") {
			t.Errorf("part %q repeats its title as a heading", p.Title)
		}
	}
	if !strings.Contains(res.Parts[0].HTML, `<h2 id="s-part-1-1">Part 1.1</h2>`) {
		t.Errorf("a part's headings do not start at h2 on its page:\n%s", res.Parts[0].HTML)
	}
	want := "Chapter 1|Chapter 2|Part 2.1|Part 2.2|Part 2.3|Part 2.4|Part 2.5|Part 2.6|Chapter 3"
	if strings.Join(titles, "|") != want {
		t.Fatalf("parts %q, want %q", strings.Join(titles, "|"), want)
	}
	page := res.Page(func(i int) string { return "manual/" + strings.TrimPrefix(res.Parts[i].Anchor, "s-") + ".html" })
	for _, w := range []string{"<p>The lead paragraph.</p>", `<a href="manual/chapter-1.html">Chapter 1</a>`,
		`<a href="manual/chapter-1.html#s-part-1-1">Part 1.1</a>`, `<a href="manual/part-2-6.html">Part 2.6</a>`} {
		if !strings.Contains(page, w) {
			t.Errorf("the source page lacks %s:\n%s", w, page)
		}
	}
	// Nothing lost: every word of the document is on one of its pages.
	all := page
	for _, p := range res.Parts {
		all += p.HTML
	}
	if n, want := strings.Count(all, "word"), strings.Count(sb.String(), "word"); n != want {
		t.Errorf("%d words rendered, the document has %d", n, want)
	}
	if short := Document(d, Options{}); len(short.Parts) != 0 {
		t.Errorf("a %d-byte document split at the default limit", len(sb.String()))
	}
}

// The first mention of a term on a page links to its page, outside code,
// links and headings, as a whole word; a page never links to itself.
func TestLinkerLinksTheFirstMention(t *testing.T) {
	l := NewLinker([]Term{{Title: "Migration gate", Path: "glossary/migration-gate.html"}, {Title: "Rollback", Path: "ops/rollback.html"}, {Title: "on", Path: "x/on.html"}})
	in := `<h3 id="s-rollback">Rollback</h3><p><code>rollback</code> rollbacks, then a Rollback and another rollback; the migration gate, on.</p>`
	got := l.Link(in, "ops/guide.html")
	want := `<h3 id="s-rollback">Rollback</h3><p><code>rollback</code> rollbacks, then a <a class="term" href="rollback.html">Rollback</a> and another rollback; the <a class="term" href="../glossary/migration-gate.html">migration gate</a>, on.</p>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if self := l.Link(in, "ops/rollback.html"); strings.Contains(self, `href="rollback.html"`) {
		t.Errorf("a term page links to itself: %s", self)
	}
}

// A definition whose term names an API gets an anchor (distinct when two
// name one API), which the sanitizer keeps; a definition of a word does
// not.
func TestAPIDefinitionsAreAnchored(t *testing.T) {
	d := read(t, "basics.html", `<html><body><h1>The Basics</h1><dl>
<dt>Function: ffi_status ffi_prep_cif (ffi_cif *cif, ffi_abi abi)</dt><dd>Prepares.</dd>
<dt>Function: void ffi_call (ffi_cif *cif, void *fn)</dt><dd>Calls.</dd>
<dt>cif</dt><dd>A call interface.</dd>
<dt>ffi_call</dt><dd>Again.</dd></dl></body></html>`)
	got := Document(d, Options{}).Page(nil)
	for _, want := range []string{
		`<dt id="s-def-ffi-prep-cif">Function: ffi_status ffi_prep_cif (ffi_cif *cif, ffi_abi abi)</dt>`,
		`<dt id="s-def-ffi-call">Function: void ffi_call (ffi_cif *cif, void *fn)</dt>`,
		`<dt>cif</dt>`,
		`<dt id="s-def-ffi-call-2">ffi_call</dt>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if clean, _, err := wiki.Sanitize(got); err != nil || clean != got {
		t.Fatalf("the sanitizer changed the rendering (%v):\n%s", err, clean)
	}
}

// Every page of a long document stays bounded, whatever its headings: a
// text of few headings whose first part (before any heading to split at)
// is long, a text of one paragraph with no heading at all, and a manual
// of thousands of headings, whose contents stop listing the headings
// inside parts past MaxContents. Nothing of the text is left out.
func TestEveryPageOfALongDocumentIsBounded(t *testing.T) {
	para := strings.Repeat("a sentence of the long text goes on and on. ", 40) + "\n\n"
	var few strings.Builder
	few.WriteString("Long Text\n\n")
	for few.Len() < 3*MaxPart {
		few.WriteString(para)
	}
	few.WriteString("Part Two\n========\n\n" + para + "Part Three\n==========\n\n" + para)
	one := "Title\n\n" + strings.Repeat("words without a break ", (3*MaxPart)/22) + "\n"
	var manual strings.Builder
	manual.WriteString("<title>Manual</title><h1>Manual</h1>")
	for i := 0; manual.Len() < 2*MaxPart; i++ {
		fmt.Fprintf(&manual, "<h2>Chapter %d</h2><p>%s</p><h3>Detail %d</h3><p>text %d</p>", i, strings.Repeat("x ", 50), i, i)
	}
	for _, tt := range []struct{ name, text string }{{"few.txt", few.String()}, {"one.txt", one}, {"manual.html", manual.String()}} {
		t.Run(tt.name, func(t *testing.T) {
			d := read(t, tt.name, tt.text)
			res := Document(d, Options{})
			if len(res.Parts) < 2 {
				t.Fatalf("%d parts", len(res.Parts))
			}
			page := res.Page(nil)
			if len(page) > SplitAt+2*MaxContents+4096 {
				t.Errorf("the source page holds %d bytes", len(page))
			}
			var sb strings.Builder
			sb.WriteString(res.HTML)
			for _, p := range res.Parts {
				if len(p.HTML) > MaxPart+source.MaxBlock*6 {
					t.Errorf("part %q holds %d bytes", p.Title, len(p.HTML))
				}
				sb.WriteString(p.HTML)
			}
			all := sb.String()
			whole := Document(d, Options{SplitAt: 1 << 30}).HTML
			for _, w := range []string{"sentence", "words", "text", "x "} {
				if got, want := strings.Count(all, w), strings.Count(whole, w); got != want {
					t.Errorf("the parts say %q %d times, the document %d", w, got, want)
				}
			}
		})
	}
}

// A term that is one plain lower-case word (a merge strategy "resolve" a
// definition list names) links only where a page names it as code: the
// verb in running text stays text. A capitalised or two-word term links in
// text as before.
func TestPlainWordTermsLinkOnlyAsCode(t *testing.T) {
	l := NewLinker([]Term{{Title: "resolve", Path: "glossary/resolve.html"}, {Title: "ours", Path: "glossary/ours.html"}, {Title: "merge base", Path: "glossary/merge-base.html"}})
	in := `<p>You will have to resolve any such merge failure at the merge base; ours is kept.</p><p>Use <code>-s ours</code>, or <code>resolve</code>, then <code>resolve</code>.</p>`
	got := l.Link(in, "git/git-rebase.html")
	want := `<p>You will have to resolve any such merge failure at the <a class="term" href="../glossary/merge-base.html">merge base</a>; ours is kept.</p><p>Use <code>-s ours</code>, or <a class="term" href="../glossary/resolve.html"><code>resolve</code></a>, then <code>resolve</code>.</p>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if self := l.Link(in, "glossary/resolve.html"); strings.Contains(self, `resolve.html"><code>`) {
		t.Errorf("a term page links to itself: %s", self)
	}
}
