package wiki

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestLintFixtureDefects lints a fixture seeded with exactly one defect of
// every kind: lint finds each, and nothing else.
func TestLintFixtureDefects(t *testing.T) {
	w := newWiki(t)
	rep, err := w.LintFS(context.Background(), os.DirFS("testdata/lint/defects"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// One defect of each kind, on the page or folder named; broken links
	// twice: a slot's link, and related meta (which the shell renders as
	// links) naming a page that is not there.
	want := map[string][]string{
		"meta-missing":          {"bad/nometa.html"},
		"meta-invalid":          {"bad/broken.html"},
		"unknown-template":      {"bad/unknowntpl.html"},
		"undeclared-slot":       {"bad/extra.html"},
		"empty-required-slot":   {"bad/empty.html"},
		"broken-link":           {"bad/link.html", "bad/related.html"},
		"folder-no-readme":      {"noreadme/"},
		"folder-no-description": {"nodesc/"},
		"crowded-folder":        {"crowded/"},
		"empty-folder":          {"emptyf/"},
		"orphan-page":           {"bad/orphan.html"},
	}
	if len(want) != len(LintKinds) {
		t.Fatalf("the fixture covers %d kinds, lint has %d", len(want), len(LintKinds))
	}
	got := map[string][]string{}
	n := 0
	for _, f := range rep.Findings {
		if slices.Contains(got[f.Kind], f.Page) {
			t.Errorf("kind %s found twice on %s: %+v", f.Kind, f.Page, f)
		}
		got[f.Kind] = append(got[f.Kind], f.Page)
		if f.Severity != severityOf(f.Kind) || f.Detail == "" {
			t.Errorf("finding %+v: wrong severity or no detail", f)
		}
		if f.Page == "bad/related.html" && !strings.Contains(f.Detail, "related names bad/gone") {
			t.Errorf("the related page's finding does not name its related entry: %+v", f)
		}
	}
	for k, p := range want {
		n += len(p)
		if !slices.Equal(got[k], p) {
			t.Errorf("kind %s: found on %q, want %q", k, got[k], p)
		}
	}
	if len(rep.Findings) != n {
		t.Errorf("%d findings, want %d: %+v", len(rep.Findings), n, rep.Findings)
	}
}

func TestLintFixtureClean(t *testing.T) {
	w := newWiki(t)
	rep, err := w.LintFS(context.Background(), os.DirFS("testdata/lint/clean"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 0 {
		t.Fatalf("clean fixture: %+v", rep.Findings)
	}
}

func TestLintOfNoWikiIsClean(t *testing.T) {
	w := newWiki(t)
	rep, err := w.Lint(context.Background(), nil)
	if err != nil || len(rep.Findings) != 0 {
		t.Fatalf("lint of a vault without a wiki: %+v %v", rep, err)
	}
}
