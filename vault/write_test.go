package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/published"
)

// upperView reads .txt files as their upper-cased text: a stand-in for a
// node's registered view.
type upperView struct{}

func (upperView) ViewName() string { return "upper-test-v1" }
func (upperView) Value(p string, data []byte) (any, bool, error) {
	if !strings.HasSuffix(p, ".txt") {
		return nil, false, nil
	}
	return strings.ToUpper(string(data)), true, nil
}

// TestWriteNodeGivesPublishFingerprints checks that a node write's receipt
// carries the fingerprints and version a publish of the same files computes
// (through the node's view), that fsck agrees, and that a second identical
// write and a view-immaterial change commit nothing.
func TestWriteNodeGivesPublishFingerprints(t *testing.T) {
	RegisterView("viewed", upperView{})
	v := newVault(t)
	ctx := context.Background()
	files := map[string][]byte{"a/x.txt": []byte("hello"), "a/b/y.json": []byte(`{"n":1}`), "c/z.txt": []byte("z"), "top.txt": []byte("t")}
	res, err := v.WriteNode(ctx, "viewed", files, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt == nil || res.Commit.IsZero() {
		t.Fatalf("no receipt: %+v", res)
	}
	dir := t.TempDir()
	for p, d := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), d, 0o644)
	}
	snap, err := published.Scan(dir, published.Options{View: upperView{}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.Fingerprints, res.Receipt.Fingerprints) || snap.Version != res.Version {
		t.Fatalf("write: %v %s\nscan:  %v %s", res.Receipt.Fingerprints, res.Version, snap.Fingerprints, snap.Version)
	}
	if rep, err := v.Fsck(ctx); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
	// The same bytes again: nothing.
	if res, err := v.WriteNode(ctx, "viewed", files, WriteOptions{}); err != nil || !res.Commit.IsZero() || res.Receipt != nil {
		t.Fatalf("identical write: %+v %v", res, err)
	}
	// A change the view does not see (case): no commit, no receipt.
	if res, err := v.WriteNode(ctx, "viewed", map[string][]byte{"a/x.txt": []byte("HELLO")}, WriteOptions{}); err != nil || !res.Commit.IsZero() {
		t.Fatalf("immaterial write: %+v %v", res, err)
	}
	// Unless it is a rebuild: one commit, no receipt.
	res, err = v.WriteNode(ctx, "viewed", map[string][]byte{"a/x.txt": []byte("HELLO")}, WriteOptions{Rebuild: true})
	if err != nil || res.Commit.IsZero() || res.Receipt != nil {
		t.Fatalf("rebuild write: %+v %v", res, err)
	}
	// A material change moves only its facet.
	res, err = v.WriteNode(ctx, "viewed", map[string][]byte{"c/z.txt": []byte("zz"), "a/b/y.json": nil}, WriteOptions{})
	if err != nil || res.Receipt == nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Moved, ","); got != "@atomic,a,c" {
		t.Fatalf("moved %s", got)
	}
	if rep, err := v.Fsck(ctx); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
	// A bad path writes nothing.
	if _, err := v.WriteNode(ctx, "viewed", map[string][]byte{"../x": []byte("x")}, WriteOptions{}); err == nil {
		t.Fatal("../x accepted")
	}
}

// TestSumCacheIsCompacted: past its size limit the cache file is rewritten
// with the entries the last write used, and writes stay right.
func TestSumCacheIsCompacted(t *testing.T) {
	defer func(n int) { sumCacheLimit = n }(sumCacheLimit)
	sumCacheLimit = 200
	v := newVault(t)
	ctx := context.Background()
	file := v.StatePath("cache", "dirsum-n")
	var sizes []int64
	for i := range 12 {
		p := "d" + strings.Repeat("x", i%3) + "/f.txt"
		if _, err := v.WriteNode(ctx, "n", map[string][]byte{p: []byte{byte('a' + i)}}, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	// Appending alone would pass 1,000 bytes within these writes (two or
	// three records of 101 bytes each); compacted, it stays near the limit.
	for _, n := range sizes {
		if n > 200+5*(sumRecLen+4) {
			t.Fatalf("the cache outgrew its limit: %v", sizes)
		}
	}
	if rep, err := v.Fsck(ctx); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}

// TestNodeWriteRaisesFormat: the first node write of a format-1 vault
// raises prose.yaml to the current format in the same commit, so an older
// prose refuses the vault.
func TestNodeWriteRaisesFormat(t *testing.T) {
	v := newVault(t)
	ctx := context.Background()
	cfg := *v.cfg
	cfg.Format = 1
	if _, err := v.CommitFiles(ctx, "test", "format 1\n", map[string][]byte{ConfigFile: cfg.encode()}); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v2, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if v2.Config().Format != 1 {
		t.Fatalf("format %d", v2.Config().Format)
	}
	res, err := v2.WriteNode(ctx, "n", map[string][]byte{"a/x.txt": []byte("x")}, WriteOptions{})
	if err != nil || res.Receipt == nil {
		t.Fatal(err)
	}
	data, ok, err := v2.ReadFile(ConfigFile)
	if err != nil || !ok {
		t.Fatal(err)
	}
	if _, err := parseConfig(ConfigFile, data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "format: 2") {
		t.Fatalf("prose.yaml after a node write:\n%s", data)
	}
	disk, _ := os.ReadFile(filepath.Join(v2.Root(), ConfigFile))
	if string(disk) != string(data) {
		t.Fatal("the working tree's prose.yaml was not brought along")
	}
	if rep, err := v2.Fsck(ctx); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}

// TestBlobsReadBackFromMemory: what a node write put is read back by the
// same Vault without a read of the object store (the wiki's search index
// reads every page it just wrote); another Vault reads the same bytes from
// the store.
func TestBlobsReadBackFromMemory(t *testing.T) {
	v := newVault(t)
	ctx := context.Background()
	files := map[string][]byte{}
	for i := 0; i < 3*packThreshold; i++ {
		files[fmt.Sprintf("d%d/p%d.txt", i%4, i)] = []byte(fmt.Sprintf("page %d", i))
	}
	if _, err := v.WriteNode(ctx, "pages", files, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range files {
		h := objectHash(plumbing.BlobObject, data)
		for _, vv := range []*Vault{v, other} {
			got, err := vv.Blob(h)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Blob(%s) = %q, %v; want %q", h, got, err, data)
			}
		}
	}
	if n := v.storeBlobReads.Load(); n != 0 {
		t.Fatalf("the writing Vault read %d of the %d blobs it had just written back from the store", n, len(files))
	}
	if n := other.storeBlobReads.Load(); n != int64(len(files)) {
		t.Fatalf("another Vault read %d blobs from the store, want %d", n, len(files))
	}
	// A caller changing what Blob returned changes nothing held.
	h := objectHash(plumbing.BlobObject, files["d0/p0.txt"])
	got, _ := v.Blob(h)
	got[0] = 'X'
	if again, _ := v.Blob(h); !bytes.Equal(again, files["d0/p0.txt"]) {
		t.Fatalf("Blob's result shares memory with what the Vault holds: %q", again)
	}
}

// TestTipCommitDecodedOnce: reading several files of the branch decodes its
// tip commit once (an ingest's tip carries a receipt listing every page it
// wrote, and each file read decoded it again).
//
// So are the trees on the way from the root to each file (an ingest reads
// its catalog, shards and pages one path at a time).
func TestTipCommitDecodedOnce(t *testing.T) {
	v := newVault(t)
	files := map[string][]byte{"a.txt": []byte("a"), "b.txt": []byte("b"), "c/d.txt": []byte("d"), "c/e/f.txt": []byte("f")}
	if _, err := v.WriteNode(context.Background(), "pages", files, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := Open(v.Root(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		for p, want := range files {
			got, ok, err := other.ReadFile("published/pages/" + p)
			if err != nil || !ok || !bytes.Equal(got, want) {
				t.Fatalf("ReadFile %s = %q, %v, %v", p, got, ok, err)
			}
		}
	}
	if n := other.storeCommitReads.Load(); n != 1 {
		t.Fatalf("12 file reads decoded the tip commit %d times; want once", n)
	}
	// root, published, published/pages, …/c, …/c/e
	if n := other.storeTreeReads.Load(); n != 5 {
		t.Fatalf("12 file reads decoded %d trees; want the 5 on their paths, once each", n)
	}
}

// idCache holds at most its capacity, dropping the oldest id first.
func TestIDCacheEvictsTheOldest(t *testing.T) {
	c := newIDCache[int](3)
	id := func(i int) plumbing.Hash { return objectHash(plumbing.BlobObject, []byte{byte(i)}) }
	for i := 0; i < 5; i++ {
		c.put(id(i), i)
		c.put(id(i), 100+i) // a second put of a held id changes nothing
	}
	for i := 0; i < 5; i++ {
		v, ok := c.get(id(i))
		if want := i >= 2; ok != want || ok && v != i {
			t.Fatalf("get(%d) = %d, %v; want held=%v", i, v, ok, want)
		}
	}
	if len(c.vals) != 3 {
		t.Fatalf("%d held, capacity 3", len(c.vals))
	}
}

// TestSumCacheDropsDamagedRecords: a record whose checksum fails (a flipped
// byte, a torn append) is not used; the records around it are.
func TestSumCacheDropsDamagedRecords(t *testing.T) {
	v := newVault(t)
	c := v.loadSumCache("n", nil)
	var hs []sumKey
	for i := range 3 {
		h := newSumKey("", plumbing.Hash{byte(i + 1)})
		hs = append(hs, h)
		c.put(h, dirSum{files: uint32(i + 10), kept: true})
	}
	c.save()
	data, err := os.ReadFile(c.file)
	if err != nil {
		t.Fatal(err)
	}
	// The records are in map order: find the second one by its hash.
	rec := sumRecLen + 4
	body := data[len(c.id):]
	damaged := decodeSumKey(body[rec:])
	body[rec+30] ^= 0x40
	data = append(data, body[:rec/2]...) // and a torn append
	if err := os.WriteFile(c.file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c = v.loadSumCache("n", nil)
	for _, h := range hs {
		_, ok := c.get(h)
		if ok == (h == damaged) {
			t.Fatalf("record %v: loaded %v (damaged %v)", h, ok, damaged)
		}
	}
}

// TestSumCacheOfAnotherIDIsReplaced: a cache file written under another id
// (an older layout, another view) is replaced by the first save, never
// appended to: appended records would sit under the foreign id and be
// ignored by every load.
func TestSumCacheOfAnotherIDIsReplaced(t *testing.T) {
	v := newVault(t)
	c := v.loadSumCache("n", nil)
	if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.file, []byte("dirsum-v0 blake3\n"+strings.Repeat("x", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	c = v.loadSumCache("n", nil)
	h := newSumKey("", plumbing.Hash{7})
	c.put(h, dirSum{files: 3})
	c.save()
	if got, ok := v.loadSumCache("n", nil).get(h); !ok || got.files != 3 {
		t.Fatalf("the record saved over a foreign file was not loaded: %v %v", got, ok)
	}
}

// A write never commits a file a scan would refuse for its size (fsck and
// diff would then fail on every later commit): it is refused before
// anything is stored, naming the file and the limit. Binary content has
// no limit.
func TestWriteNodeRefusesFilesPastTheScanLimits(t *testing.T) {
	v := newVault(t)
	head := func() string { h, _ := v.readRef(v.Branch()); return h.String() }
	before := head()
	big := []byte(strings.Repeat("x", published.MaxTextFile+1))
	for name, data := range map[string][]byte{
		"page.html": big,
		"t.json":    []byte(`"` + strings.Repeat("y", published.MaxJSONFile) + `"`),
		"t.yaml":    []byte("k: " + strings.Repeat("z", published.MaxYAMLFile)),
	} {
		_, err := v.WriteNode(context.Background(), "pages", map[string][]byte{"ok.md": []byte("fine"), name: data}, WriteOptions{})
		var se *published.SizeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), name) {
			t.Fatalf("%s: %v; want a size error naming it", name, err)
		}
	}
	if head() != before {
		t.Fatal("a refused write moved the branch")
	}
	bin := append([]byte{0xff, 0xfe}, big...)
	if _, err := v.WriteNode(context.Background(), "pages", map[string][]byte{"blob.bin": bin}, WriteOptions{}); err != nil {
		t.Fatalf("binary content past the text limit: %v", err)
	}
	rep, err := v.Fsck(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("fsck: %v %+v", err, rep)
	}
}
