package vault

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// After git gc packs everything, a vault reads every file of a node from
// the pack through one shared open file, and reads them right.
func TestPackfileIsOpenedOncePerVault(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{}
	for _, d := range []string{"a", "b", "c", "d"} {
		for _, f := range []string{"1", "2", "3"} {
			files[d+"/"+f+".txt"] = strings.Repeat(d+f, 100)
		}
	}
	writeTree(t, src, files)
	publish(t, v, "n", src, PublishOptions{})
	git(t, v.Root(), "gc", "-q")

	v2, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	_, tree, err := v2.NodeHead("n")
	if err != nil {
		t.Fatal(err)
	}
	got, err := v2.NodeFiles(tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Fatalf("%d files, want %d", len(got), len(files))
	}
	for p, want := range files {
		data, ok, err := v2.NodeFile(tree, p)
		if err != nil || !ok || string(data) != want {
			t.Fatalf("%s: %q %v %v, want %q", p, data, ok, err, want)
		}
	}
	v2.packs.mu.Lock()
	open := len(v2.packs.packs)
	v2.packs.mu.Unlock()
	if open != 1 {
		t.Fatalf("%d packfiles held open after reading from one pack, want 1", open)
	}
	if err := v2.Close(); err != nil || len(v2.packs.packs) != 0 {
		t.Fatalf("Close: %v, %d packfiles still open", err, len(v2.packs.packs))
	}
	// Usable after Close: the pack is opened again.
	if data, ok, err := v2.NodeFile(tree, "a/1.txt"); err != nil || !ok || string(data) != files["a/1.txt"] {
		t.Fatalf("after Close: %q %v %v", data, ok, err)
	}
}

// Cursors over one shared packfile keep offsets of their own, so readers
// at once never see each other's bytes.
func TestPackCursorsReadIndependently(t *testing.T) {
	dir := t.TempDir()
	content := make([]byte, 1<<16)
	for i := range content {
		content[i] = byte(i * 7)
	}
	if err := os.MkdirAll(filepath.Join(dir, "objects", "pack"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("objects", "pack", "pack-x.pack")
	if err := os.WriteFile(filepath.Join(dir, name), content, 0o444); err != nil {
		t.Fatal(err)
	}
	fs := newPackFS(nil, dir)
	defer fs.close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			f, err := fs.Open(name)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			start := int64(g * 4096)
			if _, err := f.Seek(start, io.SeekStart); err != nil {
				t.Error(err)
				return
			}
			buf := make([]byte, 1000)
			for off := start; off+1000 <= int64(len(content)); off += 1000 {
				if _, err := io.ReadFull(f, buf); err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(buf, content[off:off+1000]) {
					t.Errorf("cursor %d read wrong bytes at %d", g, off)
					return
				}
			}
			if end, _ := f.Seek(0, io.SeekEnd); end != int64(len(content)) {
				t.Errorf("SeekEnd = %d", end)
			}
			if n, err := f.Read(buf); n != 0 || err != io.EOF {
				t.Errorf("read at the end: %d %v", n, err)
			}
			if _, err := f.Write([]byte("x")); err == nil {
				t.Error("a pack cursor accepted a write")
			}
		})
	}
	wg.Wait()
	if len(fs.packs) != 1 {
		t.Fatalf("%d shared files, want 1", len(fs.packs))
	}
}
