package vault

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
)

// An informed publish (PublishOptions.Changed) is told which paths of the
// source directory may have changed since the last publish from it. When
// the node's committed tree is exactly what that publish found in the
// directory, the publish needs nothing else: it reads the changed paths,
// applies them to the committed tree (setPaths: the directories above
// them are rewritten), and recomputes fingerprints through the per-tree
// sums of the node's other directories (nodeSummer). Its cost follows the
// changes and the directories above them, not the size of the node: no
// stat cache is loaded, no directory listed, no tree built from every file.
//
// The base record (.prose/cache/base-<dir key>) says which tree the
// directory held. Every scan publish removes it before its scan rewrites
// the stat cache, and writes it again, with the node's tree, once it has
// rendered; a fast publish writes it (or, when skipped with other bytes,
// removes it) before it lands, together with its stat-cache delta. The
// fast path runs only when the record names the node's committed tree — so
// a publish from another directory, a WriteNode, a commit by hand, a
// refused or interrupted publish all send the next publish to the scan —
// and when the node has no spec (its facets are its top-level
// directories), no file reached through a symlink (a link's target may
// change unannounced), no changed path names the directory itself, and
// the tree sums of the committed tree are known (a scan publish records
// them). What it cannot do the same way — a file replacing a directory or
// the reverse, a node emptied — falls back to the scan, which gives the
// same receipt, tree and tokens, only slower.

const baseMagic = "prose publish base 1\n"

func (v *Vault) basePath(absDir string) string {
	return v.StatePath("cache", "base-"+cacheKey(absDir))
}

// readBase returns the node tree the base record of absDir names for node.
func (v *Vault) readBase(absDir, node string) (plumbing.Hash, bool) {
	data, err := os.ReadFile(v.basePath(absDir))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	rest, ok := strings.CutPrefix(string(data), baseMagic+node+"\n")
	if !ok || len(rest) != 41 || rest[40] != '\n' {
		return plumbing.ZeroHash, false
	}
	var h plumbing.Hash
	if n, err := hex.Decode(h[:], []byte(rest[:40])); err != nil || n != 20 {
		return plumbing.ZeroHash, false
	}
	return h, true
}

// writeBase records that absDir held node tree t. The record is a cache:
// it is checked against the committed tree before use, so a lost or stale
// one only costs a scan.
func (v *Vault) writeBase(absDir, node string, t plumbing.Hash) {
	// Written in place: a torn record does not parse, and one that is not
	// written at all names an older tree than the committed one.
	p := v.basePath(absDir)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	if os.WriteFile(p, []byte(baseMagic+node+"\n"+t.String()+"\n"), 0o644) != nil {
		_ = os.Remove(p)
	}
}

func (v *Vault) dropBase(absDir string) { _ = os.Remove(v.basePath(absDir)) }

// recordBase keeps the base record and the tree sums after a scan publish:
// for a rendered publish of a node without spec or links, the directory
// held the committed tree, and the sums of its directories (known from the
// scan) let the next informed publish skip the scan.
func (v *Vault) recordBase(h *publishHead, spec *canon.Spec, snap *published.Snapshot, th *treeHasher, files []FileEntry, status string, nodeTree plumbing.Hash) {
	if spec != nil || snap.Stats.Links > 0 || status != "rendered" || nodeTree.IsZero() {
		v.dropBase(h.absDir)
		return
	}
	view := viewOf(h.node)
	sums := v.loadSumCache(h.node, view)
	for p, ver := range snap.Dirs {
		oid, ok := th.oidOf(ver)
		truth, ok2 := snap.DirTruths[p]
		if !ok || !ok2 {
			continue
		}
		lo, _ := slices.BinarySearchFunc(files, p+"/", func(f FileEntry, p string) int { return strings.Compare(f.Path, p) })
		hi, _ := slices.BinarySearchFunc(files[lo:], p+"0", func(f FileEntry, p string) int { return strings.Compare(f.Path, p) }) // '0' follows '/'
		sums.put(newSumKey(p+"/", oid), dirSum{version: ver, digest: truth.Digest, kept: truth.Kept, files: uint32(hi)})
	}
	_, root, err := canon.ParseToken(snap.Fingerprints[canon.Atomic])
	if ver, ok := th.versions[""]; ok && err == nil && len(root) == len(canon.Digest{}) {
		sums.put(newSumKey("", nodeTree), dirSum{version: ver, digest: canon.Digest(root), kept: true, files: uint32(len(files))})
	}
	sums.save()
	v.writeBase(h.absDir, h.node, nodeTree)
}

// errNotInformed makes the informed publish fall back to a scan.
var errNotInformed = errors.New("informed publish falls back to a scan")

// publishChanged is the informed publish without a scan (see the top of
// this file). done is false when it cannot run; the caller then scans.
func (v *Vault) publishChanged(ctx context.Context, h *publishHead) (res *PublishResult, done bool, err error) {
	defer func() {
		if done {
			v.informedFast.Add(1)
		}
	}()
	if h.oldNode.IsZero() {
		return nil, false, nil
	}
	if base, ok := v.readBase(h.absDir, h.node); !ok || base != h.oldNode {
		return nil, false, nil
	}
	view := viewOf(h.node)
	sums := v.loadSumCache(h.node, view)
	if _, ok := sums.peek(newSumKey("", h.oldNode)); !ok {
		return nil, false, nil
	}
	cs, err := published.ReadChanged(ctx, h.absDir, published.Options{Algorithm: v.Algorithm(), View: view}, h.opt.Changed)
	if err != nil {
		return nil, true, fmt.Errorf("publish %s: %w", h.node, err)
	}
	h.clock.mark("scan")
	if cs.Links {
		return nil, false, nil
	}
	b := v.newBatch()
	b.ctx = ctx
	entries, goneFiles, goneDirs, err := v.changedEntries(b, h.oldNode, cs)
	if err != nil {
		b.abort()
		if errors.Is(err, errNotInformed) {
			return nil, false, nil
		}
		return nil, true, err
	}
	var changed []string
	newNode, err := b.setPaths(h.oldNode, entries, "", &changed)
	if err != nil {
		b.abort()
		return nil, true, fmt.Errorf("publish %s: %w", h.node, err)
	}
	known := make(map[string]published.ChangedFile, len(cs.Files))
	for _, f := range cs.Files {
		known[f.Path] = f
	}
	s := &nodeSummer{v: v, node: h.node, b: b, alg: v.Algorithm(), view: view, cache: sums, files: known, source: h.absDir}
	fps, version, files, err := s.fingerprints(newNode)
	if err != nil {
		b.abort()
		return nil, true, fmt.Errorf("publish %s: %w", h.node, err)
	}
	if files == 0 {
		b.abort()
		if !h.opt.AllowEmpty {
			return nil, true, emptySourceError(h.node, h.dir)
		}
		// An allowed empty node is committed as an empty tree, which the
		// tree changes above cannot express (they remove emptied
		// directories): the scan publishes it.
		return nil, false, nil
	}
	facets := []string{canon.Atomic}
	for f := range fps {
		if f != canon.Atomic {
			facets = append(facets, f)
		}
	}
	slices.Sort(facets[1:])
	status, moved := published.Decide(prevFingerprints(h.prev), h.prev != nil, &published.Snapshot{Fingerprints: fps, Facets: facets})
	plan := &publishPlan{status: status, moved: moved, fps: fps, version: version, files: files,
		stats: published.ScanStats{Files: files, Hashed: len(cs.Files), Statted: cs.Statted},
		build: func() (plumbing.Hash, error) { return newNode, nil }}
	for _, f := range cs.Files {
		plan.stats.BytesRead += f.Size
	}
	if status != "rendered" {
		// A skipped publish commits no node tree: drop the blobs and trees
		// written for it, so it stores only its ledger entry, as a scan
		// publish does.
		b.abort()
		b = v.newBatch()
		b.ctx = ctx
	}
	// What the publish read goes into the stat cache before anything
	// lands, as a scan records it, so no later scan of the directory
	// trusts what the cache said before, whatever happens next.
	cs.RecordInCache(v.scanCachePath(h.absDir), goneFiles, goneDirs)
	b.syncWith(v.scanCachePath(h.absDir))
	// The base record names what the directory now holds. It is checked
	// against the committed tree before use, so writing it before the
	// commit lands leaves no window: if the commit never lands, it names
	// a tree the branch does not hold.
	switch {
	case status == "rendered":
		v.writeBase(h.absDir, h.node, newNode)
	case newNode != h.oldNode:
		// Skipped: the directory now differs from the committed tree in
		// what the fingerprints do not see.
		v.dropBase(h.absDir)
	}
	res, _, err = v.landPublish(ctx, h, b, plan)
	if res == nil {
		return nil, true, err
	}
	s.save() // the tree sums also answer a later check for hand commits
	return res, true, err
}

// changedEntries turns a change set into the tree changes of the node
// tree old: each file read, and the removal of every committed file at or
// below a root that the directory no longer holds. It also lists what the
// stat cache must forget: those files, and the directories at, above and
// below each root. A root whose kind changed (a file where the tree has a
// directory, or the reverse, here or above it) is errNotInformed.
func (v *Vault) changedEntries(b *objectBatch, old plumbing.Hash, cs *published.ChangeSet) (map[string]object.TreeEntry, []string, []string, error) {
	entries := map[string]object.TreeEntry{}
	var goneFiles, goneDirs []string
	for _, r := range cs.Roots {
		// Every directory above the root must be one in the tree too.
		inTree := true
		for j := 0; j < len(r); j++ {
			if r[j] != '/' {
				continue
			}
			goneDirs = append(goneDirs, r[:j])
			if !inTree {
				continue
			}
			e, ok, err := b.lookup(old, r[:j])
			if err != nil {
				return nil, nil, nil, err
			}
			if inTree = ok; ok && e.Mode != filemode.Dir {
				return nil, nil, nil, errNotInformed
			}
		}
		// The files read at or below r: r itself, then the run of paths
		// under r/ (byte order may put "r-x" between them, so each is
		// found by search).
		var fresh []published.ChangedFile
		byPath := func(f published.ChangedFile, p string) int { return strings.Compare(f.Path, p) }
		if i, ok := slices.BinarySearchFunc(cs.Files, r, byPath); ok {
			fresh = append(fresh, cs.Files[i])
		}
		freshDir := false
		lo, _ := slices.BinarySearchFunc(cs.Files, r+"/", byPath)
		for i := lo; i < len(cs.Files) && strings.HasPrefix(cs.Files[i].Path, r+"/"); i++ {
			fresh = append(fresh, cs.Files[i])
			freshDir = true
		}
		e, ok, err := b.lookup(old, r)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case !ok:
			// Nothing of it in the tree; the cache should hold nothing
			// there either, but forgets it to be sure.
			goneFiles = append(goneFiles, r)
			goneDirs = append(goneDirs, r)
		case e.Mode == filemode.Dir:
			if len(fresh) > 0 && !freshDir {
				return nil, nil, nil, errNotInformed
			}
			goneDirs = append(goneDirs, r)
			err := v.walkTrees(e.Hash, r+"/", func(p string, e object.TreeEntry) {
				if e.Mode == filemode.Dir {
					goneDirs = append(goneDirs, p)
					return
				}
				goneFiles = append(goneFiles, p)
				entries[p] = object.TreeEntry{Mode: filemode.Regular}
			})
			if err != nil {
				return nil, nil, nil, err
			}
		default:
			if freshDir {
				return nil, nil, nil, errNotInformed
			}
			goneFiles = append(goneFiles, r)
			entries[r] = object.TreeEntry{Mode: filemode.Regular}
		}
		for _, f := range fresh {
			mode := filemode.Regular
			if f.Mode&0o111 != 0 {
				mode = filemode.Executable
			}
			oid := plumbing.Hash(f.GitOID)
			if err := b.putFile(filepath.Join(cs.Dir(), filepath.FromSlash(f.Path)), f.Size, oid); err != nil {
				return nil, nil, nil, err
			}
			entries[f.Path] = object.TreeEntry{Mode: mode, Hash: oid}
		}
	}
	return entries, goneFiles, goneDirs, nil
}

// walkTrees calls fn for every entry below tree h (directories before what
// they hold), as slash paths with prefix.
func (v *Vault) walkTrees(h plumbing.Hash, prefix string, fn func(path string, e object.TreeEntry)) error {
	t, err := v.tree(h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := prefix + e.Name
		fn(p, e)
		if e.Mode == filemode.Dir {
			if err := v.walkTrees(e.Hash, p+"/", fn); err != nil {
				return err
			}
		}
	}
	return nil
}
