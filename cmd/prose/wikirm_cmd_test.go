package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// wiki rm refuses, exit 1, while pages link to the page; --unlink and
// --force remove it; wiki lint --fix turns the links --force left broken
// into plain text.
func TestWikiRmRefusesLinkedPagesAndLintFixUnlinks(t *testing.T) {
	inParallel(t)
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	for _, p := range []string{"ops/a", "ops/b", "ops/c"} {
		mustProse(t, "--vault", vdir, "wiki", "new", p, "--template", "note")
	}
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "ops/a", "body", "--content", `<p>see <a href="b.html">the b page</a> and <a href="c.html">c</a></p>`)

	head := headOf(t, vdir)
	_, errs, code := prose(t, "--vault", vdir, "wiki", "rm", "ops/b")
	if code != 1 || !strings.Contains(errs, "1 page links to ops/b.html (ops/a.html)") || !strings.Contains(errs, "--unlink") || !strings.Contains(errs, "--force") {
		t.Fatalf("rm of a linked page: exit %d, %q", code, errs)
	}
	if headOf(t, vdir) != head || !strings.Contains(mustProse(t, "--vault", vdir, "wiki", "ls"), "b.html") {
		t.Fatal("the refused rm changed the vault")
	}

	mustProse(t, "--vault", vdir, "wiki", "rm", "--unlink", "ops/c")
	mustProse(t, "--vault", vdir, "wiki", "rm", "--force", "ops/b")
	if out, _, code := prose(t, "--vault", vdir, "wiki", "lint"); code != 1 || !strings.Contains(out, "broken-link") {
		t.Fatalf("lint after rm --force: exit %d\n%s", code, out)
	}
	out, errs, code := prose(t, "--vault", vdir, "wiki", "lint", "--fix")
	if code != 0 || !strings.Contains(out, "ops/a.html: unlinked ops/b.html") || strings.Contains(out, "broken-link") {
		t.Fatalf("lint --fix: exit %d\n%s%s", code, out, errs)
	}
	// The summary counts in words: "1 page", not "1 pages".
	if !strings.Contains(out, "1 page, 2 folders: 0 errors, ") {
		t.Errorf("lint summary: %s", out)
	}
	if got := mustProse(t, "--vault", vdir, "wiki", "slot", "ops/a", "body"); got != "<p>see the b page and c</p>" {
		t.Fatalf("slot after lint --fix: %q", got)
	}
	cleanAndFsck(t, vdir)
	// Nothing left to fix: nothing committed.
	head = headOf(t, vdir)
	if out := mustProse(t, "--vault", vdir, "wiki", "lint", "--fix"); !strings.Contains(out, "nothing committed") || headOf(t, vdir) != head {
		t.Fatalf("lint --fix with nothing to fix: %s", out)
	}
}
