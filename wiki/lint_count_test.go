package wiki

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// Lint reports a broken link once however often a page repeats it, and
// counts pages as stats does: the folders' README.html are not pages.
func TestLintDedupesAndCountsPages(t *testing.T) {
	w := newWiki(t)
	readme, err := os.ReadFile("testdata/lint/clean/README.html")
	if err != nil {
		t.Fatal(err)
	}
	page := `<!DOCTYPE html>
<html><head><title>Link</title></head><body>
<!-- prose:meta
template: note
title: Link
-->
<!-- prose:slot id="body" --><p><a href="missing.html">gone</a> and <a href="missing.html">gone again</a></p><!-- /prose:slot id="body" -->
</body></html>
`
	fsys := fstest.MapFS{
		"README.html":     {Data: readme},
		"ops/README.html": {Data: readme},
		"ops/link.html":   {Data: []byte(page)},
		"ops/other.html":  {Data: []byte(strings.ReplaceAll(page, "missing.html", "link.html"))},
	}
	rep, err := w.LintFS(context.Background(), fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Kind == "broken-link" && f.Page == "ops/link.html" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d broken-link findings, want 1: %+v", n, rep.Findings)
	}
	if rep.Pages != 2 || rep.Folders != 2 {
		t.Errorf("lint counts %d pages in %d folders, want 2 in 2", rep.Pages, rep.Folders)
	}
}
