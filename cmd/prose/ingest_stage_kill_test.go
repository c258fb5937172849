//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// unreachableObjects counts the objects of the vault at dir that git
// finds reachable from no ref.
func unreachableObjects(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command("git", "fsck", "--unreachable", "--no-reflogs", "--no-progress")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	return strings.Count(string(out), "unreachable ")
}

// gitRevParse is the object id rev names in the vault at dir.
func gitRevParse(t *testing.T, dir, rev string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", rev)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-parse %s: %v", rev, err)
	}
	return strings.TrimSpace(string(out))
}

// TestIngestKilledWhileStagingLeavesTheVault: an ingest whose commit
// stages its pages (more than 4 MiB of them: each page's blob is written
// as it is rendered) is SIGKILLed while it writes them, and again once
// they are durable but before the branch moves. Each time the branch,
// the git index and the working tree are as before and `prose fsck` is
// clean; the blobs of the second kill are unreachable objects, which fsck
// tolerates and `git gc --prune=now` removes (fsck clean after it too),
// and the ingest run again lands.
func TestIngestKilledWhileStagingLeavesTheVault(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 80 notes three times")
	}
	requireGitCLI(t)
	t.Setenv("PROSE_NOW", "2026-01-31")
	tmp := t.TempDir()
	vdir, src := filepath.Join(tmp, "v"), filepath.Join(tmp, "src")
	mustProse(t, "init", vdir)
	writeNotes(t, src, 80)
	mustProse(t, "--vault", vdir, "ingest", src) // a wiki to lose
	// Every note changes: the next run rewrites every page.
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("\nThe quartzite budget is reviewed each quarter.\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before := snapshotVault(t, vdir)
	unchanged := func(when string) {
		t.Helper()
		after := snapshotVault(t, vdir)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s: %s changed", when, k)
			}
		}
		if len(after) != len(before) {
			t.Errorf("%s: files appeared: %d → %d", when, len(before), len(after))
		}
		mustProse(t, "--vault", vdir, "fsck")
	}
	kill := func(env, at string) {
		t.Helper()
		t.Setenv(env, at)
		res := runChild(t, 0, "--vault", vdir, "ingest", src)
		os.Unsetenv(env)
		if res.signal != syscall.SIGKILL {
			t.Fatalf("%s=%s: the ingest was not killed (exit %d):\n%s%s", env, at, res.code, res.stdout, res.stderr)
		}
	}

	// Killed while writing the staged blobs: the 150th object (past the
	// first 100 loose ones, inside the pack).
	kill("PROSE_TEST_KILL_AT_WRITE", filepath.Join(".git", "objects")+":150")
	unchanged("killed while staging")
	if n := unreachableObjects(t, vdir); n != 0 {
		t.Errorf("killed before its objects were flushed, the run left %d unreachable objects", n)
	}

	// Killed once the objects are durable, before the branch moves.
	kill("PROSE_TEST_KILL_AT_RENAME", filepath.Join(".git", "refs", "heads", "main")+":1")
	unchanged("killed before the branch moved")
	garbage := unreachableObjects(t, vdir)
	if garbage < 100 {
		t.Errorf("killed before the branch moved, the run left %d unreachable objects; its staged pages (hundreds) should be", garbage)
	}
	gc := exec.Command("git", "gc", "--prune=now", "--quiet")
	gc.Dir = vdir
	if out, err := gc.CombinedOutput(); err != nil {
		t.Fatalf("git gc: %v\n%s", err, out)
	}
	if n := unreachableObjects(t, vdir); n != 0 {
		t.Errorf("git gc --prune=now left %d of the %d unreachable objects", n, garbage)
	}
	// git gc packed the refs: the branch is read through git.
	if got := gitRevParse(t, vdir, "main"); got != strings.TrimSpace(before[".git/refs/heads/main"]) {
		t.Errorf("after git gc the branch is at %s, not %s", got, before[".git/refs/heads/main"])
	}
	if got := gitStatus(t, vdir); got != "" {
		t.Errorf("git status after git gc:\n%s", got)
	}
	mustProse(t, "--vault", vdir, "fsck")

	out := mustProse(t, "--vault", vdir, "ingest", src)
	if !strings.Contains(out, "wiki: rendered") {
		t.Fatalf("the ingest run again did not land:\n%s", out)
	}
	mustProse(t, "--vault", vdir, "fsck")
	if got := gitStatus(t, vdir); got != "" {
		t.Fatalf("git status after the ingest:\n%s", got)
	}
}
