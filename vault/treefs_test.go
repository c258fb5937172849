package vault

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestTreeFS: a committed node tree read as a file system holds exactly
// the published files, passes the standard fs.FS checks, and the zero
// tree holds nothing.
func TestTreeFS(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{"a.txt": "A", "d/b.txt": "B", "d/e/c.txt": "C"}
	writeTree(t, src, files)
	publish(t, v, "wm", src, PublishOptions{})
	_, tree, err := v.NodeHead("wm")
	if err != nil {
		t.Fatal(err)
	}
	fsys := v.TreeFS(tree)
	if err := fstest.TestFS(fsys, "a.txt", "d/b.txt", "d/e/c.txt"); err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		got, err := fs.ReadFile(fsys, p)
		if err != nil || string(got) != want {
			t.Fatalf("%s reads %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := fs.Stat(fsys, "d/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing path: %v", err)
	}
	if _, err := fs.Stat(v.TreeFS(plumbing.ZeroHash), "."); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the zero tree has a root: %v", err)
	}
}
