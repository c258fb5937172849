package vault

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// unreachable counts the objects git finds reachable from no ref (nor
// from the reflogs' entries, which prose never writes).
func unreachable(t *testing.T, v *Vault) []string {
	t.Helper()
	out := strings.TrimSpace(git(t, v.Root(), "fsck", "--unreachable", "--no-reflogs", "--no-progress"))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// TestAWriteStoresOnlyWhatItCommits: a node write with many changes in
// many folders and many files outside the node (an ingest's source
// records) writes only the trees its commit reaches: it builds no tree it
// then replaces (each directory on the way is rewritten once), and git
// finds no unreachable object after it.
func TestAWriteStoresOnlyWhatItCommits(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	ctx := context.Background()
	for round := 0; round < 2; round++ {
		changes := map[string][]byte{}
		files := map[string][]byte{}
		for i := 0; i < 300; i++ {
			changes[fmt.Sprintf("f%02d/g%d/page-%03d.html", i%25, i%3, i)] = fmt.Appendf(nil, "page %d round %d", i, round)
			files[fmt.Sprintf("sources/%02x/src-%03d.json", i%16, i)] = fmt.Appendf(nil, `{"source": %d, "round": %d}`, i, round)
		}
		files["review/queue.json"] = fmt.Appendf(nil, `{"round": %d}`, round)
		before := v.treesDropped.Load()
		res, err := v.WriteNode(ctx, "wiki", changes, WriteOptions{Files: files})
		if err != nil {
			t.Fatal(err)
		}
		if res.Commit.IsZero() {
			t.Fatal("the write committed nothing")
		}
		if n := v.treesDropped.Load() - before; n != 0 {
			t.Fatalf("round %d: the write built %d trees its commit does not reach", round, n)
		}
		if u := unreachable(t, v); len(u) != 0 {
			t.Fatalf("round %d: %d unreachable objects after the write, e.g. %s", round, len(u), u[0])
		}
	}
	if _, err := v.CommitFiles(ctx, "test", "files\n", map[string][]byte{"dist/a/x.json": []byte("1"), "dist/a/y.json": []byte("2"), "dist/b/z.json": []byte("3")}); err != nil {
		t.Fatal(err)
	}
	if u := unreachable(t, v); len(u) != 0 {
		t.Fatalf("%d unreachable objects after CommitFiles, e.g. %s", len(u), u[0])
	}
}

// TestABatchWritesOnlyTheTreesItsCommitsReach: trees a batch builds on the
// way to its final tree (one path set at a time) are held, and only those
// a commit of the batch reaches are written.
func TestABatchWritesOnlyTheTreesItsCommitsReach(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	tip, err := v.readRef(v.Branch())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := v.commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	b := v.newBatch()
	root := tc.TreeHash
	for i := 0; i < 150; i++ { // 150 roots and 150 dist/ trees, one kept
		bh, err := b.put(plumbing.BlobObject, fmt.Appendf(nil, "file %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if root, err = b.setPath(root, fmt.Sprintf("dist/f%03d", i), object.TreeEntry{Mode: filemode.Regular, Hash: bh}); err != nil {
			t.Fatal(err)
		}
	}
	sig := v.signature(tc.Committer.When)
	ch, err := b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: "files\n", TreeHash: root, ParentHashes: []plumbing.Hash{tip}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.moveRef(v.Branch(), tip, ch); err != nil {
		t.Fatal(err)
	}
	if u := unreachable(t, v); len(u) != 0 {
		t.Fatalf("%d unreachable objects after the batch, e.g. %s", len(u), u[0])
	}
	if got := git(t, v.Root(), "ls-tree", "-r", "--name-only", ch.String(), "dist"); strings.Count(got, "dist/f") != 150 {
		t.Fatalf("the commit holds %d of the 150 files under dist/:\n%s", strings.Count(got, "dist/f"), got)
	}
	if n := v.treesDropped.Load(); n != 2*149 {
		t.Fatalf("%d trees dropped, want the %d built on the way", n, 2*149)
	}
}
