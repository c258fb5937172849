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
