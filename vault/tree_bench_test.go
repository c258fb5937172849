package vault

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

func BenchmarkHashDir10k(b *testing.B) {
	var files []FileEntry
	for i := 0; i < 10000; i++ {
		files = append(files, FileEntry{Path: fmt.Sprintf("facet%02d/d%03d/f%05d.md", i%10, (i/10)%100, i), Mode: filemode.Regular, OID: plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprint(i)))})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		(*treeHasher)(nil).hashDir(files, 0, "")
	}
}

// BenchmarkHashDir10kOneChange hashes a 10,000-file tree whose every
// directory but those above one changed file is in the tree cache: the
// informed publish's case. Its cost must not grow with the files below the
// cached directories.
func BenchmarkHashDir10kOneChange(b *testing.B) {
	var files []FileEntry
	versions := map[string][32]byte{}
	for i := 0; i < 10000; i++ {
		files = append(files, FileEntry{Path: fmt.Sprintf("facet%02d/d%03d/f%05d.md", i%10, (i/10)%100, i), Mode: filemode.Regular, OID: plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprint(i)))})
		for d := files[i].Path; ; {
			j := strings.LastIndexByte(d, '/')
			if j < 0 {
				break
			}
			d = d[:j]
			versions[d] = sha256.Sum256([]byte(d))
		}
	}
	versions[""] = sha256.Sum256(nil)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	learn := &treeHasher{versions: versions, cache: &treeCache{m: map[[32]byte]plumbing.Hash{}}}
	learn.hashDir(files, 0, "")
	cache := &treeCache{m: learn.learned}
	for _, d := range []string{"", "facet03", "facet03/d042"} {
		delete(cache.m, versions[d])
	}
	b.ResetTimer()
	for b.Loop() {
		th := &treeHasher{versions: versions, cache: cache}
		th.hashDir(files, 0, "")
	}
}

func TestObjectHashMatchesGit(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("hello\n"), make([]byte, 100000)} {
		for _, typ := range []plumbing.ObjectType{plumbing.BlobObject, plumbing.TreeObject, plumbing.CommitObject} {
			if got, want := objectHash(typ, data), plumbing.ComputeHash(typ, data); got != want {
				t.Fatalf("%s of %d bytes: %s, want %s", typ, len(data), got, want)
			}
		}
	}
}

func BenchmarkIndex10k(b *testing.B) {
	idx := &gitIndex{ver: 2}
	var names []string
	for i := 0; i < 10000; i++ {
		names = append(names, fmt.Sprintf("published/wm/facet%02d/d%03d/f%05d.md", i%10, (i/10)%100, i))
		idx.put(indexEntry{Name: names[i], Mode: 0o100644})
	}
	sort.Strings(names)
	data := idx.encode()
	b.Run("parse", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := parseIndex(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			idx.encode()
		}
	})
	b.Run("patch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			idx.put(indexEntry{Name: names[4242], Mode: 0o100644, Size: uint32(i)})
		}
	})
}

// With the tree cache, a republish re-encodes only changed directories, and
// the trees are the same as those encoded from scratch.
func TestTreeCacheGivesTheSameTrees(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("f%d/d%d/x%d.txt", i%3, i%5, i)] = fmt.Sprint(i)
	}
	writeTree(t, src, files)
	publish(t, v, "n", src, PublishOptions{})
	for k := 0; k < 3; k++ {
		files[fmt.Sprintf("f1/d%d/x%d.txt", k, 100+k)] = "new"
		delete(files, fmt.Sprintf("f%d/d%d/x%d.txt", k%3, k%5, k))
		writeTree(t, src, files)
		publish(t, v, "n", src, PublishOptions{})
		if c := v.loadTreeCache(); len(c.m) == 0 {
			t.Fatal("the tree cache learned nothing")
		}
		tip, _ := v.readRef(v.Branch())
		c, _ := v.commit(tip)
		e, ok, err := v.lookup(c.TreeHash, "published/n")
		if err != nil || !ok {
			t.Fatal(err)
		}
		var entries []FileEntry
		for p, content := range files {
			entries = append(entries, FileEntry{Path: p, Mode: filemode.Regular, OID: objectHash(plumbing.BlobObject, []byte(content))})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
		if want := (*treeHasher)(nil).hashDir(entries, 0, "").hash; e.Hash != want {
			t.Fatalf("round %d: node tree %s, encoded from scratch %s", k, e.Hash, want)
		}
	}
	checkGitClean(t, v)
}
