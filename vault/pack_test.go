package vault

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/internal/durable"
)

// A publish of more objects than packThreshold writes them as one pack,
// which git itself verifies and reads, and prose reads back.
func TestLargePublishWritesAPackGitReads(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{}
	for i := 0; i < 3*packThreshold; i++ {
		files[fmt.Sprintf("d%02d/f%03d.txt", i%7, i)] = fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", i))
	}
	writeTree(t, src, files)
	loose := func() int {
		m, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "[0-9a-f][0-9a-f]", "*"))
		return len(m)
	}
	before := loose()
	publish(t, v, "big", src, PublishOptions{})
	packs, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "pack", "pack-*.idx"))
	if len(packs) != 1 {
		t.Fatalf("%d packs after a publish of %d files, want 1", len(packs), len(files))
	}
	// A node's first publish writes every object into the pack: no loose
	// files before it.
	if n := loose() - before; n != 0 {
		t.Fatalf("a first publish of %d files wrote %d loose objects besides its pack", len(files), n)
	}
	for _, idx := range packs {
		git(t, v.Root(), "verify-pack", strings.TrimSuffix(idx, ".idx")+".pack")
	}
	checkGitClean(t, v)
	for p, c := range files {
		got, err := os.ReadFile(filepath.Join(v.Root(), "published", "big", filepath.FromSlash(p)))
		if err != nil || string(got) != c {
			t.Fatalf("working tree %s = %q (%v), want %q", p, got, err, c)
		}
		if out := git(t, v.Root(), "show", "HEAD:published/big/"+p); out != c {
			t.Fatalf("git show %s = %q, want %q", p, out, c)
		}
		break
	}
	files["d00/f000.txt"] = "changed"
	writeTree(t, src, files)
	publish(t, v, "big", src, PublishOptions{})
	git(t, v.Root(), "gc", "-q")
	files["d01/f001.txt"] = "changed after gc"
	writeTree(t, src, files)
	publish(t, v, "big", src, PublishOptions{})
	checkGitClean(t, v)
	if n := receiptCount(t, v); n != 3 {
		t.Fatalf("%d receipts, want 3", n)
	}
}

// The working tree is written from the published source files, but a
// source file changed after its blob was stored is not copied: the blob is.
func TestCheckoutFromAChangedSourceUsesTheStore(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "stored", "b.txt": "b"})
	restore, ran := atStep(t, v, durable.StepFsync, "objects/", func() {
		os.WriteFile(filepath.Join(src, "a.txt"), []byte("changed after the blob was stored"), 0o644)
	})
	publish(t, v, "n", src, PublishOptions{})
	restore()
	if !ran() {
		t.Fatal("the source was never changed during the publish")
	}
	if got, _ := os.ReadFile(filepath.Join(v.Root(), "published", "n", "a.txt")); string(got) != "stored" {
		t.Fatalf("working tree a.txt = %q, want the committed %q", got, "stored")
	}
	checkGitClean(t, v)
}

// TestPackIndexLookup: the index lookup finds every object of a pack prose
// wrote and of one git wrote (git gc), including the first and last
// fan-out buckets, finds nothing else, and a damaged index lists nothing.
func TestPackIndexLookup(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src, _ := writeNumberedTree(t, 3*packThreshold)
	publish(t, v, "big", src, PublishOptions{})
	check := func(who string) {
		idxs, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "pack", "pack-*.idx"))
		if len(idxs) == 0 {
			t.Fatalf("%s: no pack", who)
		}
		for _, idx := range idxs {
			f, err := os.Open(idx)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "show-index")
			cmd.Stdin = f
			out, err := cmd.Output()
			f.Close()
			if err != nil {
				t.Fatalf("git show-index: %v", err)
			}
			listed := map[plumbing.Hash]bool{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				h := plumbing.NewHash(strings.Fields(line)[1])
				listed[h] = true
				if !idxContains(idx, h) {
					t.Fatalf("%s: %s lists %s; the lookup did not find it", who, filepath.Base(idx), h)
				}
				// Its neighbours in id order are absent (unless listed).
				for _, d := range []int{-1, 1} {
					n := h
					n[19] = byte(int(n[19]) + d)
					if !listed[n] && idxContains(idx, n) && !strings.Contains(string(out), n.String()) {
						t.Fatalf("%s: the lookup found %s, which the index does not list", who, n)
					}
				}
			}
			for _, h := range []plumbing.Hash{{}, {0xff, 0xff, 0xff}, {0x00, 0x01}, {0xff}} {
				if !listed[h] && idxContains(idx, h) {
					t.Fatalf("%s: found %s, which is not listed", who, h)
				}
			}
			// A damaged index lists nothing: wrong version, truncated.
			data, _ := os.ReadFile(idx)
			bad := filepath.Join(t.TempDir(), "bad.idx")
			var some plumbing.Hash
			for h := range listed {
				some = h
				break
			}
			for _, damaged := range [][]byte{append(append([]byte{}, data[:7]...), append([]byte{3}, data[8:]...)...), data[:8+256*4-2], data[:8+256*4+10]} {
				os.WriteFile(bad, damaged, 0o644)
				if idxContains(bad, some) {
					t.Fatalf("%s: a damaged index (%d bytes) listed %s", who, len(damaged), some)
				}
			}
		}
	}
	check("prose's pack")
	git(t, v.Root(), "gc", "-q")
	check("git's pack")
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += n
	return n, err
}

// A pack lookup reads the header, two fan-out entries and the names of one
// bucket: its cost grows with the bucket (n/256 names), not with the index
// (checked on a synthetic index of 100,000 objects, 2.8 MB).
func TestPackIndexLookupReadsOneBucket(t *testing.T) {
	const n = 100_000
	names := make([]plumbing.Hash, n)
	for i := range names {
		names[i] = plumbing.Hash(sha1.Sum([]byte(fmt.Sprint(i))))
	}
	sort.Slice(names, func(i, j int) bool { return bytes.Compare(names[i][:], names[j][:]) < 0 })
	idx := []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}
	count := 0
	for b := 0; b < 256; b++ {
		for count < n && int(names[count][0]) <= b {
			count++
		}
		idx = binary.BigEndian.AppendUint32(idx, uint32(count))
	}
	for _, h := range names {
		idx = append(idx, h[:]...)
	}
	idx = append(idx, make([]byte, n*8+40)...) // CRCs, offsets, checksums
	for _, i := range []int{0, 1, n / 2, n - 1} {
		c := &countingReaderAt{r: bytes.NewReader(idx)}
		p := readerIndex(c, int64(len(idx)))
		if !p.contains(names[i]) {
			t.Fatalf("object %d not found", i)
		}
		bucket := 0
		for _, h := range names {
			if h[0] == names[i][0] {
				bucket++
			}
		}
		if want := idxFanEnd + 20*bucket; c.n > want {
			t.Fatalf("a lookup read %d bytes of a %d-byte index; want at most %d (the fan-out and one bucket of %d names)", c.n, len(idx), want, bucket)
		}
		// The same bucket again, and the neighbours in it: no more reads.
		read := c.n
		for j := i - 2; j <= i+2; j++ {
			if j >= 0 && j < n && names[j][0] == names[i][0] && !p.contains(names[j]) {
				t.Fatalf("object %d not found", j)
			}
		}
		if c.n != read {
			t.Fatalf("lookups in a bucket already read read %d more bytes", c.n-read)
		}
	}
	// Every object of the index, looked up in one batch: each bucket is
	// read once, so the reads add up to the fan-out and the names.
	c := &countingReaderAt{r: bytes.NewReader(idx)}
	p := readerIndex(c, int64(len(idx)))
	for _, h := range names {
		if !p.contains(h) {
			t.Fatalf("%s not found", h)
		}
	}
	if want := idxFanEnd + 20*n; c.n != want {
		t.Fatalf("looking up all %d objects read %d bytes; want %d (each bucket once)", n, c.n, want)
	}
	missing := plumbing.Hash(sha1.Sum([]byte("not there")))
	if readerIndex(bytes.NewReader(idx), int64(len(idx))).contains(missing) {
		t.Fatal("found an object the index does not list")
	}
	// A fan-out promising more names than the file holds is refused before
	// anything is allocated for them.
	short := idx[:idxFanEnd+20*(n/2)]
	if readerIndex(bytes.NewReader(short), int64(len(short))).contains(names[0]) {
		t.Fatal("a truncated index listed an object")
	}
}

// A node put back after a `git rm` has every blob stored already: its
// publish writes no blob, so it starts no pack (its few trees go loose).
func TestRestoredNodeStartsNoPack(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src, _ := writeNumberedTree(t, 2*packThreshold)
	publish(t, v, "n", src, PublishOptions{})
	git(t, v.Root(), "rm", "-r", "-q", "published/n")
	git(t, v.Root(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "remove n by hand")
	packs := func() int {
		m, _ := filepath.Glob(filepath.Join(v.GitDir(), "objects", "pack", "pack-*.idx"))
		return len(m)
	}
	before := packs()
	res := publish(t, v, "n", src, PublishOptions{})
	if res.Receipt.Status != "rendered" || len(res.Repaired) == 0 {
		t.Fatalf("the removed node was not published again: %s, repaired %v", res.Receipt.Status, res.Repaired)
	}
	if n := packs() - before; n != 0 {
		t.Fatalf("putting back a node whose blobs are stored wrote %d new packs", n)
	}
	checkGitClean(t, v)
}

// writeNumberedTree writes n small text files (d<k>/f<i>.txt, seven
// directories) into a new directory and returns it and the files.
func writeNumberedTree(t testing.TB, n int) (string, map[string]string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%7, i)] = fmt.Sprintf("file %d\n", i)
	}
	writeTree(t, src, files)
	return src, files
}
