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
