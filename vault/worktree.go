package vault

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/internal/durable"
)

// change is one path that differs between two commit trees.
type change struct {
	Path     string
	Old, New *object.TreeEntry // nil when absent
}

// diffTrees lists the files that differ between trees a and b, skipping
// subtrees whose hashes are equal.
func (v *Vault) diffTrees(a, b plumbing.Hash, prefix string, out *[]change) error {
	return diffTrees(v.tree, a, b, prefix, out)
}

func diffTrees(read func(plumbing.Hash) (*object.Tree, error), a, b plumbing.Hash, prefix string, out *[]change) error {
	if a == b {
		return nil
	}
	ta, err := read(a)
	if err != nil {
		return err
	}
	tb, err := read(b)
	if err != nil {
		return err
	}
	ma := map[string]object.TreeEntry{}
	for _, e := range ta.Entries {
		ma[e.Name] = e
	}
	names := map[string]bool{}
	for _, e := range ta.Entries {
		names[e.Name] = true
	}
	mb := map[string]object.TreeEntry{}
	for _, e := range tb.Entries {
		mb[e.Name] = e
		names[e.Name] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		ea, okA := ma[n]
		eb, okB := mb[n]
		p := prefix + n
		dirA := okA && ea.Mode == filemode.Dir
		dirB := okB && eb.Mode == filemode.Dir
		switch {
		case dirA && dirB:
			if err := diffTrees(read, ea.Hash, eb.Hash, p+"/", out); err != nil {
				return err
			}
			continue
		case dirA:
			if err := diffTrees(read, ea.Hash, plumbing.ZeroHash, p+"/", out); err != nil {
				return err
			}
			okA = false
		case dirB:
			if err := diffTrees(read, plumbing.ZeroHash, eb.Hash, p+"/", out); err != nil {
				return err
			}
			okB = false
		}
		if !okA && !okB {
			continue
		}
		if okA && okB && ea.Hash == eb.Hash && ea.Mode == eb.Mode {
			continue
		}
		c := change{Path: p}
		if okA {
			e := ea
			c.Old = &e
		}
		if okB {
			e := eb
			c.New = &e
		}
		*out = append(*out, c)
	}
	return nil
}

// worktreeState reads the commit the working tree was last brought to.
func (v *Vault) worktreeState() (plumbing.Hash, bool) {
	data, err := os.ReadFile(v.StatePath("worktree"))
	if err != nil || len(data) < 40 || !plumbing.IsHash(string(data[:40])) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(string(data[:40])), true
}

// setWorktreeState records h by temp file and rename, without fsync: the
// record is a hint. If a power loss reverts it, the next repair brings the
// working tree from the older commit again, which is idempotent.
func (v *Vault) setWorktreeState(h plumbing.Hash) error {
	path := v.StatePath("worktree")
	tmp := path + ".prose-tmp"
	if err := os.WriteFile(tmp, []byte(h.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// HandEdit is a working-tree file under published/ (or elsewhere that prose
// manages) whose content matches neither the committed state nor the state
// being written.
type HandEdit struct {
	Path   string
	Reason string
}

func (h HandEdit) String() string { return h.Path + ": " + h.Reason }

// ErrHandEdits is returned when a write would overwrite hand edits.
var ErrHandEdits = errors.New("hand edits in the working tree")

// worktreeOID returns the git blob id of the working-tree file at rel,
// using the index's stat data to avoid reading it when it is unchanged.
// ok is false when the file does not exist (a file standing where one of
// its directories goes included); anything else that is not a regular file
// exists with the zero id.
func (v *Vault) worktreeOID(rel string, idx *gitIndex) (plumbing.Hash, bool, error) {
	oid, st, err := v.worktreeFile(rel, idx, nil)
	return oid, st != fileAbsent && st != fileBlocked, err
}

// fileState is what stands at a working-tree path.
type fileState int

const (
	fileAbsent  fileState = iota
	fileBlocked           // absent: a non-directory stands where a parent directory goes
	fileRegular
	fileDir
	fileOther  // a symlink, a device, …
	fileLinked // behind a symlink: a directory on the way is a link (a hand edit), never followed
)

func (v *Vault) worktreeFile(rel string, idx *gitIndex, seen *realDirs) (plumbing.Hash, fileState, error) {
	switch link, missing := seen.ancestors(v.root, rel); {
	case link != "":
		return plumbing.ZeroHash, fileLinked, nil
	case missing:
		return plumbing.ZeroHash, fileAbsent, nil
	}
	full := filepath.Join(v.root, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, fileAbsent, nil
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return plumbing.ZeroHash, fileBlocked, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fileAbsent, err
	}
	switch {
	case fi.IsDir():
		return plumbing.ZeroHash, fileDir, nil
	case !fi.Mode().IsRegular():
		return plumbing.ZeroHash, fileOther, nil
	}
	if e := idx.get(rel); e != nil && idx.statMatches(fi, e) {
		return e.OID, fileRegular, nil
	}
	f, err := openFile(full, os.O_RDONLY, 0)
	if err != nil {
		return plumbing.ZeroHash, fileRegular, err
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	if _, err := io.Copy(h, f); err != nil {
		return plumbing.ZeroHash, fileRegular, err
	}
	return h.Sum(), fileRegular, nil
}

// linkedAncestor returns the slash path of the nearest directory on the way
// to rel that is a symbolic link in the working tree, or "". prose created
// none of them (it writes directories only), so one is a hand edit or came
// with a pull, and a write or delete through it would land outside the
// vault: working-tree updates look at each directory on the way, without
// following links, before touching a path.
func (v *Vault) linkedAncestor(rel string) string {
	return (*realDirs)(nil).linkedAncestor(v.root, rel)
}

// realDirs remembers, for one working-tree update, the directories already
// seen to be real directories (or made as such), so each is looked at once
// rather than once per file below it: a 10,000-file checkout makes a few
// hundred lstat calls for its directories, not 40,000. A nil *realDirs
// remembers nothing.
//
// A realDirs made with missing set also remembers directories found absent,
// and answers for every path below one without a look: only for a pass
// that creates nothing (the check before a write).
type realDirs struct {
	m       sync.Map
	missing *sync.Map
}

// newRealDirs returns an empty realDirs; trackMissing as above.
func newRealDirs(trackMissing bool) *realDirs {
	d := &realDirs{}
	if trackMissing {
		d.missing = &sync.Map{}
	}
	return d
}

func (d *realDirs) has(rel string) bool {
	if d == nil {
		return false
	}
	_, ok := d.m.Load(rel)
	return ok
}

// add records rel and every directory above it.
func (d *realDirs) add(rel string) {
	if d == nil {
		return
	}
	for rel != "" && rel != "." {
		if _, loaded := d.m.LoadOrStore(rel, true); loaded {
			return // and so are the ones above it
		}
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			return
		}
		rel = rel[:i]
	}
}

// linkedAncestor is Vault.linkedAncestor, skipping the directories d has
// seen.
func (d *realDirs) linkedAncestor(root, rel string) string {
	link, _ := d.ancestors(root, rel)
	return link
}

// ancestors looks at the directories on the way to rel: it returns the
// nearest that is a symlink, or missing true when one does not exist (then
// nothing below it does).
func (d *realDirs) ancestors(root, rel string) (link string, missing bool) {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' || d.has(rel[:i]) {
			continue
		}
		if d != nil && d.missing != nil {
			if _, ok := d.missing.Load(rel[:i]); ok {
				return "", true
			}
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel[:i])))
		if err != nil {
			if d != nil && d.missing != nil && errors.Is(err, fs.ErrNotExist) {
				d.missing.Store(rel[:i], true)
				return "", true
			}
			return "", false
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return rel[:i], false
		}
		if fi.IsDir() {
			d.add(rel[:i])
		}
	}
	return "", false
}

// linkEdit is the hand edit a symlinked directory on the way to rel makes.
func (v *Vault) linkEdit(rel string) HandEdit {
	a := v.linkedAncestor(rel)
	return HandEdit{rel, "the directory " + a + " was replaced by a symlink; prose never writes or deletes through one (restore it: `rm " + a + " && git checkout -- " + a + "`)"}
}

// blockingFile returns the slash path of the nearest ancestor of rel that
// exists in the working tree but is not a directory, or "".
func (v *Vault) blockingFile(rel string) string {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		fi, err := os.Lstat(filepath.Join(v.root, filepath.FromSlash(rel[:i])))
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return rel[:i]
		}
	}
	return ""
}

// onlyRemoved reports whether every file under the working-tree directory
// rel is one that removed lists, so removing them empties it.
func (v *Vault) onlyRemoved(rel string, removed map[string]bool) bool {
	root := filepath.Join(v.root, filepath.FromSlash(rel))
	ok := true
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		r, err := filepath.Rel(v.root, path)
		if err != nil || !removed[filepath.ToSlash(r)] {
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return ok && err == nil
}

// removedPaths is the set of paths the changes remove.
func removedPaths(changes []change) map[string]bool {
	removed := map[string]bool{}
	for _, c := range changes {
		if c.New == nil {
			removed[c.Path] = true
		}
	}
	return removed
}

// checkClean reports every changed path whose working-tree file holds
// neither the old nor the new content: writing there would lose an edit.
// When a file becomes a directory or a directory a file, what stands in the
// way is fine only if the same changes remove it.
func (v *Vault) checkClean(changes []change, idx *gitIndex) ([]HandEdit, error) {
	seen := newRealDirs(true)
	var edits []HandEdit
	var removed map[string]bool // built when a file and a directory swap
	removes := func() map[string]bool {
		if removed == nil {
			removed = removedPaths(changes)
		}
		return removed
	}
	for _, c := range changes {
		oid, st, err := v.worktreeFile(c.Path, idx, seen)
		if err != nil {
			return nil, err
		}
		switch {
		case st == fileLinked:
			edits = append(edits, v.linkEdit(c.Path))
		case st == fileBlocked && c.New != nil:
			if b := v.blockingFile(c.Path); b != "" && !removes()[b] {
				edits = append(edits, HandEdit{c.Path, "untracked file " + b + " stands where its directory goes"})
			}
		case st == fileAbsent || st == fileBlocked:
			// absent, or deleted by hand: restoring it loses nothing
		case st == fileDir && c.Old == nil:
			if !v.onlyRemoved(c.Path, removes()) {
				edits = append(edits, HandEdit{c.Path, "a directory with untracked files stands where a file goes"})
			}
		case st == fileRegular && c.Old != nil && oid == c.Old.Hash:
		case st == fileRegular && c.New != nil && oid == c.New.Hash:
		case c.Old == nil:
			edits = append(edits, HandEdit{c.Path, "untracked file would be overwritten"})
		default:
			edits = append(edits, HandEdit{c.Path, "modified by hand since the last commit"})
		}
	}
	return edits, nil
}

// applyChangesReport brings the working tree and index from the old tree to
// the new one for the given changes. Files are replaced by rename so a reader
// never sees half a file. Removals go first, so a directory that becomes a
// file is emptied (and removed) before the file is written.
//
// checkClean ran before, but a user may edit a file between it and this
// call (the window holds fsyncs and ref moves): a working-tree file that
// holds neither the change's old nor its new content is never overwritten
// or deleted. It is skipped, its index entry left as it is, and returned so
// the caller can warn.
func (v *Vault) applyChangesReport(changes []change, idx *gitIndex) ([]HandEdit, error) {
	return v.applyChangesFrom(changes, idx, blobSources{})
}

// applyChangesFrom is applyChangesReport with the places the write's blobs
// came from: a new file is copied from the file a publish read it from (its
// content checked against the blob id) or written from the bytes a node
// write put, rather than inflated from the object store.
func (v *Vault) applyChangesFrom(changes []change, idx *gitIndex, src blobSources) ([]HandEdit, error) {
	var edits []HandEdit
	var writes []change
	for _, c := range changes {
		if c.New != nil {
			writes = append(writes, c)
			continue
		}
		e, err := v.apply(c, idx, src, nil)
		if err != nil {
			return edits, err
		}
		if e != nil {
			edits = append(edits, *e)
		}
	}
	// The removals are done (they may remove directories): from here on a
	// directory seen to be real stays so.
	seen := newRealDirs(false)
	groups, writes := v.planStaging(writes)
	for _, g := range groups {
		if !v.stage(g, idx, src) {
			writes = append(writes, g.writes...)
		}
	}
	// Files are written by several workers: each path is independent once
	// the removals are done, and a large checkout waits on the file system
	// far more than on the processor.
	workers := min(checkoutWorkers, (len(writes)+63)/64)
	if workers <= 1 {
		for _, c := range writes {
			e, err := v.apply(c, idx, src, seen)
			if err != nil {
				return edits, err
			}
			if e != nil {
				edits = append(edits, *e)
			}
		}
	} else {
		var mu sync.Mutex
		var firstErr error
		var wg sync.WaitGroup
		next := make(chan change)
		for w := 0; w < workers; w++ {
			wg.Go(func() {
				for c := range next {
					e, err := v.apply(c, idx, src, seen)
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if e != nil {
						edits = append(edits, *e)
					}
					mu.Unlock()
				}
			})
		}
		for _, c := range writes {
			mu.Lock()
			failed := firstErr != nil
			mu.Unlock()
			if failed {
				break
			}
			next <- c
		}
		close(next)
		wg.Wait()
		if firstErr != nil {
			return edits, firstErr
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Path < edits[j].Path })
	return edits, nil
}

// checkoutWorkers bounds the workers of a large working-tree update.
const checkoutWorkers = 8

// apply brings one path to its new state, or returns the hand edit that
// stands in the way.
func (v *Vault) apply(c change, idx *gitIndex, src blobSources, seen *realDirs) (*HandEdit, error) {
	full := filepath.Join(v.root, filepath.FromSlash(c.Path))
	oid, st, err := v.worktreeFile(c.Path, idx, seen)
	if err != nil {
		return nil, err
	}
	if st == fileLinked {
		e := v.linkEdit(c.Path)
		return &e, nil
	}
	if st == fileDir && os.Remove(full) == nil {
		st = fileAbsent // an empty directory where the file goes
	}
	exists := st != fileAbsent && st != fileBlocked
	if exists && (c.Old == nil || oid != c.Old.Hash) && (c.New == nil || oid != c.New.Hash) {
		why := "modified by hand while prose was writing; left as it is"
		if c.Old == nil {
			why = "created by hand while prose was writing; left as it is"
		}
		return &HandEdit{c.Path, why}, nil
	}
	if c.New == nil {
		if exists {
			if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("update working tree: %w", err)
			}
		}
		removeEmptyParents(v.root, filepath.Dir(full))
		idx.del(c.Path)
		return nil, nil
	}
	if !exists || oid != c.New.Hash || !modeMatches(full, c.New.Mode) {
		if err := v.checkout(c.Path, c.New, src, seen, st == fileAbsent); err != nil {
			if b := v.blockingFile(c.Path); b != "" {
				return &HandEdit{c.Path, "file " + b + " stands where its directory goes; left as it is"}, nil
			}
			return nil, err
		}
	}
	e := indexEntry{Name: c.Path, OID: c.New.Hash}
	if err := statEntry(full, &e); err != nil {
		return nil, fmt.Errorf("update git index: %w", err)
	}
	idx.put(e)
	return nil, nil
}

func modeMatches(full string, m filemode.FileMode) bool {
	fi, err := os.Lstat(full)
	if err != nil {
		return false
	}
	return (fi.Mode()&0o111 != 0) == (m == filemode.Executable)
}

// checkout writes a blob to full by temp file and rename. The temp file is
// made under .prose/tmp (same filesystem, git-ignored) with a short random
// name: a temp beside the target could exceed the file-name limit for a
// long name, and one a crash leaves behind would show in git status.
//
// seen holds the directories known to be real (see realDirs); absent says
// the caller just found nothing at the path.
func (v *Vault) checkout(rel string, e *object.TreeEntry, src blobSources, seen *realDirs, absent bool) error {
	full := filepath.Join(v.root, filepath.FromSlash(rel))
	if parent := path.Dir(rel); !seen.has(parent) {
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("update working tree: %w", err)
		}
		seen.add(parent)
	}
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	// An empty directory may stand where the file goes (a facet became a
	// file); one with files in it is a hand edit applyChangesReport skips.
	if !absent {
		if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
			if err := os.Remove(full); err != nil {
				return fmt.Errorf("update working tree: %w", err)
			}
		}
	}
	v.filesOneByOne.Add(1)
	if sp := src.spool.take(e.Hash); sp != "" {
		// The blob's spool file, written when it was staged, goes into
		// place as the temp file would.
		if err := durable.Inject(durable.StepRename, full); err != nil {
			os.Remove(sp)
			return fmt.Errorf("update working tree: %w", err)
		}
		if placeSpooled(sp, full, perm, false) {
			v.filesSpooled.Add(1)
			return nil
		}
	}
	tmpDir := v.StatePath("tmp")
	tmpName := filepath.Join(tmpDir, "co-"+randomName())
	f, err := openFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(tmpDir, 0o755); err == nil {
			f, err = openFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return fmt.Errorf("update working tree: %w", err)
	}
	tmp := f.Name()
	err = v.fillBlob(f, e.Hash, src)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The fault hook sees each working-tree file of a checkout (tests
		// stop or kill a writer in the middle of step 5).
		err = durable.Inject(durable.StepRename, full)
	}
	if err == nil {
		err = renameFile(tmp, full)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("update working tree: %w", err)
	}
	return nil
}

func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root) {
		if err := os.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// syncWorktree brings the working tree and index from commit from to commit
// to. Paths edited by hand are left alone and reported.
//
// from is only a record of where the working tree was; when it cannot be
// read (history rewritten by hand, then pruned by git gc), the working tree
// is brought from scratch instead: every file of to that differs is then
// reported, never overwritten.
func (v *Vault) syncWorktree(from, to plumbing.Hash) ([]HandEdit, error) {
	var fromTree, toTree plumbing.Hash
	if !from.IsZero() {
		c, err := v.commit(from)
		if err != nil {
			return v.syncWorktree(plumbing.ZeroHash, to)
		}
		fromTree = c.TreeHash
	}
	c, err := v.commit(to)
	if err != nil {
		return nil, err
	}
	toTree = c.TreeHash
	var changes []change
	if err := v.diffTrees(fromTree, toTree, "", &changes); err != nil {
		if !from.IsZero() {
			// from's tree may be damaged or pruned too.
			return v.syncWorktree(plumbing.ZeroHash, to)
		}
		return nil, err
	}
	idx, err := v.openIndex()
	if errors.Is(err, errIndexDamaged) && from.IsZero() {
		idx, err = &gitIndex{ver: 2}, nil
	} else if errors.Is(err, errIndexDamaged) {
		// A damaged index (a crash during a write without fsync): rebuild
		// it from scratch against the whole tree.
		return v.syncWorktree(plumbing.ZeroHash, to)
	}
	if err != nil {
		// An index prose cannot update (errIndexUnsupported) holds the
		// user's staged changes: change nothing and say how to convert it.
		return nil, err
	}
	defer idx.release()
	edits, err := v.checkClean(changes, idx)
	if err != nil {
		return nil, err
	}
	kept := changes
	if len(edits) > 0 {
		skip := map[string]bool{}
		for _, e := range edits {
			skip[e.Path] = true
		}
		kept = nil
		for _, c := range changes {
			if !skip[c.Path] {
				kept = append(kept, c)
				continue
			}
			if from.IsZero() && c.New != nil && c.New.Mode != filemode.Dir {
				// Rebuilding the index from scratch: a tracked file with
				// unstaged edits stays tracked. Its entry names the
				// committed blob with no stat data, so git re-hashes the
				// file and shows it modified, as it was.
				idx.put(indexEntry{Name: c.Path, OID: c.New.Hash, Mode: uint32(c.New.Mode)})
			}
		}
	}
	changes = kept
	if len(changes) > 0 || (from.IsZero() && len(edits) > 0) {
		late, err := v.applyChangesReport(changes, idx)
		edits = append(edits, late...)
		if err != nil {
			return edits, err
		}
		if err := v.writeIndex(idx); err != nil {
			return edits, err
		}
	}
	if err := v.setWorktreeState(to); err != nil {
		return edits, err
	}
	return edits, nil
}

// fillBlob writes blob h to f from the bytes or the file src holds for it,
// else from the object store. The blob is streamed: a large file never sits
// whole in memory.
func (v *Vault) fillBlob(f *os.File, h plumbing.Hash, src blobSources) error {
	if data, ok := src.data[h]; ok {
		_, err := f.Write(data)
		return err
	}
	return v.writeBlob(f, h, src.paths[h])
}

// writeBlob writes blob h to f, streamed from the file at path when that
// file still holds exactly the blob (the source a publish read it from),
// else from the object store.
func (v *Vault) writeBlob(f *os.File, h plumbing.Hash, path string) error {
	if path != "" {
		if in, err := openFile(path, os.O_RDONLY, 0); err == nil {
			fi, err := in.Stat()
			if err == nil {
				sum := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
				_, err = io.Copy(io.MultiWriter(f, sum), in)
				if err == nil && sum.Sum() == h {
					in.Close()
					return nil
				}
			}
			in.Close()
			// Changed since it was published: start again from the store.
			if err := f.Truncate(0); err != nil {
				return err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
		}
	}
	return v.checkoutBlob(f, h)
}
