package vault

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func indexNames(idx *gitIndex) string {
	idx.merge()
	var names []string
	for i := 0; i < idx.len(); i++ {
		names = append(names, string(idx.name(i)))
	}
	return strings.Join(names, ",")
}

func TestIndexPutDelKeepsOrderAndRoundTrips(t *testing.T) {
	idx := &gitIndex{ver: 2}
	for _, n := range []string{"m", "a/b", "z", "a/c-long-name-that-needs-more-padding", "b"} {
		idx.put(indexEntry{Name: n, Mode: 0o100644})
	}
	if got := indexNames(idx); got != "a/b,a/c-long-name-that-needs-more-padding,b,m,z" {
		t.Fatalf("order: %s", got)
	}
	oid := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	idx.put(indexEntry{Name: "b", Mode: 0o100755, Size: 7, OID: oid})
	if e := idx.get("b"); e == nil || e.Size != 7 || e.OID != oid || e.Mode != 0o100755 {
		t.Fatalf("patched entry: %+v", e)
	}
	idx.del("m")
	idx.del("not-there")
	back, err := parseIndex(idx.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got := indexNames(back); got != "a/b,a/c-long-name-that-needs-more-padding,b,z" {
		t.Fatalf("after delete and round trip: %s", got)
	}
	if e := back.get("b"); e == nil || e.OID != oid {
		t.Fatal("patched entry lost in the round trip")
	}
	data := idx.encode()
	data[20] ^= 1
	if _, err := parseIndex(data); err == nil {
		t.Fatal("a damaged index parsed")
	}
}

// The cost of index updates grows with the changes plus the index, never
// with their product: inserting n entries into an index of m entries copies
// each existing entry's bytes a bounded number of times, however the
// inserts and deletes interleave with lookups.
func TestIndexUpdatesCostChangesPlusIndex(t *testing.T) {
	for _, tc := range []struct{ existing, inserted int }{{0, 2000}, {2000, 2000}, {20000, 200}, {500, 20000}} {
		idx := &gitIndex{ver: 2}
		for i := 0; i < tc.existing; i++ {
			idx.put(indexEntry{Name: fmt.Sprintf("src/old-%06d.md", i), Mode: 0o100644})
		}
		idx.merge()
		idx.moved = 0
		before := len(idx.body)
		for i := 0; i < tc.inserted; i++ {
			name := fmt.Sprintf("published/n/d%03d/f%06d.json", i%97, i)
			idx.put(indexEntry{Name: name, Mode: 0o100644})
			if idx.get(name) == nil {
				t.Fatalf("%s not found right after its put", name)
			}
			if i%10 == 0 {
				idx.del(fmt.Sprintf("src/old-%06d.md", i))
			}
		}
		back, err := parseIndex(idx.encode())
		if err != nil {
			t.Fatal(err)
		}
		want := tc.existing + tc.inserted
		for i := 0; i < tc.inserted; i += 10 {
			if i < tc.existing {
				want--
			}
		}
		if back.len() != want {
			t.Fatalf("%+v: %d entries after the round trip, want %d", tc, back.len(), want)
		}
		for i := 1; i < back.len(); i++ {
			if string(back.name(i-1)) >= string(back.name(i)) {
				t.Fatalf("%+v: entries out of order at %d: %s, %s", tc, i, back.name(i-1), back.name(i))
			}
		}
		// Each byte of the index as it was is copied at most once.
		if idx.moved > before {
			t.Fatalf("%+v: %d bytes of a %d-byte index rewritten (%.1f per inserted entry): updates do not grow linearly",
				tc, idx.moved, before, float64(idx.moved)/float64(tc.inserted))
		}
	}
}

// rawIndex re-encodes idx with another version and extra extension bytes.
func rawIndex(idx *gitIndex, ver uint32, ext []byte) []byte {
	data := idx.encode()
	data = append(data[:len(data)-20:len(data)-20], ext...)
	binary.BigEndian.PutUint32(data[4:], ver)
	sum := sha1.Sum(data)
	return append(data, sum[:]...)
}

func extension(sig string, body []byte) []byte {
	b := append([]byte(sig), 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b[4:], uint32(len(body)))
	return append(b, body...)
}

func TestParseIndexTellsDamagedFromUnsupported(t *testing.T) {
	idx := &gitIndex{ver: 2}
	idx.put(indexEntry{Name: "a.md", Mode: 0o100644})
	idx.put(indexEntry{Name: "b.md", Mode: 0o100644})
	good := idx.encode()
	cases := []struct {
		name string
		data []byte
		want error
		fix  string
	}{
		{"checksum", append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^1), errIndexDamaged, "git reset"},
		{"signature", append([]byte("DIRX"), good[4:]...), errIndexDamaged, "git reset"},
		{"short", good[:20], errIndexDamaged, "git reset"},
		{"truncated entry", func() []byte {
			d := rawIndex(idx, 2, nil)
			binary.BigEndian.PutUint32(d[8:], 3) // three entries, two present
			d = d[:len(d)-20]
			sum := sha1.Sum(d)
			return append(d, sum[:]...)
		}(), errIndexDamaged, "git reset"},
		{"unterminated path", func() []byte {
			one := &gitIndex{ver: 2}
			one.put(indexEntry{Name: "abcdefgh", Mode: 0o100644}) // 62+8 -> padded to 72, two NULs
			d := one.encode()
			d = d[:len(d)-20]
			for i := 12 + 62 + 8; i < len(d); i++ {
				d[i] = 'x'
			}
			sum := sha1.Sum(d)
			return append(d, sum[:]...)
		}(), errIndexDamaged, "git reset"},
		{"truncated extension", rawIndex(idx, 2, extension("TREE", []byte("abc"))[:9]), errIndexDamaged, "git reset"},
		{"version 4", rawIndex(idx, 4, nil), errIndexUnsupported, "git update-index --index-version 2"},
		{"split index", rawIndex(idx, 2, extension("link", make([]byte, 20))), errIndexUnsupported, "git update-index --no-split-index"},
		{"sparse index", rawIndex(idx, 3, extension("sdir", nil)), errIndexUnsupported, "git sparse-checkout disable"},
	}
	for _, c := range cases {
		_, err := parseIndex(c.data)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.fix) {
			t.Errorf("%s: %v, want %v naming %q", c.name, err, c.want, c.fix)
		}
		other := errIndexUnsupported
		if c.want == errIndexUnsupported {
			other = errIndexDamaged
		}
		if errors.Is(err, other) {
			t.Errorf("%s: %v is also %v", c.name, err, other)
		}
	}
	// Optional extensions (upper-case names) are skipped.
	back, err := parseIndex(rawIndex(idx, 2, append(extension("TREE", []byte("x")), extension("UNTR", nil)...)))
	if err != nil || indexNames(back) != "a.md,b.md" {
		t.Fatalf("optional extensions: %v", err)
	}
}

func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if processAlive(cmd.Process.Pid) {
		t.Fatalf("exited process %d is alive", cmd.Process.Pid)
	}
}

func TestFillStatReadsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("12345"), 0o755); err != nil {
		t.Fatal(err)
	}
	var e indexEntry
	if err := statEntry(path, &e); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(path)
	if e.Size != 5 || e.Mode != 0o100755 || e.MtimeS != uint32(fi.ModTime().Unix()) || e.MtimeN != uint32(fi.ModTime().Nanosecond()) {
		t.Fatalf("entry %+v", e)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		if e.Ino == 0 || e.CtimeS == 0 {
			t.Fatalf("no inode or ctime: %+v", e)
		}
	}
}

// An entry whose mtime is not older than the index file's is racy: a change
// in the same timestamp tick leaves the stat data equal, so worktreeOID must
// re-hash the file rather than trust the entry.
func TestRacyEntriesAreRehashed(t *testing.T) {
	v := newVault(t)
	rel := "x.txt"
	full := filepath.Join(v.Root(), rel)
	if err := os.WriteFile(full, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	real := plumbing.ComputeHash(plumbing.BlobObject, []byte("hello"))
	// The entry's stat data matches the file, but its id is stale, as when
	// the file changed within the tick after it was stat'ed.
	stale := plumbing.ComputeHash(plumbing.BlobObject, []byte("world"))
	e := indexEntry{Name: rel, OID: stale}
	if err := statEntry(full, &e); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(full)
	mt := fi.ModTime()
	for _, c := range []struct {
		name  string
		stamp *time.Time
		want  plumbing.Hash
	}{
		{"index older than the file", ptr(mt.Add(-time.Second)), real},
		{"index in the same tick", ptr(mt), real},
		{"index newer by 1ns", ptr(mt.Add(time.Nanosecond)), stale},
		{"index not read from a file", nil, real},
	} {
		idx := &gitIndex{ver: 2}
		idx.put(e)
		if c.stamp != nil {
			idx.setStamp(*c.stamp)
		}
		got, ok, err := v.worktreeOID(rel, idx)
		if err != nil || !ok || got != c.want {
			t.Errorf("%s: %s %v %v, want %s", c.name, got, ok, err, c.want)
		}
	}
	// readIndex stamps the index with its file's mtime.
	idx := &gitIndex{ver: 2}
	idx.put(e)
	if err := v.writeIndex(idx); err != nil {
		t.Fatal(err)
	}
	when := mt.Add(time.Hour)
	if err := os.Chtimes(v.indexPath(), when, when); err != nil {
		t.Fatal(err)
	}
	back, err := v.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	if !back.stamped || back.mtimeS != uint32(when.Unix()) || back.mtimeN != uint32(when.Nanosecond()) {
		t.Fatalf("stamp %v %d.%d, want %v", back.stamped, back.mtimeS, back.mtimeN, when)
	}
	if got, _, _ := v.worktreeOID(rel, back); got != stale {
		t.Fatal("a clean entry of an older file was not trusted")
	}
}

func ptr[T any](x T) *T { return &x }

func zeroTrailer(d []byte) []byte {
	d = append([]byte{}, d...)
	copy(d[len(d)-20:], make([]byte, 20))
	return d
}

// git 2.40 and later write a zero trailer with index.skipHash: such an
// index is read, not taken for damaged; a version 4 one is refused as
// version 4.
func TestSkipHashIndexIsRead(t *testing.T) {
	idx := &gitIndex{ver: 2}
	idx.put(indexEntry{Name: "a.md", Mode: 0o100644})
	idx.put(indexEntry{Name: "b.md", Mode: 0o100644})
	back, err := parseIndex(zeroTrailer(rawIndex(idx, 2, extension("TREE", []byte("x")))))
	if err != nil || indexNames(back) != "a.md,b.md" {
		t.Fatalf("zero trailer: %v", err)
	}
	if _, err := parseIndex(zeroTrailer(rawIndex(idx, 4, nil))); !errors.Is(err, errIndexUnsupported) || !strings.Contains(err.Error(), "version 4") {
		t.Fatalf("version 4 with a zero trailer: %v", err)
	}

	requireGit(t)
	v := newVault(t)
	writeTree(t, filepath.Join(v.Root(), "src"), map[string]string{"s.md": "staged"})
	git(t, v.Root(), "add", "src/s.md")
	data, err := os.ReadFile(v.indexPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.indexPath(), zeroTrailer(data), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "a"})
	publish(t, v, "n", src, PublishOptions{})
	if got := git(t, v.Root(), "diff", "--cached", "--name-only"); got != "src/s.md\n" {
		t.Fatalf("staged after the publish: %q, want src/s.md kept", got)
	}
}

// Rebuilding a damaged index keeps every tracked path: a tracked file with
// unstaged edits stays tracked and shows modified, never deleted and
// untracked.
func TestDamagedIndexRebuildKeepsTrackedFiles(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "a"})
	publish(t, v, "n", src, PublishOptions{})
	if err := os.WriteFile(filepath.Join(v.Root(), ".gitignore"), []byte("/.prose/\n*.tmp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(v.indexPath())
	if err := os.WriteFile(v.indexPath(), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"a.txt": "b"})
	publish(t, v, "n", src, PublishOptions{})
	if got := git(t, v.Root(), "status", "--porcelain"); got != " M .gitignore\n" {
		t.Fatalf("git status after the rebuild:\n%s\nwant only ' M .gitignore'", got)
	}
}

// FuzzParseIndex: any input parses or is refused with a damaged or
// unsupported error, never a panic; what parses encodes back to an index
// that parses to the same entries.
func FuzzParseIndex(f *testing.F) {
	idx := &gitIndex{ver: 2}
	idx.put(indexEntry{Name: "a.md", Mode: 0o100644})
	idx.put(indexEntry{Name: "dir/b.md", Mode: 0o100755, Size: 9})
	f.Add(idx.encode())
	f.Add(zeroTrailer(idx.encode()))
	f.Add(rawIndex(idx, 3, extension("TREE", []byte("x"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseIndex(data)
		if err != nil {
			if !errors.Is(err, errIndexDamaged) && !errors.Is(err, errIndexUnsupported) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		names := indexNames(got)
		back, err := parseIndex(got.encode())
		if err != nil {
			t.Fatalf("re-encoded index does not parse: %v", err)
		}
		if indexNames(back) != names {
			t.Fatalf("entries changed in the round trip: %q vs %q", indexNames(back), names)
		}
	})
}
