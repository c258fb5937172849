package wiki

import (
	"context"
	"os"
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
	want := map[string]string{
		"meta-missing":          "bad/nometa.html",
		"meta-invalid":          "bad/broken.html",
		"unknown-template":      "bad/unknowntpl.html",
		"undeclared-slot":       "bad/extra.html",
		"empty-required-slot":   "bad/empty.html",
		"broken-link":           "bad/link.html",
		"folder-no-readme":      "noreadme/",
		"folder-no-description": "nodesc/",
		"crowded-folder":        "crowded/",
		"empty-folder":          "emptyf/",
		"orphan-page":           "bad/orphan.html",
	}
	if len(want) != len(LintKinds) {
		t.Fatalf("the fixture covers %d kinds, lint has %d", len(want), len(LintKinds))
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		if _, dup := got[f.Kind]; dup {
			t.Errorf("kind %s found twice: %+v", f.Kind, f)
		}
		got[f.Kind] = f.Page
		if f.Severity != severityOf(f.Kind) || f.Detail == "" {
			t.Errorf("finding %+v: wrong severity or no detail", f)
		}
	}
	for k, p := range want {
		if got[k] != p {
			t.Errorf("kind %s: found on %q, want %q", k, got[k], p)
		}
	}
	if len(rep.Findings) != len(want) {
		t.Errorf("%d findings, want %d: %+v", len(rep.Findings), len(want), rep.Findings)
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
