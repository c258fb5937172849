package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wikiState is the wiki's page files and the catalog, by path: what an
// ingest leaves, for comparing two runs.
func wikiState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range []string{"published", "sources"} {
		filepath.Walk(filepath.Join(dir, root), func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(data)
			return nil
		})
	}
	return out
}

// sourcePages are the wiki's pages of the template source, sorted.
func sourcePages(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range jsonOf(t, mustProse(t, "--vault", dir, "--json", "wiki", "find", "**"))["pages"].([]any) {
		pg := p.(map[string]any)
		if pg["template"] == "source" {
			out = append(out, pg["path"].(string))
		}
	}
	slices.Sort(out)
	return out
}

// metaList is a list meta key of a page, through wiki read --json.
func metaList(t *testing.T, dir, page, key string) []string {
	t.Helper()
	m := jsonOf(t, mustProse(t, "--vault", dir, "--json", "wiki", "read", page))["meta"].(map[string]any)
	var out []string
	if l, ok := m[key].([]any); ok {
		for _, x := range l {
			out = append(out, x.(string))
		}
	}
	return out
}

// ingestBoth ingests args with --dry-run, then for real, and fails when
// the dry run's created, updated and moved pages are not the run's.
func ingestBoth(t *testing.T, dir string, args ...string) map[string]any {
	t.Helper()
	head := headOf(t, dir)
	dry := jsonOf(t, mustProse(t, append([]string{"--vault", dir, "--json", "ingest", "--dry-run"}, args...)...))
	if headOf(t, dir) != head {
		t.Fatal("--dry-run committed")
	}
	real := jsonOf(t, mustProse(t, append([]string{"--vault", dir, "--json", "ingest"}, args...)...))
	for _, k := range []string{"created", "updated", "moved"} {
		if d, r := listOf(t, dry[k]), listOf(t, real[k]); !slices.Equal(d, r) {
			t.Errorf("%s: --dry-run planned %v, the run did %v", k, d, r)
		}
	}
	return real
}

// Two sources of the same text (two copies of one file; one HTML page
// under two sites' chrome) make one set of pages naming both sources,
// whatever order they are given in; when one of them changes it gets its
// own pages again, and the other's pages name it no more; --dry-run says
// exactly what each run does.
func TestIngestSameTextMakesOnePage(t *testing.T) {
	const guide = "# Runbook\n\nRestart the worker when the queue stalls.\n\n## Steps\n\n1. Drain the queue.\n2. Restart the worker.\n"
	src := t.TempDir()
	a, b := filepath.Join(src, "a", "runbook.md"), filepath.Join(src, "b", "runbook.md")
	reset := func() {
		writeFiles(t, src, map[string]string{"a/runbook.md": guide, "b/runbook.md": guide})
	}
	edit := func(file, add string) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(data, add...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const pa, pb = "notes/a/runbook.html", "notes/b/runbook.html"

	reset()
	dir := newIngestVault(t)
	res := ingestBoth(t, dir, a, b)
	if got := sourcePages(t, dir); !slices.Equal(got, []string{pa}) {
		t.Fatalf("two copies of one text made source pages %v, want [%s]", got, pa)
	}
	if got := metaList(t, dir, pa, "source_names"); !slices.Equal(got, []string{"a/runbook.md", "b/runbook.md"}) {
		t.Errorf("%s names %v, want both sources", pa, got)
	}
	if got := metaList(t, dir, "notes/a/runbook/steps", "source_names"); len(got) != 2 {
		t.Errorf("the procedure of the shared text names %v, want both sources", got)
	}
	if out := mustProse(t, "--vault", dir, "ingest", a, b); !strings.Contains(out, "b/runbook.md (markdown, the same text as a/runbook.md)") || !strings.Contains(out, "wiki: skipped") {
		t.Errorf("the same two again:\n%s", out)
	}
	mustProse(t, "--vault", dir, "wiki", "lint")
	_ = res

	// The reversed order gives the same wiki.
	rev := newIngestVault(t)
	ingestBoth(t, rev, b, a)
	one, two := wikiState(t, dir), wikiState(t, rev)
	for p, c := range one {
		if two[p] != c {
			t.Errorf("%s differs when the sources are given in the other order", p)
		}
	}
	if len(one) != len(two) {
		t.Errorf("%d files against %d in the other order", len(one), len(two))
	}

	// The copy changes: it gets its own pages; the first's name it no more.
	edit(b, "\nThe queue is watched by the on-call engineer.\n")
	ingestBoth(t, dir, a, b)
	if got := sourcePages(t, dir); !slices.Equal(got, []string{pa, pb}) {
		t.Fatalf("after one copy changed, source pages %v, want [%s %s]", got, pa, pb)
	}
	if got := metaList(t, dir, pa, "source_names"); len(got) != 0 {
		t.Errorf("%s still names %v", pa, got)
	}
	ida, idb := metaList(t, dir, pa, "sources"), metaList(t, dir, pb, "sources")
	if len(ida) != 1 || len(idb) != 1 || ida[0] == idb[0] {
		t.Errorf("sources: %s %v, %s %v", pa, ida, pb, idb)
	}
	if doc := mustProse(t, "--vault", dir, "wiki", "slot", pb, "document"); !strings.Contains(doc, "on-call engineer") {
		t.Errorf("the changed copy's page lacks its text:\n%s", doc)
	}
	mustProse(t, "--vault", dir, "wiki", "lint")

	// The first changes instead (given in the other order): the same.
	reset()
	dir = newIngestVault(t)
	ingestBoth(t, dir, b, a)
	edit(a, "\nThe worker restarts in a minute.\n")
	ingestBoth(t, dir, b, a)
	if got := sourcePages(t, dir); !slices.Equal(got, []string{pa, pb}) {
		t.Fatalf("after the first changed, source pages %v, want [%s %s]", got, pa, pb)
	}
	if doc := mustProse(t, "--vault", dir, "wiki", "slot", pa, "document"); !strings.Contains(doc, "in a minute") {
		t.Errorf("the changed source's page lacks its new text:\n%s", doc)
	}
	if doc := mustProse(t, "--vault", dir, "wiki", "slot", pb, "document"); strings.Contains(doc, "in a minute") || !strings.Contains(doc, "Drain the queue") {
		t.Errorf("the unchanged copy's page does not hold its own text:\n%s", doc)
	}
	ida, idb = metaList(t, dir, pa, "sources"), metaList(t, dir, pb, "sources")
	if len(ida) != 1 || len(idb) != 1 || ida[0] == idb[0] {
		t.Errorf("sources: %s %v, %s %v", pa, ida, pb, idb)
	}
	mustProse(t, "--vault", dir, "wiki", "lint")
}

// One page under two sites' chrome (other bytes, the same text once the
// navigation is dropped) is one page naming both sources' ids.
func TestIngestSameTextUnderOtherChrome(t *testing.T) {
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"one.html": `<html><head><title>Cache</title></head><body><nav><a href="/">Home</a></nav><h1>Cache</h1><p>The cache keeps answers close to the reader.</p></body></html>`,
		"two.html": `<html><head><title>Cache</title></head><body><nav><a href="/x">Other home</a> | <a href="/y">Index</a></nav><h1>Cache</h1>` + "\n" + `<p>The cache keeps answers close to the reader.</p></body></html>`,
	})
	dir := newIngestVault(t)
	ingestBoth(t, dir, filepath.Join(src, "two.html"), filepath.Join(src, "one.html"))
	if got := sourcePages(t, dir); !slices.Equal(got, []string{"notes/one.html"}) {
		t.Fatalf("source pages %v, want [notes/one.html]", got)
	}
	if ids := metaList(t, dir, "notes/one", "sources"); len(ids) != 2 {
		t.Errorf("the shared page's sources: %v, want both ids", ids)
	}
	if got := metaList(t, dir, "notes/one", "source_names"); !slices.Equal(got, []string{"one.html", "two.html"}) {
		t.Errorf("the shared page names %v", got)
	}
}
