package published

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/canon"
)

// past is the modification time test files get, far enough back that the
// stat cache never treats them as racy.
var past = time.Now().Add(-time.Hour).Truncate(time.Second).Add(123456789)

// writeFiles writes files (slash paths relative to dir) and dates them in
// the past.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		writeFile(t, dir, p, c)
	}
}

// writeFile writes one file and dates it in the past; each call moves the
// date by a nanosecond so that rewrites are seen even at equal size.
func writeFile(t testing.TB, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	past = past.Add(time.Microsecond)
	if err := os.Chtimes(full, past, past); err != nil {
		t.Fatal(err)
	}
	lastWrite = time.Now()
}

// lastWrite is when a test last dated a file in the past: its ctime is
// then, so the stat cache takes it as racy until the granularity has
// passed (see cache.go). mustScan waits that out.
var lastWrite time.Time

// scanTwice scans dir twice at once, without waiting out the racy window,
// and returns the second scan: what the first one recorded as racy, the
// second reads again.
func scanTwice(t *testing.T, dir string, opt Options) *Snapshot {
	t.Helper()
	for i := 0; ; i++ {
		s, err := Scan(dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			return s
		}
	}
}

// settle waits until files dated by writeFile are no longer racy.
func settle() {
	if d := time.Until(lastWrite.Add(time.Duration(racyFine) + 5*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks:", err)
	}
}

func mustScan(t testing.TB, dir string, opt Options) *Snapshot {
	t.Helper()
	s, err := Scan(dir, opt)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return s
}

func TestScanEntries(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.txt": "a", "a/b.txt": "ab", "a-b/c.txt": "abc", "z.sh": "#!/bin/sh\n",
	})
	if err := os.Chmod(filepath.Join(dir, "z.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := mustScan(t, dir, Options{})
	var paths []string
	for _, e := range s.Entries {
		paths = append(paths, e.Path)
	}
	want := []string{"a-b/c.txt", "a.txt", "a/b.txt", "z.sh"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths = %q, want %q (byte order)", paths, want)
	}
	for _, e := range s.Entries {
		wantMode := os.FileMode(0o644)
		if e.Path == "z.sh" {
			wantMode = 0o755
		}
		if e.Mode != wantMode {
			t.Errorf("%s: mode %v, want %v", e.Path, e.Mode, wantMode)
		}
		if e.Path == "a.txt" {
			// git hash-object of "a"
			if got := fmt.Sprintf("%x", e.GitOID); got != "2e65efe2a145dda7ee51d1741299f848e5bf752e" {
				t.Errorf("git blob id of %q = %s", "a", got)
			}
			if e.Size != 1 {
				t.Errorf("size = %d", e.Size)
			}
		}
	}
	if !slices.Equal(s.Facets, []string{"@atomic", "a", "a-b"}) {
		t.Errorf("facets = %q", s.Facets)
	}
	if s.Stats.Files != 4 || s.Stats.Hashed != 4 || s.Stats.BytesRead != int64(1+2+3+10) {
		t.Errorf("stats = %+v", s.Stats)
	}
}

func TestScanImmaterialChange(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"pages/home.json": `{"title": "Home", "updated": "2024-01-01"}`,
		"pages/about.md":  "About   us",
	})
	spec := &canon.Spec{Fields: []canon.Field{{Path: "pages.home.updated", Material: false}}}
	opt := Options{Spec: spec, CachePath: filepath.Join(t.TempDir(), "cache")}
	s1 := mustScan(t, dir, opt)
	writeFile(t, dir, "pages/home.json", `{"updated": "2025-06-30", "title": "Home"}`)
	writeFile(t, dir, "pages/about.md", "About us") // whitespace collapses
	s2 := mustScan(t, dir, opt)
	if !maps.Equal(s1.Fingerprints, s2.Fingerprints) {
		t.Errorf("immaterial change moved fingerprints:\n%v\n%v", s1.Fingerprints, s2.Fingerprints)
	}
	if s1.Version == s2.Version {
		t.Errorf("version did not change with the content")
	}
	if st, moved := Decide(s1.Fingerprints, true, s2); st != StatusSkipped || moved != nil {
		t.Errorf("Decide = %s %q, want skipped", st, moved)
	}
	writeFile(t, dir, "pages/home.json", `{"updated": "2025-06-30", "title": "Start"}`)
	s3 := mustScan(t, dir, opt)
	if st, moved := Decide(s2.Fingerprints, true, s3); st != StatusRendered || !slices.Equal(moved, []string{"@atomic", "pages"}) {
		t.Errorf("Decide = %s %q, want rendered [@atomic pages]", st, moved)
	}
}

func TestScanFacetMoves(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"x/a.json": `{"n": 1}`, "y/b.yaml": "n: 2\n", "z/c.txt": "three", "root.md": "root",
	})
	opt := Options{CachePath: filepath.Join(t.TempDir(), "cache")}
	s1 := mustScan(t, dir, opt)
	if !slices.Equal(s1.Facets, []string{"@atomic", "x", "y", "z"}) {
		t.Fatalf("facets = %q", s1.Facets)
	}
	tests := []struct {
		path, content string
		moved         []string
	}{
		{"y/b.yaml", "n: 3\n", []string{"@atomic", "y"}},
		{"root.md", "new root", []string{"@atomic"}},
		{"x/deep/d.json", "[]", []string{"@atomic", "x"}},
		{"w/new.txt", "w", []string{"@atomic", "w"}},
	}
	prev := s1
	for _, tc := range tests {
		writeFile(t, dir, tc.path, tc.content)
		s := mustScan(t, dir, opt)
		st, moved := Decide(prev.Fingerprints, true, s)
		if st != StatusRendered || !slices.Equal(moved, tc.moved) {
			t.Errorf("after writing %s: Decide = %s %q, want rendered %q", tc.path, st, moved, tc.moved)
		}
		prev = s
	}
	if err := os.RemoveAll(filepath.Join(dir, "z")); err != nil {
		t.Fatal(err)
	}
	s := mustScan(t, dir, opt)
	if st, moved := Decide(prev.Fingerprints, true, s); st != StatusRendered || !slices.Equal(moved, []string{"@atomic", "z"}) {
		t.Errorf("after removing z: Decide = %s %q, want rendered [@atomic z]", st, moved)
	}
}

func TestScanDeclaredFacets(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"backlog/items.json":  `[{"id": 1, "state": "open", "seen": 5}, {"id": 2, "state": "done", "seen": 7}]`,
		"backlog/counts.json": `{"open": 1, "done": 1}`,
		"notes.md":            "n",
	})
	spec := &canon.Spec{
		Fields: []canon.Field{{Path: "backlog.items.seen", Material: false}},
		Facets: []canon.Facet{
			{Facet: "open-items", Paths: []string{"backlog.items.state", "backlog.items.id"}},
			{Facet: "counts", Paths: []string{"backlog.counts"}},
			{Facet: "nothing", Paths: []string{"missing.path"}},
		},
	}
	opt := Options{Spec: spec}
	s := mustScan(t, dir, opt)
	if !slices.Equal(s.Facets, []string{"@atomic", "open-items", "counts", "nothing"}) {
		t.Fatalf("facets = %q", s.Facets)
	}
	truth, err := ReadTruth(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := canon.Fingerprints(canon.BLAKE3, spec, truth)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(s.Fingerprints, want) {
		t.Fatalf("Scan fingerprints\n%v\nwant canon.Fingerprints\n%v", s.Fingerprints, want)
	}
	empty := canon.BLAKE3.DigestToken(canon.DigestObject(canon.BLAKE3, nil))
	if s.Fingerprints["nothing"] != empty {
		t.Errorf("a facet over absent paths has token %s, want the empty object's %s", s.Fingerprints["nothing"], empty)
	}
	writeFile(t, dir, "backlog/items.json", `[{"id": 1, "state": "open", "seen": 6}, {"id": 2, "state": "done", "seen": 9}]`)
	s2 := mustScan(t, dir, opt)
	if st, _ := Decide(s.Fingerprints, true, s2); st != StatusSkipped {
		t.Errorf("immaterial change inside an array: %s", st)
	}
	writeFile(t, dir, "backlog/counts.json", `{"open": 2, "done": 0}`)
	s3 := mustScan(t, dir, opt)
	if st, moved := Decide(s2.Fingerprints, true, s3); st != StatusRendered || !slices.Equal(moved, []string{"@atomic", "counts"}) {
		t.Errorf("Decide = %s %q, want rendered [@atomic counts]", st, moved)
	}
}

func TestScanCache(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("d%d/f%d.json", i%5, i)] = fmt.Sprintf(`{"i": %d}`, i)
	}
	writeFiles(t, dir, files)
	settle()
	cache := filepath.Join(t.TempDir(), "cache", "scan-node")
	opt := Options{CachePath: cache}
	s1 := mustScan(t, dir, opt)
	if s1.Stats.Hashed != 50 || s1.Stats.CacheHits != 0 {
		t.Fatalf("first scan stats = %+v", s1.Stats)
	}
	s2 := mustScan(t, dir, opt)
	if s2.Stats.Hashed != 0 || s2.Stats.CacheHits != 50 || s2.Stats.BytesRead != 0 {
		t.Fatalf("second scan stats = %+v, want no file read", s2.Stats)
	}
	if !slices.Equal(s1.Entries, s2.Entries) || s1.Version != s2.Version || !maps.Equal(s1.Fingerprints, s2.Fingerprints) {
		t.Fatal("cached scan differs from the first scan")
	}

	// Same size, new content: the mtime tells.
	writeFile(t, dir, "d1/f1.json", `{"i": 9}`)
	settle()
	s3 := mustScan(t, dir, opt)
	if s3.Stats.Hashed != 1 || s3.Stats.CacheHits != 49 {
		t.Fatalf("after one edit stats = %+v, want one file read", s3.Stats)
	}
	if s3.Fingerprints["d1"] == s2.Fingerprints["d1"] || s3.Fingerprints["d0"] != s2.Fingerprints["d0"] {
		t.Error("one edit did not move exactly its facet")
	}
	fresh := mustScan(t, dir, Options{})
	if !slices.Equal(s3.Entries, fresh.Entries) || s3.Version != fresh.Version || !maps.Equal(s3.Fingerprints, fresh.Fingerprints) {
		t.Fatal("cached scan differs from an uncached scan")
	}

	// Another spec invalidates the digests: everything is read again.
	other := Options{CachePath: cache, Spec: &canon.Spec{Fields: []canon.Field{{Path: "d1", Material: false}}}}
	if s := mustScan(t, dir, other); s.Stats.Hashed != 50 {
		t.Errorf("scan under another spec read %d files, want 50", s.Stats.Hashed)
	}
	if s := mustScan(t, dir, other); s.Stats.Hashed != 0 {
		t.Errorf("second scan under the other spec read %d files, want 0", s.Stats.Hashed)
	}
}

func TestScanRacyEntries(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"old.txt": "old"})
	settle()
	// A file written just now: its mtime is within the granularity of the
	// scan's start, so the cache must not trust it next time.
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{CachePath: filepath.Join(t.TempDir(), "cache")}
	if s := scanTwice(t, dir, opt); s.Stats.Hashed != 1 || s.Stats.CacheHits != 1 {
		t.Fatalf("stats = %+v, want the racy file read again and the old one trusted", s.Stats)
	}
	// Once it is old enough, it is trusted.
	if err := os.Chtimes(filepath.Join(dir, "new.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	lastWrite = time.Now()
	trustedOnceSettled(t, dir, opt)
}

// trustedOnceSettled checks that once the racy window has passed, a scan
// records every file as trusted and the next reads none.
func trustedOnceSettled(t *testing.T, dir string, opt Options) {
	t.Helper()
	settle()
	mustScan(t, dir, opt)
	if s := mustScan(t, dir, opt); s.Stats.Hashed != 0 {
		t.Fatalf("stats = %+v, want nothing read once the files are old enough", s.Stats)
	}
}

func TestScanInformed(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%d.txt", i%4, i)] = fmt.Sprint(i)
	}
	files["top.txt"] = "top"
	writeFiles(t, dir, files)
	symlink(t, "../d0/f0.txt", filepath.Join(dir, "d1", "link.txt"))
	cache := filepath.Join(t.TempDir(), "cache")
	opt := Options{CachePath: cache}
	mustScan(t, dir, opt)

	steps := []struct {
		name    string
		do      func()
		changed []string
		maxStat int
	}{
		{"edit one file", func() { writeFile(t, dir, "d2/f2.txt", "two") }, []string{"d2/f2.txt"}, 3},
		{"nothing changed", func() {}, []string{}, 1},
		{"add a directory", func() { writeFiles(t, dir, map[string]string{"new/a.txt": "a", "new/b/c.txt": "c"}) }, []string{"new"}, 6},
		{"remove a file", func() { os.Remove(filepath.Join(dir, "d3/f3.txt")) }, []string{"./d3//f3.txt"}, 3},
		{"remove a directory", func() { os.RemoveAll(filepath.Join(dir, "new")) }, []string{"new/b/c.txt", "new"}, 3},
		{"file becomes a directory", func() {
			os.Remove(filepath.Join(dir, "top.txt"))
			writeFile(t, dir, "top.txt/inner.txt", "inner")
		}, []string{"top.txt/inner.txt"}, 4},
		{"directory becomes a file", func() {
			os.RemoveAll(filepath.Join(dir, "top.txt"))
			writeFile(t, dir, "top.txt", "top again")
		}, []string{"top.txt/inner.txt"}, 4},
		{"link target edited unannounced", func() { writeFile(t, dir, "d0/f0.txt", "zero!") }, []string{"d0/f0.txt"}, 4},
	}
	for _, st := range steps {
		st.do()
		s := mustScan(t, dir, Options{CachePath: cache, Changed: st.changed})
		full := mustScan(t, dir, Options{})
		if !slices.Equal(s.Entries, full.Entries) || s.Version != full.Version || !maps.Equal(s.Fingerprints, full.Fingerprints) || !slices.Equal(s.Facets, full.Facets) {
			t.Fatalf("%s: informed scan differs from a full scan:\n%+v\n%+v", st.name, s.Entries, full.Entries)
		}
		if s.Stats.Statted > st.maxStat {
			t.Errorf("%s: informed scan made %d stat calls, want at most %d", st.name, s.Stats.Statted, st.maxStat)
		}
	}
}

func TestScanErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	if _, err := Scan(filepath.Join(dir, "a.txt"), Options{}); err == nil {
		t.Error("scanning a file: no error")
	}
	if _, err := Scan(filepath.Join(dir, "missing"), Options{}); err == nil {
		t.Error("scanning a missing directory: no error")
	}
	if _, err := Scan(dir, Options{Algorithm: "md5"}); err == nil {
		t.Error("unknown algorithm: no error")
	}
	bad := &canon.Spec{Facets: []canon.Facet{{Facet: "@atomic", Paths: []string{"a"}}}}
	if _, err := Scan(dir, Options{Spec: bad}); err == nil {
		t.Error("invalid spec: no error")
	}
	if _, err := Scan(dir, Options{CachePath: filepath.Join(dir, ".cache", "scan")}); err == nil || !strings.Contains(err.Error(), "inside the scanned directory") {
		t.Errorf("cache inside the directory: error %v", err)
	}
	cache := filepath.Join(t.TempDir(), "c")
	mustScan(t, dir, Options{CachePath: cache})
	if _, err := Scan(dir, Options{CachePath: cache, Changed: []string{"../x"}}); err == nil {
		t.Error("changed path with ..: no error")
	}
}

func TestScanSHA256(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f/a.json": `{"x": 1}`})
	s := mustScan(t, dir, Options{Algorithm: canon.SHA256})
	truth, err := ReadTruth(dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := &canon.Spec{Facets: []canon.Facet{{Facet: "f", Paths: []string{"f"}}}}
	want, err := canon.Fingerprints(canon.SHA256, spec, truth)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(s.Fingerprints, want) {
		t.Errorf("sha256 fingerprints %v, want %v", s.Fingerprints, want)
	}
}

// TestGolden pins the truth, entries, version address and fingerprints of
// the example node in testdata/node (run with -update after a deliberate
// change).
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "node")
	specData, err := os.ReadFile(filepath.Join("testdata", "node-spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := canon.ParseSpec(specData)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := ReadTruth(dir)
	if err != nil {
		t.Fatal(err)
	}
	plain := mustScan(t, dir, Options{})
	withSpec := mustScan(t, dir, Options{Spec: spec})
	var entries []any
	for _, e := range plain.Entries {
		entries = append(entries, map[string]any{
			"path": e.Path, "mode": fmt.Sprintf("%o", e.Mode), "size": float64(e.Size),
			"blake3": fmt.Sprintf("%x", e.Sum), "git": fmt.Sprintf("%x", e.GitOID),
		})
	}
	got, err := canon.Marshal(map[string]any{
		"truth":   truth,
		"entries": entries,
		"version": plain.Version,
		"fingerprints": map[string]any{
			"default": toAny(plain.Fingerprints), "spec": toAny(withSpec.Fingerprints),
		},
		"facets": map[string]any{"default": strings.Join(plain.Facets, " "), "spec": strings.Join(withSpec.Facets, " ")},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "node.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("golden mismatch (run with -update after a deliberate change):\n got %s\nwant %s", got, want)
	}
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestReadStaysInside swaps a file for a link out of the directory after
// the walk saw it: the read must fail, not follow the link.
func TestReadStaysInside(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "inside"})
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := newWalker(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	files, err := w.walk()
	if err != nil || len(files) != 1 {
		t.Fatal(err, files)
	}
	os.Remove(filepath.Join(dir, "a.txt"))
	symlink(t, outside, filepath.Join(dir, "a.txt"))
	if l, err := w.load(context.Background(), &files[0]); err == nil {
		t.Fatalf("read %v through a link out of the directory", l.value)
	}
}

// TestScanRefusesGitNames: a world-model holding a name git reads as .git,
// or a .gitmodules symlink, is refused with the rule, whatever the scan
// (full or informed) that meets it.
func TestScanRefusesGitNames(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		rule  string
	}{
		{"nested repository", func(t *testing.T, dir string) { writeFile(t, dir, ".git/config", "[core]") }, RuleGit},
		{"deep .git", func(t *testing.T, dir string) { writeFile(t, dir, "a/b/.git/HEAD", "ref") }, RuleGit},
		{"upper case", func(t *testing.T, dir string) { writeFile(t, dir, "a/.GIT/config", "x") }, RuleGit},
		{"trailing dot", func(t *testing.T, dir string) { writeFile(t, dir, ".git./config", "x") }, RuleGit},
		{"trailing space", func(t *testing.T, dir string) { writeFile(t, dir, ".git /config", "x") }, RuleGit},
		{"NTFS short name", func(t *testing.T, dir string) { writeFile(t, dir, "git~1/config", "x") }, RuleGit},
		{"HFS ignorable", func(t *testing.T, dir string) { writeFile(t, dir, ".g\u200cit/config", "x") }, RuleGit},
		{".git as a file", func(t *testing.T, dir string) { writeFile(t, dir, "x/.git", "gitdir: /elsewhere") }, RuleGit},
		{".gitmodules link", func(t *testing.T, dir string) {
			writeFile(t, dir, "m.txt", "[submodule]")
			symlink(t, "m.txt", filepath.Join(dir, ".gitmodules"))
		}, RuleGitLink},
		{".GITMODULES. link", func(t *testing.T, dir string) {
			writeFile(t, dir, "d/m.txt", "[submodule]")
			symlink(t, "m.txt", filepath.Join(dir, "d", ".GITMODULES."))
		}, RuleGitLink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "ok.txt", "fine")
			tt.setup(t, dir)
			_, err := Scan(dir, Options{})
			var pe *PathError
			if !errors.As(err, &pe) || pe.Rule != tt.rule {
				t.Fatalf("Scan: %v; want the rule %q", err, tt.rule)
			}
			if _, err := ReadTruth(dir); !errors.As(err, &pe) {
				t.Errorf("ReadTruth: %v; want a PathError", err)
			}
		})
	}
	// An informed scan meets the name among the changed paths.
	dir := t.TempDir()
	writeFile(t, dir, "ok.txt", "fine")
	cache := filepath.Join(t.TempDir(), "c")
	mustScan(t, dir, Options{CachePath: cache})
	writeFile(t, dir, "sub/.Git/config", "x")
	var pe *PathError
	if _, err := Scan(dir, Options{CachePath: cache, Changed: []string{"sub"}}); !errors.As(err, &pe) || pe.Rule != RuleGit {
		t.Fatalf("informed Scan: %v; want the rule %q", err, RuleGit)
	}
	// A regular .gitmodules file is a file like any other.
	dir = t.TempDir()
	writeFile(t, dir, ".gitmodules", "text")
	mustScan(t, dir, Options{})
}

// TestScanLinkLoop: a symlink loop is named as one, never as "<nil>".
func TestScanLinkLoop(t *testing.T) {
	dir := t.TempDir()
	symlink(t, "b", filepath.Join(dir, "a"))
	symlink(t, "a", filepath.Join(dir, "b"))
	_, err := Scan(dir, Options{})
	if err == nil || strings.Contains(err.Error(), "nil") || !strings.Contains(err.Error(), "loop") {
		t.Fatalf("Scan of a link loop: %v; want an error saying the links loop", err)
	}
}

// A changed path holding a backslash names the file of that name when
// there is one (a full scan refuses it), not the path the backslash would
// separate; without such a file the backslash is a separator.
func TestScanInformedBackslashName(t *testing.T) {
	if filepath.Separator == '\\' {
		t.Skip("a backslash separates paths here")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "d/b.txt": "b"})
	cache := filepath.Join(t.TempDir(), "cache")
	mustScan(t, dir, Options{CachePath: cache})
	// As a separator: d\b.txt is d/b.txt.
	writeFile(t, dir, "d/b.txt", "b2")
	s := mustScan(t, dir, Options{CachePath: cache, Changed: []string{`d\b.txt`}})
	if full := mustScan(t, dir, Options{}); s.Version != full.Version {
		t.Fatalf("d\\b.txt as a separator: version %s, full scan %s", s.Version, full.Version)
	}
	writeFile(t, dir, `bad\name`, "x")
	for _, changed := range []string{`bad\name`, `./bad\name`} {
		_, err := Scan(dir, Options{CachePath: cache, Changed: []string{changed}})
		if err == nil || !strings.Contains(err.Error(), "backslash") {
			t.Fatalf("informed scan of %q: %v; want the backslash named, as a full scan does", changed, err)
		}
	}
	if _, err := Scan(dir, Options{}); err == nil || !strings.Contains(err.Error(), "backslash") {
		t.Fatalf("full scan: %v", err)
	}
}

// A file written just now but dated in the past (cp -p, rsync -t, touch -d)
// is as racy as one with a fresh mtime: its change time is now, and a
// rewrite within the same tick could keep every stat field. The cache reads
// it again until the granularity has passed.
func TestScanRacyByChangeTime(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"old.txt": "old"})
	settle()
	writeFile(t, dir, "copied.txt", "copied") // mtime an hour ago, ctime now
	opt := Options{CachePath: filepath.Join(t.TempDir(), "cache")}
	if s := scanTwice(t, dir, opt); s.Stats.Hashed != 1 || s.Stats.CacheHits != 1 {
		t.Fatalf("stats = %+v, want the file with a fresh change time read again", s.Stats)
	}
	trustedOnceSettled(t, dir, opt)
}

// TestInformedScanDistrustsATornCache: a cache whose last delta was torn
// (a crash while it was appended) does not list what that delta recorded,
// so an informed scan must not take the rest of the directory from it: it
// scans in full.
func TestInformedScanDistrustsATornCache(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c"})
	cache := filepath.Join(t.TempDir(), "cache")
	mustScan(t, dir, Options{CachePath: cache})
	size := func() int64 {
		fi, err := os.Stat(cache)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	base := size()
	writeFile(t, dir, "b.txt", "b2")
	mustScan(t, dir, Options{CachePath: cache, Changed: []string{"b.txt"}})
	if size() <= base {
		t.Fatal("the informed scan appended no delta")
	}
	if err := os.Truncate(cache, size()-3); err != nil { // the delta torn
		t.Fatal(err)
	}
	s := mustScan(t, dir, Options{CachePath: cache, Changed: []string{}})
	if full := mustScan(t, dir, Options{}); s.Version != full.Version {
		t.Fatalf("informed scan over a torn cache: version %s, the directory's %s (b.txt taken from before the torn delta)", s.Version, full.Version)
	}
}

// TestChangedPathsCheckedWithoutACache: a bad changed path is refused
// whether the informed scan has a cache to work from or scans in full.
func TestChangedPathsCheckedWithoutACache(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a/x.txt": "x"})
	for _, cache := range []string{"", filepath.Join(t.TempDir(), "cache")} {
		if cache != "" {
			mustScan(t, dir, Options{CachePath: cache})
		}
		if _, err := Scan(dir, Options{CachePath: cache, Changed: []string{"a/../x.txt"}}); err == nil || !strings.Contains(err.Error(), "changed path") {
			t.Fatalf("cache %q: a/../x.txt: %v", cache, err)
		}
	}
}
