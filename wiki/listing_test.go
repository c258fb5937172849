package wiki

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAPIName(t *testing.T) {
	for in, want := range map[string]string{
		"ffi_call":                               "ffi_call",
		"fs.realpath(path[, options], callback)": "fs.realpath",
		"Function: void ffi_call (ffi_cif *cif, void *fn, void *rvalue, void **avalues)": "ffi_call",
		"Function: void * ffi_closure_alloc (size_t size, void **code)":                  "ffi_closure_alloc",
		"std::move":                  "std::move",
		"ptr->field":                 "ptr->field",
		"2.3 Types":                  "",
		"2.3.1":                      "",
		"Closure Example":            "",
		"What is libffi (and why)?":  "",
		"Introduction":               "",
		"ffi_type_sint":              "ffi_type_sint",
		"Note: read this first":      "",
		"Error budget: how it works": "",
	} {
		if got := APIName(in); got != want {
			t.Errorf("APIName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A mirrored collection's folder index lists its documents in the
// collection's order with their first sentences, the glossary entries
// its documents define and its index of names.
func TestFolderIndexOfACollection(t *testing.T) {
	w := newWiki(t)
	mustUpdate(t, w, func(tx *Tx) error {
		for _, p := range []struct{ rel, origin, title, doc string }{
			{"man/zeta.html", "man/Zeta.html", "Zeta", `<p>Zeta comes first in no order. It says more.</p>`},
			{"man/alpha.html", "man/Alpha.html", "Alpha", `<p>Alpha.</p><p>The basics, e.g. the first call. Then more.</p><dl><dt id="s-def-ffi-call">Function: void ffi_call (ffi_cif *cif)</dt><dd>Calls.</dd></dl><h3 id="s-fs-realpath-path">fs.realpath(path)</h3><h3 id="s-usage">Usage</h3>`},
		} {
			if _, _, err := tx.New(p.rel, NewOptions{Template: "source", Title: p.title, Meta: Meta{KeyOrigin: p.origin}, Slots: map[string]string{"abstract": "<p>" + p.title + ".</p>", "document": p.doc}}); err != nil {
				return err
			}
		}
		if _, _, err := tx.New("man/aardvark.html", NewOptions{Template: "note", Title: "Aardvark (a person's page)"}); err != nil {
			return err
		}
		_, _, err := tx.New("glossary/ffi-cif.html", NewOptions{Template: "concept", Title: "ffi_cif", Meta: Meta{KeyOrigin: "term:ffi_cif"}, Slots: map[string]string{"body": `<p><a href="../man/alpha.html">Alpha</a> defines it.</p>`}})
		return err
	})
	l, _, err := w.Index("man")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range l.Pages {
		order = append(order, p.Href+"="+p.Lead)
	}
	if got, want := strings.Join(order, " | "), "alpha.html=The basics, e.g. the first call. | zeta.html=Zeta comes first in no order. | aardvark.html="; got != want {
		t.Errorf("pages:\n got %s\nwant %s", got, want)
	}
	if len(l.Terms) != 1 || l.Terms[0].Href != "../glossary/ffi-cif.html" || l.Terms[0].Text != "ffi_cif" {
		t.Errorf("terms: %+v", l.Terms)
	}
	var names []string
	for _, n := range l.Names {
		names = append(names, n.Name+"="+n.Href)
	}
	if got, want := strings.Join(names, " "), "ffi_call=alpha.html#s-def-ffi-call fs.realpath=alpha.html#s-fs-realpath-path"; got != want {
		t.Errorf("names: %s, want %s", got, want)
	}
	_, data, err := w.ReadFile("man/README")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Terms defined here</h2>", `<a href="../glossary/ffi-cif.html">ffi_cif</a>`, "<h2>Index of names</h2>", `<a href="alpha.html#s-def-ffi-call"><code>ffi_call</code></a>`, `<div class="lead-line">Zeta comes first in no order.</div>`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the folder index lacks %s", want)
		}
	}
	// The term's link goes: the folder's index drops it in the same
	// commit, though no page of the folder changed.
	res := mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("glossary/ffi-cif", "body", "<p>Defined elsewhere.</p>")
		return err
	})
	if l, _, _ := w.Index("man"); len(l.Terms) != 0 {
		t.Fatalf("terms after the link went: %+v (changed %v)", l.Terms, res.Changed)
	}
	if _, data, _ = w.ReadFile("man/README"); strings.Contains(string(data), "ffi-cif.html") {
		t.Fatalf("the folder index file still lists the term (changed %v)", res.Changed)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

// A long source's section pages are listed in the order its contents
// (the page beside their folder) gives them.
func TestFolderIndexFollowsTheContents(t *testing.T) {
	w := newWiki(t)
	mustUpdate(t, w, func(tx *Tx) error {
		if _, _, err := tx.New("guide.html", NewOptions{Template: "source", Meta: Meta{KeyOrigin: "guide.md"}, Slots: map[string]string{"document": `<ol><li><a href="guide/zinstall.html">Install</a></li><li><a href="guide/configure.html">Configure</a></li><li><a href="guide/zinstall.html#s-x">again</a></li></ol>`}}); err != nil {
			return err
		}
		for _, p := range []string{"guide/configure", "guide/zinstall", "guide/appendix"} {
			if _, _, err := tx.New(p, NewOptions{Template: "section", Meta: Meta{KeyOrigin: "guide.md#s-" + p[6:]}}); err != nil {
				return err
			}
		}
		return nil
	})
	l, _, err := w.Index("guide")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range l.Pages {
		order = append(order, p.Href)
	}
	if got, want := strings.Join(order, " "), "zinstall.html configure.html appendix.html"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}

// A folder of more pages than an index lists (a big collection's
// glossary) lists MaxFolderListed of them and says how many more, so
// its index stays within the vault's text limit; lint stays clean.
func TestFolderIndexOfManyPagesIsBounded(t *testing.T) {
	w := newWiki(t)
	n := MaxFolderListed + 5
	mustUpdate(t, w, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			if _, _, err := tx.New(fmt.Sprintf("glossary/term-%04d.html", i), NewOptions{Template: "concept", Title: fmt.Sprintf("Term %04d", i), Slots: map[string]string{"summary": "<p>A term that means something here.</p>"}}); err != nil {
				return err
			}
		}
		return nil
	})
	l, _, err := w.Index("glossary")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Pages) != MaxFolderListed || l.MorePages != 5 {
		t.Fatalf("index lists %d pages and %d more, want %d and 5", len(l.Pages), l.MorePages, MaxFolderListed)
	}
	data, err := os.ReadFile(filepath.Join(w.Root(), "glossary", IndexName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "and 5 more pages") || strings.Contains(string(data), "term-1004.html") {
		t.Errorf("the index file does not say what it left out")
	}
}
