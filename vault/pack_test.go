package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/durable"
)

// A publish of more objects than packThreshold writes them as one pack,
// which git itself verifies and reads, and prose reads back.
func TestLargePublishWritesAPackGitReads(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{}
	for i := 0; i < 3*packThreshold; i++ {
		files[fmt.Sprintf("d%02d/f%03d.txt", i%7, i)] = fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", i))
	}
	writeTree(t, src, files)
	publish(t, v, "big", src, PublishOptions{})
	packs, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "pack", "pack-*.idx"))
	if len(packs) != 1 {
		t.Fatalf("%d packs after a publish of %d files, want 1", len(packs), len(files))
	}
	for _, idx := range packs {
		git(t, v.Root(), "verify-pack", strings.TrimSuffix(idx, ".idx")+".pack")
	}
	checkGitClean(t, v)
	for p, c := range files {
		got, err := os.ReadFile(filepath.Join(v.Root(), "published", "big", filepath.FromSlash(p)))
		if err != nil || string(got) != c {
			t.Fatalf("working tree %s = %q (%v), want %q", p, got, err, c)
		}
		if out := git(t, v.Root(), "show", "HEAD:published/big/"+p); out != c {
			t.Fatalf("git show %s = %q, want %q", p, out, c)
		}
		break
	}
	files["d00/f000.txt"] = "changed"
	writeTree(t, src, files)
	publish(t, v, "big", src, PublishOptions{})
	git(t, v.Root(), "gc", "-q")
	files["d01/f001.txt"] = "changed after gc"
	writeTree(t, src, files)
	publish(t, v, "big", src, PublishOptions{})
	checkGitClean(t, v)
	if n := receiptCount(t, v); n != 3 {
		t.Fatalf("%d receipts, want 3", n)
	}
}

// The working tree is written from the published source files, but a
// source file changed after its blob was stored is not copied: the blob is.
func TestCheckoutFromAChangedSourceUsesTheStore(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "stored", "b.txt": "b"})
	restore, ran := atStep(t, v, durable.StepFsync, "objects/", func() {
		os.WriteFile(filepath.Join(src, "a.txt"), []byte("changed after the blob was stored"), 0o644)
	})
	publish(t, v, "n", src, PublishOptions{})
	restore()
	if !ran() {
		t.Fatal("the source was never changed during the publish")
	}
	if got, _ := os.ReadFile(filepath.Join(v.Root(), "published", "n", "a.txt")); string(got) != "stored" {
		t.Fatalf("working tree a.txt = %q, want the committed %q", got, "stored")
	}
	checkGitClean(t, v)
}
