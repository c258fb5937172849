package vault

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/canon"
)

// TestImmaterialRewriteReadsNoCommittedFile: a render that rewrites a file
// with an immaterial difference gives a tree the branch does not hold, so
// the hand-commit check must know the committed tree's fingerprints. For a
// node with a spec, the memo written by the publish answers it without
// reading the committed world-model; a damaged memo is ignored and
// rebuilt. A node without a spec is answered by its tree sums, memo or not.
func TestImmaterialRewriteReadsNoCommittedFile(t *testing.T) {
	spec, err := canon.ParseSpec([]byte(`{"facets": [{"facet": "x", "paths": ["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{"a.json": `{"x": 1}`, "b.md": "b"})
	first := publish(t, v, "n", src, PublishOptions{Spec: spec})
	tree, ok, err := v.lookup(mustTip(t, v), "published/n")
	if err != nil || !ok {
		t.Fatalf("published/n on the branch: %v %v", ok, err)
	}
	memo := v.fingerprintMemo("n", spec, nil)
	got, ok := memo.recall(tree.Hash)
	if !ok {
		t.Fatal("the publish left no fingerprint memo for the tree it committed")
	}
	want, err := v.committedFingerprints(context.Background(), tree.Hash, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) || !maps.Equal(got, first.Receipt.Fingerprints) {
		t.Fatalf("memo %v; the committed tree fingerprints to %v, the receipt says %v", got, want, first.Receipt.Fingerprints)
	}

	os.WriteFile(filepath.Join(src, "a.json"), []byte(`{"x":1}`), 0o644)
	before := committedReads.Load()
	if res := publish(t, v, "n", src, PublishOptions{}); res.Receipt.Status != "skipped" {
		t.Fatalf("immaterial rewrite: %s, want skipped", res.Receipt.Status)
	}
	if n := committedReads.Load() - before; n != 0 {
		t.Fatalf("an immaterial rewrite read the committed world-model %d times; the memo should answer", n)
	}

	data, err := os.ReadFile(memo.path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	os.WriteFile(memo.path, data, 0o644)
	before = committedReads.Load()
	if res := publish(t, v, "n", src, PublishOptions{}); res.Receipt.Status != "skipped" {
		t.Fatalf("with a damaged memo: %s, want skipped", res.Receipt.Status)
	}
	if n := committedReads.Load() - before; n != 1 {
		t.Fatalf("a damaged memo was trusted (%d reads of the committed world-model, want 1)", n)
	}
	if _, ok := memo.recall(tree.Hash); !ok {
		t.Fatal("the memo was not written again after the read")
	}

	// A memo for another setup (no spec) is not used.
	if _, ok := v.fingerprintMemo("n", nil, nil).recall(tree.Hash); ok {
		t.Fatal("a memo recorded under a spec answered for no spec")
	}

	// Without a spec: the tree sums answer, with the memo gone.
	v2 := newVault(t)
	src2 := filepath.Join(t.TempDir(), "render")
	writeTree(t, src2, map[string]string{"a.json": `{"x": 1}`, "d/b.md": "b"})
	publish(t, v2, "n", src2, PublishOptions{})
	os.Remove(v2.fingerprintMemo("n", nil, nil).path)
	os.WriteFile(filepath.Join(src2, "a.json"), []byte(`{"x":1}`), 0o644)
	before = committedReads.Load()
	if res := publish(t, v2, "n", src2, PublishOptions{}); res.Receipt.Status != "skipped" {
		t.Fatalf("no spec, immaterial rewrite: %s, want skipped", res.Receipt.Status)
	}
	if n := committedReads.Load() - before; n != 0 {
		t.Fatalf("no spec: the committed world-model was read %d times; the tree sums should answer", n)
	}
}

func mustTip(t *testing.T, v *Vault) plumbing.Hash {
	t.Helper()
	tip, err := v.readRef(v.Branch())
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	return c.TreeHash
}
