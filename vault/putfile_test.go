package vault

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPutFileRefusesAFileThatChanged: the blob a publish stores is the
// content its scan hashed. A file rewritten between the scan and the
// object write (same size, longer, shorter) is refused, whether it is read
// whole (small) or streamed (large), and nothing is kept for the checkout.
func TestPutFileRefusesAFileThatChanged(t *testing.T) {
	v := newVault(t)
	dir := t.TempDir()
	for _, size := range []int{100, maxInlineFile + 1} {
		orig := bytes.Repeat([]byte("a"), size)
		want := objectHash(plumbing.BlobObject, orig)
		for name, now := range map[string][]byte{
			"same size": append(bytes.Repeat([]byte("a"), size-1), 'b'),
			"longer":    append(bytes.Clone(orig), 'a'),
			"shorter":   orig[:size-1],
			"emptied":   {},
		} {
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, now, 0o644); err != nil {
				t.Fatal(err)
			}
			b := v.newBatch()
			err := b.putFile(p, int64(size), want)
			if err == nil || !strings.Contains(err.Error(), "changed while it was being published") {
				t.Errorf("%d bytes, %s: err = %v, want the file named as changed", size, name, err)
			}
			if _, ok := b.sources.data[want]; ok {
				t.Errorf("%d bytes, %s: the changed bytes were kept for the checkout", size, name)
			}
			b.abort()
		}
		// Unchanged: a small file's bytes are kept for the checkout, a
		// large one is copied from its path.
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		b := v.newBatch()
		if err := b.putFile(p, int64(size), want); err != nil {
			t.Fatalf("%d bytes unchanged: %v", size, err)
		}
		data, kept := b.sources.data[want]
		if kept != (size <= maxInlineFile) || (kept && !bytes.Equal(data, orig)) {
			t.Errorf("%d bytes: kept for the checkout = %v (%d bytes), want %v", size, kept, len(data), size <= maxInlineFile)
		}
		b.abort()
	}
}

// TestPutFileHoldsABoundedBudget: the bytes a batch keeps from the files it
// read, for its checkout, stop at maxInlineFiles however many files it
// publishes; the files past it are still stored (and copied from their
// paths by the checkout).
func TestPutFileHoldsABoundedBudget(t *testing.T) {
	v := newVault(t)
	dir := t.TempDir()
	b := v.newBatch()
	defer b.abort()
	n := maxInlineFiles/maxInlineFile + 8
	for i := 0; i < n; i++ {
		data := bytes.Repeat([]byte{byte(i)}, maxInlineFile)
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.putFile(p, int64(len(data)), objectHash(plumbing.BlobObject, data)); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, d := range b.sources.data {
		held += len(d)
	}
	if held > maxInlineFiles {
		t.Fatalf("a batch of %d files of 1 MiB holds %d MiB for its checkout; want at most %d MiB", n, held>>20, maxInlineFiles>>20)
	}
	if len(b.sources.paths) != n {
		t.Fatalf("%d of %d files have a path to copy from", len(b.sources.paths), n)
	}
}
