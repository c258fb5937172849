package vault

import (
	"bufio"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
)

// FsckReport is the result of Fsck.
type FsckReport struct {
	Objects   int            `json:"objects"`
	Receipts  *ReceiptReport `json:"receipts"`
	Nodes     int            `json:"nodes"`
	HandEdits []HandEdit     `json:"hand_edits"`
	Problems  []Problem      `json:"problems"`
}

// OK reports whether fsck found nothing wrong.
func (r *FsckReport) OK() bool {
	return len(r.Problems) == 0 && len(r.HandEdits) == 0 && (r.Receipts == nil || len(r.Receipts.Problems) == 0)
}

// Fsck verifies everything the vault holds: every loose git object re-hashes
// to its name and everything reachable from the branch and the ledger can be
// read; every receipt chain verifies; each node's committed world-model
// fingerprints to its last receipt; the working tree under published/ matches
// the branch (hand edits are reported, never fixed silently).
//
// Fsck holds the writer lock, after the repair every writer runs, so it
// sees one consistent state and never reports a publish in flight.
func (v *Vault) Fsck(ctx context.Context) (*FsckReport, error) {
	w, err := v.lockOnly(ctx, "prose fsck")
	if err != nil {
		return nil, err
	}
	defer w.release()
	rep := &FsckReport{}
	// Repair first, as every writer does; when it cannot write (a full
	// disk), check the vault as it stands and report why.
	if err := v.repair(); err != nil {
		rep.Problems = append(rep.Problems, Problem{"repair", fmt.Sprintf("%v (fsck checked the vault as it stands; free space or fix what the error names, then run `prose fsck` again to repair)", err)})
	}
	n, probs := v.checkLooseObjects(ctx)
	rep.Objects = n
	rep.Problems = append(rep.Problems, probs...)
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return nil, err
	}
	ledger, err := v.requireLedger()
	if err != nil {
		return nil, err
	}
	for _, h := range []plumbing.Hash{tip, ledger} {
		if err := v.checkReachable(ctx, h); err != nil {
			rep.Problems = append(rep.Problems, Problem{"history from " + h.String(), err.Error()})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // interrupted: what was found so far is no verdict
	}
	rr, err := v.VerifyReceipts()
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{"ledger", err.Error()})
	} else {
		rep.Receipts = rr
	}
	off, err := v.OffBranchReceipts()
	if err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, off...)
	tipCommit, err := v.commit(tip)
	if err != nil {
		return nil, err
	}
	nodes, probs, err := v.checkPublished(ctx, tipCommit.TreeHash, ledger)
	if err != nil {
		return nil, err
	}
	rep.Nodes = nodes
	rep.Problems = append(rep.Problems, probs...)
	missing, err := v.checkMissingNodes(tipCommit.TreeHash, ledger)
	if err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, missing...)
	catalog, err := v.checkCatalog(tipCommit.TreeHash)
	if err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, catalog...)
	edits, err := v.handEdits(tipCommit.TreeHash, "published")
	if err != nil {
		return nil, err
	}
	rep.HandEdits = edits
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rep, nil
}

// checkLooseObjects re-hashes every loose object against its name.
func (v *Vault) checkLooseObjects(ctx context.Context) (int, []Problem) {
	var probs []Problem
	count := 0
	objects := filepath.Join(v.gitDir, "objects")
	dirs, _ := os.ReadDir(objects)
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(objects, d.Name()))
		for _, e := range ents {
			if ctx.Err() != nil {
				return count, probs // Fsck reports the interruption
			}
			name := d.Name() + e.Name()
			if !plumbing.IsHash(name) {
				continue
			}
			count++
			if err := verifyLoose(filepath.Join(objects, d.Name(), e.Name()), plumbing.NewHash(name)); err != nil {
				probs = append(probs, Problem{"object " + name, err.Error()})
			}
		}
	}
	return count, probs
}

func verifyLoose(path string, want plumbing.Hash) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return fmt.Errorf("not a zlib stream: %v", err)
	}
	// The content streams through the hash: a large object is never held.
	br := bufio.NewReader(zr)
	hdr, err := br.ReadString(0)
	if err != nil {
		return fmt.Errorf("damaged: no object header")
	}
	hdr = hdr[:len(hdr)-1]
	typ, sizeText, ok := strings.Cut(hdr, " ")
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if !ok || err != nil || size < 0 {
		return fmt.Errorf("damaged: bad object header %q", hdr)
	}
	t, err := plumbing.ParseObjectType(typ)
	if err != nil {
		return fmt.Errorf("damaged: unknown object type %q", typ)
	}
	h := plumbing.NewHasher(t, size)
	n, err := io.Copy(h, br)
	if err != nil {
		return fmt.Errorf("damaged: %v", err)
	}
	if n != size {
		return fmt.Errorf("damaged: bad object header %q (the content holds %d bytes)", hdr, n)
	}
	if got := h.Sum(); got != want {
		return fmt.Errorf("content hashes to %s", got)
	}
	return nil
}

// checkReachable reads every commit and tree reachable from h, and reads
// and re-hashes every blob, loose or packed.
func (v *Vault) checkReachable(ctx context.Context, h plumbing.Hash) error {
	seen := map[plumbing.Hash]bool{}
	var walkTree func(plumbing.Hash) error
	walkTree = func(t plumbing.Hash) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		if err := ctx.Err(); err != nil {
			return err
		}
		tr, err := v.tree(t)
		if err != nil {
			return err
		}
		for _, e := range tr.Entries {
			if e.Mode == filemode.Dir {
				if err := walkTree(e.Hash); err != nil {
					return err
				}
				continue
			}
			if e.Mode == filemode.Submodule || seen[e.Hash] {
				continue
			}
			seen[e.Hash] = true
			got, err := v.blobHash(e.Hash)
			if err != nil {
				return fmt.Errorf("blob %s cannot be read: %v", e.Hash, err)
			}
			if got != e.Hash {
				return fmt.Errorf("blob %s is corrupt: its content hashes to %s", e.Hash, got)
			}
		}
		return nil
	}
	stack := []plumbing.Hash{h}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.IsZero() || seen[c] {
			continue
		}
		seen[c] = true
		cm, err := v.commit(c)
		if err != nil {
			return err
		}
		if err := walkTree(cm.TreeHash); err != nil {
			return err
		}
		stack = append(stack, cm.ParentHashes...)
	}
	return nil
}

// blobHash re-hashes blob h as it streams from the object store.
func (v *Vault) blobHash(h plumbing.Hash) (plumbing.Hash, error) {
	v.mu.Lock()
	obj, err := v.storage.EncodedObject(plumbing.BlobObject, h)
	v.mu.Unlock()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	hs := plumbing.NewHasher(plumbing.BlobObject, obj.Size())
	if err := v.copyBlob(hs, h); err != nil {
		return plumbing.ZeroHash, err
	}
	return hs.Sum(), nil
}

// RegisterHandCommitFix makes fix what fsck says settles a commit outside
// prose under published/<node>/, for a node that takes such commits in its
// own way (the wiki: `prose wiki commit`). A package that owns a built-in
// node registers it in an init function, as it registers its view.
func RegisterHandCommitFix(node, fix string) {
	viewsMu.Lock()
	defer viewsMu.Unlock()
	handFixes[node] = fix
}

var handFixes = map[string]string{}

// handCommitFix says how a commit outside prose under published/<node>/ is
// settled: the node's registered fix, else its next publish restores the
// published truth.
func handCommitFix(node string) string {
	viewsMu.RLock()
	defer viewsMu.RUnlock()
	if fix, ok := handFixes[node]; ok {
		return fix
	}
	return "run `prose publish " + node + " DIR` with the node's render to restore the published truth"
}

// noReceiptFix says how to settle a node directory committed without a
// receipt: publish it (a receipt records it), or remove it.
func noReceiptFix(node, esc string) string {
	return "publish it with `prose publish " + node + " DIR` (a receipt then records it), or remove it with `git rm -r published/" + esc + "` and commit"
}

// checkPublished recomputes each node's fingerprints from the committed
// tree and compares them with the node's last receipt.
func (v *Vault) checkPublished(ctx context.Context, root, ledger plumbing.Hash) (int, []Problem, error) {
	e, ok, err := v.lookup(root, "published")
	if err != nil || !ok {
		return 0, nil, err
	}
	t, err := v.tree(e.Hash)
	if err != nil {
		return 0, nil, err
	}
	var probs []Problem
	for _, ne := range t.Entries {
		node, err := published.UnescapeNode(ne.Name)
		if err != nil {
			probs = append(probs, Problem{"published/" + ne.Name, "not a node directory name: " + err.Error() + "; move it out of published/ with `git mv` (or remove it with `git rm -r`) and commit"})
			continue
		}
		last, err := v.lastReceiptAt(ledger, node)
		if err != nil {
			return 0, nil, err
		}
		where := "published/" + ne.Name
		if last == nil {
			probs = append(probs, Problem{where, "committed without a receipt: a commit outside prose added it; " + noReceiptFix(node, ne.Name)})
			continue
		}
		// What the branch must hold is what the newest receipt that
		// published something says: a failed run after a hand commit
		// takes nothing in.
		if last, err = v.publishedReceipt(ledger, node, last); err != nil {
			return 0, nil, err
		}
		if last == nil {
			probs = append(probs, Problem{where, "committed without a receipt that published it (the node's receipts are all failed runs): a commit outside prose added it; " + noReceiptFix(node, ne.Name)})
			continue
		}
		spec, err := v.storedSpec(root, "dist/canonicalizers/"+ne.Name+".json")
		if err != nil {
			probs = append(probs, Problem{where, err.Error() + "; restore the last good spec (`git log -- dist/canonicalizers/" + ne.Name + ".json` finds it; `git checkout COMMIT -- FILE`, then commit), or publish the node again with `prose publish " + node + " DIR --spec FILE`"})
			continue
		}
		fps, err := v.committedFingerprints(ctx, ne.Hash, spec, viewOf(node))
		if err != nil {
			if ctx.Err() != nil {
				return 0, nil, err
			}
			probs = append(probs, Problem{where, err.Error() + ": the vault's committed copy is broken (a commit outside prose); " + handCommitFix(node)})
			continue
		}
		for facet, tok := range last.Fingerprints {
			if fps[facet] != tok {
				probs = append(probs, Problem{where, fmt.Sprintf("facet %s fingerprints to %s but the last receipt that published the node, %s, says %s: a commit outside prose changed the node; %s", facet, fps[facet], last.ContentHash, tok, handCommitFix(node))})
			}
		}
	}
	return len(t.Entries), probs, nil
}

// readValues reads the structured-truth value of every file under tree h
// (through the node's view, if any), keyed by slash path, streaming each blob (published.ReadValue bounds what
// it holds).
func (v *Vault) readValues(ctx context.Context, h plumbing.Hash, view published.View) (map[string]any, error) {
	values := map[string]any{}
	err := v.walkFiles(h, "", func(p string, e object.TreeEntry) error {
		v.mu.Lock()
		defer v.mu.Unlock()
		obj, err := v.storage.EncodedObject(plumbing.BlobObject, e.Hash)
		if err != nil {
			return fmt.Errorf("read blob %s: %w", e.Hash, err)
		}
		r, err := obj.Reader()
		if err != nil {
			return fmt.Errorf("read blob %s: %w", e.Hash, err)
		}
		defer r.Close()
		val, err := published.ReadValueView(ctx, p, r, obj.Size(), view)
		if err != nil {
			return err
		}
		values[p] = val
		return nil
	})
	return values, err
}

// readFiles loads every file under tree h into memory, keyed by slash path.
func (v *Vault) readFiles(h plumbing.Hash) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := v.walkFiles(h, "", func(p string, e object.TreeEntry) error {
		data, err := v.blob(e.Hash)
		if err != nil {
			return err
		}
		files[p] = data
		return nil
	})
	return files, err
}

// handEdits compares the working tree and the git index under dir (a slash
// path such as "published") with the branch: content, the executable bit,
// edits staged with git add but not committed, and directories replaced by
// symlinks.
func (v *Vault) handEdits(root plumbing.Hash, dir string) ([]HandEdit, error) {
	idx, err := v.readIndex()
	if err != nil {
		return nil, err
	}
	committed := map[string]bool{}
	var edits []HandEdit
	e, ok, err := v.lookup(root, dir)
	if err != nil {
		return nil, err
	}
	if ok {
		err = v.walkFiles(e.Hash, dir+"/", func(p string, te object.TreeEntry) error {
			committed[p] = true
			oid, st, err := v.worktreeFile(p, idx, nil)
			if err != nil {
				return err
			}
			switch {
			case st == fileLinked:
				edits = append(edits, v.linkEdit(p))
				return nil
			case st == fileAbsent || st == fileBlocked:
				edits = append(edits, HandEdit{p, "deleted by hand"})
			case st != fileRegular:
				edits = append(edits, HandEdit{p, "replaced by hand with something that is not a regular file"})
			case oid != te.Hash:
				edits = append(edits, HandEdit{p, "modified by hand"})
			case !modeMatches(filepath.Join(v.root, filepath.FromSlash(p)), te.Mode):
				edits = append(edits, HandEdit{p, "its executable bit was changed by hand (chmod)"})
			}
			if ie := idx.get(p); ie == nil {
				edits = append(edits, HandEdit{p, "removed from the git index by hand (git rm --cached)"})
			} else if ie.OID != te.Hash || (ie.Mode&0o111 != 0) != (te.Mode == filemode.Executable) {
				edits = append(edits, HandEdit{p, "a change is staged by hand (git add) but not committed"})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for i := 0; i < idx.len(); i++ {
		name := string(idx.name(i))
		if strings.HasPrefix(name, dir+"/") && !committed[name] {
			edits = append(edits, HandEdit{name, "staged by hand (git add) but in no receipt"})
		}
	}
	base := filepath.Join(v.root, filepath.FromSlash(dir))
	_ = filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(v.root, path)
		rel = filepath.ToSlash(rel)
		if !committed[rel] && idx.get(rel) == nil {
			edits = append(edits, HandEdit{rel, "added by hand (not in any receipt)"})
		}
		return nil
	})
	return edits, nil
}

// checkMissingNodes reports nodes whose last receipt describes a non-empty
// world-model that the branch no longer holds (removed by hand).
func (v *Vault) checkMissingNodes(root, ledger plumbing.Hash) ([]Problem, error) {
	lc, err := v.commit(ledger)
	if err != nil {
		return nil, err
	}
	e, ok, err := v.lookup(lc.TreeHash, "nodes")
	if err != nil || !ok {
		return nil, err
	}
	t, err := v.tree(e.Hash)
	if err != nil {
		return nil, err
	}
	var probs []Problem
	for _, ne := range t.Entries {
		esc := strings.TrimSuffix(ne.Name, ".json")
		if _, ok, err := v.lookup(root, "published/"+esc); err != nil || ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		node, err := published.UnescapeNode(esc)
		if err != nil {
			continue
		}
		last, err := v.lastReceiptAt(ledger, node)
		if err == nil {
			last, err = v.publishedReceipt(ledger, node, last)
		}
		if err != nil || last == nil {
			continue
		}
		spec, err := v.storedSpec(root, "dist/canonicalizers/"+esc+".json")
		if err != nil {
			continue
		}
		empty, err := published.FingerprintFiles(map[string][]byte{}, published.Options{Algorithm: v.Algorithm(), Spec: spec})
		if err == nil && empty[canon.Atomic] != last.Fingerprints[canon.Atomic] {
			probs = append(probs, Problem{"published/" + esc, fmt.Sprintf("node %s has receipts (last %s) but the branch holds none of its files (removed by hand?); %s, or restore its files from the commit of that receipt (`prose log %s` names it) with `git checkout COMMIT -- published/%s` and commit", node, last.ContentHash, handCommitFix(node), node, esc)})
		}
	}
	return probs, nil
}
