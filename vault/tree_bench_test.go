package vault

import (
	"fmt"
	"sort"
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
		hashDir(files, 0, "")
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
	var body []byte
	var names []string
	for i := 0; i < 10000; i++ {
		names = append(names, fmt.Sprintf("published/wm/facet%02d/d%03d/f%05d.md", i%10, (i/10)%100, i))
	}
	sort.Strings(names)
	for _, n := range names {
		body = appendEntry(body, &indexEntry{Name: n, Mode: 0o100644})
	}
	idx.splice(0, 0, body)
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
