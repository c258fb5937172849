package published

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/canon"
)

// Snapshot.Dirs holds each directory's version: the version address of the
// entries below it, taken relative to it.
func TestSnapshotDirsAreSubtreeVersions(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a/x.txt": "1", "a/b/y.txt": "2", "c/z.json": `{"k": 1}`, "root.md": "r"}
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
		old := time.Now().Add(-time.Hour)
		os.Chtimes(full, old, old)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	check := func(snap *Snapshot, want []string) {
		t.Helper()
		for _, d := range want {
			var sub []Entry
			for _, e := range snap.Entries {
				if strings.HasPrefix(e.Path, d+"/") {
					e.Path = strings.TrimPrefix(e.Path, d+"/")
					sub = append(sub, e)
				}
			}
			v, ok := snap.Dirs[d]
			if !ok {
				t.Fatalf("Dirs lacks %q: %v", d, snap.Dirs)
			}
			if got, want := "blake3:"+hex.EncodeToString(v[:]), VersionOf(sub); got != want {
				t.Fatalf("Dirs[%q] = %s, want %s", d, got, want)
			}
		}
	}
	snap, err := Scan(dir, Options{CachePath: cache})
	if err != nil {
		t.Fatal(err)
	}
	check(snap, []string{"a", "a/b", "c"})
	// A second scan after an edit under c takes a whole from the cache.
	os.WriteFile(filepath.Join(dir, "c", "z.json"), []byte(`{"k": 2}`), 0o644)
	snap, err = Scan(dir, Options{CachePath: cache})
	if err != nil {
		t.Fatal(err)
	}
	check(snap, []string{"a", "c"})
}

func TestReservedAtomicDirectoryAndRootChange(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "@atomic"), 0o755)
	os.WriteFile(filepath.Join(dir, "@atomic", "x.json"), []byte("1"), 0o644)
	if _, err := Scan(dir, Options{}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("@atomic directory: %v", err)
	}
	os.RemoveAll(filepath.Join(dir, "@atomic"))
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	cache := filepath.Join(t.TempDir(), "cache")
	if _, err := Scan(dir, Options{CachePath: cache}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b"), 0o644)
	for _, root := range []string{".", "", "./"} {
		snap, err := Scan(dir, Options{CachePath: cache, Changed: []string{root}})
		if err != nil || len(snap.Entries) != 2 {
			t.Fatalf("Changed [%q]: %v, %d entries", root, err, len(snap.Entries))
		}
	}
}

// A wholly immaterial top-level directory is no facet: adding it moves no
// token and the publish is skipped.
func TestImmaterialDirectoryIsNoFacet(t *testing.T) {
	spec, err := canon.ParseSpec([]byte(`{"node":"n","default_material":false,"fields":[{"path":"data","material":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "a.json"), []byte(`{"v": 1}`), 0o644)
	before, err := Scan(dir, Options{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "scratch"), 0o755)
	os.WriteFile(filepath.Join(dir, "scratch", "log.txt"), []byte("noise"), 0o644)
	after, err := Scan(dir, Options{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if status, moved := Decide(before.Fingerprints, true, after); status != StatusSkipped {
		t.Fatalf("adding an immaterial directory: %s %v (facets %v)", status, moved, after.Facets)
	}
}
