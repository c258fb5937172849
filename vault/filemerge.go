package vault

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/published"
)

// A node whose files merge one by one (the wiki: page by page, slot by
// slot) rather than as a unit, and the files beside the nodes (the review
// queue, the source catalog), are merged by rules a package above the
// vault knows (mergefile), registered here as the views are.

// FileMerge is the outcome of merging one file three ways.
type FileMerge struct {
	Merged    []byte
	Removed   bool
	Conflicts []FileConflict
	Handled   bool // false: the rules do not know the path
}

// FileConflict is one change both sides made differently in a file.
type FileConflict struct {
	Path   string // the vault path
	Slot   string // the slot, for a wiki page
	Key    string // the meta key or record
	Kind   string // slot, meta, removed, page, record
	ID     string // how a choice names it within the file: slot:ID, meta:KEY, …
	Detail string
}

// FileMergeFunc merges the file at path (nil: absent on that side);
// choose settles a conflict (TakeOurs, TakeTheirs) or leaves it ("").
type FileMergeFunc func(path string, base, ours, theirs []byte, choose func(FileConflict) string) (FileMerge, error)

var fileMerges struct {
	sync.RWMutex
	fn    FileMergeFunc
	nodes map[string]bool
}

// RegisterFileMerge makes fn the merge of the files beside the nodes it
// handles, and of the files of each node in nodes: a node advanced on
// both sides merges file by file instead of needing prose resolve.
func RegisterFileMerge(fn FileMergeFunc, nodes ...string) {
	fileMerges.Lock()
	defer fileMerges.Unlock()
	fileMerges.fn = fn
	if fileMerges.nodes == nil {
		fileMerges.nodes = map[string]bool{}
	}
	for _, n := range nodes {
		fileMerges.nodes[n] = true
	}
}

func fileMergeOf() (FileMergeFunc, map[string]bool) {
	fileMerges.RLock()
	defer fileMerges.RUnlock()
	return fileMerges.fn, fileMerges.nodes
}

// nodeDirOf is the node a path under published/ belongs to, "" for any
// other path.
func nodeDirOf(p string) string {
	rest, ok := strings.CutPrefix(p, "published/")
	if !ok {
		return ""
	}
	dir, _, _ := strings.Cut(rest, "/")
	return unescapeNodeDir(dir)
}

// fileChoice is how resolve.json names the choice for a conflict of a
// file: all of its conflicts ("file:PATH"), or one ("file:PATH#ID").
func fileChoice(path, id string) string {
	if id == "" {
		return "file:" + path
	}
	return "file:" + path + "#" + id
}

// fileMergeStep merges, file by file, the paths both sides changed that
// the registered rules know. It returns the tree with every clean merge
// applied, the conflicts no choice settled, the vault paths it merged,
// and the choices it used.
type fileMergeStep struct {
	v                  *Vault
	b                  *objectBatch
	fn                 FileMergeFunc
	trees              []plumbing.Hash // base, ours, theirs branch trees
	choices            map[string]string
	used               map[string]bool
	conflicts          []FileConflict
	merged             []string
	fresh              map[plumbing.Hash][]byte
	resolved           []map[string]any // choices taken, for the merge receipt
	oursHead, theirsHd map[string]string
}

// files lists the blobs under the entry at p of tree root (the entry
// itself when it is a blob), by vault path.
func (s *fileMergeStep) files(root plumbing.Hash, p string) (map[string]object.TreeEntry, error) {
	out := map[string]object.TreeEntry{}
	if root.IsZero() {
		return out, nil
	}
	e, ok, err := s.v.lookup(root, p)
	if err != nil || !ok {
		return out, err
	}
	var walk func(h plumbing.Hash, prefix string) error
	walk = func(h plumbing.Hash, prefix string) error {
		t, err := s.v.tree(h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Dir {
				if err := walk(e.Hash, prefix+e.Name+"/"); err != nil {
					return err
				}
				continue
			}
			out[prefix+e.Name] = e
		}
		return nil
	}
	if e.Mode != filemode.Dir {
		out[p] = e
		return out, nil
	}
	return out, walk(e.Hash, p+"/")
}

// merge merges the conflict at path p (a file or a directory the two
// sides changed differently) file by file into root.
func (s *fileMergeStep) merge(root plumbing.Hash, p string) (plumbing.Hash, bool, error) {
	var sides [3]map[string]object.TreeEntry
	for i := range sides {
		f, err := s.files(s.trees[i], p)
		if err != nil {
			return root, false, err
		}
		sides[i] = f
	}
	names := map[string]bool{}
	for _, f := range sides {
		for k := range f {
			names[k] = true
		}
	}
	// Every file must have rules: a path they do not know stays a conflict
	// of the whole path, as before.
	type pending struct {
		path       string
		be, oe, te *object.TreeEntry
		decided    *object.TreeEntry // the whole-entry rule's choice (nil: removed)
		done       bool
	}
	var work []pending
	for _, fp := range slices.Sorted(maps.Keys(names)) {
		get := func(m map[string]object.TreeEntry) *object.TreeEntry {
			if e, ok := m[fp]; ok {
				return &e
			}
			return nil
		}
		be, oe, te := get(sides[0]), get(sides[1]), get(sides[2])
		same := func(x, y *object.TreeEntry) bool {
			if x == nil || y == nil {
				return x == y
			}
			return x.Hash == y.Hash && x.Mode == y.Mode
		}
		switch {
		case same(oe, te), same(te, be):
			work = append(work, pending{path: fp, decided: oe, done: true})
		case same(oe, be):
			work = append(work, pending{path: fp, decided: te, done: true})
		default:
			work = append(work, pending{path: fp, be: be, oe: oe, te: te})
		}
	}
	out := root
	changes := map[string]object.TreeEntry{}
	for _, w := range work {
		if w.done {
			if w.decided == nil {
				changes[w.path] = object.TreeEntry{}
			} else {
				changes[w.path] = *w.decided
			}
			continue
		}
		read := func(e *object.TreeEntry) ([]byte, error) {
			if e == nil {
				return nil, nil
			}
			d, err := s.v.blob(e.Hash)
			if d == nil && err == nil {
				d = []byte{}
			}
			return d, err
		}
		var data [3][]byte
		for i, e := range []*object.TreeEntry{w.be, w.oe, w.te} {
			d, err := read(e)
			if err != nil {
				return root, false, err
			}
			data[i] = d
		}
		res, err := s.fn(w.path, data[0], data[1], data[2], func(c FileConflict) string {
			for _, k := range []string{fileChoice(w.path, c.ID), fileChoice(w.path, "")} {
				if side := s.choices[k]; side != "" {
					s.used[k] = true
					s.resolved = append(s.resolved, map[string]any{"path": w.path, "conflict": c.ID, "taken": side})
					return side
				}
			}
			return ""
		})
		if err != nil {
			return root, false, fmt.Errorf("merge %s: %w", w.path, err)
		}
		if !res.Handled {
			return root, false, nil
		}
		if len(res.Conflicts) > 0 {
			s.conflicts = append(s.conflicts, res.Conflicts...)
			continue
		}
		s.merged = append(s.merged, w.path)
		if res.Removed {
			changes[w.path] = object.TreeEntry{}
			continue
		}
		h, err := s.b.put(plumbing.BlobObject, res.Merged)
		if err != nil {
			return root, false, err
		}
		s.fresh[h] = res.Merged
		mode := filemode.Regular
		if w.oe != nil {
			mode = w.oe.Mode
		}
		changes[w.path] = object.TreeEntry{Mode: mode, Hash: h}
	}
	for _, fp := range slices.Sorted(maps.Keys(changes)) {
		var err error
		if out, err = s.b.setPath(out, fp, changes[fp]); err != nil {
			return root, false, err
		}
	}
	return out, true, nil
}

// mergedFingerprints are the fingerprints of node's files in tree root,
// read through the node's view (merged blobs not yet flushed included).
func (s *fileMergeStep) fingerprints(node string, root plumbing.Hash) (map[string]string, error) {
	e, ok, err := s.b.lookup(root, "published/"+published.EscapeNode(node))
	if err != nil {
		return nil, err
	}
	h := plumbing.ZeroHash
	if ok {
		h = e.Hash
	}
	view := viewOf(node)
	sm := &nodeSummer{v: s.v, node: node, b: s.b, alg: s.v.Algorithm(), view: view, cache: s.v.loadSumCache(node, view), fresh: s.fresh}
	fps, _, _, err := sm.fingerprints(h)
	return fps, err
}

// joinByFile joins node, advanced on both sides, whose files merged one
// by one (step) into root without a conflict: a merge receipt taken both,
// with the fingerprints of the merged files. Nil when a conflict remains
// or the node has no shared chain.
func (v *Vault) joinByFile(node string, step *fileMergeStep, root, oursLedger, theirsLedger plumbing.Hash) (*nodeJoin, error) {
	if len(step.conflicts) > 0 {
		return nil, nil
	}
	j := &nodeJoin{node: node, taken: TakeBoth}
	var err error
	if j.ours, err = v.lastReceiptAt(oursLedger, node); err != nil {
		return nil, err
	}
	if j.theirs, err = v.lastReceiptAt(theirsLedger, node); err != nil {
		return nil, err
	}
	if j.ours == nil || j.theirs == nil {
		return nil, nil
	}
	dir := "published/" + published.EscapeNode(node)
	if j.entry, j.hasEntry, err = step.b.lookup(root, dir); err != nil {
		return nil, err
	}
	if j.fps, err = step.fingerprints(node, root); err != nil {
		return nil, err
	}
	for _, p := range step.merged {
		if rel, ok := strings.CutPrefix(p, dir+"/"); ok {
			j.pages = append(j.pages, rel)
			j.pagePaths = append(j.pagePaths, p)
		}
	}
	for _, r := range step.resolved {
		not := j.theirs.ContentHash
		if r["taken"] == TakeTheirs {
			not = j.ours.ContentHash
		}
		c := maps.Clone(r)
		c["not_taken"] = not
		j.resolved = append(j.resolved, c)
	}
	return j, nil
}

// describeChoice says in words what a file choice of resolve.json names.
func describeChoice(k string) string {
	rest := strings.TrimPrefix(k, "file:")
	p, id, _ := strings.Cut(rest, "#")
	if id == "" {
		return p
	}
	what, name, _ := strings.Cut(id, ":")
	return fmt.Sprintf("%s %s %s", p, what, name)
}
