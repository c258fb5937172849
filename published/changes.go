package published

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prose-store/prose/canon"
)

// ChangeSet is what an informed publish reads from a directory when it
// does not scan it: the files at and below the changed paths, read and
// fingerprinted with every path rule a full scan applies to them. Whoever
// uses it knows the rest of the directory from elsewhere (the vault, from
// the node's committed tree) and keeps the stat cache in step with
// RecordInCache, so a later scan of the directory sees these files as a
// scan that read them would have left it.
type ChangeSet struct {
	// Roots are the changed paths, normalized, none below another, sorted:
	// everything at or below a root is in Files (a root that is gone has
	// nothing there). A changed path below something that is no longer a
	// directory stands for that ancestor, as in an informed Scan.
	Roots []string
	// Files are the files at or below the roots, sorted by path bytes.
	Files []ChangedFile
	// Links reports that some file was reached through a symlink.
	Links bool
	// Statted counts the stat calls made.
	Statted int

	w      *walker
	cfg    *fpConfig
	start  time.Time
	walked []walkedFile
	fps    []fileFP
	flags  []uint8
}

// ChangedFile is one file of a ChangeSet: its entry and what it
// contributes to its directory's fingerprint (FileDigest's result).
type ChangedFile struct {
	Entry
	Digest canon.Digest
	Kept   bool
}

// ReadChanged reads the files at and below the changed paths of dir for an
// informed publish that does not scan the rest (see ChangeSet). It takes
// opt's algorithm and view; a node with a spec is scanned instead (its
// facets may reach inside files), so opt.Spec must be nil. Changed paths
// naming the directory itself are refused: scan it whole.
func ReadChanged(ctx context.Context, dir string, opt Options, changed []string) (*ChangeSet, error) {
	if opt.Spec != nil {
		return nil, errors.New("read changed files: a node with a spec is scanned, not read by its changed paths")
	}
	if namesRoot(changed) {
		return nil, errors.New("read changed files: a changed path names the directory itself; scan it whole")
	}
	cs := &ChangeSet{start: time.Now()}
	cfg, err := newFPConfig(opt)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	w, err := newWalker(dir)
	if err != nil {
		return nil, err
	}
	w.view, w.ctx = cfg.view, ctx
	defer w.close()
	cs.w, cs.cfg = w, cfg
	roots, fresh, err := w.changedRoots(changed)
	if err != nil {
		return nil, err
	}
	cs.Roots, cs.walked = roots, fresh
	for i := range fresh {
		if strings.HasPrefix(fresh[i].path, canon.Atomic+"/") {
			return nil, fmt.Errorf("scan %s: the top-level directory %q is reserved for the whole-truth facet; rename it", w.root, canon.Atomic)
		}
		cs.Links = cs.Links || fresh[i].link
	}
	snap := &Snapshot{Entries: make([]Entry, len(fresh))}
	cs.fps = make([]fileFP, len(fresh))
	cs.flags = make([]uint8, len(fresh))
	misses := make([]int, len(fresh))
	for i := range fresh {
		e := &snap.Entries[i]
		e.Path, e.Mode, e.Size = fresh[i].path, fresh[i].perm(), fresh[i].st.size
		if fresh[i].link {
			cs.flags[i] |= flagLink
		}
		misses[i] = i
	}
	if err := readMisses(ctx, w, cfg, fresh, misses, snap, cs.fps, cs.flags); err != nil {
		return nil, err
	}
	cs.Statted = int(w.statted.Load())
	cs.Files = make([]ChangedFile, len(fresh))
	for i := range fresh {
		cs.Files[i] = ChangedFile{Entry: snap.Entries[i], Digest: cs.fps[i].digest, Kept: cs.fps[i].kept}
	}
	return cs, nil
}

// Dir is the directory read, absolute.
func (cs *ChangeSet) Dir() string { return cs.w.root }

// RecordInCache appends to the stat cache at file what a scan that read
// the change set would have recorded: the files read, the removal of
// goneFiles (paths the cache may hold at or below the roots, or at their
// ancestors, that are no longer files) and of the directory records
// goneDirs (every directory at or above a root, and the ones below it that
// changed or went away: they are hashed again by the next scan). A cache
// of another directory or setup is left alone (the next scan rebuilds
// it); so is a missing one. Like every cache write, a failure costs
// re-reads, nothing else.
func (cs *ChangeSet) RecordInCache(file string, goneFiles, goneDirs []string) {
	head := cacheHeader(cs.w.root, cs.cfg.id)
	f, err := os.OpenFile(file, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	got := make([]byte, len(head))
	if _, err := io.ReadFull(f, got); err != nil || string(got) != string(head) {
		return
	}
	fresh := make(map[string]bool, len(cs.Files))
	for _, cf := range cs.Files {
		fresh[cf.Path] = true
	}
	gone := make([]string, 0, len(goneFiles))
	for _, p := range goneFiles {
		if !fresh[p] {
			gone = append(gone, p)
		}
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	dirs := slices.Clone(goneDirs)
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	racyFrom := cs.start.UnixNano() - racyGranularity(cs.walked)
	b := newBlock(nil, blockDelta)
	for i := range cs.walked {
		flags := cs.flags[i]
		if st := &cs.walked[i].st; max(st.mtime, st.ctime) >= racyFrom {
			flags |= flagRacy
		}
		b.add(&cs.Files[i].Entry, cs.walked[i].st, flags, &cs.fps[i])
	}
	_, _ = f.Write(b.finish(gone, dirs))
}

// racyGranularity is the timestamp granularity the files of walked show
// (see the racy rule in cache.go); trusted entries are not looked at.
func racyGranularity(walked []walkedFile) int64 {
	for i := range walked {
		if !walked[i].trusted && walked[i].st.mtime%1e9 != 0 {
			return racyFine
		}
	}
	return racyCoarse
}

// changedRoots resolves the changed paths into roots (see ChangeSet.Roots)
// and walks them, with the path rules of a full scan.
func (w *walker) changedRoots(changed []string) ([]string, []walkedFile, error) {
	root, err := openRoot(w.root)
	if err != nil {
		return nil, nil, fmt.Errorf("scan %s: %w", w.root, err)
	}
	defer root.close()
	type looked struct {
		kind nameKind // kindUnknown: absent
		st   fileStat
	}
	memo := map[string]looked{}
	look := func(p string) (looked, error) {
		if l, ok := memo[p]; ok {
			return l, nil
		}
		w.statted.Add(1)
		st, err := root.lstat(p)
		var l looked
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		case err != nil:
			return l, fmt.Errorf("scan %s: %w", w.abs(p), err)
		default:
			l = looked{kind: kindOfMode(st.mode), st: st}
		}
		memo[p] = l
		return l, nil
	}

	roots := make([]string, 0, len(changed))
	for _, p := range changed {
		n, err := NormalizePath(p)
		if err != nil {
			return nil, nil, fmt.Errorf("changed path: %w", err)
		}
		if err := w.checkRawChanged(p, n); err != nil {
			return nil, nil, err
		}
		r := n
		for j := 0; j < len(n); j++ {
			if n[j] != '/' {
				continue
			}
			l, err := look(n[:j])
			if err != nil {
				return nil, nil, err
			}
			if l.kind != kindDir {
				r = n[:j]
				break
			}
		}
		roots = append(roots, r)
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	kept := roots[:0]
	for _, r := range roots {
		// Sorted order puts "a" before "a/b" but may put "a-b" between
		// them, so compare with every kept root above r.
		covered := false
		for j := 0; j < len(r); j++ {
			if r[j] == '/' {
				if _, ok := slices.BinarySearch(kept, r[:j]); ok {
					covered = true
					break
				}
			}
		}
		if !covered {
			kept = append(kept, r)
		}
	}
	roots = kept

	var fresh []walkedFile
	for _, r := range roots {
		l, err := look(r)
		if err != nil {
			return nil, nil, err
		}
		switch l.kind {
		case kindUnknown:
		case kindDir:
			sub, err := w.walkSub(r)
			if err != nil {
				return nil, nil, err
			}
			fresh = append(fresh, sub...)
		default:
			f, err := w.fileOf(r, l.st)
			if err != nil {
				return nil, nil, err
			}
			fresh = append(fresh, f)
		}
	}
	slices.SortFunc(fresh, func(a, b walkedFile) int { return strings.Compare(a.path, b.path) })
	return roots, fresh, nil
}
