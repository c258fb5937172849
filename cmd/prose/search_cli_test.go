package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// `prose wiki search ffi_call` finds every page that says the identifier
// (in any slot), ten by default and all of them with --limit 0, and no
// page that says "ffi" and "call" apart; a negative limit is refused.
func TestWikiSearchFindsEveryPageSayingAnIdentifier(t *testing.T) {
	inParallel(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	wiki := func(args ...string) string {
		t.Helper()
		return mustProse(t, append([]string{"--vault", vdir, "wiki"}, args...)...)
	}
	for i := range 12 {
		page := fmt.Sprintf("libffi/p%02d", i)
		wiki("new", page, "--template", "concept")
		slot := "body"
		if i%2 == 1 {
			slot = "summary"
		}
		wiki("write-slot", page, slot, "--content", fmt.Sprintf("<p>Page %d calls <code>ffi_call</code> once.</p>", i))
	}
	wiki("new", "libffi/apart", "--template", "concept")
	wiki("write-slot", "libffi/apart", "body", "--content", "<p>The ffi library has a call.</p>")

	count := func(out string) int { return strings.Count(out, "[ffi_call]") }
	if n := count(wiki("search", "ffi_call")); n != 10 {
		t.Errorf("default limit: %d hits, want 10", n)
	}
	out := wiki("search", "--limit", "0", "ffi_call")
	if n := count(out); n != 12 || strings.Contains(out, "libffi/apart") {
		t.Errorf("--limit 0: %d hits, want all 12 and not libffi/apart:\n%s", n, out)
	}
	doc := jsonOf(t, mustProse(t, "--vault", vdir, "--json", "wiki", "search", "-n", "0", "ffi_call"))
	if hits := doc["hits"].([]any); len(hits) != 12 {
		t.Errorf("--json -n 0: %d hits", len(hits))
	}
	if _, errs, code := prose(t, "--vault", vdir, "wiki", "search", "--limit", "-1", "ffi_call"); code != 2 || !strings.Contains(errs, "0 for every page") {
		t.Errorf("--limit -1: exit %d %q", code, errs)
	}
}
