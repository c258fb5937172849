package vault

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/published"
)

// informedWorld is a source directory under random edits, each reporting
// the paths it touched, as a render that knows what it wrote would.
type informedWorld struct {
	t   *testing.T
	rnd *rand.Rand
	dir string
	n   int
}

func (w *informedWorld) abs(p string) string { return filepath.Join(w.dir, filepath.FromSlash(p)) }

// files lists the world's files (slash paths) and directories.
func (w *informedWorld) files() (files, dirs []string) {
	filepath.WalkDir(w.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == w.dir {
			return err
		}
		rel, _ := filepath.Rel(w.dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "anchor" || strings.HasPrefix(rel, "anchor/") {
			return nil // the links' target: never edited
		}
		if d.IsDir() {
			dirs = append(dirs, rel)
		} else {
			files = append(files, rel)
		}
		return nil
	})
	return files, dirs
}

func (w *informedWorld) content(name string) string {
	w.n++
	switch {
	case strings.HasSuffix(name, ".json"):
		return fmt.Sprintf(`{"v":%d,"tag":"t%d"}`, w.n, w.rnd.Intn(3))
	case strings.HasSuffix(name, ".yaml"):
		return fmt.Sprintf("v: %d\nlist: [a, b]\n", w.n)
	}
	return fmt.Sprintf("text %d\n", w.n)
}

func (w *informedWorld) write(p, data string, exec bool) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(w.abs(p)), 0o755); err != nil {
		w.t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	os.Remove(w.abs(p))
	if err := os.WriteFile(w.abs(p), []byte(data), mode); err != nil {
		w.t.Fatal(err)
	}
}

// newName returns a fresh path, in an existing directory or a new one.
func (w *informedWorld) newName() string {
	_, dirs := w.files()
	exts := []string{".json", ".yaml", ".txt", ".md"}
	// Names whose byte order interleaves a directory's files with its
	// siblings ("t-x" sorts between "t" and "t/…").
	stems := []string{"n", "n-", "n.", "m"}
	name := fmt.Sprintf("%s%d%s", stems[w.rnd.Intn(len(stems))], w.rnd.Intn(1000), exts[w.rnd.Intn(len(exts))])
	tops := []string{"t", "t-x", "t.x", "t0"}
	switch k := w.rnd.Intn(4); {
	case k == 0 || len(dirs) == 0:
		return tops[w.rnd.Intn(len(tops))] + "/" + name
	case k == 1:
		return fmt.Sprintf("%s/new%d/%s", dirs[w.rnd.Intn(len(dirs))], w.rnd.Intn(3), name)
	default:
		return dirs[w.rnd.Intn(len(dirs))] + "/" + name
	}
}

// edit makes one random change and returns the paths a render would name
// for it.
func (w *informedWorld) edit() []string {
	files, dirs := w.files()
	pick := func(ss []string) string { return ss[w.rnd.Intn(len(ss))] }
	switch op := w.rnd.Intn(15); {
	case op == 12 && w.rnd.Intn(3) == 0: // a symlink to a file inside
		target := "anchor/target.json"
		p := w.newName()
		if err := os.MkdirAll(filepath.Dir(w.abs(p)), 0o755); err != nil {
			w.t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Dir(w.abs(p)), w.abs(target))
		if err := os.Symlink(rel, w.abs(p)); err != nil {
			w.t.Fatal(err)
		}
		return []string{p}
	case op == 13 && len(files) > 0: // a change named by its directory
		p := pick(files)
		w.write(p, w.content(p), false)
		return []string{filepath.ToSlash(filepath.Dir(p))}
	case op == 14: // a path that never existed
		return []string{fmt.Sprintf("nowhere%d/x.json", w.rnd.Intn(10))}
	case op < 4 && len(files) > 0: // rewrite a file
		p := pick(files)
		w.write(p, w.content(p), false)
		return []string{p}
	case op == 4 && len(files) > 0: // the same value, other bytes (immaterial)
		p := pick(files)
		if !strings.HasSuffix(p, ".json") {
			return []string{p} // named, unchanged
		}
		data, _ := os.ReadFile(w.abs(p))
		w.write(p, strings.ReplaceAll(string(data), ",", ", "), false)
		return []string{p}
	case op == 5 && len(files) > 1: // remove a file
		p := pick(files)
		os.Remove(w.abs(p))
		return []string{p}
	case op == 6 && len(dirs) > 1: // remove a directory, named as a whole
		d := pick(dirs)
		os.RemoveAll(w.abs(d))
		return []string{d}
	case op == 7 && len(files) > 0: // a file becomes a directory
		p := pick(files)
		os.Remove(w.abs(p))
		q := p + "/inner.json"
		w.write(q, w.content(q), false)
		return []string{q}
	case op == 8 && len(dirs) > 1: // a directory becomes a file
		d := pick(dirs)
		os.RemoveAll(w.abs(d))
		w.write(d, w.content(d), false)
		return []string{d}
	case op == 9 && len(files) > 0: // the executable bit
		p := pick(files)
		data, _ := os.ReadFile(w.abs(p))
		w.write(p, string(data), w.rnd.Intn(2) == 0)
		return []string{p}
	case op == 10 && len(files) > 0: // several files, one of them only named
		a, b := pick(files), w.newName()
		w.write(a, w.content(a), false)
		w.write(b, w.content(b), false)
		return []string{a, b, pick(files)}
	case op == 11: // files in sibling directories, named by their directories
		var named []string
		for _, d := range []string{"t", "t-x", "t.x"} {
			if w.rnd.Intn(2) == 0 {
				p := d + "/s" + fmt.Sprint(w.rnd.Intn(3)) + ".json"
				w.write(p, w.content(p), false)
				named = append(named, d)
			}
		}
		return named
	default: // add a file
		p := w.newName()
		w.write(p, w.content(p), false)
		return []string{p}
	}
}

// TestInformedPublishMatchesTheScan publishes one directory under random
// edits into three vaults: informed (the fast path whenever it can run),
// informed through the stat-cache scan (the base record removed first),
// and a full scan. Each step must give the three the same outcome: the
// same receipt (content hash and all), the same node tree, the same
// refusal. Now and then the informed vault publishes through the scan, so
// the stat cache the fast path keeps in step is what that scan trusts.
func TestInformedPublishMatchesTheScan(t *testing.T) {
	ctx := context.Background()
	fastRuns, steps := 0, 0
	seeds := int64(4)
	if testing.Short() {
		seeds = 1 // -short: one random world; the full run walks four
	}
	for seed := int64(1); seed <= seeds; seed++ {
		rnd := rand.New(rand.NewSource(seed))
		w := &informedWorld{t: t, rnd: rnd, dir: filepath.Join(t.TempDir(), "render")}
		for i := 0; i < 24; i++ {
			p := fmt.Sprintf("f%d/g%d/p%d.json", i%3, i%4, i)
			if i%5 == 0 {
				p = fmt.Sprintf("f%d/x%d.txt", i%3, i)
			}
			w.write(p, w.content(p), false)
		}
		w.write("anchor/target.json", `{"anchor":true}`, false)
		fast, slow, full := newVault(t), newVault(t), newVault(t)
		vaults := []*Vault{fast, slow, full}
		for _, v := range vaults {
			publish(t, v, "wm", w.dir, PublishOptions{})
		}
		for step := 0; step < 30; step++ {
			steps++
			changed := w.edit()
			before := fast.informedFast.Load()
			var results []*PublishResult
			var errs []error
			for k, v := range vaults {
				opt := PublishOptions{Changed: changed}
				switch {
				case k == 1 || (k == 0 && rnd.Intn(6) == 0):
					v.dropBase(w.dir)
				case k == 2 || (k == 0 && rnd.Intn(10) == 0):
					opt.Changed = nil
				}
				res, err := v.Publish(ctx, "wm", w.dir, opt)
				results, errs = append(results, res), append(errs, err)
			}
			fastRuns += int(fast.informedFast.Load() - before)
			where := fmt.Sprintf("seed %d step %d (changed %q, fast path %v)", seed, step, changed, fast.informedFast.Load() > before)
			if (errs[0] == nil) != (errs[2] == nil) || (errs[1] == nil) != (errs[2] == nil) {
				t.Fatalf("%s: errors differ:\n fast: %v\n slow: %v\n full: %v", where, errs[0], errs[1], errs[2])
			}
			if errs[2] != nil {
				t.Fatalf("%s: %v", where, errs[2])
			}
			for k, res := range results[:2] {
				want := results[2]
				if res.Receipt.ContentHash != want.Receipt.ContentHash || !reflect.DeepEqual(res.Moved, want.Moved) || res.Version != want.Version {
					for _, v := range vaults {
						_, tree, _ := v.NodeHead("wm")
						fs, _ := v.NodeFiles(tree)
						t.Logf("tree %v", fs)
					}
					ff, _ := w.files()
					t.Logf("dir %v", ff)
					snap, _ := published.Scan(w.dir, published.Options{})
					t.Logf("versions: fast %s slow %s full %s; scan now %s", results[0].Version, results[1].Version, results[2].Version, snap.Version)
					t.Fatalf("%s: vault %d gave\n %+v %v %s\nthe full scan\n %+v %v %s", where, k, res.Receipt, res.Moved, res.Version, want.Receipt, want.Moved, want.Version)
				}
			}
			var trees []plumbing.Hash
			for _, v := range vaults {
				_, tree, err := v.NodeHead("wm")
				if err != nil {
					t.Fatal(err)
				}
				trees = append(trees, tree)
			}
			if trees[0] != trees[2] || trees[1] != trees[2] {
				t.Fatalf("%s: node trees %v", where, trees)
			}
		}
		for _, v := range vaults {
			if rep, err := v.Fsck(ctx); err != nil || !rep.OK() {
				t.Fatalf("seed %d: fsck: %+v %v", seed, rep, err)
			}
			checkGitClean(t, v)
		}
	}
	// The fast path must carry most informed publishes: it falls back
	// only after a skipped publish, a kind change or a forced scan.
	if fastRuns < steps/3 {
		t.Fatalf("the fast path ran %d times in %d steps", fastRuns, steps)
	}
	t.Logf("fast path: %d of %d steps", fastRuns, steps)
}

// TestInformedPublishRefusesLikeTheScan: what a scan refuses in a changed
// path — a name colliding with a committed sibling by case or by key, a
// reserved top-level directory, a bad name — the fast path refuses too,
// and stores nothing.
func TestInformedPublishRefusesLikeTheScan(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, path string }{
		{"case", "a/Page.json"},
		{"key", "a/page.yaml"},
		{"reserved", "@atomic/x.json"},
		{"dir case", "A/x.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVault(t)
			dir := filepath.Join(t.TempDir(), "render")
			writeTree(t, dir, map[string]string{"a/page.json": `{"n":1}`, "b/other.json": `{"n":2}`})
			publish(t, v, "wm", dir, PublishOptions{})
			head, _, _ := v.NodeHead("wm")
			full := filepath.Join(dir, filepath.FromSlash(tc.path))
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, []byte(`{"n":3}`), 0o644)
			before := v.informedFast.Load()
			_, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{tc.path}})
			if err == nil {
				t.Fatalf("%s accepted", tc.path)
			}
			if _, ferr := v.Publish(ctx, "wm", dir, PublishOptions{}); ferr == nil {
				t.Fatalf("the full scan accepts %s", tc.path)
			}
			if now, _, _ := v.NodeHead("wm"); now != head {
				t.Fatalf("the branch moved to %s", now)
			}
			if v.informedFast.Load() != before+1 {
				t.Fatal("the fast path did not decide the publish")
			}
			t.Log(err)
		})
	}
}

// TestInformedPublishCostFollowsTheChange: with the base record and the
// tree sums in place, an informed publish of one file reads that file and
// nothing else of the directory — it works with the stat cache removed,
// which would make a scan read every file — and decodes the same number of
// trees in a node of 200 files as in one of 2,000. The other files of the
// changed directory are summed once, by the first publish there; the next
// ones take them from the file-sum cache.
func TestInformedPublishCostFollowsTheChange(t *testing.T) {
	var decoded []int64
	sizes := []int{200, 2000}
	if testing.Short() {
		sizes[1] = 1000 // -short: 200 against 1,000 files; the full run 2,000
	}
	for _, n := range sizes {
		v := newVault(t)
		dir := filepath.Join(t.TempDir(), "render")
		files := map[string]string{}
		for i := 0; i < n; i++ {
			files[fmt.Sprintf("f%d/g%d/p%d.json", i%10, i%7, i)] = fmt.Sprintf(`{"i":%d}`, i)
		}
		writeTree(t, dir, files)
		publish(t, v, "wm", dir, PublishOptions{})
		reads := v.storeTreeReads.Load()
		for k := 0; k < 3; k++ {
			if err := os.Remove(v.scanCachePath(dir)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			i := 3 + 70*k
			p := fmt.Sprintf("f%d/g%d/p%d.json", i%10, i%7, i)
			os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), []byte(fmt.Sprintf(`{"edit":%d}`, k)), 0o644)
			summed := v.filesSummed.Load()
			res := publish(t, v, "wm", dir, PublishOptions{Changed: []string{p}})
			if res.Receipt.Status != "rendered" || res.Stats.Files != n || res.Stats.Hashed != 1 || res.Stats.Statted > 3 {
				t.Fatalf("%d files, edit %d: %s, stats %+v", n, k, res.Receipt.Status, res.Stats)
			}
			// Every edit is in f3/g3, which holds n/70 files.
			if got := v.filesSummed.Load() - summed; (k == 0 && got > int64(n/70+1)) || (k > 0 && got != 0) {
				t.Fatalf("%d files, edit %d: %d files summed from their content", n, k, got)
			}
		}
		if got := v.informedFast.Load(); got != 3 {
			t.Fatalf("%d files: the fast path ran %d of 3 times", n, got)
		}
		decoded = append(decoded, v.storeTreeReads.Load()-reads)
	}
	if decoded[0] != decoded[1] {
		t.Fatalf("trees decoded for 3 one-file publishes: %d in 200 files, %d in 2,000", decoded[0], decoded[1])
	}
}

// TestInformedPublishAfterARefusal: a fast informed publish refused before
// it lands (a hand edit in the working tree) leaves the vault as it was,
// and the same publish run again gives what a full scan gives.
func TestInformedPublishAfterARefusal(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "render")
	writeTree(t, dir, map[string]string{"a/x.json": `{"n":1}`, "a/y.json": `{"n":2}`, "b/z.md": "z"})
	v, twin := newVault(t), newVault(t)
	publish(t, v, "wm", dir, PublishOptions{})
	publish(t, twin, "wm", dir, PublishOptions{})
	head, _, _ := v.NodeHead("wm")

	os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":10}`), 0o644)
	hand := filepath.Join(v.Root(), "published", "wm", "a", "x.json")
	os.WriteFile(hand, []byte(`{"by":"hand"}`), 0o644)
	before := v.informedFast.Load()
	if _, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{"a/x.json"}}); !errors.Is(err, ErrHandEdits) {
		t.Fatalf("publish over a hand edit: %v", err)
	}
	if v.informedFast.Load() != before+1 {
		t.Fatal("the refusal did not come from the fast path")
	}
	if now, _, _ := v.NodeHead("wm"); now != head {
		t.Fatal("a refused publish moved the branch")
	}
	git(t, v.Root(), "checkout", "--", "published/wm/a/x.json")

	res := publish(t, v, "wm", dir, PublishOptions{Changed: []string{"a/x.json"}})
	want := publish(t, twin, "wm", dir, PublishOptions{})
	if res.Receipt.ContentHash != want.Receipt.ContentHash || res.Version != want.Version {
		t.Fatalf("after the refusal: %s %s; the full scan: %s %s", res.Receipt.ContentHash, res.Version, want.Receipt.ContentHash, want.Version)
	}
	checkGitClean(t, v)
}

// TestInformedPublishOfAnEmptiedDirectory: removing every file is refused
// as a scan refuses it (ErrEmptySource), and with AllowEmpty gives what a
// full scan gives.
func TestInformedPublishOfAnEmptiedDirectory(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "render")
	writeTree(t, dir, map[string]string{"a/x.json": `{"n":1}`})
	v, twin := newVault(t), newVault(t)
	publish(t, v, "wm", dir, PublishOptions{})
	publish(t, twin, "wm", dir, PublishOptions{})
	os.RemoveAll(filepath.Join(dir, "a"))
	before := v.informedFast.Load()
	_, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{"a"}})
	if !errors.Is(err, ErrEmptySource) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("emptied directory: %v", err)
	}
	if v.informedFast.Load() != before+1 {
		t.Fatal("the refusal did not come from the fast path")
	}
	res := publish(t, v, "wm", dir, PublishOptions{Changed: []string{"a"}, AllowEmpty: true})
	want := publish(t, twin, "wm", dir, PublishOptions{AllowEmpty: true})
	if res.Receipt.ContentHash != want.Receipt.ContentHash || res.Version != want.Version {
		t.Fatalf("allowed empty: %s %s; the full scan: %s %s", res.Receipt.ContentHash, res.Version, want.Receipt.ContentHash, want.Version)
	}
	_, a, _ := v.NodeHead("wm")
	_, b, _ := twin.NodeHead("wm")
	if a != b {
		t.Fatalf("node trees %s and %s", a, b)
	}
	checkGitClean(t, v)
}

// TestPublishRebuildsADeletedIndex: a git index deleted by hand reads as
// empty (every file staged for removal); a publish, informed or not,
// rebuilds it from the branch first, so git status and fsck are clean after.
func TestPublishRebuildsADeletedIndex(t *testing.T) {
	for _, informed := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "render")
		writeTree(t, dir, map[string]string{"a/x.json": `{"n":1}`, "b/y.json": `{"n":1}`})
		v := newVault(t)
		publish(t, v, "wm", dir, PublishOptions{})
		if err := os.Remove(filepath.Join(v.Root(), ".git", "index")); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "a", "x.json"), []byte(`{"n":2}`), 0o644)
		opt := PublishOptions{}
		if informed {
			opt.Changed = []string{"a/x.json"}
		}
		publish(t, v, "wm", dir, opt)
		checkGitClean(t, v)
		if rep, err := v.Fsck(context.Background()); err != nil || !rep.OK() {
			t.Fatalf("informed %v: fsck %+v %v", informed, rep, err)
		}
	}
}

// TestSkippedInformedPublishStoresOnlyItsLedgerEntry: an informed publish
// of an immaterial change stores the same number of objects through the
// fast road as through the scan — its ledger entry — and no tree or blob
// of a node state it does not commit.
func TestSkippedInformedPublishStoresOnlyItsLedgerEntry(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "render")
	writeTree(t, dir, map[string]string{"a/b/x.json": `{"n":1}`, "c.json": `{"c":1}`})
	fast, slow := newVault(t), newVault(t)
	publish(t, fast, "wm", dir, PublishOptions{})
	publish(t, slow, "wm", dir, PublishOptions{})
	os.WriteFile(filepath.Join(dir, "a", "b", "x.json"), []byte(`{ "n": 1 }`), 0o644)
	var added []int
	for _, v := range []*Vault{fast, slow} {
		if v == slow {
			v.dropBase(dir)
		}
		before := countObjects(t, v)
		res, err := v.Publish(ctx, "wm", dir, PublishOptions{Changed: []string{"a/b/x.json"}})
		if err != nil || res.Receipt.Status != "skipped" {
			t.Fatalf("immaterial change: %v %v", res, err)
		}
		added = append(added, countObjects(t, v)-before)
	}
	if fast.informedFast.Load() != 1 || slow.informedFast.Load() != 0 {
		t.Fatalf("roads: fast %d, slow %d", fast.informedFast.Load(), slow.informedFast.Load())
	}
	if added[0] != added[1] {
		t.Fatalf("objects stored by a skipped publish: %d through the fast road, %d through the scan", added[0], added[1])
	}
}

// countObjects counts the loose objects and pack files of v.
func countObjects(t *testing.T, v *Vault) int {
	t.Helper()
	n := 0
	filepath.WalkDir(filepath.Join(v.Root(), ".git", "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
