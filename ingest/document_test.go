package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	if !strings.Contains(toc, "<p>The lead.</p>") || !strings.Contains(toc, `<a href="big/chapter-12.html">Chapter 12</a>`) {
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
		if !strings.Contains(nav, `class="up" href="../big.html"`) ||
			c > 1 && !strings.Contains(nav, fmt.Sprintf(`href="chapter-%d.html">← Chapter %d`, c-1, c-1)) ||
			c < 12 && !strings.Contains(nav, fmt.Sprintf(`href="chapter-%d.html">Chapter %d →`, c+1, c+1)) {
			t.Fatalf("%s nav: %s", rel, nav)
		}
		words += strings.Count(slotOf(t, w, rel, "document"), "lorem")
	}
	if want := strings.Count(sb.String(), "lorem"); words != want {
		t.Errorf("%d words on the section pages, the source has %d", words, want)
	}
	lintClean(t, w)
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

// readCollection reads a directory as `prose ingest DIR` does: its
// boilerplate found by comparing its documents.
func readCollection(t *testing.T, dir string) []*source.Document {
	t.Helper()
	inputs, _, err := source.Collect([]string{dir}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	chrome := source.FindBoilerplate(inputs)
	var docs []*source.Document
	for _, in := range inputs {
		d, err := source.ReadWith(in.Name, in.Data, in.Kind, chrome[in.Collection])
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// A collection's boilerplate is stored beside the catalog and is part of
// the memo key: re-ingesting the collection with one file changed reads
// that file without the boilerplate, exactly as the whole was read, and
// skips the others.
func TestCollectionBoilerplateIsStoredAndStable(t *testing.T) {
	v, w := newWiki(t)
	dir := filepath.Join(t.TempDir(), "libffi")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("source/testdata/libffi/*.html")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The bar's class renamed: only comparing the pages finds it.
		data = []byte(strings.ReplaceAll(string(data), `class="header"`, `class="x-top"`))
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ingestDocs(t, w, readCollection(t, dir)...)
	stored, ok, err := v.ReadFile("sources/collections/libffi.json")
	if err != nil || !ok || !strings.Contains(string(stored), `"next: #, previous: #, up: # [#]"`) {
		t.Fatalf("stored boilerplate %s %v %v", stored, ok, err)
	}
	noBar := func() {
		t.Helper()
		pages, _ := w.Pages()
		for _, p := range pages {
			if p.Template != "source" {
				continue
			}
			if h := slotOf(t, w, p.Path, "document"); strings.Contains(h, "Previous:") {
				t.Errorf("%s keeps the navigation bar:\n%s", p.Path, h)
			}
		}
	}
	noBar()
	f := filepath.Join(dir, "Types.html")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(data), "Types", "Types and more", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := ingestDocs(t, w, readCollection(t, dir)...)
	n := 0
	for _, s := range res.Sources {
		if s.Status == "ingested" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d sources read again, want the one changed: %+v", n, res.Sources)
	}
	noBar()
}

// capture records the prompts a model is sent.
type capture struct {
	model.Model
	prompts []string
}

func (c *capture) Call(ctx context.Context, req model.Request) (model.Response, error) {
	for _, m := range req.Messages {
		c.prompts = append(c.prompts, m.Text)
	}
	return c.Model.Call(ctx, req)
}

// Enrichment shows a model the slots it may write: never the source's
// own text, which prose renders (a model spends no tokens on it).
func TestEnrichmentLeavesTheDocumentOut(t *testing.T) {
	_, w := newWiki(t)
	d := readDoc(t, "manual.md", manualDoc)
	ingestDocs(t, w, d)
	page := pageOf(t, w, d.ID, "source")
	c := &capture{Model: offline.Engine{}}
	if _, err := ingest.Enrich(context.Background(), w, ingest.Selection{Pages: []string{page}}, opts(c)); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(c.prompts, "\n")
	if !strings.Contains(all, `"abstract"`) || strings.Contains(all, `"document"`) || strings.Contains(all, "Last words.") {
		t.Errorf("the enrichment prompt shows the document slot:\n%s", all)
	}
}

// A heading with nothing of its own before its subsections, each split
// into a page, gets a page listing them; a heading with nothing under it
// at all gets none (never an empty page).
func TestAnEmptySectionListsItsSubsections(t *testing.T) {
	_, w := newWiki(t)
	var sb strings.Builder
	sb.WriteString("# Reference\n\nLead.\n\n## Functions\n\n")
	para := strings.Repeat("lorem ipsum dolor sit amet ", 200) + "\n\n"
	for f := 1; f <= 8; f++ {
		fmt.Fprintf(&sb, "### func%d\n\n%s%s", f, para, para)
	}
	sb.WriteString("## Detailed Description\n\n## Types\n\nShort.\n")
	d := readDoc(t, "ref.md", sb.String())
	ingestDocs(t, w, d)
	dir := strings.TrimSuffix(pageOf(t, w, d.ID, "source"), ".html")
	got := slotOf(t, w, dir+"/functions.html", "document")
	if !strings.Contains(got, `<a href="func1.html">func1</a>`) || !strings.Contains(got, `<a href="func8.html">func8</a>`) {
		t.Fatalf("functions.html:\n%s", got)
	}
	// A heading with nothing under it at all is listed, with no page.
	if toc := slotOf(t, w, dir+".html", "document"); !strings.Contains(toc, `<li id="s-detailed-description">Detailed Description</li>`) {
		t.Errorf("contents:\n%s", toc)
	}
	if nav := slotOf(t, w, dir+"/func8.html", "nav"); !strings.Contains(nav, `href="types.html">Types →`) {
		t.Errorf("func8 nav skips to %s", nav)
	}
	lintClean(t, w)
}

// bigDoc is a document past render.SplitAt of twelve chapters; chapter 3
// presents steps ("Install steps"), extra is added to chapter 5, and a
// last heading has nothing under it.
func bigDoc(extra string) string {
	var sb strings.Builder
	sb.WriteString("# Big Manual\n\nThe lead.\n\n")
	para := strings.Repeat("lorem ipsum dolor sit amet ", 120) + "\n\n"
	for c := 1; c <= 12; c++ {
		if c == 3 {
			sb.WriteString("## Install steps\n\n1. Fetch the tarball.\n2. Unpack it.\n\n")
		} else {
			fmt.Fprintf(&sb, "## Chapter %d\n\n", c)
		}
		for p := 0; p < 4; p++ {
			sb.WriteString(para)
		}
		if c == 5 {
			sb.WriteString(extra)
		}
	}
	sb.WriteString("## Appendix\n") // nothing under it: no page
	return sb.String()
}

// A long source's section pages are placed by the layout with the plan's
// pages and found by their origin (source name and heading anchor): the
// dry run lists exactly the pages the run creates, section pages
// included; the section page of a heading and the procedure of the same
// heading are two pages (the section keeps the plain name); and a person
// who moves a section page finds it updated where they put it when the
// source changes, no second page made.
func TestSectionPagesArePlacedAndFoundByOrigin(t *testing.T) {
	_, w := newWiki(t)
	d := readDoc(t, "big.md", bigDoc(""))
	o := opts(offline.Engine{})
	o.DryRun = true
	dry, err := ingest.Ingest(context.Background(), w, []*source.Document{d}, o)
	if err != nil {
		t.Fatal(err)
	}
	res := ingestDocs(t, w, d)
	want, got := slices.Sorted(slices.Values(dry.Created)), slices.Sorted(slices.Values(res.Created))
	if !slices.Equal(want, got) {
		t.Fatalf("the dry run planned %v, the run created %v", want, got)
	}
	for rel, meta := range map[string][2]string{
		"notes/big.html":                         {"source", "big.md"},
		"notes/big/chapter-5.html":               {"section", "big.md#s-chapter-5"},
		"notes/big/install-steps.html":           {"section", "big.md#s-install-steps"},
		"notes/big/install-steps-procedure.html": {"procedure", "big.md#s-install-steps/procedure"},
	} {
		_, pg, err := w.Read(rel)
		if err != nil {
			t.Fatalf("%s: %v (created %v)", rel, err, got)
		}
		if pg.Meta.Template() != meta[0] || pg.Meta.String("origin") != meta[1] {
			t.Errorf("%s: template %q origin %q, want %v", rel, pg.Meta.Template(), pg.Meta.String("origin"), meta)
		}
	}
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		_, _, _, err := tx.Move("notes/big/chapter-5.html", "kept/fifth.html")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	d2 := readDoc(t, "big.md", bigDoc("A sentence the fifth chapter gained.\n\n"))
	res = ingestDocs(t, w, d2)
	if len(res.Created) != 0 {
		t.Errorf("the changed source created %v", res.Created)
	}
	if s := slotOf(t, w, "kept/fifth.html", "document"); !strings.Contains(s, "the fifth chapter gained") {
		t.Errorf("the moved section page was not updated where it is:\n%s", s)
	}
	if _, _, err := w.Read("notes/big/chapter-5.html"); err == nil {
		t.Error("a second page of chapter 5 was made at the layout's place")
	}
	if toc := slotOf(t, w, "notes/big.html", "document"); !strings.Contains(toc, `href="../kept/fifth.html"`) {
		t.Errorf("the contents do not link the moved section page:\n%s", toc)
	}
	lintClean(t, w)
}
