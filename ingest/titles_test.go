package ingest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

func htmlDoc(t *testing.T, name, title, body string) *source.Document {
	t.Helper()
	d, err := source.Read(name, []byte(fmt.Sprintf("<html><head><title>%s</title></head><body>%s</body></html>", title, body)), "")
	if err != nil {
		t.Fatal(err)
	}
	d.Collection = true
	return d
}

// A page's title is the document's own: without the suffix its whole
// collection shares (the manual's name), without pilcrows or a section
// number; a changed file of the collection ingested alone keeps the
// suffix cut (the catalog remembers the collection's titles); two pages of
// one title in a folder are told apart in its listing by file name, even
// when the folder's order does not put them side by side.
func TestTitlesAreTheDocumentsOwn(t *testing.T) {
	_, w := newWiki(t)
	const site = " (libffi: the portable foreign function interface library)"
	docs := []*source.Document{
		htmlDoc(t, "manual/Closures.html", "Closures"+site, "<h1>Closures</h1><p>A closure wraps a function.</p><h2>ffi_closure_alloc ¶</h2><p>Allocates a closure.</p>"),
		htmlDoc(t, "manual/Types.html", "2.1 Types"+site, "<h1>Types</h1><p>Types describe arguments.</p>"),
		htmlDoc(t, "manual/Intro.html", "Introduction"+site, "<h1>Introduction</h1><p>What the library does.</p>"),
		htmlDoc(t, "manual/Introduction.html", "Introduction"+site, "<h1>Introduction</h1><p>Another introduction, elsewhere.</p>"),
		// The collection's order puts a page between the two.
		htmlDoc(t, "manual/Intro_Notes.html", "Notes"+site, "<h1>Notes</h1><p>Notes on the introduction.</p>"),
	}
	if _, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"manual/closures.html": "Closures", "manual/types.html": "Types", "manual/intro.html": "Introduction", "manual/introduction.html": "Introduction"}
	for p, title := range want {
		_, pg, err := w.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := pg.Meta.Title(); got != title {
			t.Errorf("%s is titled %q, want %q", p, got, title)
		}
	}
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, pi := range pages {
		if strings.ContainsAny(pi.Title, "¶§") || strings.Contains(pi.Title, "libffi:") {
			t.Errorf("%s is titled %q", pi.Path, pi.Title)
		}
	}
	readme := pageText(t, w, "manual/README.html")
	if !strings.Contains(readme, "Introduction (intro.html)") || !strings.Contains(readme, "Introduction (introduction.html)") {
		t.Errorf("the listing does not tell the two Introductions apart by file name:\n%s", readme)
	}
	changed := htmlDoc(t, "manual/Types.html", "2.1 Types"+site, "<h1>Types</h1><p>Types describe arguments and results.</p>")
	res, err := ingest.Ingest(context.Background(), w, []*source.Document{changed}, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Sources[0].Title; got != "Types" {
		t.Errorf("a changed file ingested alone is titled %q", got)
	}
	lintClean(t, w)
}

// The pipeline's origin key is the one lint reads.
func TestOriginKeyIsTheWikis(t *testing.T) {
	if plan.MetaOrigin != wiki.KeyOrigin {
		t.Fatalf("plan.MetaOrigin %q, wiki.KeyOrigin %q", plan.MetaOrigin, wiki.KeyOrigin)
	}
}

// A generator that titles its kinds of page apart ("Span in proc_macro2 -
// Rust", "lib.rs - source") and adds pages of its own ("List of all
// items") gives no suffix every title shares; the one most of a folder's
// titles share is still the site's, and is cut from those that have it.
func TestTitlesLoseTheSuffixMostOfAFolderShares(t *testing.T) {
	_, w := newWiki(t)
	var docs []*source.Document
	for _, n := range []string{"Span", "Ident", "Group", "Literal", "Punct"} {
		docs = append(docs, htmlDoc(t, "doc/pm/struct."+n+".html", n+" in pm - Rust", "<p>The "+n+" type.</p>"))
	}
	docs = append(docs, htmlDoc(t, "doc/pm/all.html", "List of all items in this crate", "<p>Everything.</p>"))
	for _, n := range []string{"lib", "parse", "wrapper", "fallback", "detection"} {
		docs = append(docs, htmlDoc(t, "doc/src/pm/"+n+".rs.html", n+".rs - source", "<pre>fn "+n+"() {}</pre>"))
	}
	// A suffix fewer than half of a folder's titles share is theirs.
	docs = append(docs, htmlDoc(t, "doc/notes/a.html", "Start - Draft", "<p>One.</p>"), htmlDoc(t, "doc/notes/b.html", "End - Draft", "<p>Two.</p>"))
	for _, n := range []string{"Middle", "Top", "Bottom"} {
		docs = append(docs, htmlDoc(t, "doc/notes/"+strings.ToLower(n)+".html", n, "<p>"+n+" words.</p>"))
	}
	res, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"doc/pm/struct.Span.html": "Span in pm", "doc/pm/all.html": "List of all items in this crate",
		"doc/src/pm/lib.rs.html": "lib.rs", "doc/notes/a.html": "Start - Draft"}
	for _, s := range res.Sources {
		if w, ok := want[s.Name]; ok && s.Title != w {
			t.Errorf("%s is titled %q, want %q", s.Name, s.Title, w)
		}
	}
}

func TestTitlesLoseThePrefixMostOfAFolderShares(t *testing.T) {
	_, w := newWiki(t)
	var docs []*source.Document
	docs = append(docs, htmlDoc(t, "sigc/index.html", "libsigc++", "<p>Start here.</p>"))
	for _, n := range []string{"Member List", "sigc::slot Class Reference", "Functions", "Typedefs", "sigc Namespace Reference"} {
		docs = append(docs, htmlDoc(t, "sigc/reference/"+strings.NewReplacer(" ", "", ":", "").Replace(n)+".html", "libsigc++: "+n, "<p>About "+n+".</p>"))
	}
	docs = append(docs, htmlDoc(t, "sigc/reference/Deprecated.html", "Deprecated List", "<p>Old things.</p>"))
	// A prefix fewer than half of a folder's titles share is theirs.
	for _, n := range []string{"Start", "End"} {
		docs = append(docs, htmlDoc(t, "sigc/notes/"+strings.ToLower(n)+".html", "Draft: "+n, "<p>"+n+".</p>"))
	}
	for _, n := range []string{"Middle", "Top", "Bottom"} {
		docs = append(docs, htmlDoc(t, "sigc/notes/"+strings.ToLower(n)+".html", n, "<p>"+n+" words.</p>"))
	}
	res, err := ingest.Ingest(context.Background(), w, docs, opts(offline.Engine{}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sigc/reference/MemberList.html": "Member List", "sigc/reference/sigcslotClassReference.html": "sigc::slot Class Reference",
		"sigc/reference/Deprecated.html": "Deprecated List", "sigc/index.html": "libsigc++", "sigc/notes/start.html": "Draft: Start"}
	seen := 0
	for _, s := range res.Sources {
		if w, ok := want[s.Name]; ok {
			seen++
			if s.Title != w {
				t.Errorf("%s is titled %q, want %q", s.Name, s.Title, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d sources looked for are in the result", seen, len(want))
	}
}
