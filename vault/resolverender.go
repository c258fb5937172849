package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// TakeRendered is a merge receipt's side when prose resolve NODE --render
// rendered the node again against the merged vault.
const TakeRendered = "rendered"

// MergedView is the vault as the refused merge would land it, read before
// anything lands: what a resolve --render renders against. It holds the
// nodes ResolveRender was asked to read.
type MergedView struct {
	files map[string]map[string][]byte
	last  map[string]*receipt.Receipt
}

// Files returns node's world-model as merged, path → bytes.
func (m *MergedView) Files(node string) (map[string][]byte, error) {
	f, ok := m.files[node]
	if !ok {
		return nil, fmt.Errorf("the merged view does not hold node %s", node)
	}
	return f, nil
}

// Last returns node's last receipt as merged (for a node advanced on both
// sides, its merge receipt); nil when it has none.
func (m *MergedView) Last(node string) (*receipt.Receipt, error) {
	if _, ok := m.files[node]; !ok {
		return nil, fmt.Errorf("the merged view does not hold node %s", node)
	}
	return m.last[node], nil
}

// RenderedMerge is a render's output for the node a resolve --render
// settles, and the memo key it rendered at.
type RenderedMerge struct {
	Files               map[string][]byte // the world-model, path → bytes
	ContractFingerprint string
	InputFingerprints   []string
	Provider, Model     string
	Tokens              receipt.Tokens
}

// renderPlan carries a resolve --render through mergeDiverged: a dry run
// that reads the merged view and stops before anything is written, then
// the landing, with the render's files as the node's.
type renderPlan struct {
	node     string
	dry      bool
	read     []string
	view     *MergedView
	rendered *RenderedMerge
}

// errDryMerge ends a dry run of mergeDiverged once the view is read.
var errDryMerge = errors.New("dry merge")

// readView fills p.view from the merge as planned: each joined node as its
// merge receipt's commit would hold it, every other as the merge commit.
func (p *renderPlan) readView(v *Vault, b *objectBatch, branchTree, ledgerTree plumbing.Hash, joins []nodeJoin) error {
	p.view = &MergedView{files: map[string]map[string][]byte{}, last: map[string]*receipt.Receipt{}}
	for _, n := range p.read {
		if _, ok := p.view.files[n]; ok {
			continue
		}
		pp := "published/" + published.EscapeNode(n)
		e, ok, err := b.lookup(branchTree, pp)
		if err != nil {
			return err
		}
		var last *receipt.Receipt
		if i := slices.IndexFunc(joins, func(j nodeJoin) bool { return j.node == n }); i >= 0 {
			j := joins[i]
			e, ok = j.entry, j.hasEntry
			if last, _, err = mergeReceipt(j); err != nil {
				return err
			}
		} else if le, lok, err := b.lookup(ledgerTree, ledgerPath(n)); err != nil {
			return err
		} else if lok {
			data, err := v.blob(le.Hash)
			if err != nil {
				return err
			}
			if last, err = receipt.Parse(data); err != nil {
				return fmt.Errorf("ledger entry for %s: %w", n, err)
			}
		}
		files := map[string][]byte{}
		if ok && e.Mode == filemode.Dir {
			if err := v.readFilesIn(b, e.Hash, "", files); err != nil {
				return err
			}
		}
		p.view.files[n], p.view.last[n] = files, last
	}
	return nil
}

// readFilesIn reads every file under tree h (this batch's trees included)
// into out, by slash path under prefix.
func (v *Vault) readFilesIn(b *objectBatch, h plumbing.Hash, prefix string, out map[string][]byte) error {
	t, err := b.tree(h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := path.Join(prefix, e.Name)
		if e.Mode == filemode.Dir {
			if err := v.readFilesIn(b, e.Hash, p, out); err != nil {
				return err
			}
			continue
		}
		data, ok := b.sources.data[e.Hash]
		if !ok {
			if data, err = v.blob(e.Hash); err != nil {
				return err
			}
		}
		out[p] = data
	}
	return nil
}

// apply makes j, the node's join, take the render's files.
func (p *renderPlan) apply(v *Vault, b *objectBatch, j *nodeJoin) error {
	r := p.rendered
	if len(r.Files) == 0 {
		return fmt.Errorf("resolve %s --render: the render left no files; nothing changed in this vault", j.node)
	}
	names := make([]string, 0, len(r.Files))
	for f := range r.Files {
		n, err := published.NormalizePath(f)
		if err != nil || n != f {
			return fmt.Errorf("resolve %s --render: the render wrote %q, which cannot be a world-model's path (%v); nothing changed in this vault", j.node, f, err)
		}
		names = append(names, f)
	}
	sort.Strings(names)
	if err := published.CheckCollisions(names); err != nil {
		return fmt.Errorf("resolve %s --render: %v; nothing changed in this vault", j.node, err)
	}
	h, err := b.putFileTree(r.Files, names, "")
	if err != nil {
		return err
	}
	view := viewOf(j.node)
	s := &nodeSummer{v: v, node: j.node, b: b, alg: v.Algorithm(), view: view, cache: v.loadSumCache(j.node, view)}
	fps, _, _, err := s.fingerprints(h)
	if err != nil {
		return err
	}
	j.taken, j.entry, j.hasEntry, j.fps, j.render = TakeRendered, object.TreeEntry{Mode: filemode.Dir, Hash: h}, true, fps, r
	return nil
}

// putFileTree writes the tree of files (names sorted, every one under
// prefix) and returns its hash.
func (b *objectBatch) putFileTree(files map[string][]byte, names []string, prefix string) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for i := 0; i < len(names); {
		rest := strings.TrimPrefix(names[i], prefix)
		dir, _, isDir := strings.Cut(rest, "/")
		if !isDir {
			h, err := b.put(plumbing.BlobObject, files[names[i]])
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, object.TreeEntry{Name: rest, Mode: filemode.Regular, Hash: h})
			i++
			continue
		}
		sub := prefix + dir + "/"
		k := i
		for k < len(names) && strings.HasPrefix(names[k], sub) {
			k++
		}
		h, err := b.putFileTree(files, names[i:k], sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: h})
		i = k
	}
	return b.put(plumbing.TreeObject, encodeTree(entries))
}

// ResolveRender settles node, advanced on both sides in the merge a pull of
// remote refused, by rendering it again: render is given the vault as the
// merge would land it (read holds the nodes it may read: the node and its
// producers) and returns the new world-model. Every other conflict must be
// settled first (the render reads the merged vault). The merge lands as
// ResolveMerge lands it, the node's merge receipt taken "rendered", naming
// both heads. A failing render, or a render whose output the vault
// refuses, changes nothing. The writer lock is held while render runs.
func (v *Vault) ResolveRender(ctx context.Context, remote, node string, read []string, companions []string, render func(context.Context, *MergedView) (*RenderedMerge, error)) (*PullResult, error) {
	if err := checkRemoteName(remote); err != nil {
		return nil, err
	}
	w, h, st, err := v.openResolve(ctx, remote)
	if err != nil {
		return nil, err
	}
	defer w.release()
	theirsBranch, theirsLedger, oursBranch, oursLedger := h.theirsBranch, h.theirsLedger, h.oursBranch, h.oursLedger
	recPath := v.StatePath(resolveRecord)
	choices := map[string]string{}
	for k, s := range st.Choices {
		choices[k] = s
	}
	// The dry run takes this vault's side of the node, so the view seeds
	// the render with the world-model this vault holds.
	choices[node] = TakeOurs
	comps := map[string][]string{}
	for k, cs := range st.Companions {
		comps[k] = cs
	}
	comps[node] = companions
	plan := &renderPlan{node: node, dry: true, read: append([]string{node}, read...)}
	_, err = v.mergeDivergedPlan(ctx, remote, oursBranch, theirsBranch, oursLedger, theirsLedger, choices, comps, plan)
	var ce *ConflictError
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("resolve %s --render renders against the merged vault, so every other conflict must be settled first (then run it again); nothing changed in this vault: %w", node, ce)
	}
	if !errors.Is(err, errDryMerge) {
		if err == nil {
			err = errors.New("the dry merge landed") // never: a dry run stops before landing
		}
		return nil, err
	}
	rendered, err := render(ctx, plan.view)
	if err != nil {
		return nil, fmt.Errorf("resolve %s --render: the render failed, nothing changed in this vault (the merge still waits): %w", node, err)
	}
	plan.dry, plan.rendered = false, rendered
	mo, err := v.mergeDivergedPlan(ctx, remote, oursBranch, theirsBranch, oursLedger, theirsLedger, choices, comps, plan)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(recPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	n, err := v.countReceipts(ctx, oursLedger, theirsLedger, theirsBranch)
	if err != nil {
		return nil, err
	}
	return &PullResult{Remote: remote, Branch: mo.Branch, Ledger: mo.Ledger, From: oursLedger, Receipts: n, Merged: true, Summary: mo.Summary, Pages: mo.Pages, FileMerged: mo.FileMerged}, nil
}
