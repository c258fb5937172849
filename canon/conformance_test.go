package canon

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// sharedDir returns the project's shared reference directory, ../shared
// beside the repository root. When it is absent the test is skipped, except
// in CI (CI=true), where missing conformance data is a failure.
func sharedDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(root, "..", "shared")
	if _, err := os.Stat(filepath.Join(dir, "reference-data")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("conformance data missing in CI: %v", err)
		}
		t.Skipf("conformance data not present (%v)", err)
	}
	return dir
}

// TestReferenceReceiptHashes re-hashes every receipt of the reference
// reactor's ledgers: content_hash is the sha256 token of the canonical JSON
// of the receipt without its content_hash key. This checks Decode and Marshal
// against thousands of records JavaScript wrote.
func TestReferenceReceiptHashes(t *testing.T) {
	root := filepath.Join(sharedDir(t), "reference-data", "reactor")
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
