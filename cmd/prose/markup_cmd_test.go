package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sources whose text looks like markup (testdata/markup) reach their pages
// as text: inline code as <code>, entities as their characters, a title
// with angle brackets whole, safe links as links and lists as lists; no
// script, unsafe link or slot marker of a source becomes markup.
func TestIngestTextThatLooksLikeMarkup(t *testing.T) {
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "ingest", "testdata/markup")
	slot := func(page, id string) string {
		t.Helper()
		return mustProse(t, "--vault", dir, "wiki", "slot", page, id)
	}
	abstract := slot("markup/escaping", "abstract")
	for _, want := range []string{"<code>&lt;script&gt;</code>", "<code>&lt;br&gt;</code>", "Write &lt;tag&gt; in text", `<a href="https://example.com/spec">the spec</a>`} {
		if !strings.Contains(abstract, want) {
			t.Errorf("escaping-notes abstract lacks %s:\n%s", want, abstract)
		}
	}
	if meta := mustProse(t, "--vault", dir, "wiki", "meta", "markup/hostile"); !strings.Contains(meta, "title: Hostile <Page>\n") {
		t.Errorf("the HTML source's title lost its brackets:\n%s", meta)
	}
	hostile := slot("markup/hostile", "abstract")
	for _, want := range []string{`<a href="https://example.com/x?a=1&amp;b=2">the guide</a>, this and that.`, "<code>&lt;div&gt;</code>", `&lt;!-- /prose:slot id=&#34;body&#34; --&gt; is text`} {
		if !strings.Contains(hostile, want) {
			t.Errorf("hostile-page abstract lacks %s:\n%s", want, hostile)
		}
	}
	note := slot("markup/hostile", "document")
	for _, want := range []string{"<li>alpha &lt;one&gt;</li>", "<li>beta <code>&lt;br&gt;</code></li>"} {
		if !strings.Contains(note, want) {
			t.Errorf("the source page lacks the source's list item %s:\n%s", want, note)
		}
	}
	file, err := os.ReadFile(filepath.Join(dir, "published", "wiki", "markup", "hostile.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(file)
	if !strings.Contains(page, "<title>Hostile &lt;Page&gt;</title>") || !strings.Contains(page, "<h1>Hostile &lt;Page&gt;</h1>") {
		t.Errorf("the page's title is not written escaped:\n%s", page)
	}
	for _, text := range []string{abstract, hostile, note, page} {
		for _, bad := range []string{"&amp;lt;", "javascript:", "data:text", "<script", "<div>", "<br>"} {
			if strings.Contains(text, bad) {
				t.Errorf("a page holds %q:\n%s", bad, text)
			}
		}
	}
	if strings.Count(page, `<!-- /prose:slot id="body" -->`) != 0 || strings.Count(page, "<!-- /prose:slot") != strings.Count(page, "<!-- prose:slot") {
		t.Errorf("a source's text made a slot marker:\n%s", page)
	}
	lint := mustProse(t, "--vault", dir, "wiki", "lint")
	if !strings.Contains(lint, "0 errors, 0 warnings") {
		t.Errorf("lint after ingest:\n%s", lint)
	}
}

// `prose wiki commit` names a removal once, however many slots held it.
func TestWikiCommitNamesARemovalOnce(t *testing.T) {
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "ingest", "testdata/markup/escaping.md")
	file := filepath.Join(dir, "published", "wiki", "notes", "escaping.html")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `<!-- /prose:slot id="abstract" -->`, `<script>x()</script><!-- /prose:slot id="abstract" -->`, 1)
	edited = strings.Replace(edited, `<!-- /prose:slot id="excerpts" -->`, `<script>y()</script><!-- /prose:slot id="excerpts" -->`, 1)
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := prose(t, "--vault", dir, "wiki", "commit")
	if code != 0 || strings.Count(errs, "<script> element") != 1 {
		t.Errorf("wiki commit: exit %d, want the removal named once:\n%s", code, errs)
	}
}
