package vault

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/prose-store/prose/internal/parallel"
)

// A staged checkout writes the files a working-tree update puts below a
// directory the working tree lacks (the first publish of a node, a node a
// pull brought) in place inside a fresh directory under .prose/tmp, then
// renames that directory into the working tree at once. One file at a time
// would be a temp file in .prose/tmp and a rename across directories for
// each: every create contends for the one temp directory and every rename
// for the file system's cross-directory rename lock, which made that road
// two to ten times slower on a 10,000-file first publish here.
//
// Nothing below the staged directory is visible until the rename, so the
// working tree is as safe as with a rename per file: a crash leaves the
// directory under .prose/tmp (removed by the next writer's repair) and the
// working tree as it was, which the repair brings to the branch again. When
// anything goes wrong — the directory appeared meanwhile, a name the file
// system refuses or folds onto another — the staged directory is removed
// and the group's files take the one-at-a-time road, which reports hand
// edits and errors as always.

// stageMinFiles is the fewest files a missing directory must receive for
// its files to be staged.
const stageMinFiles = 16

// stageGroup is the files an update writes below one missing directory.
type stageGroup struct {
	root   string // slash path of the shallowest missing directory
	writes []change
}

// planStaging splits writes (file additions and updates, removals done)
// into groups to stage and the rest. Each directory on the way is looked at
// once, without following links: a group's root is missing and every
// directory above it is a real directory.
func (v *Vault) planStaging(writes []change) (groups []*stageGroup, rest []change) {
	const unstageable = "\x00"
	memo := map[string]string{} // directory → its group's root; "" exists
	setgid := map[string]bool{} // existing directories with the setgid bit
	var rootOf func(dir string) string
	rootOf = func(dir string) string {
		if r, ok := memo[dir]; ok {
			return r
		}
		r := ""
		if dir != "." {
			r = rootOf(path.Dir(dir))
		}
		if r == "" {
			stat := os.Lstat
			if dir == "." {
				stat = os.Stat // the vault's root may be reached through a link
			}
			fi, err := stat(filepath.Join(v.root, filepath.FromSlash(dir)))
			switch {
			case errors.Is(err, fs.ErrNotExist) && !setgid[path.Dir(dir)]:
				r = dir
			case err == nil && fi.IsDir():
				setgid[dir] = fi.Mode()&os.ModeSetgid != 0
			default:
				// A link, a file or an error: the one-at-a-time road
				// reports it. Below a setgid directory (a group-shared
				// working tree) a directory made in place takes the
				// parent's group and bit, which one made under
				// .prose/tmp would not: that road makes them.
				r = unstageable
			}
		}
		memo[dir] = r
		return r
	}
	byRoot := map[string]*stageGroup{}
	for _, c := range writes {
		r := rootOf(path.Dir(c.Path))
		if r == "" || r == unstageable || (c.New.Mode != filemode.Regular && c.New.Mode != filemode.Executable) {
			rest = append(rest, c)
			continue
		}
		g := byRoot[r]
		if g == nil {
			g = &stageGroup{root: r}
			byRoot[r] = g
			groups = append(groups, g)
		}
		g.writes = append(g.writes, c)
	}
	kept := groups[:0]
	for _, g := range groups {
		if len(g.writes) < stageMinFiles {
			rest = append(rest, g.writes...)
			continue
		}
		kept = append(kept, g)
	}
	return kept, rest
}

// stage writes g's files into a new directory under .prose/tmp and renames
// it to g.root, recording each file in idx. It reports false, having placed
// nothing, when any step fails: the caller then writes g's files one by one.
func (v *Vault) stage(g *stageGroup, idx *gitIndex, src blobSources) bool {
	tmpDir := v.StatePath("tmp")
	dir := filepath.Join(tmpDir, "st-"+randomName())
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(tmpDir, 0o755); err == nil {
			err = os.Mkdir(dir, 0o755)
		}
	}
	if err != nil {
		return false
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(dir)
		}
	}()
	rels := make([]string, len(g.writes))
	var dirs []string
	for i, c := range g.writes {
		rels[i] = strings.TrimPrefix(c.Path, g.root+"/")
		if d := path.Dir(rels[i]); d != "." {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	for _, d := range slices.Compact(dirs) {
		if os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755) != nil {
			return false
		}
	}
	entries := make([]indexEntry, len(g.writes))
	errs := make([]error, len(g.writes))
	work := spreadByDir(rels)
	parallel.Workers(len(work), checkoutWorkers, func(k int) {
		for _, i := range work[k] {
			entries[i], errs[i] = v.writeNew(filepath.Join(dir, filepath.FromSlash(rels[i])), g.writes[i], src)
		}
	})
	if errors.Join(errs...) != nil {
		return false
	}
	if beforeStageRename != nil {
		beforeStageRename(g.root)
	}
	// The directories above the root were looked at when the group was
	// planned, before its files were written: one replaced by a symlink
	// since must not be renamed through (the one-at-a-time road reports it).
	if link, _ := (*realDirs)(nil).ancestors(v.root, g.root); link != "" {
		return false
	}
	if renameFile(dir, filepath.Join(v.root, filepath.FromSlash(g.root))) != nil {
		return false
	}
	placed = true
	v.stagedDirs.Add(1)
	for _, e := range entries {
		idx.put(e)
	}
	return true
}

// spreadChunk is the most files of one directory a worker creates in a row.
const spreadChunk = 32

// spreadByDir orders the creation of files at the slash paths rels as runs
// of at most spreadChunk files of one directory (indexes into rels), the
// first run of every directory before the second of any: workers taking
// runs in turn work in different directories. Creating a file locks its
// directory, and workers creating side by side in one directory spend
// their time waiting for each other (in the kernel, spinning).
func spreadByDir(rels []string) [][]int {
	byDir := map[string][]int{}
	var dirs []string
	for i, r := range rels {
		d := path.Dir(r)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], i)
	}
	var work [][]int
	for lo := 0; ; lo += spreadChunk {
		added := false
		for _, d := range dirs {
			if ix := byDir[d]; lo < len(ix) {
				work = append(work, ix[lo:min(lo+spreadChunk, len(ix))])
				added = true
			}
		}
		if !added {
			return work
		}
	}
}

// beforeStageRename, when set by a test, runs when a group's files are
// written and its directory is about to be renamed into the working tree.
var beforeStageRename func(root string)

// writeNew creates the file at full, which must not exist, with c's blob
// and mode, and returns its index entry. The stat data is read from the
// open file: renaming a directory above it changes none of it.
func (v *Vault) writeNew(full string, c change, src blobSources) (indexEntry, error) {
	e := indexEntry{Name: c.Path, OID: c.New.Hash}
	perm := os.FileMode(0o644)
	if c.New.Mode == filemode.Executable {
		perm = 0o755
	}
	if sp := src.spool.take(c.New.Hash); sp != "" && placeSpooled(sp, full, perm, true) {
		// The blob's spool file, renamed in: its stat data is read after
		// the rename, which sets its ctime.
		v.filesSpooled.Add(1)
		fi, err := os.Lstat(full)
		if err == nil {
			fillStat(fi, &e)
		}
		return e, err
	}
	f, err := openFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return e, err
	}
	err = v.fillBlob(f, c.New.Hash, src)
	var fi fs.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if err == nil && fi.Mode().Perm() != perm { // a umask took bits away
		if err = f.Chmod(perm); err == nil {
			fi, err = f.Stat()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		fillStat(fi, &e)
	}
	return e, err
}
