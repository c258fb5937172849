package published

import (
	"context"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prose-store/prose/canon"
)

// Entry is one file of a scanned world-model.
type Entry struct {
	Path   string      // normalized slash path relative to the node directory
	Mode   fs.FileMode // 0644 or 0755 (the executable bit is kept); a symlink counts as its target
	Size   int64       // content length in bytes
	Sum    [32]byte    // BLAKE3 of the content
	GitOID [20]byte    // git blob id: SHA-1 of "blob <size>\x00" and the content
}

// Options tunes a Scan.
type Options struct {
	// Algorithm is the fingerprint hash; "" means BLAKE3.
	Algorithm canon.Algorithm
	// Spec is the node's canonicalization spec; nil makes everything
	// material with the top-level directories as facets.
	Spec *canon.Spec
	// CachePath is the stat cache file (for example
	// <vault>/.prose/cache/scan-<id>); "" scans without a cache.
	CachePath string
	// Changed, when not nil, informs the scan that only these paths
	// (relative to the directory; files or directories, existing or
	// removed) may have changed since the scan that wrote the cache: every
	// other entry is taken from the cache without a stat. A symlink whose
	// target changed counts as changed; links in the cache are re-checked
	// anyway. Without a usable cache — none, another setup's, or one whose
	// last delta was torn (it may not list the last scan's changes) — the
	// scan is a full one.
	Changed []string
	// View, when not nil, is the node's own view of its files (see View).
	View View
}

// Snapshot is the result of a Scan: the files of a world-model, its version
// address and its fingerprint map.
type Snapshot struct {
	Dir          string            // the scanned directory, absolute
	Entries      []Entry           // sorted by path bytes
	Version      string            // version address, "blake3:<hex>" (see VersionOf)
	Fingerprints map[string]string // "@atomic" and one token per facet
	Facets       []string          // "@atomic" first, then the facets in declared order, or the top-level directories in byte order
	// Dirs maps directory paths to their version hashes (see VersionOf),
	// for the directories Scan computed or took whole from the stat cache;
	// directories below one taken whole are absent. A directory's version
	// names its content exactly, so callers may key caches of their own
	// per-directory work by it.
	Dirs map[string][32]byte
	// DirTruths holds, for the same directories, the digest of each one's
	// reduced truth and whether anything in it is kept (what it
	// contributes to its parent's digest).
	DirTruths map[string]DirTruth
	Stats     ScanStats
}

// DirTruth is what a directory contributes to its parent's digest.
type DirTruth struct {
	Digest canon.Digest
	Kept   bool
}

// ScanStats counts the work a Scan did.
type ScanStats struct {
	Files     int   // files in the snapshot
	Hashed    int   // files read (cache misses, racy entries, new files)
	CacheHits int   // files taken from the cache without reading them
	BytesRead int64 // bytes read from files
	Statted   int   // stat calls on files (0 for untouched files of an informed scan)
	Links     int   // files reached through a symlink
}

// Scan collects the world-model in dir and computes its entries, version
// address and fingerprints: the hot path of a publish.
//
// The directory maps to structured truth as ReadTruth describes, and the
// fingerprints are those canon.Fingerprints gives for that truth and
// opt.Spec (with the top-level directories as facets when the spec
// declares none). Path rules are enforced as the walk goes: names that are
// not valid world-model path segments, names of one directory that differ
// only in case or Unicode normalization, two files giving the same key,
// symlinks leaving dir, links to directories, and special files are errors.
//
// With opt.CachePath, a file whose stat data matches the cache is not read
// (see cache.go for the racy-timestamp rule); the cache is rewritten when
// anything changed. A cache that cannot be written is not an error: the
// snapshot is still right, and the next scan reads more.
func Scan(dir string, opt Options) (*Snapshot, error) {
	return ScanContext(context.Background(), dir, opt)
}

// ScanContext is Scan that stops when ctx is done: the walk checks it in
// each directory, the reads before each file and between the chunks of a
// large one. It then returns ctx's error and leaves the stat cache as it
// was.
func ScanContext(ctx context.Context, dir string, opt Options) (*Snapshot, error) {
	start := time.Now()
	cfg, err := newFPConfig(opt)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	w, err := newWalker(dir)
	if w != nil {
		w.view = cfg.view
	}
	if err != nil {
		return nil, err
	}
	w.ctx = ctx
	defer w.close()
	var cache *statCache
	if opt.CachePath != "" {
		if abs, err := filepath.Abs(opt.CachePath); err == nil && within(w.root, abs) {
			return nil, fmt.Errorf("scan %s: the stat cache %s lies inside the scanned directory; keep it outside (for example under the vault's .prose/cache)", w.root, opt.CachePath)
		}
		cache = loadCache(opt.CachePath, w.root, cfg.id)
	}
	var walked []walkedFile
	// A changed path is checked whichever way the scan goes, so a bad one
	// is refused alike with or without a usable cache.
	if opt.Changed != nil && !namesRoot(opt.Changed) {
		for _, p := range opt.Changed {
			n, err := NormalizePath(p)
			if err != nil {
				return nil, fmt.Errorf("changed path: %w", err)
			}
			if err := w.checkRawChanged(p, n); err != nil {
				return nil, err
			}
		}
	}
	// A torn cache lost its last delta: what it says of the paths that
	// delta recorded is older than the directory, so it lists nothing an
	// informed scan may trust without looking.
	if opt.Changed != nil && cache != nil && !cache.torn && !namesRoot(opt.Changed) {
		walked, err = w.informed(cache, opt.Changed)
	} else {
		walked, err = w.walk()
	}
	if err != nil {
		return nil, err
	}
	// "@atomic" names the whole-truth facet; a top-level directory of that
	// name would be taken for it.
	for i := range walked {
		if strings.HasPrefix(walked[i].path, canon.Atomic+"/") {
			return nil, fmt.Errorf("scan %s: the top-level directory %q is reserved for the whole-truth facet; rename it", w.root, canon.Atomic)
		}
	}

	snap := &Snapshot{Dir: w.root, Entries: make([]Entry, len(walked))}
	fps := make([]fileFP, len(walked))
	flags := make([]uint8, len(walked))
	from := make([]int32, len(walked)) // cache entry an unchanged file came from, or -1
	var removed []string               // cached paths that are gone
	var misses []int
	ci := 0
	for i := range walked {
		f := &walked[i]
		e := &snap.Entries[i]
		e.Path, e.Mode, e.Size = f.path, f.perm(), f.st.size
		if f.link {
			flags[i] |= flagLink
			snap.Stats.Links++
		}
		from[i] = -1
		for ci < cache.len() && cache.recs[ci].path < f.path {
			removed = append(removed, cache.recs[ci].path)
			ci++
		}
		if ci < cache.len() && cache.recs[ci].path == f.path {
			cf := cache.flags(ci)
			if cache.stat(ci) == f.st && (f.trusted || cf&flagRacy == 0) {
				cache.fill(ci, e, &fps[i])
				if f.trusted {
					flags[i] |= cf & flagRacy
				}
				from[i] = int32(ci)
				snap.Stats.CacheHits++
				ci++
				continue
			}
			ci++
		}
		misses = append(misses, i)
	}
	for ; ci < cache.len(); ci++ {
		removed = append(removed, cache.recs[ci].path)
	}
	if err := readMisses(ctx, w, cfg, walked, misses, snap, fps, flags); err != nil {
		return nil, err
	}

	// Directories above a file read or removed are hashed again; the
	// cache has the others.
	var dirty map[string]bool
	if cache != nil {
		dirty = map[string]bool{}
		for _, i := range misses {
			markAncestors(dirty, walked[i].path)
		}
		for _, p := range removed {
			markAncestors(dirty, p)
		}
	}
	t := &scanTree{comp: cfg.newComposer(snap.Entries, fps), ver: newVersionTree(snap.Entries), cache: cache, dirty: dirty}
	if err := walkTree(snap.Entries, t); err != nil {
		return nil, fmt.Errorf("scan %s: %w", w.root, err)
	}
	res := t.comp.result()
	snap.Fingerprints, snap.Facets = res.fingerprints, res.facets
	snap.Dirs = make(map[string][32]byte, len(t.dirs)+len(t.skipped))
	snap.DirTruths = make(map[string]DirTruth, len(t.dirs)+len(t.skipped))
	for _, recs := range [][]dirRecord{t.dirs, t.skipped} {
		for _, d := range recs {
			snap.Dirs[d.path] = d.tree
			snap.DirTruths[d.path] = DirTruth{Digest: d.digest, Kept: d.kept}
		}
	}
	snap.Version = t.ver.address()
	snap.Stats.Files = len(walked)
	snap.Stats.Statted = int(w.statted.Load())

	if opt.CachePath != "" {
		writeCache(opt.CachePath, w, cfg, cache, start, walked, snap.Entries, fps, flags, from, removed, t)
	}
	return snap, nil
}

// markAncestors marks the directories above the path p in dirty.
func markAncestors(dirty map[string]bool, p string) {
	for j := len(p) - 1; j > 0; j-- {
		if p[j] != '/' {
			continue
		}
		d := p[:j]
		if dirty[d] {
			return // and so are the ones above it
		}
		dirty[d] = true
	}
}

// scanTree composes fingerprints and the version address in one pass over
// a scan's entries, taking clean directories (nothing below them read or
// removed) whole from the stat cache.
type scanTree struct {
	comp    *composer
	ver     *versionTree
	cache   *statCache
	dirty   map[string]bool
	open    []string    // paths of the open directories
	dirs    []dirRecord // the directories computed, in the order they closed
	skipped []dirRecord // the directories taken from the cache
}

func (t *scanTree) enter(path, name string) (bool, error) {
	if path != "" && !t.dirty[path] && t.comp.canSkip(name) {
		if r, ok := t.cache.dir(path); ok {
			t.comp.addDir(name, path, r.kept, r.digest)
			t.ver.addDir(name, r.tree)
			t.skipped = append(t.skipped, r)
			return true, nil
		}
	}
	t.comp.enter(path, name)
	t.ver.enter(path, name)
	t.open = append(t.open, path)
	return false, nil
}

func (t *scanTree) file(i int, name string) error {
	t.comp.file(i, name)
	return t.ver.file(i, name)
}

func (t *scanTree) leave() error {
	if err := t.comp.leave(); err != nil {
		return err
	}
	t.ver.leave()
	p := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	if p != "" {
		t.dirs = append(t.dirs, dirRecord{path: p, kept: t.comp.lastKept, digest: t.comp.lastDigest, tree: t.ver.last})
	}
	return nil
}

// readMisses reads the files at the indexes misses, fills their entries and
// fingerprint parts, and counts the work in snap.Stats. Files are read in
// parallel; the error reported is the first in path order.
func readMisses(ctx context.Context, w *walker, cfg *fpConfig, walked []walkedFile, misses []int, snap *Snapshot, fps []fileFP, flags []uint8) error {
	if len(misses) == 0 {
		return nil
	}
	errs := make([]error, len(misses))
	sizes := make([]int64, len(misses))
	work := func(k int) {
		if errs[k] = ctx.Err(); errs[k] != nil {
			return
		}
		i := misses[k]
		f := &walked[i]
		defer admit(f.st.size)()
		l, err := w.load(ctx, f)
		if err != nil {
			errs[k] = err
			return
		}
		sizes[k] = l.size
		e := &snap.Entries[i]
		e.Size, e.Sum, e.GitOID = l.size, l.sum, l.oid
		if l.size != f.st.size {
			// Changed between stat and read: do not trust this entry's
			// stat data next time.
			flags[i] |= flagRacy
		}
		if fps[i], err = cfg.fileFP(f.path, l.value); err != nil {
			errs[k] = err
		}
	}
	parallel(len(misses), work)
	for k, err := range errs {
		if err != nil {
			return err
		}
		snap.Stats.Hashed++
		snap.Stats.BytesRead += sizes[k]
	}
	return nil
}

// writeCache records the scan in the stat cache: a delta appended to the
// loaded cache when few entries changed, else a rewrite. Verified entries
// are judged racy against the scan's start (see cache.go); trusted ones keep
// their flag. A cache that cannot be written is not an error: the next scan
// reads more, nothing else.
func writeCache(file string, w *walker, cfg *fpConfig, cache *statCache, start time.Time,
	walked []walkedFile, entries []Entry, fps []fileFP, flags []uint8, from []int32, removed []string, t *scanTree) {
	racyFrom := start.UnixNano() - racyGranularity(walked)
	var changed []int
	for i := range walked {
		// The later of mtime and ctime: a file written within the tick and
		// given an old mtime (cp -p, rsync -t, touch -d) is just as racy.
		if st := &walked[i].st; !walked[i].trusted && max(st.mtime, st.ctime) >= racyFrom {
			flags[i] |= flagRacy
		}
		if from[i] < 0 {
			changed = append(changed, i)
			continue
		}
		f := flags[i]
		if fps[i].kept {
			f |= flagKept
		}
		if f != cache.flags(int(from[i])) {
			changed = append(changed, i)
		}
	}
	slices.SortFunc(t.dirs, func(a, b dirRecord) int { return strings.Compare(a.path, b.path) })
	var changedDirs []dirRecord
	var goneDirs []string
	if cache != nil {
		computed := make(map[string]bool, len(t.dirs))
		for _, d := range t.dirs {
			computed[d.path] = true
			if old, ok := cache.dir(d.path); !ok || old != d {
				changedDirs = append(changedDirs, d)
			}
		}
		// A cached directory that went away had all its files removed, so
		// it is dirty, and was not computed.
		for d := range t.dirty {
			if _, ok := cache.dir(d); ok && !computed[d] {
				goneDirs = append(goneDirs, d)
			}
		}
		slices.Sort(goneDirs)
	}
	if cache != nil && len(changed) == 0 && len(removed) == 0 && len(changedDirs) == 0 && len(goneDirs) == 0 {
		return
	}
	est := len(changed)*(cacheFixed+64) + len(removed)*64 + len(changedDirs)*(dirFixed+32) + len(goneDirs)*32
	if !cache.rewriteDue(est) {
		b := newBlock(nil, blockDelta)
		for _, i := range changed {
			b.add(&entries[i], walked[i].st, flags[i], &fps[i])
		}
		b.dirs(changedDirs)
		if appendCacheFile(file, cache, b.finish(removed, goneDirs)) == nil {
			return
		}
	}
	// A rewrite keeps the records of the directories taken from the cache
	// and of everything below them.
	dirs := t.dirs
	for _, r := range t.skipped {
		sk := r.path
		dirs = append(dirs, r)
		// Byte order puts "a-b" between "a" and "a/x": look for "a/".
		lo, _ := slices.BinarySearchFunc(cache.dirs, sk+"/", func(r cacheRec, p string) int { return strings.Compare(r.path, p) })
		for k := lo; k < len(cache.dirs) && strings.HasPrefix(cache.dirs[k].path, sk+"/"); k++ {
			r, _ := cache.dir(cache.dirs[k].path)
			dirs = append(dirs, r)
		}
	}
	slices.SortFunc(dirs, func(a, b dirRecord) int { return strings.Compare(a.path, b.path) })
	buf := cacheHeader(w.root, cfg.id)
	b := newBlock(slices.Grow(buf, len(walked)*(cacheFixed+40)+len(dirs)*(dirFixed+32)), blockBase)
	for i := range walked {
		b.add(&entries[i], walked[i].st, flags[i], &fps[i])
	}
	b.dirs(dirs)
	_ = writeCacheFile(file, b.finish(nil, nil))
}

// parallel calls work(k) for k in [0, n) on up to GOMAXPROCS goroutines
// and returns when all calls have.
func parallel(n int, work func(k int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for k := range n {
			work(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				work(k)
			}
		})
	}
	wg.Wait()
}

// gitBlobID returns the git object id of a blob with content data.
func gitBlobID(data []byte) [20]byte {
	h := sha1.New()
	var hdr [32]byte
	b := strconv.AppendInt(append(hdr[:0], "blob "...), int64(len(data)), 10)
	h.Write(append(b, 0))
	h.Write(data)
	var id [20]byte
	h.Sum(id[:0])
	return id
}

// informed lists the files of the root for an informed scan: the cache's
// entries, except at and below the changed paths, which are looked at
// afresh. A changed path below something that is no longer a directory
// stands for that ancestor. Links in the cache are re-checked, since their
// targets may have changed unannounced.
func (w *walker) informed(c *statCache, changed []string) ([]walkedFile, error) {
	roots, fresh, err := w.changedRoots(changed)
	if err != nil {
		return nil, err
	}
	skip := make([]bool, c.len())
	mark := func(p string) {
		if i, ok := slices.BinarySearchFunc(c.recs, p, func(r cacheRec, p string) int { return strings.Compare(r.path, p) }); ok {
			skip[i] = true
		}
	}
	for _, r := range roots {
		// Cached files at r, below r, or where a directory above r now is
		// are replaced by what is there now.
		mark(r)
		lo, _ := slices.BinarySearchFunc(c.recs, r+"/", func(x cacheRec, p string) int { return strings.Compare(x.path, p) })
		for i := lo; i < len(c.recs) && strings.HasPrefix(c.recs[i].path, r+"/"); i++ {
			skip[i] = true
		}
		for j := 0; j < len(r); j++ {
			if r[j] == '/' {
				mark(r[:j])
			}
		}
	}

	out := make([]walkedFile, 0, c.len()+len(fresh))
	fi := 0
	for i := range c.recs {
		if skip[i] {
			continue
		}
		p := c.recs[i].path
		for fi < len(fresh) && fresh[fi].path < p {
			out = append(out, fresh[fi])
			fi++
		}
		f := walkedFile{path: p, st: c.stat(i), trusted: true}
		if c.flags(i)&flagLink != 0 {
			st, target, err := w.followLink(p)
			if err != nil {
				return nil, err
			}
			f = walkedFile{path: p, st: st, link: true, target: target}
		}
		out = append(out, f)
	}
	return append(out, fresh[fi:]...), nil
}

// checkRawChanged refuses a changed path p that normalization read
// differently (n) when p itself names something in the directory: a
// backslash is a separator in a changed path, but where the file system
// takes it as part of a name, `bad\name` is that file, which a full scan
// refuses. Without this check the informed scan would look at "bad/name"
// and publish as though the file were not there.
func (w *walker) checkRawChanged(p, n string) error {
	if p == n || filepath.Separator == '\\' || !strings.Contains(p, `\`) {
		return nil
	}
	raw := strings.Trim(p, "/")
	if _, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(raw))); err != nil {
		return nil // nothing of that name: the backslashes are separators
	}
	for seg := range strings.SplitSeq(raw, "/") {
		if strings.Contains(seg, `\`) {
			return &PathError{Path: p, Rule: ruleBackslash}
		}
	}
	return nil
}

// NamesRoot reports whether a changed path names the node directory itself
// ("", ".", "./"): then everything may have changed, and an informed
// publish is a full one.
func NamesRoot(changed []string) bool { return namesRoot(changed) }

func namesRoot(changed []string) bool {
	for _, p := range changed {
		if strings.Trim(strings.ReplaceAll(p, "\\", "/"), "./") == "" {
			return true
		}
	}
	return false
}
