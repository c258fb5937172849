package vault

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A batch opens each pack index once, at its first lookup, and closes it
// at its flush or abort: a lookup after the index was removed (its file
// still open) still finds the pack's objects, and the descriptor is gone
// once the batch ends.
func TestBatchOpensEachPackIndexOnce(t *testing.T) {
	v := newVault(t)
	src, _ := writeNumberedTree(t, 3*packThreshold)
	publish(t, v, "big", src, PublishOptions{})
	idxs, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "pack", "pack-*.idx"))
	if len(idxs) != 1 {
		t.Fatalf("%d pack indexes, want 1", len(idxs))
	}
	data, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	// Objects of the pack from different fan-out buckets (each lookup
	// reads its bucket).
	var names []plumbing.Hash
	n := int(binary.BigEndian.Uint32(data[idxFanEnd-4:]))
	for i := 0; i < n && len(names) < 8; i += n / 8 {
		var h plumbing.Hash
		copy(h[:], data[idxFanEnd+20*i:])
		names = append(names, h)
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return -1 // no /proc: the count is not checked
		}
		return len(ents)
	}
	for _, end := range []string{"flush", "abort"} {
		before := fds()
		b := v.newBatch()
		if !b.has(names[0]) {
			t.Fatalf("%s: the first object of the pack not found", end)
		}
		moved := idxs[0] + ".away"
		if err := os.Rename(idxs[0], moved); err != nil {
			t.Fatal(err)
		}
		for _, h := range names[1:] {
			if !b.has(h) {
				t.Fatalf("%s: %s not found once its index was moved away: the batch opened the index again", end, h)
			}
		}
		if end == "flush" {
			if err := b.flush(); err != nil {
				t.Fatal(err)
			}
		} else {
			b.abort()
		}
		if err := os.Rename(moved, idxs[0]); err != nil {
			t.Fatal(err)
		}
		if after := fds(); after != before {
			t.Fatalf("%s: %d descriptors open after the batch, %d before: the index was not closed", end, after, before)
		}
	}
}

// The object store's listing of objects/ (go-git reads it once per vault,
// for names and kinds) stats no entry: an entry's size is read when asked
// for, so one grown after the listing answers with its new size. It lists
// what billy lists, with the same kinds and sizes, and a vault reads its
// objects through it.
func TestObjectsListingStatsLazily(t *testing.T) {
	v := newVault(t)
	src, _ := writeNumberedTree(t, 10)
	publish(t, v, "n", src, PublishOptions{})
	spare := filepath.Join(v.GitDir(), "objects", "spare")
	if err := os.WriteFile(spare, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	lazy, err := v.packs.ReadDir("objects")
	if err != nil {
		t.Fatal(err)
	}
	eager, err := v.packs.Filesystem.ReadDir("objects")
	if err != nil {
		t.Fatal(err)
	}
	if len(lazy) != len(eager) || len(lazy) < 3 {
		t.Fatalf("listed %d entries, billy %d", len(lazy), len(eager))
	}
	for i := range lazy {
		if lazy[i].Name() != eager[i].Name() || lazy[i].IsDir() != eager[i].IsDir() || lazy[i].Mode() != eager[i].Mode() ||
			(!lazy[i].IsDir() && lazy[i].Size() != eager[i].Size()) {
			t.Fatalf("entry %d: %s dir=%v %v, billy %s dir=%v %v", i, lazy[i].Name(), lazy[i].IsDir(), lazy[i].Mode(), eager[i].Name(), eager[i].IsDir(), eager[i].Mode())
		}
	}
	lazy, _ = v.packs.ReadDir("objects")
	if err := os.WriteFile(spare, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fi := range lazy {
		if fi.Name() == "spare" && fi.Size() != 5 {
			t.Fatalf("spare: size %d, want 5 (its size as it is when asked: the listing stat'ed it)", fi.Size())
		}
	}
	os.Remove(spare)
	v2, files := reopenNodeFiles(t, v, "n")
	if len(files) != 10 {
		t.Fatalf("%d files read back, want 10", len(files))
	}
	for p, h := range files {
		if _, err := v2.Blob(h); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
