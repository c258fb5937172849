package vault

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestFetchedCommitsReadsDeltifiedPack: the one-pass read of a new pack
// yields every commit git packed, deltified ones included, each body byte
// for byte what git stores under that id; packs present before are skipped.
func TestFetchedCommitsReadsDeltifiedPack(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	msg := strings.Repeat("a long receipt line that repeats so git deltifies commits\n", 20)
	for i := 0; i < 60; i++ {
		git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("receipt %d\n\n%s", i, msg))
	}
	gitDir := filepath.Join(dir, ".git")
	git("repack", "-adf", "-q", "--depth=50", "--window=50")
	ids := strings.Fields(git("rev-list", "--all"))
	got := fetchedCommits(gitDir, nil)
	if len(got) != len(ids) {
		t.Fatalf("read %d commits of %d", len(got), len(ids))
	}
	for _, id := range ids {
		want := git("cat-file", "commit", id)
		if body := got[plumbing.NewHash(id)]; !bytes.Equal(body, []byte(want)) {
			t.Fatalf("commit %s: body %q, git has %q", id, body, want)
		}
	}
	if !strings.Contains(git("verify-pack", "-v", filepath.Join(gitDir, "objects", "pack", onlyPack(t, gitDir)+".idx")), "commit") {
		t.Fatal("no commit in the pack")
	}
	if n := len(fetchedCommits(gitDir, packNames(gitDir))); n != 0 {
		t.Fatalf("a pack present before the fetch was read: %d commits", n)
	}
	// A budget too small for any body reads nothing rather than part.
	out := map[plumbing.Hash][]byte{}
	scanPackCommits(filepath.Join(gitDir, "objects", "pack", onlyPack(t, gitDir)+".pack"), out, 10)
	if len(out) != 0 {
		t.Fatalf("over budget: %d commits read", len(out))
	}
}

func onlyPack(t *testing.T, gitDir string) string {
	t.Helper()
	for name := range packNames(gitDir) {
		return strings.TrimSuffix(name, ".pack")
	}
	t.Fatal("no pack")
	return ""
}
