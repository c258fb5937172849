package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/durable"
)

// An informed publish from the CLI looks only at the paths it is given:
// --changed (repeatable), --changed-from FILE and --changed-from - (one path
// per line). A file edited but not named keeps its published content until
// a full scan.
func TestPublishChangedPaths(t *testing.T) {
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(t.TempDir(), "render")
	writeFiles(t, src, map[string]string{"a.txt": "a1", "b/c.txt": "c1", "d.txt": "d1"})
	mustProse(t, "--vault", vdir, "publish", "n", src)
	published := func(p string) string {
		data, _ := os.ReadFile(filepath.Join(vdir, "published", "n", p))
		return string(data)
	}
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a2"), 0o644)
	os.WriteFile(filepath.Join(src, "d.txt"), []byte("d2 (not named)"), 0o644)
	os.MkdirAll(filepath.Join(src, "e"), 0o755)
	os.WriteFile(filepath.Join(src, "e", "new.txt"), []byte("new"), 0o644)
	out := mustProse(t, "--vault", vdir, "publish", "n", src, "--changed", "a.txt", "--changed", filepath.Join(src, "e", "new.txt"))
	if !strings.Contains(out, "rendered") || published("a.txt") != "a2" || published("e/new.txt") != "new" || published("d.txt") != "d1" {
		t.Fatalf("--changed: %s; a=%q e/new=%q d=%q", out, published("a.txt"), published("e/new.txt"), published("d.txt"))
	}

	os.WriteFile(filepath.Join(src, "b", "c.txt"), []byte("c2"), 0o644)
	list := filepath.Join(t.TempDir(), "changed")
	os.WriteFile(list, []byte("b/c.txt\n\n"), 0o644)
	mustProse(t, "--vault", vdir, "publish", "n", src, "--changed-from", list)
	if published("b/c.txt") != "c2" || published("d.txt") != "d1" {
		t.Fatalf("--changed-from FILE: c=%q d=%q", published("b/c.txt"), published("d.txt"))
	}

	os.Remove(filepath.Join(src, "a.txt"))
	stdin, err := os.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(list, []byte("a.txt\r\n"), 0o644)
	saved := os.Stdin
	os.Stdin = stdin
	mustProse(t, "--vault", vdir, "publish", "n", src, "--changed-from", "-")
	os.Stdin = saved
	stdin.Close()
	if _, err := os.Stat(filepath.Join(vdir, "published", "n", "a.txt")); !os.IsNotExist(err) || published("d.txt") != "d1" {
		t.Fatalf("--changed-from -: a.txt still published (%v) or d=%q", err, published("d.txt"))
	}

	// A full scan sees everything.
	mustProse(t, "--vault", vdir, "publish", "n", src)
	if published("d.txt") != "d2 (not named)" {
		t.Fatalf("full scan: d=%q", published("d.txt"))
	}

	_, errs, code := prose(t, "--vault", vdir, "publish", "n", src, "--changed", "/etc/passwd")
	if code != 2 || !strings.Contains(errs, "outside") {
		t.Fatalf("a changed path outside DIR: exit %d, %s", code, errs)
	}
	_, errs, code = prose(t, "--vault", vdir, "publish", "n", src, "--changed-from", filepath.Join(t.TempDir(), "missing"))
	if code != 2 || !strings.Contains(errs, "--changed-from") {
		t.Fatalf("a missing --changed-from file: exit %d, %s", code, errs)
	}
}

// A publish that took effect but could not finish says so: it names the
// receipt and the commit, what is left undone and the command that
// finishes it, and exits 1; that command then finishes it.
func TestPublishThatLandedButDidNotFinish(t *testing.T) {
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(t.TempDir(), "render")
	writeFiles(t, src, map[string]string{"a.txt": "a1"})
	mustProse(t, "--vault", vdir, "publish", "n", src)
	writeFiles(t, src, map[string]string{"a.txt": "a2"})
	restore := durable.SetFault(durable.FailAt(durable.StepRename, filepath.Join(vdir, ".git", "refs", "prose")))
	_, errs, code := prose(t, "--vault", vdir, "publish", "n", src)
	restore()
	if code != 1 || !strings.Contains(errs, "published receipt blake3:") || !strings.Contains(errs, "as commit ") || !strings.Contains(errs, "run `prose fsck`") {
		t.Fatalf("exit %d, %q: want exit 1 naming the receipt, the commit and prose fsck", code, errs)
	}
	receipt := errs[strings.Index(errs, "blake3:"):]
	receipt = receipt[:strings.IndexByte(receipt, ' ')]
	mustProse(t, "--vault", vdir, "fsck")
	if out := mustProse(t, "--vault", vdir, "log", "-n", "1"); !strings.Contains(out, strings.TrimPrefix(receipt, "blake3:")[:12]) {
		t.Fatalf("prose log after fsck does not show %s:\n%s", receipt, out)
	}
}
