package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func same(t *testing.T, what string, v, twin *Vault, res, want *PublishResult) {
	t.Helper()
	_, a, _ := v.NodeHead("wm")
	_, b, _ := twin.NodeHead("wm")
	if res.Receipt.ContentHash != want.Receipt.ContentHash || res.Version != want.Version || a != b {
		fa, _ := v.NodeFiles(a)
		fb, _ := twin.NodeFiles(b)
		t.Fatalf("%s: got %s %s %s tree %v\nwant %s %s %s tree %v", what, res.Receipt.Status, res.Receipt.ContentHash, res.Version, fa, want.Receipt.Status, want.Receipt.ContentHash, want.Version, fb)
	}
}

// twinVaults publishes a one-file directory into two new vaults.
func twinVaults(t *testing.T) (v, twin *Vault, dir string) {
	t.Helper()
	requireGit(t)
	dir = filepath.Join(t.TempDir(), "render")
	writeTree(t, dir, map[string]string{"a/x.json": `{"n":1}`})
	v, twin = newVault(t), newVault(t)
	publish(t, v, "wm", dir, PublishOptions{})
	publish(t, twin, "wm", dir, PublishOptions{})
	return v, twin, dir
}

// refuseScanPublish has a full publish of dir into v refused by a hand
// edit of published/wm/a/x.json — after its scan saw dir and rewrote the
// stat cache — then puts the file back.
func refuseScanPublish(t *testing.T, v *Vault, dir string) {
	t.Helper()
	hand := filepath.Join(v.Root(), "published", "wm", "a", "x.json")
	os.WriteFile(hand, []byte(`{"by":"hand"}`), 0o644)
	if _, err := v.Publish(context.Background(), "wm", dir, PublishOptions{}); !errors.Is(err, ErrHandEdits) {
		t.Fatalf("want hand edits, got %v", err)
	}
	git(t, v.Root(), "checkout", "--", "published/wm/a/x.json")
}

// publishAfterRefusal publishes dir into v informed of changed — which
// must go through the scan, since a refused scan publish came before — and
// into twin with a full scan, and checks that the two agree.
func publishAfterRefusal(t *testing.T, v, twin *Vault, dir string, changed ...string) (res, want *PublishResult) {
	t.Helper()
	before := v.informedFast.Load()
	res = publish(t, v, "wm", dir, PublishOptions{Changed: changed})
	if v.informedFast.Load() != before {
		t.Fatal("the fast road ran after a refused scan publish: its base record should be gone")
	}
	want = publish(t, twin, "wm", dir, PublishOptions{})
	same(t, "after the refused publish", v, twin, res, want)
	return res, want
}

// A scan publish refused after it wrote the stat cache (a hand edit) must
// not leave the base record naming the committed tree: the cache is ahead
// of it, and the fast road's delta would leave stale records behind (a
// directory record a later full scan takes whole). The next informed
// publish goes through the scan, and every later publish agrees with a
// twin vault that only ever scans.
func TestInformedAfterARefusedScanStaleDirRecord(t *testing.T) {
	ctx := context.Background()
	v, twin, dir := twinVaults(t)

	// P2: a full publish refused by a hand edit, after its scan.
	os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":2}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "b", "y.json"), []byte(`{"n":1}`), 0o644)
	refuseScanPublish(t, v, dir)

	// P3: b/y.json changes again; the informed publish names what changed
	// since the last publish that landed.
	os.WriteFile(filepath.Join(dir, "b", "y.json"), []byte(`{"n":22}`), 0o644)
	time.Sleep(100 * time.Millisecond) // not racy when P3 records it
	res, want := publishAfterRefusal(t, v, twin, dir, "a/x.json", "b")

	// P4: a full scan publish after one more change elsewhere.
	os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":3}`), 0o644)
	res = publish(t, v, "wm", dir, PublishOptions{})
	want = publish(t, twin, "wm", dir, PublishOptions{})
	same(t, "P4 full scan", v, twin, res, want)

	// A full scan that had taken the stale record would also have taught
	// the tree cache a wrong version → tree pair, which a publish with no
	// stat cache at all would then commit: b/y.json back to {"n":1}, no
	// stat cache, no base record, a plain full scan.
	os.WriteFile(filepath.Join(dir, "b", "y.json"), []byte(`{"n":1}`), 0o644)
	os.Remove(v.scanCachePath(dir))
	v.dropBase(dir)
	res = publish(t, v, "wm", dir, PublishOptions{})
	want = publish(t, twin, "wm", dir, PublishOptions{})
	same(t, "full scan without stat cache", v, twin, res, want)
	if rep, err := v.Fsck(ctx); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}

// Same, with a file the refused scan saw and that went away before the
// next publish: no later publish may bring it back.
func TestInformedAfterARefusedScanForgetsAGoneFile(t *testing.T) {
	for _, zContent := range []string{`{"z":1}`, `{"n":1}`} {
		t.Run(zContent, func(t *testing.T) { resurrect(t, zContent) })
	}
}

func resurrect(t *testing.T, zContent string) {
	ctx := context.Background()
	v, twin, dir := twinVaults(t)

	os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":2}`), 0o644)
	os.WriteFile(filepath.Join(dir, "a", "z.json"), []byte(zContent), 0o644)
	refuseScanPublish(t, v, dir)

	// z.json goes away again; since the last landed publish only a/x.json
	// changed (z came and went), and the caller names both anyway.
	os.Remove(filepath.Join(dir, "a", "z.json"))
	publishAfterRefusal(t, v, twin, dir, "a/x.json", "a/z.json")

	// P4: an informed publish through the stat-cache scan.
	os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":3}`), 0o644)
	v.dropBase(dir)
	res, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{"a/x.json"}})
	if err != nil {
		t.Fatalf("P4 informed scan: %v", err)
	}
	want := publish(t, twin, "wm", dir, PublishOptions{})
	same(t, "P4 informed scan", v, twin, res, want)
}

// A changed path naming the directory itself is a full publish, whichever
// road would have taken it.
func TestInformedNamingTheDirectoryScansIt(t *testing.T) {
	ctx := context.Background()
	for _, root := range []string{".", "./", "", `.\`} {
		t.Run(root, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "render")
			writeTree(t, dir, map[string]string{"a/x.json": `{"n":1}`})
			v, twin := newVault(t), newVault(t)
			publish(t, v, "wm", dir, PublishOptions{})
			publish(t, twin, "wm", dir, PublishOptions{})
			os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":2}`), 0o644)
			res, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{root}})
			want := publish(t, twin, "wm", dir, PublishOptions{Changed: []string{root}})
			if err != nil {
				t.Fatalf("fast road (%d): %v; the scan gives %s", v.informedFast.Load(), err, want.Receipt.Status)
			}
			same(t, "root", v, twin, res, want)
		})
	}
}

// pathView reads .txt files under "u/" upper-cased and others as they
// are: a view that depends on the path (View allows it: "a pure function
// of (p, data)"). Two directories with the same git tree then have
// different sums, so the sum caches key by path as well as id.
type pathView struct{}

func (pathView) ViewName() string { return "path-test-v1" }
func (pathView) Value(p string, data []byte) (any, bool, error) {
	if !strings.HasSuffix(p, ".txt") {
		return nil, false, nil
	}
	if strings.HasPrefix(p, "u/") {
		return strings.ToUpper(string(data)), true, nil
	}
	return string(data), true, nil
}

func TestInformedPathDependentView(t *testing.T) {
	RegisterView("pv", pathView{})
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "render")
	// u/s and l/s are the same git tree, with different truths.
	writeTree(t, dir, map[string]string{"u/s/a.txt": "hi", "l/s/a.txt": "hi", "u/k.json": `{"n":1}`, "l/k.json": `{"n":1}`})
	v, twin := newVault(t), newVault(t)
	publish(t, v, "pv", dir, PublishOptions{})
	publish(t, twin, "pv", dir, PublishOptions{})
	for i, p := range []string{"u/k.json", "l/k.json", "u/k.json", "l/k.json"} {
		os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprintf(`{"n":%d}`, i+2)), 0o644)
		before := v.informedFast.Load()
		res, err := v.Publish(ctx, "pv", dir, PublishOptions{Changed: []string{p}})
		if err != nil {
			t.Fatal(err)
		}
		want := publish(t, twin, "pv", dir, PublishOptions{})
		t.Logf("step %d fast=%v", i, v.informedFast.Load() > before)
		if res.Receipt.ContentHash != want.Receipt.ContentHash || res.Version != want.Version {
			t.Fatalf("step %d: fast %v\nscan %v", i, res.Receipt.Fingerprints, want.Receipt.Fingerprints)
		}
	}
}

// The same refused scan publish, with the caller naming only what changed
// since that refused publish: the publish after it agrees with the stat-
// cache scan of a twin vault.
func TestInformedAfterARefusedScanAgreesAtOnce(t *testing.T) {
	fast, slow, dir := twinVaults(t)
	os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":2}`), 0o644)
	for _, v := range []*Vault{fast, slow} {
		refuseScanPublish(t, v, dir)
	}
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"b":1}`), 0o644)
	res := publish(t, fast, "wm", dir, PublishOptions{Changed: []string{"b.json"}})
	slow.dropBase(dir)
	want := publish(t, slow, "wm", dir, PublishOptions{Changed: []string{"b.json"}})
	if fast.informedFast.Load() != 0 {
		t.Fatal("the fast road ran after a refused scan publish: its base record should be gone")
	}
	same(t, "after the refused publish", fast, slow, res, want)
}

// TestInformedPublishCornerCases: a sequence of informed publishes of
// unusual changes — NFD and NFC names, executable bits, empty and large
// files, immaterial then material rewrites, an empty change list, damaged
// sum caches, a torn stat cache, kind changes at depth, nested and
// byte-order-adjacent roots, names with spaces — each agreeing with a twin
// vault's full scan.
func TestInformedPublishCornerCases(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat(`{"k":"`+strings.Repeat("x", 1000)+`"},`, 1500)
	big = `[` + big[:len(big)-1] + `]`
	type step struct {
		name    string
		do      func(dir string)
		changed []string
		pre     func(v *Vault, dir string)
	}
	w := func(dir, p, c string, mode os.FileMode) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.Remove(full)
		os.WriteFile(full, []byte(c), mode)
	}
	steps := []step{
		{"nfd name", func(d string) { w(d, "a/e\u0301.json", `{"n":1}`, 0o644) }, []string{"a/e\u0301.json"}, nil},
		{"nfc sibling", func(d string) { w(d, "a/\u00e9.json", `{"n":1}`, 0o644) }, []string{"a/\u00e9.json"}, nil},
		{"drop nfc", func(d string) { os.Remove(filepath.Join(d, "a", "\u00e9.json")) }, []string{"a/\u00e9.json"}, nil},
		{"exec new", func(d string) { w(d, "n/m/run.sh", "echo", 0o755) }, []string{"n/m/run.sh"}, nil},
		{"exec off", func(d string) { w(d, "n/m/run.sh", "echo", 0o644) }, []string{"n/m/"}, nil},
		{"empty file", func(d string) { w(d, "e/empty.txt", "", 0o644) }, []string{"./e/empty.txt"}, nil},
		{"big file", func(d string) { w(d, "big/b.json", big, 0o644) }, []string{`big\b.json`}, nil},
		{"big sibling", func(d string) { w(d, "big/c.json", `{"c":1}`, 0o644) }, []string{"big/c.json"}, nil},
		{"whitespace", func(d string) { w(d, "big/c.json", `{"c": 1}`, 0o644) }, []string{"big/c.json"}, nil},
		{"then material", func(d string) { w(d, "big/c.json", `{"c": 2}`, 0o644) }, []string{"big/c.json"}, nil},
		{"empty changed", func(d string) {}, []string{}, nil},
		{"dirsum gone", func(d string) { w(d, "a/z.json", `{"z":1}`, 0o644) }, []string{"a/z.json"}, func(v *Vault, d string) { os.Remove(v.StatePath("cache", "dirsum-wm")) }},
		{"filesum garbage", func(d string) { w(d, "a/z.json", `{"z":2}`, 0o644) }, []string{"a/z.json"}, func(v *Vault, d string) {
			f, _ := os.OpenFile(v.StatePath("cache", "filesum-wm"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("garbage-garbage-garbage"))
			f.Close()
		}},
		{"dirsum garbage", func(d string) { w(d, "a/z.json", `{"z":3}`, 0o644) }, []string{"a/z.json"}, func(v *Vault, d string) {
			data, _ := os.ReadFile(v.StatePath("cache", "dirsum-wm"))
			os.WriteFile(v.StatePath("cache", "dirsum-wm"), data[:len(data)-7], 0o644)
		}},
		{"stat cache torn", func(d string) { w(d, "a/z.json", `{"z":5}`, 0o644) }, []string{"a/z.json"}, func(v *Vault, d string) {
			data, _ := os.ReadFile(v.scanCachePath(d))
			os.WriteFile(v.scanCachePath(d), data[:len(data)-3], 0o644)
		}},
		{"after torn", func(d string) { w(d, "a/z.json", `{"z":6}`, 0o644) }, []string{"a/z.json"}, func(v *Vault, d string) { v.dropBase(d) }},
		{"file to dir deep", func(d string) { os.Remove(filepath.Join(d, "a", "z.json")); w(d, "a/z.json/q/r.json", `{}`, 0o644) }, []string{"a/z.json/q/r.json"}, nil},
		{"dir to file", func(d string) { os.RemoveAll(filepath.Join(d, "a", "z.json")); w(d, "a/z.json", `{}`, 0o644) }, []string{"a/z.json/q"}, nil},
		{"nested roots", func(d string) { w(d, "a/b/c.json", `{"c":1}`, 0o644); w(d, "a-b/c.json", `{}`, 0o644) }, []string{"a/b/c.json", "a", "a-b", "a/b"}, nil},
		{"space dot dash", func(d string) { w(d, "s p/.h-i.json", `{"h":1}`, 0o644); w(d, "s p/x y.txt", "t", 0o644) }, []string{"s p"}, nil},
	}
	dir := filepath.Join(t.TempDir(), "render")
	writeTree(t, dir, map[string]string{"a/x.json": `{"n":1}`, "b/y.json": `{"n":1}`})
	v, twin := newVault(t), newVault(t)
	publish(t, v, "wm", dir, PublishOptions{})
	publish(t, twin, "wm", dir, PublishOptions{})
	for _, s := range steps {
		s.do(dir)
		if s.pre != nil {
			s.pre(v, dir)
		}
		before := v.informedFast.Load()
		res, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: s.changed})
		want, werr := twin.Publish(ctx, "wm", dir, PublishOptions{})
		fast := v.informedFast.Load() > before
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s (fast %v): %v vs %v", s.name, fast, err, werr)
		}
		if err != nil {
			t.Logf("%s: both refuse: %v", s.name, err)
			continue
		}
		t.Logf("%s: fast %v %s", s.name, fast, res.Receipt.Status)
		same(t, s.name, v, twin, res, want)
	}
	// And a full scan of each at the end.
	res := publish(t, v, "wm", dir, PublishOptions{})
	want := publish(t, twin, "wm", dir, PublishOptions{})
	same(t, "final", v, twin, res, want)
	if rep, err := v.Fsck(ctx); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}
