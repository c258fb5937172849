package published

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// sampleCache returns the bytes of a small cache built from fixed entries:
// a base of a/b.json and z.txt with the directories a and old, then a
// delta that adds m.txt and removes z.txt and old.
func sampleCache() []byte {
	buf := cacheHeader("/vault/published/node", "truth-v1\nblake3\nspec")
	w := newBlock(buf, blockBase)
	e := Entry{Path: "a/b.json", Size: 3}
	e.Sum[0], e.GitOID[0] = 1, 2
	fp := fileFP{kept: true, subs: []subDigest{{facet: 1, present: true}, {facet: 2}}}
	fp.digest[0] = 3
	w.add(&e, fileStat{size: 3, mtime: 1700000000123456789, ctime: 1700000000123456789, ino: 42, mode: 0o100644}, flagRacy, &fp)
	e2 := Entry{Path: "z.txt", Size: 1}
	w.add(&e2, fileStat{size: 1, mtime: 5, ctime: 6, ino: 7, mode: 0o100755}, flagLink, &fileFP{})
	w.dirs([]dirRecord{{path: "a", kept: true, digest: canon.Digest{4}, tree: [32]byte{5}}, {path: "old"}})
	buf = w.finish(nil, nil)
	d := newBlock(buf, blockDelta)
	e3 := Entry{Path: "m.txt", Size: 2}
	d.add(&e3, fileStat{size: 2, mtime: 8, ctime: 9, ino: 10, mode: 0o100644}, 0, &fileFP{kept: true})
	return d.finish([]string{"z.txt"}, []string{"old"})
}

func TestCacheFormatGolden(t *testing.T) {
	data := sampleCache()
	golden := filepath.Join("testdata", "cache-v3.hex")
	if *update {
		if err := os.WriteFile(golden, []byte(hex.Dump(data)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.Dump(data); got != string(want) {
		t.Fatalf("cache format changed (bump cacheVersion, then run with -update):\n%s", got)
	}
	c, err := parseCache(data, "/vault/published/node", "truth-v1\nblake3\nspec")
	if err != nil {
		t.Fatal(err)
	}
	if c.len() != 2 || c.recs[0].path != "a/b.json" || c.recs[1].path != "m.txt" || c.deltas != 1 || c.torn {
		t.Fatalf("entries = %+v, deltas %d, torn %v", c.recs, c.deltas, c.torn)
	}
	if st := c.stat(0); st != (fileStat{size: 3, mtime: 1700000000123456789, ctime: 1700000000123456789, ino: 42, mode: 0o100644}) {
		t.Errorf("stat = %+v", st)
	}
	if c.flags(0) != flagRacy|flagKept || c.flags(1) != flagKept {
		t.Errorf("flags = %b %b", c.flags(0), c.flags(1))
	}
	var e Entry
	var fp fileFP
	c.fill(0, &e, &fp)
	if e.Sum[0] != 1 || e.GitOID[0] != 2 || fp.digest[0] != 3 || !fp.kept || len(fp.subs) != 2 ||
		fp.subs[0] != (subDigest{facet: 1, present: true}) || fp.subs[1] != (subDigest{facet: 2}) {
		t.Errorf("fill gave %+v %+v", e, fp)
	}
	c.fill(1, &e, &fp)
	if !fp.kept || fp.subs != nil {
		t.Errorf("fill gave %+v", fp)
	}
	if r, ok := c.dir("a"); !ok || r != (dirRecord{path: "a", kept: true, digest: canon.Digest{4}, tree: [32]byte{5}}) {
		t.Errorf("dir a = %+v %v", r, ok)
	}
	if _, ok := c.dir("old"); ok {
		t.Error("removed directory old is still cached")
	}

	// A torn delta ends the load; what came before it stands.
	torn, err := parseCache(data[:len(data)-3], "/vault/published/node", "truth-v1\nblake3\nspec")
	if err != nil {
		t.Fatal(err)
	}
	if !torn.torn || torn.len() != 2 || torn.recs[1].path != "z.txt" {
		t.Errorf("torn delta: torn %v, entries %+v", torn.torn, torn.recs)
	}
}

func TestCacheRejects(t *testing.T) {
	good := sampleCache()
	root, id := "/vault/published/node", "truth-v1\nblake3\nspec"
	if _, err := parseCache(good, root, id); err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	tests := map[string]struct {
		data     []byte
		root, id string
	}{
		"empty":         {nil, root, id},
		"magic":         {flip(0), root, id},
		"version":       {flip(8), root, id},
		"base byte":     {flip(len(cacheHeader(root, id)) + 20), root, id},
		"base checksum": {good[:len(cacheHeader(root, id))+10], root, id},
		"other dir":     {good, "/elsewhere", id},
		"other setup":   {good, root, "truth-v1\nsha256\nspec"},
		"foreign bytes": {[]byte(strings.Repeat("PRSCACHE", 10)), root, id},
	}
	for name, tc := range tests {
		if c, err := parseCache(tc.data, tc.root, tc.id); err == nil {
			t.Errorf("%s: accepted (%d entries)", name, c.len())
		}
	}
}

func TestScanCorruptCache(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a/x.json": `{"v": 1}`, "b/y.txt": "y", "z.md": "z"})
	settle()
	cache := filepath.Join(t.TempDir(), "scan")
	opt := Options{CachePath: cache}
	want := mustScan(t, dir, opt)
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	corruptions := map[string][]byte{
		"flipped digest": func() []byte { b := bytes.Clone(good); b[len(b)-40] ^= 1; return b }(),
		"truncated":      good[:len(good)/2],
		"garbage":        []byte("not a cache at all"),
		"empty":          {},
	}
	for name, data := range corruptions {
		if err := os.WriteFile(cache, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := mustScan(t, dir, opt)
		if s.Stats.Hashed != 3 || s.Stats.CacheHits != 0 {
			t.Errorf("%s: stats %+v, want the cache ignored and every file read", name, s.Stats)
		}
		if s.Version != want.Version || s.Fingerprints[canon.Atomic] != want.Fingerprints[canon.Atomic] {
			t.Errorf("%s: a corrupt cache changed the result", name)
		}
		if s := mustScan(t, dir, opt); s.Stats.Hashed != 0 {
			t.Errorf("%s: the cache was not rebuilt (%+v)", name, s.Stats)
		}
	}
	// A cache written for another directory is not used.
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"a/x.json": `{"v": 1}`})
	if s := mustScan(t, other, opt); s.Stats.Hashed != 1 {
		t.Errorf("another directory's cache was used: %+v", s.Stats)
	}
	// An unwritable cache location is not an error.
	blocker := filepath.Join(t.TempDir(), "file")
	writeFiles(t, filepath.Dir(blocker), map[string]string{"file": "x"})
	if _, err := Scan(dir, Options{CachePath: filepath.Join(blocker, "scan")}); err != nil {
		t.Errorf("unwritable cache: %v", err)
	}
}

func FuzzParseCache(f *testing.F) {
	f.Add(sampleCache())
	f.Add([]byte("PRSCACHE"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCache(data, "/vault/published/node", "truth-v1\nblake3\nspec")
		if err != nil {
			return
		}
		for i := range c.len() {
			var e Entry
			var fp fileFP
			c.stat(i)
			c.flags(i)
			c.fill(i, &e, &fp)
		}
	})
}

func TestScanCacheDeltas(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%10, i)] = fmt.Sprint("file ", i)
	}
	writeFiles(t, dir, files)
	settle()
	cache := filepath.Join(t.TempDir(), "scan")
	opt := Options{CachePath: cache}
	mustScan(t, dir, opt)
	base, err := os.Stat(cache)
	if err != nil {
		t.Fatal(err)
	}
	var maxSize int64
	for i := range 100 {
		p := fmt.Sprintf("d%d/f%03d.txt", i%10, (i*7)%200)
		writeFile(t, dir, p, fmt.Sprint("edit ", i))
		if i%9 == 0 {
			os.Remove(filepath.Join(dir, fmt.Sprintf("d%d/f%03d.txt", (i+3)%10, (i*13+3)%200)))
		}
		settle()
		s := mustScan(t, dir, opt)
		if s.Stats.Hashed != 1 {
			t.Fatalf("edit %d: read %d files, want 1", i, s.Stats.Hashed)
		}
		plain := mustScan(t, dir, Options{})
		if !slices.Equal(s.Entries, plain.Entries) || !maps.Equal(s.Fingerprints, plain.Fingerprints) {
			t.Fatalf("edit %d: cached scan differs from a plain scan", i)
		}
		fi, err := os.Stat(cache)
		if err != nil {
			t.Fatal(err)
		}
		maxSize = max(maxSize, fi.Size())
	}
	if maxSize > 2*base.Size() {
		t.Errorf("cache grew to %d bytes from a base of %d: deltas are not compacted", maxSize, base.Size())
	}
	if s := mustScan(t, dir, opt); s.Stats.Hashed != 0 {
		t.Errorf("a scan after the edits read %d files", s.Stats.Hashed)
	}

	// Garbage after the last good block: the good part is used, and the
	// next write rewrites the file.
	f, err := os.OpenFile(cache, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\x20\x00\x00\x00torn"))
	f.Close()
	writeFile(t, dir, "d0/new.txt", "new")
	if s := mustScan(t, dir, opt); s.Stats.Hashed != 1 {
		t.Errorf("after a torn tail read %d files, want 1", s.Stats.Hashed)
	}
	data, _ := os.ReadFile(cache)
	c, err := parseCache(data, mustAbs(t, dir), cacheID(canon.BLAKE3, nil, nil))
	if err != nil || c.torn || c.deltas != 0 {
		t.Errorf("torn cache was not rewritten: err %v, torn %v, deltas %d", err, c != nil && c.torn, c.deltas)
	}
}

func mustAbs(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// A delta goes only onto the file as it was loaded: when another scan has
// appended since, the append is refused (and the scan rewrites the file
// whole from what it verified).
func TestCacheAppendsOnlyOntoWhatItLoaded(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "d/b.txt": "b"})
	settle()
	cache := filepath.Join(t.TempDir(), "scan")
	opt := Options{CachePath: cache}
	mustScan(t, dir, opt)
	root, _ := filepath.Abs(dir)
	id := cacheID("", nil, nil)
	c := loadCache(cache, root, id)
	if c == nil {
		t.Fatal("the cache did not load")
	}
	delta := newBlock(nil, blockDelta).finish([]string{"a.txt"}, nil)
	// Another scan appends first.
	if err := appendCacheFile(cache, loadCache(cache, root, id), delta); err != nil {
		t.Fatal(err)
	}
	if err := appendCacheFile(cache, c, delta); !errors.Is(err, errStaleCache) {
		t.Fatalf("append onto a cache another scan appended to: %v, want errStaleCache", err)
	}
	// Reloaded, it appends.
	if err := appendCacheFile(cache, loadCache(cache, root, id), delta); err != nil {
		t.Fatal(err)
	}
}
