package vault

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A file name of 254 bytes is valid; the checkout temp file must not make a
// longer one, and no temp file may show in git status.
func TestCheckoutLongFileNameAndTempsOutOfTheWorkTree(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	long := strings.Repeat("x", 251) + ".md"
	writeTree(t, src, map[string]string{long: "one\n", "short.md": "s\n"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{long: "two\n", "short.md": "s\n"})
	publish(t, v, "n", src, PublishOptions{})
	if got, err := os.ReadFile(filepath.Join(v.Root(), "published", "n", long)); err != nil || string(got) != "two\n" {
		t.Fatalf("working tree: %q %v", got, err)
	}
	ents, _ := os.ReadDir(filepath.Join(v.Root(), "published", "n"))
	for _, e := range ents {
		if e.Name() != long && e.Name() != "short.md" {
			t.Fatalf("stray file in the working tree: %s", e.Name())
		}
	}
	// A temp file a crash left behind is git-ignored.
	if err := os.WriteFile(filepath.Join(v.StatePath("tmp"), "co-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkGitClean(t, v)
}

// The commit .prose/worktree records can vanish: the user amends it and git
// gc prunes it. Later writes bring the working tree from scratch instead of
// failing.
func TestSyncWorktreeFromAPrunedCommit(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	from, ok := v.worktreeState()
	if !ok {
		t.Fatal("no worktree state after init")
	}
	if err := os.MkdirAll(filepath.Join(v.Root(), "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Root(), "src", "notes.md"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, v.Root(), "add", "src/notes.md")
	git(t, v.Root(), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--amend", "-m", "Initialize, amended")
	git(t, v.Root(), "reflog", "expire", "--expire=now", "--all")
	git(t, v.Root(), "gc", "-q", "--prune=now")
	if out, err := exec.Command("git", "-C", v.Root(), "cat-file", "-e", from.String()).CombinedOutput(); err == nil {
		t.Fatalf("commit %s survived gc: %s", from, out)
	}
	v, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.md": "a\n"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{"a.md": "b\n"})
	publish(t, v, "n", src, PublishOptions{})
	if got, _ := os.ReadFile(filepath.Join(v.Root(), "src", "notes.md")); string(got) != "notes\n" {
		t.Fatalf("src/notes.md = %q", got)
	}
	checkGitClean(t, v)
}
