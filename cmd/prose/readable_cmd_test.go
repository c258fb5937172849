package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A collection's README says what the folder holds, in facts only: the
// collection's own index page (its title and first sentence) and how many
// documents, from which source folder, and how many terms. Nothing is
// invented ("Pages on …, such as …"); the facts follow the folder as it
// grows; a description a person wrote is never replaced.
func TestFolderDescriptionIsFacts(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "manual")
	writeFiles(t, src, map[string]string{
		"index.html":  "<html><head><title>The Widget Manual</title></head><body><h1>The Widget Manual</h1><p>This manual explains how widgets are built. It has two chapters.</p></body></html>",
		"guide.md":    "# Guide\n\nHow to use widgets.\n\n## Glossary\n\nSprocket: the wheel that drives a widget.\nFlange: the rim a widget is held by.\n\n## Steps\n\n1. Oil the sprocket.\n2. Turn the flange.\n",
		"ops/run.md":  "# Running\n\nWidgets run on Tuesdays.\n",
		"ops/stop.md": "# Stopping\n\nWidgets stop on Fridays.\n",
	})
	mustProse(t, "--vault", dir, "ingest", src)
	desc := mustProse(t, "--vault", dir, "wiki", "slot", "manual/README.html", "description")
	for _, want := range []string{
		`<a href="index.html">The Widget Manual</a>: This manual explains how widgets are built.`,
		"4 documents from <code>manual/</code>",
		`2 terms in <a href="../glossary/README.html">the glossary</a>`,
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("manual/README.html description lacks %q:\n%s", want, desc)
		}
	}
	for _, bad := range []string{"Pages on", "such as", "topics"} {
		if strings.Contains(desc, bad) {
			t.Errorf("the description invents %q:\n%s", bad, desc)
		}
	}
	if d := mustProse(t, "--vault", dir, "wiki", "slot", "manual/ops/README.html", "description"); !strings.Contains(d, "2 documents from <code>manual/ops/</code>.") || strings.Contains(d, "Widget Manual") {
		t.Errorf("manual/ops/README.html description: %s", d)
	}
	if d := mustProse(t, "--vault", dir, "wiki", "slot", "manual/guide/README.html", "description"); !strings.Contains(d, `<p class="folder-facts">1 page.</p>`) {
		t.Errorf("manual/guide/README.html (the pages made from guide.md) description: %s", d)
	}
	if d := mustProse(t, "--vault", dir, "wiki", "slot", "glossary/README.html", "description"); !strings.Contains(d, "2 terms, defined in 1 document.") {
		t.Errorf("glossary/README.html description: %s", d)
	}

	// A README's row of badges is no first sentence.
	cli := filepath.Join(t.TempDir(), "cli")
	writeFiles(t, cli, map[string]string{"README.md": "# Welcome to cli\n\n[![GoDoc](https://godoc.org/x.svg)](https://godoc.org/x) [![codecov](https://codecov.io/x.svg)](https://codecov.io/x)\n\nThe cli package builds command lines.\n"})
	mustProse(t, "--vault", dir, "ingest", cli)
	if d := mustProse(t, "--vault", dir, "wiki", "slot", "cli/README.html", "description"); !strings.Contains(d, `<a href="readme-file.html">Welcome to cli</a>: The cli package builds command lines.`) {
		t.Errorf("cli/README.html description: %s", d)
	}

	// The folder grows: its facts follow.
	writeFiles(t, src, map[string]string{"ops/pause.md": "# Pausing\n\nWidgets pause at noon.\n"})
	mustProse(t, "--vault", dir, "ingest", src)
	if d := mustProse(t, "--vault", dir, "wiki", "slot", "manual/README.html", "description"); !strings.Contains(d, "5 documents from <code>manual/</code>") {
		t.Errorf("after a fifth document: %s", d)
	}

	// A person's description stays.
	mine := "<p>Our widget handbook, kept by the plant.</p>"
	mustProse(t, "--vault", dir, "wiki", "write-slot", "--content", mine, "manual/README.html", "description")
	writeFiles(t, src, map[string]string{"ops/resume.md": "# Resuming\n\nWidgets resume at one.\n"})
	mustProse(t, "--vault", dir, "ingest", src)
	if d := mustProse(t, "--vault", dir, "wiki", "slot", "manual/README.html", "description"); strings.TrimSpace(d) != mine {
		t.Errorf("a person's description was replaced: %s", d)
	}
}

// The links an offline source page holds to the pages made from it sit
// under their own heading, "Pages from this source": they are no key
// points. Key points stay the template's slot for a synthesis, which the
// offline engine leaves empty and a model (or a person) may write.
func TestSourcePagesListTheirPagesUnderTheirOwnHeading(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "manual")
	writeFiles(t, src, map[string]string{
		"guide.md": "# Guide\n\nHow to use widgets.\n\n## Glossary\n\nSprocket: the wheel that drives a widget.\nFlange: the rim a widget is held by.\n",
	})
	mustProse(t, "--vault", dir, "ingest", src)
	if kp := mustProse(t, "--vault", dir, "wiki", "slot", "manual/guide.html", "key_points"); strings.TrimSpace(kp) != "" {
		t.Errorf("the offline engine wrote key points: %s", kp)
	}
	made := mustProse(t, "--vault", dir, "wiki", "slot", "manual/guide.html", "pages")
	if !strings.Contains(made, `<a href="../glossary/sprocket.html">Sprocket</a>`) || !strings.Contains(made, `<a href="../glossary/flange.html">Flange</a>`) {
		t.Errorf("pages slot: %s", made)
	}
	page := readFile(t, filepath.Join(dir, "published", "wiki", "manual", "guide.html"))
	section := func(id string) string {
		i := strings.Index(page, `id="slot-`+id+`"`)
		if i < 0 {
			t.Fatalf("no slot %s in the page", id)
		}
		end := strings.Index(page[i:], "</section>")
		return page[i : i+end]
	}
	if s := section("pages"); !strings.Contains(s, "<h2>Pages from this source</h2>") || !strings.Contains(s, "sprocket.html") {
		t.Errorf("pages section: %s", s)
	}
	if s := section("key_points"); strings.Contains(s, "<a ") {
		t.Errorf("links under Key points: %s", s)
	}
	mustProse(t, "--vault", dir, "wiki", "write-slot", "--content", "<ul><li>Widgets need a sprocket.</li></ul>", "manual/guide.html", "key_points")
	page = readFile(t, filepath.Join(dir, "published", "wiki", "manual", "guide.html"))
	if s := section("key_points"); !strings.Contains(s, "<h2>Key points</h2>") || !strings.Contains(s, "Widgets need a sprocket.") {
		t.Errorf("key points a person writes: %s", s)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A term page's examples quote the source using the term, never a
// sentence of the definition the page's summary already gives, and never
// a line of navigation (Sphinx's contents list of a page, as breathe's
// documentation has: its link words read as one line).
func TestTermExamplesAreUsesNotTheSummaryAgain(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "manual")
	writeFiles(t, src, map[string]string{
		"group.html": `<html><head><title>Groups</title></head><body><h1>Groups</h1>
<div class="contents local topic"><ul><li><p><a href="#a">Sprocket parts</a></p><ul><li><p><a href="#b">Members Sprocket Example</a></p></li><li><p><a href="#c">Inner Sprocket Example</a></p></li></ul></li></ul></div>
<p>Change the sprocket every spring, before the season starts.</p>
<h2 id="a">Sprocket parts</h2><dl><dt>sprocket</dt><dd>The wheel that drives a widget. If you remove the sprocket the widget stops at once.</dd></dl>
<h2 id="b">Members Sprocket Example</h2><p>Text.</p><h2 id="c">Inner Sprocket Example</h2><p>More text.</p></body></html>`,
	})
	mustProse(t, "--vault", dir, "ingest", src)
	ex := mustProse(t, "--vault", dir, "wiki", "slot", "glossary/sprocket.html", "examples")
	if !strings.Contains(ex, "Change the sprocket every spring") {
		t.Errorf("the use of the term is not an example: %s", ex)
	}
	if strings.Contains(ex, "If you remove the sprocket") {
		t.Errorf("the definition is quoted again as an example: %s", ex)
	}
	if strings.Contains(ex, "Sprocket parts Members") {
		t.Errorf("a contents line became an example: %s", ex)
	}
}

// A word that is also a command name is searched for like any other:
// `prose wiki search help` finds the pages saying help, it does not print
// the command's help.
func TestSearchForTheWordHelp(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "cli")
	writeFiles(t, src, map[string]string{"flags.md": "# Flags\n\nThe `help` flag prints the usage of a command.\n"})
	mustProse(t, "--vault", dir, "ingest", src)
	out := mustProse(t, "--vault", dir, "--json", "wiki", "search", "help")
	if !strings.Contains(out, "cli/flags.html") || strings.Contains(out, "USAGE") {
		t.Errorf("wiki search help: %s", out)
	}
}

// A source that makes more than a dozen pages lists every one of them on
// its page, not the first twelve with no sign of the rest.
func TestSourcePageListsEveryPageMadeFromIt(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "manual")
	var g strings.Builder
	g.WriteString("# Guide\n\nHow to use widgets.\n\n## Glossary\n\n")
	var terms []string
	for i := range 16 {
		term := fmt.Sprintf("Part%c", 'a'+i)
		terms = append(terms, term)
		fmt.Fprintf(&g, "%s: component number %d of a widget.\n", term, i+1)
	}
	writeFiles(t, src, map[string]string{"guide.md": g.String()})
	mustProse(t, "--vault", dir, "ingest", src)
	made := mustProse(t, "--vault", dir, "wiki", "slot", "manual/guide.html", "pages")
	for _, term := range terms {
		if !strings.Contains(made, ">"+term+"</a>") {
			t.Errorf("the source page's pages list lacks %s: %s", term, made)
		}
	}
}

// The root README of a one-collection wiki does not repeat its folder's
// facts: it counts the collections and gives the whole wiki's totals; a
// second collection counts in.
func TestRootDescriptionCountsTheCollections(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "manual")
	writeFiles(t, src, map[string]string{
		"guide.md":   "# Guide\n\nHow to use widgets.\n\n## Glossary\n\nSprocket: the wheel that drives a widget.\n",
		"ops/run.md": "# Running\n\nWidgets run on Tuesdays.\n",
	})
	mustProse(t, "--vault", dir, "ingest", src)
	paras := func(d string) []string {
		var out []string
		for _, p := range strings.Split(d, "</p>") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	root := mustProse(t, "--vault", dir, "wiki", "slot", "README.html", "description")
	folder := mustProse(t, "--vault", dir, "wiki", "slot", "manual/README.html", "description")
	for _, p := range paras(root) {
		if slices.Contains(paras(folder), p) {
			t.Errorf("the root repeats its only folder's paragraph %q\nroot: %s\nfolder: %s", p, root, folder)
		}
	}
	for _, want := range []string{"1 collection · 2 documents in all · 1 term in"} {
		if !strings.Contains(root, want) {
			t.Errorf("root description lacks %q: %s", want, root)
		}
	}
	other := filepath.Join(t.TempDir(), "notes")
	writeFiles(t, other, map[string]string{"a.md": "# A\n\nNote a.\n"})
	mustProse(t, "--vault", dir, "ingest", other)
	root = mustProse(t, "--vault", dir, "wiki", "slot", "README.html", "description")
	for _, want := range []string{"2 collections · 3 documents in all · 1 term in"} {
		if !strings.Contains(root, want) {
			t.Errorf("with two collections, the root description lacks %q: %s", want, root)
		}
	}
}
