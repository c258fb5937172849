package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two sources titled alike each get a source page of their own through
// the CLI, and a forced re-ingest of one that is unchanged tells one story:
// unchanged, skipped, nothing updated.
func TestIngestSameTitleAndForceThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeFiles(t, src, map[string]string{
		"a/guide.md": "# Setup Guide\n\nInstall the alpha widget first. The alpha widget needs a calibrated flux capacitor.\n",
		"b/guide.md": "# Setup Guide\n\nConfigure the beta gateway with TLS. The beta gateway refuses plain connections.\n",
	})
	mustProse(t, "--vault", dir, "ingest", filepath.Join(src, "a"))
	out := mustProse(t, "--vault", dir, "ingest", filepath.Join(src, "b"))
	if !strings.Contains(out, "created  b/guide.html") || strings.Contains(out, "review") {
		t.Fatalf("the second source has no page of its own:\n%s", out)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "b/guide", "document"); !strings.Contains(s, "beta gateway") {
		t.Errorf("b/guide document: %s", s)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", "a/guide", "document"); !strings.Contains(s, "alpha widget") {
		t.Errorf("a/guide document: %s", s)
	}
	head := headOf(t, dir)
	out = mustProse(t, "--vault", dir, "ingest", "--force", filepath.Join(src, "b"))
	if strings.Contains(out, "updated") || strings.Contains(out, "created") || strings.Contains(out, "ingested") ||
		!strings.Contains(out, "unchanged b/guide.md") || !strings.Contains(out, "wiki: skipped (every page came out as it was; no commit)") || headOf(t, dir) != head {
		t.Errorf("a forced ingest of an unchanged source:\n%s", out)
	}
	out = mustProse(t, "--vault", dir, "--json", "ingest", "--force", filepath.Join(src, "b"))
	doc := jsonOf(t, out)
	if doc["status"] != "skipped" || len(doc["updated"].([]any)) != 0 || doc["sources"].([]any)[0].(map[string]any)["status"] != "unchanged" {
		t.Errorf("--json of a forced ingest of an unchanged source:\n%s", out)
	}
}

// An empty source is left out with a line saying why (a directory's) or
// refused (one named), never made into a page.
func TestIngestEmptySourceThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "notes")
	writeFiles(t, src, map[string]string{"empty.md": "", "blank.md": "\n \n\t\n", "real.md": "# Real\n\nSome real content for a page.\n"})
	out, errs, code := prose(t, "--vault", dir, "ingest", src)
	if code != 0 || strings.Contains(out, "empty") || strings.Contains(out, "blank") ||
		!strings.Contains(errs, "prose: skipped notes/empty.md: the source is empty") || !strings.Contains(errs, "prose: skipped notes/blank.md: the source is empty") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	head := headOf(t, dir)
	_, errs, code = prose(t, "--vault", dir, "ingest", filepath.Join(src, "empty.md"))
	if code != 1 || !strings.Contains(errs, "empty.md: the source is empty") || !strings.Contains(errs, "nothing was ingested") || headOf(t, dir) != head {
		t.Fatalf("a named empty source: exit %d\n%s", code, errs)
	}
}

// Lint counts the pages stats counts (no folder README.html) and reports a
// broken link written twice once.
func TestLintCountsAndDedupesThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "wiki", "new", "ops/x", "--template", "note")
	mustProse(t, "--vault", dir, "wiki", "new", "ops/y", "--template", "note")
	body := filepath.Join(t.TempDir(), "body.html")
	if err := os.WriteFile(body, []byte(`<p><a href="gone.html">a</a> and <a href="gone.html">b</a></p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustProse(t, "--vault", dir, "wiki", "write-slot", "ops/x", "body", "--file", body)
	out, _, _ := prose(t, "--vault", dir, "wiki", "lint")
	if n := strings.Count(out, "broken-link"); n != 1 {
		t.Errorf("%d broken-link lines:\n%s", n, out)
	}
	stats := mustProse(t, "--vault", dir, "wiki", "stats")
	if !strings.HasPrefix(stats, "2 pages in 2 folders") || !strings.Contains(out, "2 pages, 2 folders:") {
		t.Errorf("lint and stats disagree:\n%s\n%s", out, stats)
	}
}

// A 200-file directory leaves no folder lint calls crowded.
func TestIngestManyFilesLeavesNoCrowdedFolder(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "docs")
	files := map[string]string{}
	areas := []string{"billing", "storage", "network", "compute", "identity", "logging", "metrics", "backup"}
	things := []string{"gateway", "scheduler", "cache", "queue", "database", "router", "agent", "proxy", "ledger", "indexer"}
	for i := 0; i < 200; i++ {
		a, th := areas[i%len(areas)], things[(i/len(areas))%len(things)]
		body := fmt.Sprintf("# %s %s %d\n\nThe %s %s keeps a record of every request.\n", a, th, i, a, th)
		if i%3 == 0 {
			body += "\n## Restart steps\n\n1. Drain the node.\n2. Restart the node.\n"
		}
		files[fmt.Sprintf("doc-%03d.md", i)] = body
	}
	writeFiles(t, src, files)
	mustProse(t, "--vault", dir, "ingest", src)
	out, _, _ := prose(t, "--vault", dir, "wiki", "lint")
	if strings.Contains(out, "crowded-folder") || !strings.Contains(out, " 0 warnings") {
		t.Errorf("lint after 200 files:\n%s", out)
	}
}
