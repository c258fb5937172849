package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Two files of one base name named on the command line are two sources
// with names of their own: the catalog keeps both, each page records its
// own source, and a second and third run are skipped without a commit.
func TestIngestTwoFilesOfOneNameThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "s")
	writeFiles(t, src, map[string]string{
		"a/README.md": "# Deploy Notes\n\nAlpha deploys Mondays.\n\nCanary: a small first release.\n",
		"b/README.md": "# Billing Overview\n\nBilling runs nightly.\n\nInvoice: a bill sent to a customer.\n",
	})
	a, b := filepath.Join(src, "a", "README.md"), filepath.Join(src, "b", "README.md")
	out := mustProse(t, "--vault", dir, "ingest", a, b)
	if !strings.Contains(out, "ingested  a/README.md") || !strings.Contains(out, "ingested  b/README.md") {
		t.Fatalf("first run:\n%s", out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sources", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Sources map[string]struct{ Name, Title string } `json:"sources"`
	}
	if err := json.Unmarshal(data, &cat); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for id, rec := range cat.Sources {
		ids[rec.Name] = id
	}
	if len(cat.Sources) != 2 || ids["a/README.md"] == "" || ids["b/README.md"] == "" {
		t.Fatalf("the catalog's sources: %s", data)
	}
	if got := readPageMeta(t, dir, "notes/a/readme-file.html").Strings("sources"); !slices.Equal(got, []string{ids["a/README.md"]}) {
		t.Errorf("notes/a/readme-file sources %q, want a/README.md's %s", got, ids["a/README.md"])
	}
	if got := readPageMeta(t, dir, "notes/b/readme-file.html").Strings("sources"); !slices.Equal(got, []string{ids["b/README.md"]}) {
		t.Errorf("notes/b/readme-file sources %q, want b/README.md's %s", got, ids["b/README.md"])
	}
	head := headOf(t, dir)
	for i := 0; i < 2; i++ {
		out = mustProse(t, "--vault", dir, "ingest", a, b, a)
		if strings.Contains(out, "ingested") || strings.Count(out, "skipped   ") != 2 || headOf(t, dir) != head {
			t.Fatalf("run %d of unchanged sources:\n%s", i+2, out)
		}
	}

	// A changed a/README.md updates its own pages; b's stay b's.
	if err := os.WriteFile(a, []byte("# Deploy Notes\n\nAlpha deploys Tuesdays now.\n\nCanary: a small first release.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = mustProse(t, "--vault", dir, "ingest", a, b)
	if !strings.Contains(out, "ingested  a/README.md") || !strings.Contains(out, "skipped   b/README.md") || strings.Contains(out, "billing/") {
		t.Fatalf("a changed a/README.md:\n%s", out)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "notes/a/readme-file", "document"); !strings.Contains(s, "Tuesdays") {
		t.Errorf("notes/a/readme-file document after the change: %s", s)
	}
	if got := readPageMeta(t, dir, "notes/b/readme-file.html").Strings("sources"); !slices.Equal(got, []string{ids["b/README.md"]}) {
		t.Errorf("notes/b/readme-file sources after a's change %q", got)
	}
}

// Two "Setup Guide" files of one base name each keep their own pages.
func TestIngestTwoGuidesOfOneNameThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "s")
	writeFiles(t, src, map[string]string{
		"a/guide.md": "# Setup Guide\n\nInstall the alpha widget first.\n",
		"b/guide.md": "# Setup Guide\n\nConfigure the beta gateway with TLS.\n",
	})
	out := mustProse(t, "--vault", dir, "ingest", filepath.Join(src, "a", "guide.md"), filepath.Join(src, "b", "guide.md"))
	if !strings.Contains(out, "created  notes/a/guide.html") || !strings.Contains(out, "created  notes/b/guide.html") {
		t.Fatalf("two guides:\n%s", out)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "notes/a/guide", "document"); !strings.Contains(s, "alpha widget") {
		t.Errorf("notes/a/guide document: %s", s)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "notes/b/guide", "document"); !strings.Contains(s, "beta gateway") {
		t.Errorf("notes/b/guide document: %s", s)
	}
}

// A source within the 1 MiB limit whose quotation escaping makes larger
// is ingested beside the others; nothing fails for its size.
func TestIngestSourceWhoseEscapingGrowsThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	var sb strings.Builder
	sb.WriteString("ASCII Art Gallery\n\n")
	for i := 0; i < 14000; i++ {
		sb.WriteString("*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_*_ art " + strconv.Itoa(i) + "\n\n")
	}
	src := filepath.Join(t.TempDir(), "s2")
	writeFiles(t, src, map[string]string{"ascii.txt": sb.String(), "ok.md": "# Fine\n\nA normal source.\n"})
	out, errs, code := prose(t, "--vault", dir, "ingest", src)
	if code != 0 || !strings.Contains(out, "ingested  s2/ascii.txt") || !strings.Contains(out, "ingested  s2/ok.md") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "s2/ok", "document"); !strings.Contains(s, "A normal source.") {
		t.Errorf("s2/ok document: %s", s)
	}
}

// A Markdown source's text that looks like markup reaches the page as
// text; an image keeps its alt text and an HTML block its words.
func TestIngestMarkdownKeepsTextThatLooksLikeMarkupThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeFiles(t, src, map[string]string{"g.md": "# Generics Primer\n\nA List<String> holds strings, and Optional<T> may be empty. See ![the architecture diagram](arch.png) for details.\n\n<div>\nImportant: this paragraph must not vanish.\n</div>\n"})
	mustProse(t, "--vault", dir, "ingest", filepath.Join(src, "g.md"))
	s := mustProse(t, "--vault", dir, "wiki", "slot", "notes/g", "document")
	for _, want := range []string{"A List&lt;String&gt; holds strings, and Optional&lt;T&gt; may be empty. See the architecture diagram for details.", "this paragraph must not vanish."} {
		if !strings.Contains(s, want) {
			t.Errorf("the document lost %q: %s", want, s)
		}
	}
}
