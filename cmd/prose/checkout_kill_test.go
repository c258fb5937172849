//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/prose-store/prose/internal/lock"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// checkoutSources are the sources of the kill-during-checkout test: round
// 0 is the first ingest; round 1 changes every one of them and adds as
// many new ones, so its checkout rewrites pages and creates others.
func checkoutSources(round int) map[string]string {
	files := map[string]string{}
	for i := 0; i < 30*(round+1); i++ {
		body := fmt.Sprintf("# Runbook %d\n\nThe service number %d keeps a record of every request.\n\n## Restart steps %d\n\n1. Drain node %d.\n2. Restart it.\n", i, i, i, i)
		if round > 0 {
			body += fmt.Sprintf("\nThe quartzite budget of service %d is reviewed each quarter.\n", i)
		}
		if i == 45 {
			body += "\nIts obsidianite cache is warmed at dawn.\n"
		}
		files[fmt.Sprintf("doc-%03d.md", i)] = body
	}
	return files
}

// gitStatus is `git status --porcelain` of the vault.
func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	return string(out)
}

// TestReadersAfterAKillDuringCheckout: an ingest SIGKILLed in the middle of
// its checkout leaves the branch moved and the working tree a mix of the
// old and the new wiki. A reader then answers from the committed wiki: it
// finishes the checkout when the writer lock is free (git status is clean
// after it), and when the lock is held it reads the committed tree and
// says once, on stderr, that the working tree is behind and which command
// finishes it.
func TestReadersAfterAKillDuringCheckout(t *testing.T) {
	requireGitCLI(t)
	t.Setenv("PROSE_NOW", "2026-01-31")
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	src := filepath.Join(tmp, "src")
	mustProse(t, "init", vdir)
	writeFiles(t, src, checkoutSources(0))
	mustProse(t, "--vault", vdir, "ingest", src)
	writeFiles(t, src, checkoutSources(1))

	t.Setenv("PROSE_TEST_KILL_AT_RENAME", filepath.Join("published", "wiki")+":20")
	res := runChild(t, 0, "--vault", vdir, "ingest", src)
	os.Unsetenv("PROSE_TEST_KILL_AT_RENAME")
	if res.signal != syscall.SIGKILL {
		t.Fatalf("the ingest was not killed during its checkout (exit %d):\n%s", res.code, res.stderr)
	}
	mixed := gitStatus(t, vdir)
	if !strings.Contains(mixed, "published/wiki/") {
		t.Fatalf("the kill left the working tree in step; nothing to finish:\n%s", mixed)
	}
	held := filepath.Join(tmp, "held")
	if out, err := exec.Command("cp", "-a", vdir, held).CombinedOutput(); err != nil {
		t.Fatalf("copy the vault: %v\n%s", err, out)
	}

	// The mixed working tree lints differently from the committed wiki:
	// a reader that linted it would answer wrong.
	mixedLint := lintWorkingTree(t, held)

	// The lock held (a writer landing, or one stuck): readers answer from
	// the committed tree, change nothing, and say so once.
	l, err := lock.TryAcquire(filepath.Join(held, ".prose", "lock"), "a writer in the test")
	if err != nil {
		t.Fatal(err)
	}
	heldOut := map[string]string{}
	for _, args := range [][]string{{"wiki", "lint"}, {"wiki", "search", "obsidianite"}, {"wiki", "stats"}, {"wiki", "tree"}, {"log", "-n", "1"}} {
		out, errs, code := prose(t, append([]string{"--vault", held}, args...)...)
		if code != 0 {
			t.Fatalf("%s with the lock held: exit %d\n%s%s", args, code, out, errs)
		}
		if n := strings.Count(errs, "working tree is behind the branch"); n != 1 || !strings.Contains(errs, "`prose fsck` finishes the checkout") || !strings.Contains(errs, "a writer in the test") {
			t.Fatalf("%s with the lock held says the working tree is behind %d times (want once, naming the holder and prose fsck):\n%s", args, n, errs)
		}
		heldOut[args[1]] = out
	}
	l.Release()
	if got := gitStatus(t, held); got != mixed {
		t.Fatalf("a reader changed the working tree while the lock was held:\n%s\nwas:\n%s", got, mixed)
	}
	if heldOut["lint"] == mixedLint {
		t.Fatalf("lint with the lock held answered from the mixed working tree:\n%s", mixedLint)
	}
	if !strings.Contains(heldOut["search"], "[obsidianite]") {
		t.Fatalf("search with the lock held misses the committed text:\n%s", heldOut["search"])
	}

	// The lock free: the first reader finishes the checkout.
	out, errs, code := prose(t, "--vault", vdir, "wiki", "lint")
	if code != 0 {
		t.Fatalf("lint after the kill: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "finished the checkout") || strings.Contains(errs, "behind") {
		t.Fatalf("lint did not say it finished the checkout:\n%s", errs)
	}
	if st := gitStatus(t, vdir); st != "" {
		t.Fatalf("the working tree is not in step after a reader with the lock free:\n%s", st)
	}
	if out != heldOut["lint"] {
		t.Fatalf("lint of the finished working tree:\n%s\ndiffers from lint of the committed tree with the lock held:\n%s", out, heldOut["lint"])
	}
	for _, args := range [][]string{{"wiki", "search", "obsidianite"}, {"wiki", "stats"}, {"wiki", "tree"}} {
		out, errs := mustProseErr(t, append([]string{"--vault", vdir}, args...)...)
		if errs != "" {
			t.Fatalf("%s on a vault in step says: %s", args, errs)
		}
		if sortedLines(out) != sortedLines(heldOut[args[1]]) { // search ranks ties in no set order
			t.Fatalf("%s after the checkout finished:\n%s\ndiffers from the committed answer:\n%s", args, out, heldOut[args[1]])
		}
	}
	mustProse(t, "--vault", vdir, "fsck")
}

// lintWorkingTree lints the wiki as it stands in dir's working tree,
// through the package (no reader check).
func lintWorkingTree(t *testing.T, dir string) string {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wiki.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := w.Lint(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "%s: %s: %s: %s\n", f.Page, f.Severity, f.Kind, f.Detail)
	}
	ne, nw, ni := rep.Count(wiki.SevError), rep.Count(wiki.SevWarning), rep.Count(wiki.SevInfo)
	fmt.Fprintf(&b, "%s, %s: %s, %s, %s\n", nounCount(rep.Pages, "page"), nounCount(rep.Folders, "folder"), nounCount(ne, "error"), nounCount(nw, "warning"), nounCount(ni, "note"))
	return b.String()
}

// mustProseErr is mustProse that also returns stderr.
func mustProseErr(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, errs, code := prose(t, args...)
	if code != 0 {
		t.Fatalf("prose %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out, errs
}

// sortedLines is text's lines, sorted, as one string.
func sortedLines(text string) string {
	lines := strings.Split(text, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
