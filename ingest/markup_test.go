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

// markupSources are sources whose text looks like markup: inline code
// holding tags, entities, a title with angle brackets, links safe and not.
var markupSources = map[string]string{
	"escaping.md": "# Escaping Notes\n\nUse `<script>` tags sparingly and a `<br>` for breaks. Write &lt;tag&gt; in text, see [the spec](https://example.com/spec) and never [this](javascript:alert(1)).\n\n## Checklist\n\n1. Open `<head>` first.\n2. Close it after.\n",
	"hostile.html": `<html><head><title>Hostile &lt;Page&gt;</title></head><body><h1>Hostile &lt;Page&gt;</h1>
<p>Read <a href="https://example.com/x?a=1&amp;b=2">the guide</a> and <a href="javascript:alert(1)">this</a> and <a href="data:text/html,hi">that</a>. Use <code>&lt;div&gt;</code> for layout. &lt;!-- prose:slot id="x" --&gt; stays text.</p>
<ul><li>alpha &lt;one&gt;</li><li>beta <code>&lt;br&gt;</code></li></ul></body></html>`,
}

func ingestMarkup(t *testing.T) *wiki.Wiki {
	t.Helper()
	_, w := newWiki(t)
	var docs []*source.Document
	for _, name := range []string{"escaping.md", "hostile.html"} {
		d, err := source.Read(name, []byte(markupSources[name]), "")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if _, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	lintClean(t, w)
	return w
}

// pageHTML is every slot of a page, joined.
func pageHTML(t *testing.T, w *wiki.Wiki, name string) (*wiki.Page, string) {
	t.Helper()
	_, p, err := w.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, s := range p.Slots {
		sb.WriteString(s.HTML + "\n")
	}
	return p, sb.String()
}

func TestTextThatLooksLikeMarkupReachesPagesAsText(t *testing.T) {
	w := ingestMarkup(t)

	_, md := pageHTML(t, w, "notes/escaping")
	for _, want := range []string{
		"<code>&lt;script&gt;</code>", "<code>&lt;br&gt;</code>", "Write &lt;tag&gt; in text",
		`<a href="https://example.com/spec">the spec</a>`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown source's page lacks %s:\n%s", want, md)
		}
	}
	_, steps := pageHTML(t, w, "notes/escaping/checklist")
	if !strings.Contains(steps, "<li>Open <code>&lt;head&gt;</code> first.</li>") {
		t.Errorf("a step lost its inline code:\n%s", steps)
	}

	p, h := pageHTML(t, w, "notes/hostile")
	if got := p.Meta.Title(); got != "Hostile <Page>" {
		t.Errorf("title %q, want %q", got, "Hostile <Page>")
	}
	for _, want := range []string{
		"<cite>Hostile &lt;Page&gt;</cite>", `<a href="https://example.com/x?a=1&amp;b=2">the guide</a>`,
		"<code>&lt;div&gt;</code>", "&lt;!-- prose:slot id=&#34;x&#34; --&gt; stays text",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the HTML source's page lacks %s:\n%s", want, h)
		}
	}
	for _, page := range []string{md, steps, h} {
		for _, bad := range []string{"&amp;lt;", "javascript:", "data:text", "<script", "<br>", "<head>", "<div>"} {
			if strings.Contains(page, bad) {
				t.Errorf("a page holds %q:\n%s", bad, page)
			}
		}
	}
}

// A source without steps or definitions gets no note: its source page
// renders the whole document, its lists as lists, so a note would hold
// nothing the source page does not.
func TestNoNoteBesideTheWholeSource(t *testing.T) {
	w := ingestMarkup(t)
	_, h := pageHTML(t, w, "notes/hostile")
	for _, want := range []string{"<li>alpha &lt;one&gt;</li>", "<li>beta <code>&lt;br&gt;</code></li>"} {
		if !strings.Contains(h, want) {
			t.Errorf("the source page lacks the source's list item %s:\n%s", want, h)
		}
	}
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, pi := range pages {
		if pi.Template == "note" || strings.HasPrefix(pi.Title, "Notes on") {
			t.Errorf("a note was made beside the source page: %s (%s)", pi.Path, pi.Title)
		}
	}
}
