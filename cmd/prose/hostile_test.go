package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishEmptyNeedsAllowEmpty: publishing an empty directory over a node
// is refused with exit 1 naming --allow-empty, and goes through with it.
func TestPublishEmptyNeedsAllowEmpty(t *testing.T) {
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
