package vault

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A small blob read twice is read from the object store once; each read
// returns a copy of its own (a caller changing its bytes changes no other
// reader's). A blob past blobCacheMax is read from the store each time.
func TestSmallBlobsAreReadFromTheStoreOnce(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "small", "b/c.txt": "also small", "big.txt": strings.Repeat("b", blobCacheMax+1)})
	publish(t, v, "n", src, PublishOptions{})
	v2, files := reopenNodeFiles(t, v, "n")
	var small, big []byte
	for p, h := range files {
		before := v2.storeBlobReads.Load()
		a, err := v2.Blob(h)
		if err != nil {
			t.Fatal(err)
		}
		orig := bytes.Clone(a)
		for i := range a {
			a[i] = 'x'
		}
		b, err := v2.Blob(h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, orig) {
			t.Fatalf("%s: the second read saw the first reader's change", p)
		}
		reads := v2.storeBlobReads.Load() - before
		if len(orig) > blobCacheMax {
			big = orig
			if reads != 2 {
				t.Fatalf("%s (%d bytes): %d store reads for two reads, want 2 (not kept)", p, len(orig), reads)
			}
		} else {
			small = orig
			if reads != 1 {
				t.Fatalf("%s: %d store reads for two reads, want 1", p, reads)
			}
		}
	}
	if small == nil || big == nil {
		t.Fatal("no small or no large blob read")
	}
}

// reopenNodeFiles opens the vault at v's root afresh (closed when t ends)
// and returns it with the files of node's head.
func reopenNodeFiles(t *testing.T, v *Vault, node string) (*Vault, map[string]plumbing.Hash) {
	t.Helper()
	v2, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v2.Close() })
	_, tree, err := v2.NodeHead(node)
	if err != nil {
		t.Fatal(err)
	}
	files, err := v2.NodeFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	return v2, files
}

// NodeFileOf reads a node's file from the working tree when the file there
// is the committed blob (no object-store read), and from the store when it
// is not: a hand edit, a symlink or a FIFO standing at the path never
// changes what it returns.
func TestNodeFilesAreReadFromTheWorkingTreeOnlyWhenTheyAreTheBlob(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"same.txt": "committed one", "edited.txt": "committed two", "link.txt": "committed three", "fifo.txt": "committed four"})
	publish(t, v, "n", src, PublishOptions{})
	dir := filepath.Join(v.Root(), "published", "n")
	if err := os.WriteFile(filepath.Join(dir, "edited.txt"), []byte("a person's words"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("committed three"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "link.txt"))
	if err := os.Symlink(other, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "fifo.txt"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	v2, _ := reopenNodeFiles(t, v, "n")
	_, tree, err := v2.NodeHead("n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		store      int64
	}{
		{"same.txt", "committed one", 0},
		{"edited.txt", "committed two", 1},
		{"link.txt", "committed three", 1},
		{"fifo.txt", "committed four", 1},
	} {
		before := v2.storeBlobReads.Load()
		data, ok, err := v2.NodeFileOf("n", tree, c.name)
		if err != nil || !ok || string(data) != c.want {
			t.Fatalf("%s: %q %v %v, want %q", c.name, data, ok, err, c.want)
		}
		if n := v2.storeBlobReads.Load() - before; n != c.store {
			t.Fatalf("%s: %d object-store reads, want %d", c.name, n, c.store)
		}
	}
}
