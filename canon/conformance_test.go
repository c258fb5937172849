package canon

import (
	"github.com/prose-store/prose/internal/refdata"

	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReferenceReceiptHashes re-hashes every receipt of the reference
// reactor's ledgers: content_hash is the sha256 token of the canonical JSON
// of the receipt without its content_hash key. This checks Decode and Marshal
// against thousands of records JavaScript wrote.
func TestReferenceReceiptHashes(t *testing.T) {
	root := filepath.Join(refdata.Shared(t), "reference-data", "reactor")
	files, receipts := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "receipts.json" {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		v, err := Decode(data)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		list, ok := v.([]any)
		if !ok {
			t.Errorf("%s: not a JSON array", path)
			return nil
		}
		for i, item := range list {
			r, ok := item.(map[string]any)
			if !ok {
				t.Errorf("%s: receipt %d is not an object", path, i)
				continue
			}
			receipts++
			want, _ := r["content_hash"].(string)
			rest := make(map[string]any, len(r))
			for k, v := range r {
				if k != "content_hash" {
					rest[k] = v
				}
			}
			b, err := Marshal(rest)
			if err != nil {
				t.Errorf("%s: receipt %d: %v", path, i, err)
				continue
			}
			if got := SHA256.Token(b); got != want {
				t.Errorf("%s: receipt %d: content_hash %s, canonical JSON hashes to %s", path, i, want, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d receipts in %d ledgers", receipts, files)
	if files != 20 || receipts != 7216 {
		t.Errorf("found %d receipts in %d ledgers, want 7216 in 20", receipts, files)
	}
}
