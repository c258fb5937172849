package vault

import (
	"bytes"
	"path/filepath"
	"strings"
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
