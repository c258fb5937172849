package vault

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// goGitBlob reads blob h through go-git alone.
func goGitBlob(t *testing.T, v *Vault, h plumbing.Hash) []byte {
	t.Helper()
	bl, err := object.GetBlob(v.storage, h)
	if err != nil {
		t.Fatal(err)
	}
	r, err := bl.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A blob is read without go-git when stored whole, loose or in a pack (a
// pack git wrote, with deltas), and reads the bytes go-git reads; a delta
// is left to go-git.
func TestBlobsReadWithoutGoGitAreGoGitsBytes(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	changes := map[string][]byte{}
	for i := range 40 {
		// Similar files, so that git's repack stores some as deltas.
		changes[fmt.Sprintf("d%d/f%02d.txt", i%4, i)] = []byte(strings.Repeat(fmt.Sprintf("line of file %d, mostly the same text as its neighbours\n", i%3), 60) + fmt.Sprint(i))
	}
	changes["empty.txt"] = []byte{}
	if _, err := v.WriteNode(context.Background(), "notes", changes, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, tree, err := v.NodeHead("notes")
	if err != nil {
		t.Fatal(err)
	}
	files, err := v.NodeFiles(tree)
	if err != nil || len(files) != len(changes) {
		t.Fatalf("%d files, %v", len(files), err)
	}
	check := func(stage string, v *Vault) (fast int) {
		for p, h := range files {
			want := goGitBlob(t, v, h)
			if !bytes.Equal(want, changes[p]) {
				t.Fatalf("%s: go-git reads %s wrong", stage, p)
			}
			if got, ok := v.fastBlob(h); ok {
				fast++
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: %s read without go-git differs", stage, p)
				}
			}
			if got, err := v.Blob(h); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: Blob(%s) differs (%v)", stage, p, err)
			}
		}
		return fast
	}
	if n := check("loose", v); n != len(files) {
		t.Fatalf("loose: %d of %d blobs read without go-git", n, len(files))
	}
	git(t, v.Root(), "gc", "-q", "--prune=now")
	v.Close()
	v2, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	n := check("packed", v2)
	if n == 0 || n == len(files) {
		t.Fatalf("packed: %d of %d blobs read without go-git (want the whole ones, not the deltas)", n, len(files))
	}
}

// Trees and commits stored whole, loose or packed, are read without go-git
// and decode as go-git decodes them; a delta is left to go-git.
func TestTreesAndCommitsReadWithoutGoGitAreGoGits(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	for round := range 6 {
		changes := map[string][]byte{}
		for i := range 12 {
			changes[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = []byte(fmt.Sprintf("round %d, file %d\n", round, i))
		}
		if _, err := v.WriteNode(context.Background(), "notes", changes, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(args ...string) []plumbing.Hash {
		var out []plumbing.Hash
		for _, f := range strings.Fields(git(t, v.Root(), args...)) {
			if len(f) == 40 {
				out = append(out, plumbing.NewHash(f))
			}
		}
		return out
	}
	commits := ids("rev-list", "HEAD")
	trees := ids("log", "--format=%T", "-3")
	for _, l := range strings.Split(git(t, v.Root(), "ls-tree", "-r", "-t", "HEAD"), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[1] == "tree" {
			trees = append(trees, plumbing.NewHash(f[2]))
		}
	}
	check := func(stage string, v *Vault) (fast int) {
		for _, h := range commits {
			want, err := object.GetCommit(v.storage, h)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := v.fastObject(h, plumbing.CommitObject); ok {
				fast++
			}
			got, err := v.commit(h)
			if err != nil || got.Hash != want.Hash || got.TreeHash != want.TreeHash || got.Message != want.Message ||
				fmt.Sprint(got.ParentHashes) != fmt.Sprint(want.ParentHashes) || got.Author.String() != want.Author.String() {
				t.Fatalf("%s: commit %s read as %+v (%v), go-git reads %+v", stage, h, got, err, want)
			}
		}
		for _, h := range trees {
			want, err := object.GetTree(v.storage, h)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := v.fastObject(h, plumbing.TreeObject); ok {
				fast++
			}
			got, err := v.tree(h)
			if err != nil || got.Hash != want.Hash || fmt.Sprint(got.Entries) != fmt.Sprint(want.Entries) {
				t.Fatalf("%s: tree %s read as %v (%v), go-git reads %v", stage, h, got, err, want)
			}
			if _, err := got.File("f00.txt"); err != nil && len(got.Entries) > 0 && got.Entries[0].Name == "f00.txt" {
				t.Fatalf("%s: tree %s cannot look its files up: %v", stage, h, err)
			}
		}
		// A blob is not a tree, nor a commit.
		if _, ok := v.fastObject(commits[0], plumbing.TreeObject); ok {
			t.Fatalf("%s: commit %s read as a tree", stage, commits[0])
		}
		return fast
	}
	if n := check("loose", v); n != len(commits)+len(trees) {
		t.Fatalf("loose: %d of %d trees and commits read without go-git", n, len(commits)+len(trees))
	}
	git(t, v.Root(), "gc", "-q", "--prune=now")
	v.Close()
	v2, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if n := check("packed", v2); n == 0 {
		t.Fatalf("packed: no tree or commit read without go-git")
	}
}
