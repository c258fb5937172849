package published

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// sampleCache returns the bytes of a small cache built from fixed entries.
func sampleCache() []byte {
	w := newCacheWriter("/vault/published/node", "truth-v1\nblake3\nspec", 0)
	e := Entry{Path: "a/b.json", Size: 3}
	e.Sum[0], e.GitOID[0] = 1, 2
	fp := fileFP{kept: true, subs: []subDigest{{facet: 1, present: true}, {facet: 2}}}
	fp.digest[0] = 3
	w.add(&e, fileStat{size: 3, mtime: 1700000000123456789, ctime: 1700000000123456789, ino: 42, mode: 0o100644}, flagRacy, &fp)
	e2 := Entry{Path: "z.txt", Size: 1}
	w.add(&e2, fileStat{size: 1, mtime: 5, ctime: 6, ino: 7, mode: 0o100755}, flagLink, &fileFP{})
	return w.bytes()
}

func TestCacheFormatGolden(t *testing.T) {
	data := sampleCache()
	golden := filepath.Join("testdata", "cache-v1.hex")
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
	if c.len() != 2 || c.recs[0].path != "a/b.json" || c.recs[1].path != "z.txt" {
		t.Fatalf("entries = %+v", c.recs)
	}
	if st := c.stat(0); st != (fileStat{size: 3, mtime: 1700000000123456789, ctime: 1700000000123456789, ino: 42, mode: 0o100644}) {
		t.Errorf("stat = %+v", st)
	}
	if c.flags(0) != flagRacy|flagKept || c.flags(1) != flagLink {
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
	if fp.kept || fp.subs != nil {
		t.Errorf("fill gave %+v", fp)
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
		"body byte":     {flip(len(good) / 2), root, id},
		"checksum":      {flip(len(good) - 1), root, id},
		"truncated":     {good[:len(good)-10], root, id},
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
