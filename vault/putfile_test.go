package vault

import (
	"bytes"
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
