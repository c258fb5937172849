package ingest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/wiki"
)

const manualDoc = "# Manual\n\nThe lead says what `ffi_call` does.\n\n## Install\n\nRun `make install`.\n\n```sh\nmake install\n```\n\n| flag | what |\n|---|---|\n| -v | verbose |\n\n## Use\n\n> Quoted advice.\n\nLast words.\n"

// The source page holds the whole document (with the offline engine):
// every block in order, headings with anchors, code and tables.
func TestSourcePageKeepsTheWholeDocument(t *testing.T) {
	_, w := newWiki(t)
	d := readDoc(t, "manual.md", manualDoc)
	ingestDocs(t, w, d)
	page := pageOf(t, w, d.ID, "source")
	got := slotOf(t, w, page, "document")
	at := 0
	for _, want := range []string{"<p>The lead says what <code>ffi_call</code> does.</p>", `<h3 id="s-install">Install</h3>`,
		"<p>Run <code>make install</code>.</p>", `<pre><code class="language-sh">make install</code></pre>`,
		"<td>-v</td><td>verbose</td>", `<h3 id="s-use">Use</h3>`, "<blockquote><p>Quoted advice.</p></blockquote>", "<p>Last words.</p>"} {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("the document slot lacks (or misorders) %s:\n%s", want, got)
		}
		at += i + len(want)
	}
}

// silent plans nothing and writes nothing: a model that ignores the source.
type silent struct{}

func (silent) Name() string { return "silent" }
func (silent) Call(context.Context, model.Request) (model.Response, error) {
	return model.Response{Text: "```json\n{\"pages\": []}\n```", StopReason: model.StopEnd}, nil
}

// Prose renders the source itself, whatever the model does: a model that
// plans no page still leaves a source page holding the whole text; and a
// model cannot write the document slot.
func TestTheDocumentIsRenderedWithAnyModel(t *testing.T) {
	_, w := newWiki(t)
	d := readDoc(t, "manual.md", manualDoc)
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, ingest.Options{Model: silent{}, ModelSpec: "silent", Now: opts(nil).Now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 1 || res.Created[0] != "notes/manual.html" {
		t.Fatalf("created %v, want the source page notes/manual.html", res.Created)
	}
	if got := slotOf(t, w, "notes/manual.html", "document"); !strings.Contains(got, "<p>Last words.</p>") {
		t.Fatalf("document slot:\n%s", got)
	}
}

// A long document becomes a source page with its contents and one page
// per section, linked previous/up/next, every word kept, lint-clean; a
// second ingest of the same bytes changes nothing.
func TestLongSourceBecomesSectionPages(t *testing.T) {
	_, w := newWiki(t)
	var sb strings.Builder
	sb.WriteString("# Big Manual\n\nThe lead.\n\n")
	para := strings.Repeat("lorem ipsum dolor sit amet ", 120) + "\n\n"
	for c := 1; c <= 12; c++ {
		fmt.Fprintf(&sb, "## Chapter %d\n\n", c)
		for p := 0; p < 4; p++ {
			sb.WriteString(para)
		}
	}
	d := readDoc(t, "big.md", sb.String())
	ingestDocs(t, w, d)
	page := pageOf(t, w, d.ID, "source")
	dir := strings.TrimSuffix(page, ".html")
	toc := slotOf(t, w, page, "document")
	if !strings.Contains(toc, "<p>The lead.</p>") || !strings.Contains(toc, `<a href="big-manual/chapter-12.html">Chapter 12</a>`) {
		t.Fatalf("source page:\n%s", toc)
	}
	words := 0
	for c := 1; c <= 12; c++ {
		rel := fmt.Sprintf("%s/chapter-%d.html", dir, c)
		_, pg, err := w.Read(rel)
		if err != nil {
			t.Fatalf("section page %s: %v", rel, err)
		}
		if pg.Meta.Template() != "section" || pg.Meta.Title() != fmt.Sprintf("Chapter %d", c) || !slices.Contains(pg.Meta.Strings("sources"), d.ID) {
			t.Fatalf("%s meta %v", rel, pg.Meta)
		}
		nav := slotOf(t, w, rel, "nav")
		if !strings.Contains(nav, `class="up" href="../big-manual.html"`) ||
			c > 1 && !strings.Contains(nav, fmt.Sprintf(`href="chapter-%d.html">← Chapter %d`, c-1, c-1)) ||
			c < 12 && !strings.Contains(nav, fmt.Sprintf(`href="chapter-%d.html">Chapter %d →`, c+1, c+1)) {
			t.Fatalf("%s nav: %s", rel, nav)
		}
		words += strings.Count(slotOf(t, w, rel, "document"), "lorem")
	}
	if want := strings.Count(sb.String(), "lorem"); words != want {
		t.Errorf("%d words on the section pages, the source has %d", words, want)
	}
	rep, err := w.Lint(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count("error")+rep.Count("warning") != 0 {
		t.Errorf("lint: %+v", rep.Findings)
	}
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{readDoc(t, "big.md", sb.String())}, ingest.Options{Model: offline.Engine{}, ModelSpec: "offline", Force: true, Now: opts(nil).Now})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "skipped" {
		t.Errorf("a forced second ingest of the same bytes: %s, created %v updated %v", res.Status, res.Created, res.Updated)
	}
}

// A person's edit of the document slot is kept and the rendering goes to
// review, as for every slot.
func TestAnEditedDocumentSlotIsKept(t *testing.T) {
	v, w := newWiki(t)
	d := readDoc(t, "manual.md", manualDoc)
	ingestDocs(t, w, d)
	page := pageOf(t, w, d.ID, "source")
	human := "<p>My own reading of the manual.</p>"
	writeSlot(t, w, page, "document", human)
	ingestDocs(t, w, readDoc(t, "manual.md", strings.Replace(manualDoc, "Last words.", "Final words.", 1)))
	if got := slotOf(t, w, page, "document"); got != human {
		t.Fatalf("the person's text was written over:\n%s", got)
	}
	if it := keptItem(t, v, page, "document"); !strings.Contains(it.Proposed, "Final words.") {
		t.Fatalf("kept-edit item proposes %s", it.Proposed)
	}
}

var _ = wiki.Node
