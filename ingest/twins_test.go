package ingest_test

import (
	"slices"
	"strings"
	"testing"
)

// A collection's markup source beside its rendering is one document in
// two forms: git's git-add.txt beside git-add.html, Sphinx's
// _sources/usage.rst.txt beside usage.html. The markup source gets no
// page of its own: the rendering's pages name both sources, and the run
// says which it is the markup of. A text file that shares only a name
// with an HTML file keeps its own page; a markup source whose rendering
// has gone from the collection gets its own page again.
func TestAMarkupSourceBesideItsRenderingIsOneDocument(t *testing.T) {
	_, w := newWiki(t)
	words := "Add file contents to the index before a commit records them; the index holds a snapshot of the working tree."
	addHTML := collectionDoc(t, "docs/git-add.html", "<html><head><title>git-add(1)</title></head><body><h1>git-add(1)</h1><h2>NAME</h2><p>git-add - "+words+"</p><p>Last updated 2024-01-02.</p></body></html>")
	addTxt := collectionDoc(t, "docs/git-add.txt", "git-add(1)\n==========\n\nNAME\n----\ngit-add - "+words+"\n")
	usage := collectionDoc(t, "docs/usage.html", "<html><head><title>Usage</title></head><body><h1>Usage</h1><p>Run the builder over the source directory to make every output format.</p></body></html>")
	usageRst := collectionDoc(t, "docs/_sources/usage.rst.txt", "Usage\n=====\n\nRun the builder over the source directory to make every output format.\n")
	notes := collectionDoc(t, "docs/notes.html", "<html><head><title>Notes</title></head><body><h1>Notes</h1><p>Meeting notes about the quarterly budget review and hiring.</p></body></html>")
	notesTxt := collectionDoc(t, "docs/notes.txt", "Notes\n=====\n\nA shopping list: apples, flour, butter, coffee and candles.\n")
	res := ingestDocs(t, w, addHTML, addTxt, usage, usageRst, notes, notesTxt)
	paths := strings.Join(allPaths(t, w), " ")
	for _, gone := range []string{"git-add-txt.html", "usage-rst-txt.html", "_sources"} {
		if strings.Contains(paths, gone) {
			t.Errorf("a markup source beside its rendering has a page of its own (%s): %s", gone, paths)
		}
	}
	if !strings.Contains(paths, "docs/notes-txt.html") {
		t.Errorf("a text file sharing only a name with an HTML file lost its page: %s", paths)
	}
	for _, s := range res.Sources {
		twin := s.Name == addTxt.Name || s.Name == usageRst.Name
		if twin != s.MarkupOf || twin && s.SameAs == "" {
			t.Errorf("%s: markup of %q (%v)", s.Name, s.SameAs, s.MarkupOf)
		}
	}
	if ids := sourcesOf(t, w, "docs/git-add.html"); !slices.Contains(ids, addTxt.ID) || !slices.Contains(ids, addHTML.ID) {
		t.Errorf("docs/git-add.html names the sources %v, want both %s and %s", ids, addHTML.ID, addTxt.ID)
	}
	// The rendering gone, the markup source is a document of its own.
	addTxt2 := collectionDoc(t, "docs/git-add.txt", "git-add(1)\n==========\n\nNAME\n----\ngit-add - "+words+"\n")
	ingestDocs(t, w, addTxt2, usage, usageRst)
	if paths := strings.Join(allPaths(t, w), " "); !strings.Contains(paths, "docs/git-add-txt.html") {
		t.Errorf("a markup source whose rendering left the run has no page of its own: %s", paths)
	}
}
