//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPublishEmptyNeedsAllowEmpty: publishing an empty directory over a node
// is refused with exit 1 naming --allow-empty, and goes through with it.
func TestPublishEmptyNeedsAllowEmpty(t *testing.T) {
	inParallel(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"a.md": "a"})
	mustProse(t, "--vault", vdir, "publish", "n", src)
	empty := filepath.Join(tmp, "empty")
	os.MkdirAll(empty, 0o755)
	_, errs, code := prose(t, "--vault", vdir, "publish", "n", empty)
	if code != 1 || !strings.Contains(errs, "holds no files") || !strings.Contains(errs, "--allow-empty") {
		t.Fatalf("publish of an empty directory: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(vdir, "published", "n", "a.md")); err != nil {
		t.Fatal("the refused publish removed the node's files")
	}
	out := mustProse(t, "--vault", vdir, "publish", "n", empty, "--allow-empty")
	if !strings.Contains(out, "rendered") {
		t.Fatalf("publish --allow-empty: %s", out)
	}
	mustProse(t, "--vault", vdir, "fsck")
}

// TestPublishSaysWhatItRepaired: after a commit by hand under published/,
// fsck names the command that repairs it, and that publish says what it
// restored.
func TestPublishSaysWhatItRepaired(t *testing.T) {
	inParallel(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"a.md": "true"})
	mustProse(t, "--vault", vdir, "publish", "n", src)
	os.WriteFile(filepath.Join(vdir, "published", "n", "a.md"), []byte("by hand"), 0o644)
	if out, err := exec.Command("git", "-C", vdir, "commit", "-qam", "by hand").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	_, errs, code := prose(t, "--vault", vdir, "fsck")
	if code != 1 || !strings.Contains(errs, "prose publish n DIR") {
		t.Fatalf("fsck after a hand commit: exit %d\n%s", code, errs)
	}
	_, errs, code = prose(t, "--vault", vdir, "publish", "n", src)
	if code != 0 || !strings.Contains(errs, "repaired: published/n") {
		t.Fatalf("publish over a hand commit: exit %d\n%s", code, errs)
	}
	mustProse(t, "--vault", vdir, "fsck")
}

// TestReactorFIFOIsRefused: a named pipe given to --reactor is refused at
// once instead of waiting for a writer.
func TestReactorFIFOIsRefused(t *testing.T) {
	inParallel(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	_, errs, code := prose(t, "receipts", "verify", "--reactor", fifo)
	if code != 2 || !strings.Contains(errs, "named pipe") {
		t.Fatalf("--reactor FIFO: exit %d\n%s", code, errs)
	}
}
