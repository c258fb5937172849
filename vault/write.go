package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// WriteOptions tune a WriteNode.
type WriteOptions struct {
	// Who names the command in the lock holder file.
	Who string
	// Base is the branch commit the changes were computed from. When the
	// branch has moved since, the write is refused with ErrBaseMoved and
	// nothing is written; zero skips the check.
	Base plumbing.Hash
	// Rebuild commits a change that moves no fingerprint (a re-render of
	// page shells after a template change) as one branch commit carrying
	// no receipt, with Message as its message. Without it such a change
	// commits nothing.
	Rebuild bool
	Message string
	// Files are vault files outside published/ committed with the write
	// (slash path from the vault root → content; nil removes), such as the
	// prose.yaml format bump a node's first write needs.
	Files map[string][]byte
	// Diff is added to the receipt's semantic_diff of a rendered write
	// (for example the pages a wiki write touched).
	Diff map[string]any
	// Refs, when set, are the rendered receipt's wake refs (tokens of what
	// caused the write, such as the sources an ingest read).
	Refs []string
	// Cost, when set, is the rendered receipt's cost (its surprise_cause
	// follows the wake).
	Cost *receipt.Cost
	// Body is written into the commit message of a rendered write between
	// its summary line and the receipt: lines a person reads in git log.
	Body string
	// TakeIn names working-tree files the caller read and took into the
	// write (vault path → the content it read; nil: the caller saw the file
	// deleted): hand edits the write replaces rather than refuses.
	TakeIn map[string][]byte
	// Settle gives a receipt even when the write changes no file, if the
	// node's committed tree differs materially from its last receipt
	// (changes committed with git by hand).
	Settle bool
	// Now stamps the commits (default time.Now).
	Now func() time.Time
	// Stage, when set, is called under the writer lock once the base is
	// checked, with a Staged that writes into the write's own objects:
	// the node files and vault files it puts there are committed with
	// changes and Files, their bytes never held together (a path both
	// staged and in changes or Files is refused). An error of Stage
	// fails the write, which writes nothing.
	Stage func(*Staged) error
}

// WriteResult is the outcome of a WriteNode.
type WriteResult struct {
	Receipt *receipt.Receipt // the rendered receipt; nil when none was written
	Moved   []string         // facets whose tokens moved, "@atomic" first
	Version string           // version address of the node after the write
	Commit  plumbing.Hash    // the branch commit; zero when nothing was committed
	Ledger  plumbing.Hash    // the ledger commit; zero without a receipt
	Changed []string         // node paths whose content changed
	Tree    plumbing.Hash    // the node's tree after the write; zero when nothing was committed
	// BlobsRead counts committed blobs read to recompute fingerprints: it
	// grows with the size of the directories above the changes, never with
	// the size of the node (a test checks this).
	BlobsRead int
	HandEdits []HandEdit
}

// ErrBaseMoved is returned by WriteNode when the branch moved after the
// caller read the state its changes were computed from.
var ErrBaseMoved = errors.New("the vault changed while the write was prepared (another prose command committed); run the command again")

// NodeHead returns the branch tip and the tree of node at it (zero when
// the node has no files): the base a WriteNode is computed from.
func (v *Vault) NodeHead(node string) (commit, tree plumbing.Hash, err error) {
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	c, err := v.commit(tip)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	e, ok, err := v.lookup(c.TreeHash, "published/"+published.EscapeNode(node))
	if err != nil || !ok || e.Mode != filemode.Dir {
		return tip, plumbing.ZeroHash, err
	}
	return tip, e.Hash, nil
}

// NodeFiles lists the files of the node tree (from NodeHead) with their blob
// ids, keyed by path relative to the node directory.
func (v *Vault) NodeFiles(tree plumbing.Hash) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	if tree.IsZero() {
		return out, nil
	}
	err := v.walkFiles(tree, "", func(p string, e object.TreeEntry) error {
		out[p] = e.Hash
		return nil
	})
	return out, err
}

// NodeHas reports whether the node tree holds a file (not a directory) at
// path rel, reading only the trees along the path.
func (v *Vault) NodeHas(tree plumbing.Hash, rel string) (bool, error) {
	if tree.IsZero() {
		return false, nil
	}
	e, ok, err := v.lookup(tree, rel)
	if err != nil || !ok {
		return false, err
	}
	return e.Mode != filemode.Dir, nil
}

// NodeFile reads the file at path rel of the node tree; ok is false when it
// does not exist.
func (v *Vault) NodeFile(tree plumbing.Hash, rel string) (data []byte, ok bool, err error) {
	if tree.IsZero() {
		return nil, false, nil
	}
	e, ok, err := v.lookup(tree, rel)
	if err != nil || !ok || e.Mode == filemode.Dir {
		return nil, false, err
	}
	data, err = v.blob(e.Hash)
	return data, err == nil, err
}

// NodeFileOf is NodeFile for the tree of node, which may be the one its
// working-tree files hold: a file there whose content hashes to the blob
// the tree names is read instead of the object store (a read and a SHA-1
// in place of an inflate, for the pages a wiki write lists).
func (v *Vault) NodeFileOf(node string, tree plumbing.Hash, rel string) (data []byte, ok bool, err error) {
	if tree.IsZero() {
		return nil, false, nil
	}
	e, ok, err := v.lookup(tree, rel)
	if err != nil || !ok || e.Mode == filemode.Dir {
		return nil, false, err
	}
	data, err = v.blobAt("published/"+published.EscapeNode(node)+"/"+rel, e.Hash)
	return data, err == nil, err
}

// Blob reads a blob by id (from NodeFiles).
func (v *Vault) Blob(h plumbing.Hash) ([]byte, error) { return v.blob(h) }

// NodeFingerprints returns the fingerprints and version address of a node
// tree as WriteNode computes them (through the node's view).
func (v *Vault) NodeFingerprints(node string, tree plumbing.Hash) (map[string]string, string, error) {
	view := viewOf(node)
	s := &nodeSummer{v: v, node: node, b: v.newBatch(), alg: v.Algorithm(), view: view, cache: v.loadSumCache(node, view)}
	fps, version, _, err := s.fingerprints(tree)
	s.save()
	return fps, version, err
}

// WriteNode commits changes (paths relative to the node directory →
// content; nil removes the file) to node's world-model, built from the
// node's committed tree, as one rendered receipt — the receipt a publish
// of the resulting files would give. Only the directories above the changed
// paths are re-read to compute fingerprints (through the node's registered
// view), so a write costs the same in a small node as in a large one.
//
// A write whose content changes nothing commits nothing. A write whose
// changes move no fingerprint commits nothing either, unless opt.Rebuild
// asks for one plain branch commit. A working-tree file the write would
// overwrite that differs from the branch (a hand edit) refuses the write.
func (v *Vault) WriteNode(ctx context.Context, node string, changes map[string][]byte, opt WriteOptions) (*WriteResult, error) {
	if err := CheckNodeName(node); err != nil {
		return nil, err
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	who := opt.Who
	if who == "" {
		who = "prose write " + node
	}
	paths := make([]string, 0, len(changes))
	for p := range changes {
		n, err := published.NormalizePath(p)
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", node, err)
		}
		if n != p {
			return nil, fmt.Errorf("write %s: path %q is not in normal form (%q)", node, p, n)
		}
		if data := changes[p]; data != nil {
			if err := published.CheckSize(p, data); err != nil {
				return nil, fmt.Errorf("write %s: %w", node, err)
			}
		}
		paths = append(paths, p)
	}
	if opt.Stage == nil {
		if err := published.CheckCollisions(paths); err != nil {
			return nil, fmt.Errorf("write %s: %w", node, err)
		}
	}
	w, err := v.lockWriterChecked(ctx, who)
	if err != nil {
		return nil, err
	}
	defer w.release()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	tip, err := v.readRef(v.Branch())
	if err != nil {
		return nil, err
	}
	if !opt.Base.IsZero() && opt.Base != tip {
		return nil, ErrBaseMoved
	}
	tc, ledgerTip, prev, err := v.nodeHeads(tip, node)
	if err != nil {
		return nil, err
	}
	esc := published.EscapeNode(node)
	if _, ok, err := v.lookup(tc.TreeHash, "dist/canonicalizers/"+esc+".json"); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("write %s: the node has a stored canonicalization spec; it is written by publish only", node)
	}
	var oldNode plumbing.Hash
	if e, ok, err := v.lookup(tc.TreeHash, "published/"+esc); err != nil {
		return nil, err
	} else if ok && e.Mode == filemode.Dir {
		oldNode = e.Hash
	}

	b := v.newBatch()
	defer b.abort()
	var staged *Staged
	if opt.Stage != nil {
		staged = v.newStaged(node, b)
		err := opt.Stage(staged)
		if werr := staged.wait(); err == nil {
			err = werr
		}
		if err != nil {
			return nil, err
		}
		// Staging a large write takes seconds: a Ctrl-C meanwhile stops
		// it here, before anything it wrote is flushed or named.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for p := range staged.nodeFiles {
			if _, ok := changes[p]; ok {
				return nil, fmt.Errorf("write %s: %s is both staged and changed", node, p)
			}
			paths = append(paths, p)
		}
		for p := range staged.removed {
			if _, ok := changes[p]; ok {
				return nil, fmt.Errorf("write %s: %s is both staged and changed", node, p)
			}
			paths = append(paths, p)
		}
		if err := published.CheckCollisions(paths); err != nil {
			return nil, fmt.Errorf("write %s: %w", node, err)
		}
	}
	slices.Sort(paths)
	fresh := map[plumbing.Hash][]byte{}
	newNode := oldNode
	res := &WriteResult{}
	entries := make(map[string]object.TreeEntry, len(paths))
	for _, p := range paths {
		e := object.TreeEntry{Mode: filemode.Regular}
		if f, ok := staged.file(p); ok {
			e.Hash = plumbing.Hash(f.GitOID)
		} else if data := changes[p]; data != nil {
			if e.Hash, err = b.put(plumbing.BlobObject, data); err != nil {
				return nil, err
			}
			fresh[e.Hash] = data
		}
		entries[p] = e
	}
	// Each directory on the way to a change is rewritten once, however
	// many changes it holds.
	if newNode, err = b.setPaths(oldNode, entries, "", &res.Changed); err != nil {
		return nil, fmt.Errorf("write %s: %w", node, err)
	}
	slices.Sort(res.Changed)
	if v.cfg.Format < FormatVersion {
		bumped := *v.cfg
		bumped.Format = FormatVersion
		files := map[string][]byte{ConfigFile: bumped.encode()}
		for p, d := range opt.Files {
			files[p] = d
		}
		opt.Files = files
	}
	// The node's tree and the other files go into the root in one pass,
	// each directory on the way rewritten once: a tree per file (thousands
	// for an ingest's source records) would build as many root trees.
	top := make(map[string]object.TreeEntry, len(opt.Files)+1)
	for p, data := range opt.Files {
		if p == "published" || strings.HasPrefix(p, "published/") {
			return nil, fmt.Errorf("write %s: %s is under published/; only the node's changes go there", node, p)
		}
		e := object.TreeEntry{Mode: filemode.Regular}
		if data != nil {
			if e.Hash, err = b.put(plumbing.BlobObject, data); err != nil {
				return nil, err
			}
		}
		top[p] = e
	}
	if staged != nil {
		for p, h := range staged.files {
			if _, ok := opt.Files[p]; ok {
				return nil, fmt.Errorf("write %s: %s is both staged and in Files", node, p)
			}
			if p == "published" || strings.HasPrefix(p, "published/") {
				return nil, fmt.Errorf("write %s: %s is under published/; only the node's changes go there", node, p)
			}
			top[p] = object.TreeEntry{Mode: filemode.Regular, Hash: h}
		}
	}
	top["published/"+esc] = object.TreeEntry{Mode: filemode.Dir, Hash: newNode}
	var outside []string
	root, err := b.setPaths(tc.TreeHash, top, "", &outside)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", node, err)
	}
	if newNode == oldNode && !opt.Settle {
		return res, nil // nothing changed: no commit, no receipt
	}

	view := viewOf(node)
	s := &nodeSummer{v: v, node: node, b: b, alg: v.Algorithm(), view: view, cache: v.loadSumCache(node, view), fresh: fresh, files: staged.sums()}
	fps, version, files, err := s.fingerprints(newNode)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", node, err)
	}
	res.BlobsRead, res.Version = s.read, version
	facets := []string{"@atomic"}
	for f := range fps {
		if f != "@atomic" {
			facets = append(facets, f)
		}
	}
	slices.Sort(facets[1:])
	// Moved against what the node last published: a failed run's receipt
	// took nothing in (it may carry the fingerprints of files committed by
	// hand, when it was the node's first).
	pub, err := v.publishedReceipt(ledgerTip, node, prev)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", node, err)
	}
	_, moved := published.Decide(prevFingerprints(pub), pub != nil, &published.Snapshot{Fingerprints: fps, Facets: facets})
	if len(moved) == 0 && !opt.Rebuild {
		s.save()
		if len(opt.TakeIn) > 0 && newNode == oldNode {
			// Hand edits that change nothing material: the working tree
			// goes back to the branch, so it is clean again.
			return res, v.restoreTakenIn(node, tip, tc.TreeHash, opt.TakeIn)
		}
		return res, nil // nothing material: no file changes, no commit
	}
	var r *receipt.Receipt
	var msg string
	if len(moved) > 0 {
		r = newReceipt(v.Algorithm(), node, v.contractFingerprint(tc.TreeHash, node), "rendered", fps, prev)
		r.SemanticDiff = map[string]any{"moved": stringsToAny(moved), "version": version, "files": float64(files)}
		for k, val := range opt.Diff {
			r.SemanticDiff[k] = val
		}
		if opt.Refs != nil {
			r.Wake.Refs = append([]string{}, opt.Refs...)
		}
		if opt.Cost != nil {
			r.Cost = *opt.Cost
			r.Cost.SurpriseCause = r.Wake.Source
		}
		if err := r.Seal(); err != nil {
			return nil, err
		}
		m, err := receiptMessage(r, moved)
		if err != nil {
			return nil, err
		}
		msg = string(m)
		if body := strings.TrimSpace(opt.Body); body != "" {
			head, rest, _ := strings.Cut(msg, "\n\n")
			msg = head + "\n\n" + strings.ReplaceAll(body, "\n\n{", "\n\n {") + "\n\n" + rest
		}
	} else {
		msg = opt.Message
		if msg == "" {
			msg = "prose: re-render " + node + " (no material change)\n"
		}
	}
	when := now()
	sig := v.signature(when)
	commit, err := b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: root, ParentHashes: []plumbing.Hash{tip}})
	if err != nil {
		return nil, err
	}
	var wc []change
	if err := diffTrees(b.tree, tc.TreeHash, root, "", &wc); err != nil {
		return nil, err
	}
	idx, err := v.readIndexRepaired(tip)
	if err != nil {
		return nil, err
	}
	defer idx.release() // land writes it; any earlier return gives it up
	for i := range wc {
		if data, ok := opt.TakeIn[wc[i].Path]; ok && data != nil {
			// The caller read this hand edit: the write may replace it.
			wc[i].Old = &object.TreeEntry{Name: wc[i].Path, Mode: filemode.Regular, Hash: objectHash(plumbing.BlobObject, data)}
		}
	}
	inDiff := map[string]bool{}
	for _, c := range wc {
		inDiff[c.Path] = true
	}
	for p, data := range opt.TakeIn {
		if inDiff[p] || data == nil {
			continue
		}
		// A taken-in edit whose path the commit does not change: bring the
		// file back to the committed content.
		e, ok, err := b.lookup(root, p)
		if err != nil {
			return nil, err
		}
		c := change{Path: p, Old: &object.TreeEntry{Name: p, Mode: filemode.Regular, Hash: objectHash(plumbing.BlobObject, data)}}
		if ok {
			c.New = &e
		}
		wc = append(wc, c)
	}
	if edits, err := v.checkClean(wc, idx); err != nil {
		return nil, err
	} else if len(edits) > 0 {
		return nil, handEditError(edits)
	}
	var ledgerCommit plumbing.Hash
	if r != nil {
		if ledgerCommit, err = b.appendLedger(ledgerTip, r, moved, commit, when); err != nil {
			return nil, err
		}
	}
	l := &landing{batch: b, branch: refMove{tip, commit}, ledger: refMove{ledgerTip, ledgerCommit}, changes: wc, idx: idx}
	if r != nil {
		l.receipt = r.ContentHash
	}
	done, err := v.land(l)
	if done != nil {
		res.HandEdits = done.HandEdits
	}
	if err != nil {
		var le *LandedError
		if !errors.As(err, &le) {
			return nil, fmt.Errorf("write %s: %w", node, err)
		}
	}
	s.save() // the objects it names are durable
	v.touchHandStamp(node)
	res.Receipt, res.Moved, res.Commit, res.Ledger, res.Tree = r, moved, commit, ledgerCommit, newNode
	if v.cfg.Format < FormatVersion {
		v.cfg.Format = FormatVersion
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w", node, err)
	}
	return res, nil
}

// NodeHandEdits lists the working-tree files of node that differ from what
// prose last wrote: edited, added or deleted by hand. It compares the
// working tree with the git index prose keeps in step with the branch (one
// lstat per file, a read only when the stat data moved, like git status),
// so it never reads the committed trees.
//
// Another writer landing at the same moment updates the working tree
// before the index, so edits seen without the lock are checked once more
// under it before they are reported.
func (v *Vault) NodeHandEdits(node string) ([]HandEdit, error) {
	edits, err := v.nodeHandEdits(node)
	if err != nil || len(edits) == 0 {
		return edits, err
	}
	w, err := v.lockOnly(context.Background(), "hand-edit check")
	if err != nil {
		return nil, err
	}
	defer w.release()
	return v.nodeHandEdits(node)
}

// WaitWriters returns once no writer holds the vault lock: a reader that
// saw the branch and the ledger disagree (a writer between its two ref
// moves) waits with it before it draws a conclusion.
func (v *Vault) WaitWriters(ctx context.Context) error {
	w, err := v.lockOnly(ctx, "wait for writers")
	if err != nil {
		return err
	}
	w.release()
	return nil
}

func (v *Vault) nodeHandEdits(node string) ([]HandEdit, error) {
	idx, err := v.readIndex()
	if err != nil {
		return nil, err
	}
	dir := "published/" + published.EscapeNode(node)
	prefix := dir + "/"
	var edits []HandEdit
	var fresh []refreshed
	ds := newDirStat(v.root)
	defer ds.close()
	// The directories holding the node's files: the index is sorted, so
	// the files of one directory come together (no set of every name).
	dirs := map[string]bool{dir: true}
	lastDir := ""
	for i := idx.search(prefix); i < idx.len(); i++ {
		if !bytes.HasPrefix(idx.name(i), []byte(prefix)) {
			break
		}
		e := idx.entry(i)
		name := e.Name
		if d := pathpkg.Dir(name); d != lastDir {
			lastDir = d
			for ; len(d) >= len(dir) && !dirs[d]; d = pathpkg.Dir(d) {
				dirs[d] = true
			}
		}
		var cur indexEntry
		statted := ds.entry(name, &cur)
		if statted && idx.sameStat(&cur, &e) {
			continue // unchanged since prose wrote it: no read
		}
		oid, exists, err := v.worktreeOID(name, idx)
		if err != nil {
			return nil, err
		}
		switch {
		case !exists:
			edits = append(edits, HandEdit{name, "deleted by hand"})
		case oid != e.OID:
			edits = append(edits, HandEdit{name, "modified by hand"})
		case statted && cur.Mode == e.Mode && cur.Size == e.Size && !sameStatData(&cur, &e):
			// The same content under new stat data (a copied or restored
			// vault, a touch): remember the stat taken before the hash.
			r := e
			setStatData(&r, &cur)
			fresh = append(fresh, refreshed{old: e, new: r})
		}
	}
	if len(fresh) > 0 {
		v.refreshIndex(fresh)
	}
	// Files added by hand: only a directory modified after the node's last
	// write finished (the stamp file's mtime, from the same file-system
	// clock) can hold one, since adding a name changes the directory's
	// mtime; the others are not read, as git's untracked cache does.
	stamp, err := os.Stat(v.handStampPath(node))
	haveStamp := err == nil
	known := func(p string) bool {
		i := idx.search(p)
		return i < idx.len() && string(idx.name(i)) == p
	}
	var walk func(rel string, all bool)
	walk = func(rel string, all bool) {
		full := filepath.Join(v.root, filepath.FromSlash(rel))
		if !all {
			fi, err := os.Lstat(full)
			if err != nil || !fi.IsDir() {
				return // gone or replaced: its entries were reported above
			}
			if haveStamp && fi.ModTime().Before(stamp.ModTime()) {
				return
			}
		}
		ents, err := os.ReadDir(full)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := rel + "/" + e.Name()
			switch {
			case e.IsDir() && !dirs[p]:
				walk(p, true) // a directory made by hand: all of it is new
			case !e.IsDir() && !known(p):
				edits = append(edits, HandEdit{p, "added by hand (not in any receipt)"})
			}
		}
	}
	for d := range dirs {
		walk(d, false)
	}
	slices.SortFunc(edits, func(a, b HandEdit) int { return strings.Compare(a.Path, b.Path) })
	return edits, nil
}

// NodeReceiptTree returns the node tree the
// branch held when node's last rendered receipt was committed (zero when
// it has none), so callers can tell changes committed by git since.
func (v *Vault) NodeReceiptTree(node string) (plumbing.Hash, bool, error) {
	var found plumbing.Hash
	ok := false
	err := v.Receipts(func(r Record) error {
		if ok || r.Receipt.Node != node || r.Commit.IsZero() {
			return nil
		}
		found, ok = r.Commit, true
		return errStopWalk
	})
	if err != nil && !errors.Is(err, errStopWalk) {
		return plumbing.ZeroHash, false, err
	}
	if !ok {
		return plumbing.ZeroHash, false, nil
	}
	c, err := v.commit(found)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	e, has, err := v.lookup(c.TreeHash, "published/"+published.EscapeNode(node))
	if err != nil || !has {
		return plumbing.ZeroHash, true, err
	}
	return e.Hash, true, nil
}

var errStopWalk = errors.New("stop")

// DirEntry is one entry of a node directory.
type DirEntry struct {
	Name string
	Dir  bool
	Hash plumbing.Hash
}

// NodeDir lists the entries of directory dir ("" for the root) of a node
// tree; a missing directory lists nothing.
func (v *Vault) NodeDir(tree plumbing.Hash, dir string) ([]DirEntry, error) {
	h := tree
	if dir != "" && !tree.IsZero() {
		e, ok, err := v.lookup(tree, dir)
		if err != nil || !ok || e.Mode != filemode.Dir {
			return nil, err
		}
		h = e.Hash
	}
	if h.IsZero() {
		return nil, nil
	}
	t, err := v.tree(h)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, 0, len(t.Entries))
	for _, e := range t.Entries {
		out = append(out, DirEntry{Name: e.Name, Dir: e.Mode == filemode.Dir, Hash: e.Hash})
	}
	return out, nil
}

// lookup finds the entry at slash path p under tree root, reading trees
// this batch wrote but has not flushed.
func (b *objectBatch) lookup(root plumbing.Hash, p string) (object.TreeEntry, bool, error) {
	return lookupIn(b.tree, root, p)
}

// restoreTakenIn brings taken-in working-tree files back to the branch's
// content at root (tip's tree), updating the index.
func (v *Vault) restoreTakenIn(node string, tip, root plumbing.Hash, takeIn map[string][]byte) error {
	var wc []change
	for p, data := range takeIn {
		e, ok, err := v.lookup(root, p)
		if err != nil {
			return err
		}
		c := change{Path: p}
		if data != nil {
			c.Old = &object.TreeEntry{Name: p, Mode: filemode.Regular, Hash: objectHash(plumbing.BlobObject, data)}
		}
		if ok {
			c.New = &e
		}
		wc = append(wc, c)
	}
	idx, err := v.readIndexRepaired(tip)
	if err != nil {
		return err
	}
	defer idx.release()
	if _, err := v.applyChangesReport(wc, idx); err != nil {
		return err
	}
	if err := v.writeIndex(idx); err != nil {
		return err
	}
	v.touchHandStamp(node)
	return nil
}

// NodeChange is a file that differs between two node trees.
type NodeChange struct {
	Path string        // relative to the node directory
	New  plumbing.Hash // zero when the file is gone
}

// DiffNodeTrees lists the files that differ between node trees a and b
// (either may be zero), reading only the subtrees that differ.
func (v *Vault) DiffNodeTrees(a, b plumbing.Hash) ([]NodeChange, error) {
	var wc []change
	if err := diffTrees(v.tree, a, b, "", &wc); err != nil {
		return nil, err
	}
	out := make([]NodeChange, len(wc))
	for i, c := range wc {
		out[i].Path = c.Path
		if c.New != nil {
			out[i].New = c.New.Hash
		}
	}
	return out, nil
}

// HasObject reports whether the repository holds object h (a tree an old
// cache names may have been pruned).
func (v *Vault) HasObject(h plumbing.Hash) bool {
	b := v.newBatch()
	defer b.packs.release()
	return b.has(h)
}

// setPaths returns tree root with every entry of changes (slash paths
// relative to root → entry; a zero hash removes) applied, writing each
// changed tree once. The paths whose entry really changed are appended to
// changed with prefix.
func (b *objectBatch) setPaths(root plumbing.Hash, changes map[string]object.TreeEntry, prefix string, changed *[]string) (plumbing.Hash, error) {
	here := map[string]object.TreeEntry{}
	below := map[string]map[string]object.TreeEntry{}
	for p, e := range changes {
		if name, rest, ok := strings.Cut(p, "/"); ok {
			if below[name] == nil {
				below[name] = map[string]object.TreeEntry{}
			}
			below[name][rest] = e
		} else {
			here[p] = e
		}
	}
	var t *object.Tree
	if root.IsZero() {
		t = &object.Tree{}
	} else {
		var err error
		if t, err = b.tree(root); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	out := make([]object.TreeEntry, 0, len(t.Entries)+len(here))
	seen := map[string]bool{}
	dirty := false
	for _, old := range t.Entries {
		seen[old.Name] = true
		if e, ok := here[old.Name]; ok {
			if _, clash := below[old.Name]; clash {
				return plumbing.ZeroHash, fmt.Errorf("%s%s is both a file and a folder in one write", prefix, old.Name)
			}
			if old.Mode == filemode.Dir && e.Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s%s is a folder; a file cannot replace it", prefix, old.Name)
			}
			if e.Hash != old.Hash || (!e.Hash.IsZero() && e.Mode != old.Mode) {
				*changed = append(*changed, prefix+old.Name)
				dirty = true
			}
			if !e.Hash.IsZero() {
				e.Name = old.Name
				out = append(out, e)
			}
			continue
		}
		if sub, ok := below[old.Name]; ok {
			if old.Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s%s is a file, not a folder", prefix, old.Name)
			}
			h, err := b.setPaths(old.Hash, sub, prefix+old.Name+"/", changed)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if h != old.Hash {
				dirty = true
			}
			if !h.IsZero() {
				out = append(out, object.TreeEntry{Name: old.Name, Mode: filemode.Dir, Hash: h})
			}
			continue
		}
		out = append(out, old)
	}
	for name, e := range here {
		if seen[name] || e.Hash.IsZero() {
			continue
		}
		if _, clash := below[name]; clash {
			return plumbing.ZeroHash, fmt.Errorf("%s%s is both a file and a folder in one write", prefix, name)
		}
		e.Name = name
		out = append(out, e)
		*changed = append(*changed, prefix+name)
		dirty = true
	}
	for name, sub := range below {
		if seen[name] {
			continue
		}
		h, err := b.setPaths(plumbing.ZeroHash, sub, prefix+name+"/", changed)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if !h.IsZero() {
			out = append(out, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
			dirty = true
		}
	}
	if !dirty {
		return root, nil
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, nil // git has no empty trees below the root
	}
	return b.put(plumbing.TreeObject, encodeTree(out))
}

// handStampPath is the file whose mtime marks when a node write last
// brought the node's working tree in step (see NodeHandEdits).
func (v *Vault) handStampPath(node string) string {
	return v.StatePath("cache", "written-"+published.EscapeNode(node))
}

// touchHandStamp records that the node's working tree was just brought in
// step. A stamp that cannot be written only makes the next check read
// every directory.
func (v *Vault) touchHandStamp(node string) {
	p := v.handStampPath(node)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	// Written, not Chtimes'd: the mtime then comes from the file-system
	// clock that stamps the directories.
	_ = os.WriteFile(p, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o644)
}
