package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// The merge of a node advanced on both sides (docs/vault-format.md,
// Merges): a merge receipt on top of the branch and ledger merge commits.

// Which side a merge receipt took.
const (
	TakeBoth   = "both"   // both sides left the same files
	TakeOurs   = "ours"   // prose resolve NODE --ours
	TakeTheirs = "theirs" // prose resolve NODE --theirs
	TakeMerged = "merged" // a merge git made (the merge driver), taken in by prose pull --continue
)

// nodeJoin is one node advanced on both sides, decided.
type nodeJoin struct {
	node         string
	ours, theirs *receipt.Receipt // each side's last receipt
	taken        string           // TakeBoth, TakeOurs or TakeTheirs
	entry        object.TreeEntry // the merged published/<node> entry
	hasEntry     bool
	// extra are files beside the node that go with the side taken
	// (ResolveMerge's companions), path → entry.
	extra map[string]object.TreeEntry
	// For a node merged file by file: the fingerprints of the merged
	// files, the files both sides changed (relative to the node, and as
	// vault paths), and the conflicts prose resolve settled.
	fps       map[string]string
	pages     []string
	pagePaths []string
	resolved  []map[string]any
	// render is the output of prose resolve NODE --render (TakeRendered).
	render *RenderedMerge
}

// joinNode decides how node, advanced on both sides, is merged: taken
// both when the two branch trees hold the same files for it, else the
// side choice names; nil when there is no choice (a conflict).
func (v *Vault) joinNode(node string, oursTree, theirsTree, oursLedger, theirsLedger plumbing.Hash, choice string) (*nodeJoin, error) {
	p := "published/" + published.EscapeNode(node)
	oe, ook, err := v.lookup(oursTree, p)
	if err != nil {
		return nil, err
	}
	te, tok, err := v.lookup(theirsTree, p)
	if err != nil {
		return nil, err
	}
	j := &nodeJoin{node: node}
	if j.ours, err = v.lastReceiptAt(oursLedger, node); err != nil {
		return nil, err
	}
	if j.theirs, err = v.lastReceiptAt(theirsLedger, node); err != nil {
		return nil, err
	}
	if j.ours == nil || j.theirs == nil {
		return nil, nil // a node new on both sides has no shared chain: a conflict
	}
	switch {
	case ook == tok && (!ook || oe.Hash == te.Hash) && choice == "":
		j.taken = TakeBoth
		j.entry, j.hasEntry = oe, ook
	case choice == TakeOurs:
		j.taken = TakeOurs
		j.entry, j.hasEntry = oe, ook
	case choice == TakeTheirs:
		j.taken = TakeTheirs
		j.entry, j.hasEntry = te, tok
	case choice == "":
		return nil, nil
	default:
		return nil, fmt.Errorf("resolve %s: unknown side %q (use --ours or --theirs)", node, choice)
	}
	return j, nil
}

// j0 is the content hash of node's last receipt in the ledger at tip, or
// "none".
func j0(v *Vault, tip plumbing.Hash, node string) string {
	r, err := v.lastReceiptAt(tip, node)
	if err != nil || r == nil {
		return "none"
	}
	return r.ContentHash
}

// mergeReceipt builds the merge receipt of j: prev ours, theirs named in
// wake.refs and semantic_diff.merge, the taken side's fingerprints.
func mergeReceipt(j nodeJoin) (*receipt.Receipt, []string, error) {
	t := j.ours
	if j.taken == TakeTheirs {
		t = j.theirs
	}
	fps := maps.Clone(t.Fingerprints)
	if j.fps != nil {
		fps = maps.Clone(j.fps)
	}
	var moved []string
	for _, k := range slices.Sorted(maps.Keys(fps)) {
		if j.ours.Fingerprints[k] != fps[k] {
			moved = append(moved, k)
		}
	}
	for k := range j.ours.Fingerprints {
		if _, ok := fps[k]; !ok {
			moved = append(moved, k)
		}
	}
	slices.Sort(moved)
	r := newReceipt(j.ours.HashAlgorithm, j.node, t.ContractFingerprint, string(receipt.Rendered), fps, j.ours)
	r.InputFingerprints = append([]string{}, t.InputFingerprints...)
	if j.taken == TakeMerged {
		// The merged files were made from what both sides read.
		r.InputFingerprints = slices.Compact(slices.Sorted(slices.Values(append(r.InputFingerprints, j.theirs.InputFingerprints...))))
	}
	r.Wake.Refs = []string{j.theirs.ContentHash}
	r.Cost.Model = "merge"
	if j.render != nil {
		// Rendered again against the merged vault: the render's memo key
		// and cost.
		r.ContractFingerprint = j.render.ContractFingerprint
		r.InputFingerprints = append([]string{}, j.render.InputFingerprints...)
		r.Cost.Provider, r.Cost.Tokens = j.render.Provider, j.render.Tokens
	}
	m := map[string]any{"ours": j.ours.ContentHash, "theirs": j.theirs.ContentHash, "taken": j.taken}
	switch j.taken {
	case TakeOurs:
		m["not_taken"] = j.theirs.ContentHash
	case TakeTheirs:
		m["not_taken"] = j.ours.ContentHash
	}
	if len(j.resolved) > 0 {
		l := make([]any, len(j.resolved))
		for i, r := range j.resolved {
			l[i] = r
		}
		m["resolved"] = l
	}
	r.SemanticDiff = map[string]any{"merge": m, "moved": stringsToAny(moved)}
	if len(j.pages) > 0 {
		r.SemanticDiff["pages"] = stringsToAny(j.pages)
	}
	if err := r.Seal(); err != nil {
		return nil, nil, err
	}
	return r, moved, nil
}

// appendMergeReceipt writes j's merge receipt: a branch commit on top of
// branch (tree branchTree) whose tree holds the merged node, and its
// ledger commit on top of ledger (tree ledgerTree). Both tips may be
// commits of this batch. It returns the new tips and their trees.
func (b *objectBatch) appendMergeReceipt(branch, branchTree, ledger, ledgerTree plumbing.Hash, j nodeJoin) (nb, nbt, nl, nlt plumbing.Hash, err error) {
	r, moved, err := mergeReceipt(j)
	if err != nil {
		return
	}
	root := branchTree
	p := "published/" + published.EscapeNode(j.node)
	cur, ok, err := b.lookup(root, p)
	if err != nil {
		return
	}
	if j.hasEntry && (!ok || cur.Hash != j.entry.Hash) {
		if root, err = b.setPath(root, p, object.TreeEntry{Mode: filemode.Dir, Hash: j.entry.Hash}); err != nil {
			return
		}
	} else if !j.hasEntry && ok {
		err = fmt.Errorf("merge %s: the side taken removed the node; remove it after the merge with a publish", j.node)
		return
	}
	for _, ep := range slices.Sorted(maps.Keys(j.extra)) {
		if root, err = b.setPath(root, ep, j.extra[ep]); err != nil {
			return
		}
	}
	msg, err := receiptMessage(r, moved)
	if err != nil {
		return
	}
	sig := b.v.signature(time.Now())
	if nb, err = b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: string(msg), TreeHash: root, ParentHashes: []plumbing.Hash{branch}}); err != nil {
		return
	}
	canonical, err := r.Canonical()
	if err != nil {
		return
	}
	bh, err := b.put(plumbing.BlobObject, append(canonical, '\n'))
	if err != nil {
		return
	}
	if nlt, err = b.setPath(ledgerTree, ledgerPath(r.Node), object.TreeEntry{Mode: filemode.Regular, Hash: bh}); err != nil {
		return
	}
	nl, err = b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: string(msg), TreeHash: nlt, ParentHashes: []plumbing.Hash{ledger, nb}})
	return nb, root, nl, nlt, err
}

// resolveRecord is where prose resolve keeps the sides chosen for a
// pending merge, so several nodes can be settled one command at a time.
const resolveRecord = "resolve.json"

type resolveState struct {
	Remote       string            `json:"remote"`
	TheirsBranch string            `json:"theirs_branch"`
	TheirsLedger string            `json:"theirs_ledger"`
	OursBranch   string            `json:"ours_branch"`
	Choices      map[string]string `json:"choices"`
	// Companions are the files beside each node settled whole that go
	// with it (the wiki's catalog and queue), kept so that a later
	// resolve of another node or a page still lands them with it.
	Companions map[string][]string `json:"companions,omitempty"`
}

// underAny reports whether p is one of prefixes or inside one.
func underAny(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// ResolveError is a resolve recorded while other conflicts remain.
type ResolveError struct{ *ConflictError }

// ResolveMerge settles node, advanced on both sides in the merge a pull of
// remote refused, by taking side (TakeOurs or TakeTheirs), using what
// that pull fetched (it fetches nothing). The choice is kept with every
// earlier one for the same two heads; when no conflict remains the merge
// lands as a pull would land it, with a merge receipt per joined node
// whose semantic_diff names the head not taken. Otherwise nothing lands
// and the error names what is still to settle.
//
// companions are paths beside the node that belong to it (the wiki's
// source catalog and review queue): where both sides changed one
// differently, it goes with the side taken, so the node and its catalog
// never come from two sides.
func (v *Vault) ResolveMerge(ctx context.Context, remote, node, side string, companions []string) (*PullResult, error) {
	return v.resolveChoice(ctx, remote, node, node, side, map[string][]string{node: companions})
}

// ResolveFile settles conflicts inside a file the pull of remote merged
// file by file (a wiki page, at its vault path): the one named id
// ("slot:summary", "meta:title"; as FileConflict.ID) or, with id "", every
// conflict of the file, by taking side. Each choice is kept as
// ResolveMerge keeps one; the merge lands when nothing is left to settle,
// with a merge receipt whose semantic_diff.merge.resolved names each
// choice and the head not taken. A choice that names no conflict is
// refused and changes nothing.
func (v *Vault) ResolveFile(ctx context.Context, remote, path, id, side string) (*PullResult, error) {
	name := path
	if id != "" {
		name += " " + id
	}
	return v.resolveChoice(ctx, remote, name, fileChoice(path, id), side, nil)
}

func (v *Vault) resolveChoice(ctx context.Context, remote, node, key, side string, companions map[string][]string) (*PullResult, error) {
	if side != TakeOurs && side != TakeTheirs {
		return nil, fmt.Errorf("resolve %s: choose --ours or --theirs", node)
	}
	if err := checkRemoteName(remote); err != nil {
		return nil, err
	}
	w, h, st, err := v.openResolve(ctx, remote)
	if err != nil {
		return nil, err
	}
	defer w.release()
	theirsBranch, theirsLedger, oursBranch, oursLedger := h.theirsBranch, h.theirsLedger, h.oursBranch, h.oursLedger
	path := v.StatePath(resolveRecord)
	if st.Choices == nil {
		st.Choices = map[string]string{}
	}
	st.Choices[key] = side
	for n, cs := range companions {
		if st.Companions == nil {
			st.Companions = map[string][]string{}
		}
		st.Companions[n] = cs
	}
	mo, err := v.mergeDiverged(ctx, remote, oursBranch, theirsBranch, oursLedger, theirsLedger, st.Choices, st.Companions)
	var ce *ConflictError
	if errors.As(err, &ce) {
		data, jerr := json.MarshalIndent(st, "", "  ")
		if jerr != nil {
			return nil, jerr
		}
		if werr := durable.WriteFile(path, append(data, '\n'), 0o644); werr != nil {
			return nil, fmt.Errorf("record the resolve: %w", werr)
		}
		return nil, &ResolveError{ce}
	}
	if err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	n, err := v.countReceipts(ctx, oursLedger, theirsLedger, theirsBranch)
	if err != nil {
		return nil, err
	}
	return &PullResult{Remote: remote, Branch: mo.Branch, Ledger: mo.Ledger, From: oursLedger, Receipts: n, Merged: true, Summary: mo.Summary, Pages: mo.Pages, FileMerged: mo.FileMerged, Sides: mo.Sides}, nil
}

func (e *ResolveError) Error() string {
	return "recorded; the merge still waits: " + e.ConflictError.Error()
}

func (e *ResolveError) Unwrap() error { return e.ConflictError }

// resolveHeads are the four heads a resolve works between: this vault's
// branch and ledger, and the remote's as last fetched.
type resolveHeads struct{ oursBranch, oursLedger, theirsBranch, theirsLedger plumbing.Hash }

// openResolve takes the writer lock for a resolve of the merge a pull of
// remote refused: it reads the four heads, refuses when the two sides have
// not diverged, and reads the choices recorded so far for these heads (a
// record of other heads is started afresh). The caller releases the
// writer; on an error it is released already.
func (v *Vault) openResolve(ctx context.Context, remote string) (*writer, resolveHeads, resolveState, error) {
	w, err := v.lockWriter(ctx, "prose resolve")
	if err != nil {
		return nil, resolveHeads{}, resolveState{}, err
	}
	h, st, err := v.readResolve(ctx, remote)
	if err != nil {
		w.release()
		return nil, resolveHeads{}, resolveState{}, err
	}
	return w, h, st, nil
}

func (v *Vault) readResolve(ctx context.Context, remote string) (h resolveHeads, st resolveState, err error) {
	if h.theirsBranch, err = v.readRef(remoteBranchRef(remote, v.cfg.Branch)); err != nil {
		return h, st, err
	}
	if h.theirsLedger, err = v.readRef(remoteLedgerRef(remote)); err != nil {
		return h, st, err
	}
	if h.theirsBranch.IsZero() || h.theirsLedger.IsZero() {
		return h, st, fmt.Errorf("nothing to resolve: no fetched branch and ledger of remote %s; run `prose pull %s` first", remote, remote)
	}
	if h.oursBranch, err = v.readRef(v.Branch()); err != nil {
		return h, st, err
	}
	if h.oursLedger, err = v.requireLedger(); err != nil {
		return h, st, err
	}
	v.reindex()
	for _, pair := range [][2]plumbing.Hash{{h.theirsBranch, h.oursBranch}, {h.oursBranch, h.theirsBranch}} {
		in, err := v.isAncestor(ctx, pair[0], pair[1])
		if err != nil {
			return h, st, err
		}
		if in {
			return h, st, fmt.Errorf("nothing to resolve: this vault and remote %s have not diverged (one holds the other's branch); run `prose pull %s`", remote, remote)
		}
	}
	if data, err := os.ReadFile(v.StatePath(resolveRecord)); err == nil {
		_ = json.Unmarshal(data, &st)
	} else if !errors.Is(err, os.ErrNotExist) {
		return h, st, err
	}
	if st.Remote != remote || st.TheirsBranch != h.theirsBranch.String() || st.TheirsLedger != h.theirsLedger.String() || st.OursBranch != h.oursBranch.String() {
		st = resolveState{Remote: remote, TheirsBranch: h.theirsBranch.String(), TheirsLedger: h.theirsLedger.String(), OursBranch: h.oursBranch.String()}
	}
	return h, st, nil
}
