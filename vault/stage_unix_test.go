//go:build unix

package vault

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withUmask sets the process's umask for the rest of the test.
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// killed reports whether the process ended by SIGKILL.
func killed(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signal() == syscall.SIGKILL
}

// A directory on the way to the staged root (here published/ itself)
// replaced by a symlink while the staged files are written is not renamed
// through: the files go one at a time, which reports the link.
func TestStagedRenameNeverGoesThroughALink(t *testing.T) {
	v := newVault(t)
	first := filepath.Join(t.TempDir(), "first")
	writeTree(t, first, map[string]string{"a.md": "a"})
	publish(t, v, "a", first, PublishOptions{}) // published/ exists now
	outside := t.TempDir()
	pub := filepath.Join(v.Root(), "published")
	moved := filepath.Join(t.TempDir(), "published.real")
	beforeStageRename = func(string) {
		if err := os.Rename(pub, moved); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, pub); err != nil {
			t.Error(err)
		}
	}
	defer func() { beforeStageRename = nil }()
	src := filepath.Join(t.TempDir(), "src")
	files := stagedFiles(40, "x")
	writeTree(t, src, files)
	res, err := v.Publish(context.Background(), "wm", src, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(outside)
	for _, e := range ents {
		t.Errorf("written through the symlink published/: %s", e.Name())
	}
	if len(res.HandEdits) != len(files) || !strings.Contains(res.HandEdits[0].Reason, "symlink") {
		t.Fatalf("%d hand edits (%v), want %d naming the symlink", len(res.HandEdits), res.HandEdits, len(files))
	}
	checkNoTemps(t, v)
}

// Below a setgid directory (a group-shared working tree) a directory made
// in place takes the parent's group and bit; the files there go one at a
// time, so published/<node>/ and its directories get them as before.
func TestStagingLeavesSetgidDirectoriesToTheOneByOneRoad(t *testing.T) {
	v := newVault(t)
	first := filepath.Join(t.TempDir(), "first")
	writeTree(t, first, map[string]string{"a.md": "a"})
	publish(t, v, "a", first, PublishOptions{})
	pub := filepath.Join(v.Root(), "published")
	if err := os.Chmod(pub, 0o755|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(pub); fi.Mode()&os.ModeSetgid == 0 {
		t.Fatal("this file system drops the setgid bit of a directory")
	}
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, stagedFiles(40, "x"))
	publish(t, v, "wm", src, PublishOptions{})
	if s := v.stagedDirs.Load(); s != 0 {
		t.Fatalf("%d directories staged below a setgid directory", s)
	}
	for _, d := range []string{"wm", "wm/d00", "wm/d01"} {
		fi, err := os.Stat(filepath.Join(pub, d))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSetgid == 0 {
			t.Errorf("published/%s is %v: without the setgid bit of its parent", d, fi.Mode())
		}
	}
	checkGitClean(t, v)
}
