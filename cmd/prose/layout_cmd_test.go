package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listOf is a JSON list of strings, sorted.
func listOf(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	slices.Sort(out)
	return out
}

// --dry-run prints exactly what the run does: every source plans against
// the wiki as the run found it and the plans merge in name order, so on a
// set of sources where two touch the same page (a term both define, one
// of them new to this run and one changed) the dry run's created and
// updated pages are the real run's.
func TestIngestDryRunPlansWhatTheRunDoes(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "kb")
	writeFiles(t, src, map[string]string{
		"ops/deploy.md": "# Deploy\n\nWe deploy on Tuesdays.\n\n## Glossary\n\nCanary: a small slice of traffic that sees a release first.\n",
	})
	mustProse(t, "--vault", dir, "ingest", src)
	writeFiles(t, src, map[string]string{
		"ops/deploy.md":   "# Deploy\n\nWe deploy on Wednesdays.\n\n## Glossary\n\nCanary: a small slice of traffic that sees a release first.\nRollback: going back to the last release.\n",
		"billing/runs.md": "# Billing runs\n\nBilling runs nightly.\n\n## Glossary\n\nRollback: undoing a billing run.\nCanary: the first invoices of a new run.\n\n## Steps\n\n1. Freeze the ledger.\n2. Run the batch.\n",
		"zeta.md":         "# Zeta\n\nZeta also says what a rollback is.\n\n## Glossary\n\nRollback: returning to the previous state.\n",
	})
	head := headOf(t, dir)
	dry := jsonOf(t, mustProse(t, "--vault", dir, "--json", "ingest", "--dry-run", src))
	if headOf(t, dir) != head {
		t.Fatal("the dry run committed")
	}
	real := jsonOf(t, mustProse(t, "--vault", dir, "--json", "ingest", src))
	for _, k := range []string{"created", "updated"} {
		d, r := listOf(t, dry[k]), listOf(t, real[k])
		if !slices.Equal(d, r) {
			t.Errorf("%s: dry run %v, the run %v", k, d, r)
		}
	}
	if c := listOf(t, real["created"]); !slices.Contains(c, "glossary/rollback.html") || slices.Contains(listOf(t, real["updated"]), "glossary/rollback.html") {
		t.Errorf("the term two new sources define is not created once: created %v", c)
	}
	if u := listOf(t, real["updated"]); !slices.Contains(u, "glossary/canary.html") || !slices.Contains(u, "kb/ops/deploy.html") {
		t.Errorf("updated %v", u)
	}
	for _, p := range listOf(t, real["created"]) {
		if strings.HasSuffix(p, "-2.html") {
			t.Errorf("a numbered page: %s", p)
		}
	}
}

// A vault the earlier engine filled: its pages have no origin and sit in
// topic folders. The next ingest moves a page no person edited to where
// the layout puts it (one receipt, the move listed, links following) and
// keeps a page with a person's words where it is, with a review item
// naming the new page; it says both in its output, and lint stays clean.
func TestIngestMovesTheEarlierLayout(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "kb")
	writeFiles(t, src, map[string]string{
		"deploy.md": "# Deploying\n\nWe deploy on Tuesdays; see the rollback notes.\n\n## Glossary\n\nCanary: a small slice of traffic that sees a release first.\nRollback: going back to the last release.\n",
	})
	mustProse(t, "--vault", dir, "ingest", src)
	// As the earlier engine left them: no origin, topic folders.
	for _, mv := range [][2]string{{"kb/deploy", "deploying/deploying"}, {"glossary/canary", "deploying/canary"}, {"glossary/rollback", "deploying/rollback"}} {
		mustProse(t, "--vault", dir, "wiki", "set-meta", mv[0], "origin=")
		mustProse(t, "--vault", dir, "wiki", "mv", mv[0], mv[1])
	}
	mustProse(t, "--vault", dir, "wiki", "write-slot", "deploying/rollback", "summary", "--content", "<p>Ours: how we roll back.</p>")
	head := headOf(t, dir)
	out := mustProse(t, "--vault", dir, "ingest", "--force", src)
	if parentOf(t, dir, "HEAD") != head {
		t.Fatalf("not one commit:\n%s", out)
	}
	for _, want := range []string{"moved    deploying/deploying.html -> kb/deploy.html", "moved    deploying/canary.html -> glossary/canary.html",
		"created  glossary/rollback.html", "layout   2 pages of the earlier layout moved", "1 kept", "deploying/rollback.html: made by the earlier engine"} {
		if !strings.Contains(out, want) {
			t.Errorf("the ingest does not say %q:\n%s", want, out)
		}
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "deploying/rollback", "summary"); got != "<p>Ours: how we roll back.</p>" {
		t.Errorf("the person's page was written over: %q", got)
	}
	if meta := mustProse(t, "--vault", dir, "wiki", "meta", "glossary/canary"); !strings.Contains(meta, "origin: term:canary\n") {
		t.Errorf("the moved page has no origin:\n%s", meta)
	}
	if lint := mustProse(t, "--vault", dir, "wiki", "lint"); !strings.Contains(lint, "0 errors, 0 warnings") {
		t.Errorf("lint after the move:\n%s", lint)
	}
}

// TestTwoCollectionsOfOneDirectoryNameKeepApart: two manuals whose files
// sit in directories named "html" are two collections, each under the
// name of its package, not one "html/" folder interleaving them.
func TestTwoCollectionsOfOneDirectoryNameKeepApart(t *testing.T) {
	src := t.TempDir()
	writeFiles(t, src, map[string]string{
		"libalpha-dev/html/index.html": "<html><head><title>Alpha</title></head><body><h1>Alpha</h1><p>The alpha manual starts here.</p></body></html>",
		"libalpha-dev/html/calls.html": "<html><head><title>Calls</title></head><body><h1>Calls</h1><p>Alpha makes calls.</p></body></html>",
		"libbeta-dev/html/index.html":  "<html><head><title>Beta</title></head><body><h1>Beta</h1><p>The beta manual starts here.</p></body></html>",
		"libbeta-dev/html/types.html":  "<html><head><title>Types</title></head><body><h1>Types</h1><p>Beta has types.</p></body></html>",
	})
	dir := newIngestVault(t)
	out := mustProse(t, "--vault", dir, "ingest", filepath.Join(src, "libalpha-dev", "html"), filepath.Join(src, "libbeta-dev", "html"))
	for _, want := range []string{"libalpha-dev/calls.html", "libbeta-dev/types.html", "libalpha-dev/index.html", "libbeta-dev/index.html"} {
		if !strings.Contains(out, "created  "+want) {
			t.Errorf("no page %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "created  html/") {
		t.Errorf("the two manuals share an html/ folder:\n%s", out)
	}
	// The source page says which file it shows, by the name it has here.
	if c := mustProse(t, "--vault", dir, "wiki", "slot", "libalpha-dev/calls", "citation"); !strings.Contains(c, "<code>libalpha-dev/calls.html</code>") || strings.Contains(c, "blake3:") {
		t.Errorf("the citation does not name the source file: %s", c)
	}
}
