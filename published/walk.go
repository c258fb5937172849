package published

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The walk lists the files of a node directory in path order with their
// stat data, enforcing the path rules:
//
//   - names must be valid world-model path segments (NormalizePath leaves
//     the path unchanged): no control characters, no backslashes, no drive
//     prefix at the top;
//   - a symlink is followed only when its target, fully resolved, is a
//     regular file inside the directory; the file then counts as a regular
//     file at the link's path with the target's content and mode; links out
//     of the directory, to directories or to nothing are errors;
//   - devices, sockets and named pipes are errors.
//
// Directories are read in parallel (one goroutine per spare CPU); the result
// does not depend on the schedule.

// nameKind classifies a directory entry.
type nameKind uint8

const (
	kindUnknown nameKind = iota
	kindFile
	kindDir
	kindLink
	kindOther
)

// dirName is one entry read from a directory.
type dirName struct {
	name string
	kind nameKind
}

// fileStat is the stat data the cache compares: a file whose stat data did
// not change is not read again.
type fileStat struct {
	size  int64
	mtime int64 // ns since the Unix epoch
	ctime int64 // ns since the Unix epoch; 0 where not reported
	ino   uint64
	mode  uint32 // platform mode bits, type included
}

// walkedFile is one file found by the walk.
type walkedFile struct {
	path    string   // normalized, relative to the node directory
	st      fileStat // the file's, or for a link the target's
	link    bool     // reached through a symlink
	target  string   // for a link: the target's path relative to the node directory, links resolved
	trusted bool     // taken from the cache without a stat (informed scan)
}

// perm returns the git mode of a file: 0755 when any execute bit is set.
func (f *walkedFile) perm() fs.FileMode {
	return gitMode(fs.FileMode(f.st.mode & 0o777))
}

// walker walks one node directory.
type walker struct {
	root    string // absolute, cleaned path of the directory
	real    string // root with symlinks resolved, for link containment
	spare   chan struct{}
	statted atomic.Int64    // stat calls on files
	ctx     context.Context // nil: never done
	view    View            // the node's view of its files, or nil

	openRoot sync.Once
	fsRoot   *os.Root // for reading files: never leaves the directory
	fsErr    error
}

// newWalker prepares a walk of dir, which must be a directory.
func newWalker(dir string) (*walker, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("scan %s: not a directory", dir)
	}
	n := runtime.GOMAXPROCS(0) - 1
	w := &walker{root: abs, real: real, spare: make(chan struct{}, max(n, 0))}
	for range n {
		w.spare <- struct{}{}
	}
	return w, nil
}

// abs returns the absolute path of the relative path p; messages name
// files by it.
func (w *walker) abs(p string) string {
	return filepath.Join(w.root, filepath.FromSlash(p))
}

// walkNode is the result of reading one directory: its files and
// subdirectories in path order.
type walkNode struct {
	items []walkItem
	err   error
}

type walkItem struct {
	file walkedFile
	sub  *walkNode // nil for a file
}

// walk returns every file under the root in path order.
func (w *walker) walk() ([]walkedFile, error) {
	h, err := openRoot(w.root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", w.root, err)
	}
	var top walkNode
	var wg sync.WaitGroup
	w.walkDir(h, "", &top, &wg) // closes h
	wg.Wait()
	var out []walkedFile
	if err := flatten(&top, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// walkSub walks the directory at relative path rel (already known to be a
// directory reached without symlinks) and returns its files in path order.
func (w *walker) walkSub(rel string) ([]walkedFile, error) {
	root, err := openRoot(w.root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", w.root, err)
	}
	defer root.close()
	h, err := root.openSub(rel)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", w.abs(rel), err)
	}
	var n walkNode
	var wg sync.WaitGroup
	w.walkDir(h, rel, &n, &wg) // closes h
	wg.Wait()
	var out []walkedFile
	if err := flatten(&n, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// flatten appends the files of n in path order and returns the first error
// in path order, so the error does not depend on the schedule.
func flatten(n *walkNode, out *[]walkedFile) error {
	if n.err != nil {
		return n.err
	}
	for _, it := range n.items {
		if it.sub == nil {
			*out = append(*out, it.file)
			continue
		}
		if err := flatten(it.sub, out); err != nil {
			return err
		}
	}
	return nil
}

// walkDir reads the directory h (at relative path rel) into n, closing h.
// Subdirectories go to a spare goroutine when one is free.
func (w *walker) walkDir(h dirHandle, rel string, n *walkNode, wg *sync.WaitGroup) {
	defer h.close()
	if w.ctx != nil {
		if err := w.ctx.Err(); err != nil {
			n.err = err
			return
		}
	}
	names, err := h.readNames()
	if err != nil {
		n.err = fmt.Errorf("read directory %s: %w", w.abs(rel), err)
		return
	}
	// File systems that do not report types in directory entries need an
	// lstat before sorting (directories sort as name + "/").
	var pre map[string]fileStat
	for i := range names {
		d := &names[i]
		if d.kind == kindUnknown {
			st, err := h.lstat(d.name)
			if err != nil {
				n.err = fmt.Errorf("scan %s: %w", w.abs(join(rel, d.name)), err)
				return
			}
			w.statted.Add(1)
			if pre == nil {
				pre = map[string]fileStat{}
			}
			d.kind, pre[d.name] = kindOfMode(st.mode), st
		}
	}
	slices.SortFunc(names, func(a, b dirName) int {
		return compareGitNames(a.name, a.kind == kindDir, b.name, b.kind == kindDir)
	})
	n.items = make([]walkItem, 0, len(names))
	for i := range names {
		d := &names[i]
		p := join(rel, d.name)
		if err := checkName(p, d.name); err != nil {
			n.err = err
			return
		}
		switch d.kind {
		case kindDir:
			sh, err := h.openSub(d.name)
			if err != nil {
				n.err = fmt.Errorf("read directory %s: %w", w.abs(p), err)
				return
			}
			sub := &walkNode{}
			n.items = append(n.items, walkItem{sub: sub})
			select {
			case <-w.spare:
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.walkDir(sh, p, sub, wg)
					w.spare <- struct{}{}
				}()
			default:
				w.walkDir(sh, p, sub, wg)
			}
		case kindFile, kindLink, kindOther:
			st, ok := pre[d.name]
			if !ok {
				if st, err = h.lstat(d.name); err != nil {
					n.err = fmt.Errorf("scan %s: %w", w.abs(p), err)
					return
				}
				w.statted.Add(1)
			}
			f, err := w.fileOf(p, st)
			if err != nil {
				n.err = err
				return
			}
			n.items = append(n.items, walkItem{file: f})
		}
	}
}

// fileOf turns the lstat data of the entry at relative path p into a
// walkedFile, following a symlink that stays inside the root.
func (w *walker) fileOf(p string, st fileStat) (walkedFile, error) {
	switch kindOfMode(st.mode) {
	case kindFile:
		return walkedFile{path: p, st: st}, nil
	case kindLink:
		if err := CheckLinkName(p); err != nil {
			return walkedFile{}, fmt.Errorf("scan %s: %w", w.abs(p), err)
		}
		tst, target, err := w.followLink(p)
		if err != nil {
			return walkedFile{}, err
		}
		return walkedFile{path: p, st: tst, link: true, target: target}, nil
	case kindDir:
		return walkedFile{}, fmt.Errorf("scan %s: it became a directory while the node was scanned; scan again", w.abs(p))
	}
	return walkedFile{}, fmt.Errorf("%s is %s; a world-model holds only regular files, directories and symlinks to files inside the node", w.abs(p), describeMode(st.mode))
}

// ErrLinkOutside is wrapped by the error for a symlink whose target leaves
// the node directory.
var ErrLinkOutside = errors.New("symlinks must stay inside the node directory")

// followLink resolves the symlink at relative path p and returns the stat
// data of its target, which must be a regular file inside the root, and the
// target's path relative to the root.
func (w *walker) followLink(p string) (fileStat, string, error) {
	abs := w.abs(p)
	w.statted.Add(1)
	target, _ := os.Readlink(abs)
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fileStat{}, "", fmt.Errorf("symlink %s -> %s cannot be resolved (%s); a world-model link must point to a file inside the node", w.abs(p), target, linkProblem(err))
	}
	rel, err := filepath.Rel(w.real, resolved)
	if err != nil || rel == "." || !within(w.real, resolved) {
		return fileStat{}, "", fmt.Errorf("symlink %s -> %s leaves the node directory %s: %w", w.abs(p), target, w.root, ErrLinkOutside)
	}
	st, err := statPath(resolved)
	if err != nil {
		return fileStat{}, "", fmt.Errorf("symlink %s -> %s: %w", w.abs(p), target, err)
	}
	if k := kindOfMode(st.mode); k != kindFile {
		what := "a directory"
		if k != kindDir {
			what = describeMode(st.mode)
		}
		return fileStat{}, "", fmt.Errorf("symlink %s -> %s points to %s; prose follows only symlinks to regular files inside the node", w.abs(p), target, what)
	}
	return st, filepath.ToSlash(rel), nil
}

// linkProblem names why a symlink could not be resolved, in a few words:
// the system's reason when there is one ("too many levels of symbolic
// links", "no such file or directory"), else the whole error.
func linkProblem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error()
	}
	if strings.Contains(err.Error(), "too many links") {
		// filepath.EvalSymlinks gives a bare error for a loop.
		return "too many levels of symbolic links: the links form a loop"
	}
	return err.Error()
}

// close releases what the walker holds open.
func (w *walker) close() {
	if w.fsRoot != nil {
		w.fsRoot.Close()
	}
}

// within reports whether the absolute path p is dir or lies below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ruleBackslash explains a name holding a backslash.
const ruleBackslash = "the name holds a backslash, which world-model paths read as a separator"

// checkName reports a name that is not a valid world-model path segment.
// Plain printable ASCII names (the common case) are checked without
// allocating.
func checkName(p, name string) error {
	if IsGitDir(name) {
		return &PathError{Path: p, Rule: RuleGit}
	}
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == ':' {
			plain = false
			break
		}
	}
	if plain {
		return nil
	}
	n, err := NormalizePath(p)
	if err != nil {
		return err
	}
	if n != p {
		return &PathError{Path: p, Rule: ruleBackslash}
	}
	return nil
}

// join joins a relative directory path and a name.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// compareGitNames orders directory entries as git orders tree entries: a
// directory compares as its name followed by "/". Within a walk this makes
// files come out sorted by the bytes of their full paths.
func compareGitNames(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	ca, cb := -1, -1
	if len(a) > n {
		ca = int(a[n])
	} else if aDir {
		ca = '/'
	}
	if len(b) > n {
		cb = int(b[n])
	} else if bDir {
		cb = '/'
	}
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return 0
}
