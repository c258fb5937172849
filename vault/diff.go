package vault

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// Change is one material difference between two world-model states.
type Change struct {
	Node  string `json:"node"`
	Facet string `json:"facet"` // the top-level key the path falls under, or "@atomic" for node-root files
	Path  string `json:"path"`  // dotted path into the structured truth
	Op    string `json:"op"`    // added | removed | changed
	Old   any    `json:"old,omitempty"`
	New   any    `json:"new,omitempty"`
}

// DiffResult is the material change between two commits.
type DiffResult struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Changes []Change `json:"changes"`
}

// Resolve turns a revision into a branch commit: a commit hash or prefix,
// a ref name, NAME~N, or a receipt content hash (or its hex prefix), which
// resolves to the commit holding that receipt's state.
func (v *Vault) Resolve(rev string) (plumbing.Hash, error) {
	base, back := rev, 0
	if i := strings.LastIndexByte(rev, '~'); i > 0 {
		base = rev[:i]
		back = 1
		if n := rev[i+1:]; n != "" {
			var err error
			if back, err = strconv.Atoi(n); err != nil || back < 0 {
				return plumbing.ZeroHash, fmt.Errorf("revision %q: what follows ~ must be a number of commits", rev)
			}
		}
	}
	h, err := v.resolveBase(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for ; back > 0; back-- {
		c, err := v.commit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if len(c.ParentHashes) == 0 {
			return plumbing.ZeroHash, fmt.Errorf("revision %q goes past the first commit", rev)
		}
		h = c.ParentHashes[0]
	}
	return h, nil
}

func (v *Vault) resolveBase(rev string) (plumbing.Hash, error) {
	switch rev {
	case "", "HEAD", "@":
		return v.readRef(v.Branch())
	}
	if rev == v.cfg.Branch {
		return v.readRef(v.Branch())
	}
	if _, _, err := canon.ParseToken(rev); err == nil || (len(rev) >= 8 && !plumbing.IsHash(rev)) {
		if h, ok, err := v.commitOfReceipt(rev); err != nil || ok {
			return h, err
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if plumbing.IsHash(rev) {
		return plumbing.NewHash(rev), nil
	}
	// An abbreviated commit hash.
	if len(rev) >= 4 && isHex(rev) {
		var found []plumbing.Hash
		iter, err := v.storage.IterEncodedObjects(plumbing.CommitObject)
		if err == nil {
			_ = iter.ForEach(func(o plumbing.EncodedObject) error {
				if strings.HasPrefix(o.Hash().String(), rev) {
					found = append(found, o.Hash())
				}
				return nil
			})
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return plumbing.ZeroHash, &RevisionError{fmt.Sprintf("revision %q is ambiguous; give more characters", rev)}
		}
	}
	return plumbing.ZeroHash, &RevisionError{fmt.Sprintf("unknown revision %q: give a commit, %s~N, or a receipt hash", rev, v.cfg.Branch)}
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// commitOfReceipt finds the branch commit that holds the state a receipt
// describes: its own commit when rendered, else the node's last rendered
// commit before it.
func (v *Vault) commitOfReceipt(rev string) (plumbing.Hash, bool, error) {
	rev = strings.TrimPrefix(strings.TrimPrefix(rev, "blake3:"), "sha256:")
	recs, err := v.AllReceipts()
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	lastRendered := map[string]plumbing.Hash{}
	for _, r := range recs {
		if r.Receipt.Status == receipt.Rendered {
			lastRendered[r.Receipt.Node] = r.Commit
		}
		_, hex, _ := strings.Cut(r.Receipt.ContentHash, ":")
		if strings.HasPrefix(hex, rev) {
			h := lastRendered[r.Receipt.Node]
			if h.IsZero() {
				return h, true, fmt.Errorf("receipt %s has no rendered state before it", r.Receipt.ContentHash)
			}
			return h, true, nil
		}
	}
	return plumbing.ZeroHash, false, nil
}

// DiffOptions narrow a diff.
type DiffOptions struct {
	Node  string
	Facet string
}

// Diff returns the material change of world-models between two commits:
// both sides are reduced by the node's canonicalization spec, so immaterial
// churn (timestamps, cosmetic order) never shows.
func (v *Vault) Diff(from, to plumbing.Hash, opt DiffOptions) (*DiffResult, error) {
	res := &DiffResult{From: from.String(), To: to.String(), Changes: []Change{}}
	fc, err := v.commit(from)
	if err != nil {
		return nil, err
	}
	tc, err := v.commit(to)
	if err != nil {
		return nil, err
	}
	nodesA, err := v.nodeTrees(fc.TreeHash)
	if err != nil {
		return nil, err
	}
	nodesB, err := v.nodeTrees(tc.TreeHash)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range nodesA {
		names[n] = true
	}
	for n := range nodesB {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, esc := range sorted {
		node, err := published.UnescapeNode(esc)
		if err != nil || (opt.Node != "" && node != opt.Node) {
			continue
		}
		a, b := nodesA[esc], nodesB[esc]
		if a == b {
			continue
		}
		spec, err := v.storedSpec(tc.TreeHash, "dist/canonicalizers/"+esc+".json")
		if err != nil {
			return nil, err
		}
		ta, err := v.reducedTruth(a, spec, viewOf(node))
		if err != nil {
			return nil, err
		}
		tb, err := v.reducedTruth(b, spec, viewOf(node))
		if err != nil {
			return nil, err
		}
		var cs []Change
		dirs, err := v.topDirs(a, b)
		if err != nil {
			return nil, err
		}
		diffValues(node, nil, ta, tb, &cs)
		for i := range cs {
			// Only a top-level directory is a facet; a file at the node
			// root counts toward @atomic alone.
			if !dirs[cs[i].Facet] {
				cs[i].Facet = "@atomic"
			}
		}
		for _, c := range cs {
			if opt.Facet == "" || c.Facet == opt.Facet {
				res.Changes = append(res.Changes, c)
			}
		}
	}
	return res, nil
}

func (v *Vault) nodeTrees(root plumbing.Hash) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	e, ok, err := v.lookup(root, "published")
	if err != nil || !ok {
		return out, err
	}
	t, err := v.tree(e.Hash)
	if err != nil {
		return nil, err
	}
	for _, ne := range t.Entries {
		out[ne.Name] = ne.Hash
	}
	return out, nil
}

func (v *Vault) reducedTruth(h plumbing.Hash, spec *canon.Spec, view published.View) (any, error) {
	if h.IsZero() {
		return nil, nil
	}
	// Values are read blob by blob, under the scan's limits: a large
	// binary file streams into its token, never sits whole in memory.
	values, err := v.readValues(context.Background(), h, view)
	if err != nil {
		return nil, err
	}
	truth, err := published.TruthOfValues(values)
	if err != nil {
		return nil, err
	}
	red, _, err := spec.Reduce(canon.Path{}, truth)
	return red, err
}

// diffValues appends the structural differences between a and b. Objects
// are compared key by key and arrays element by element, so a change deep
// inside a list names the element.
func diffValues(node string, path canon.Path, a, b any, out *[]Change) {
	switch {
	case a == nil && isObject(b):
		a = map[string]any{}
	case b == nil && isObject(a):
		b = map[string]any{}
	}
	diffAt(node, path, path.String(), a, b, out)
}

func diffAt(node string, path canon.Path, text string, a, b any, out *[]Change) {
	join := func(k string) string {
		seg := canon.Path{k}.String()
		if text == "" {
			return seg
		}
		return text + "." + seg
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if okA && okB {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Slice(sorted, func(i, j int) bool { return canon.CompareKeys(sorted[i], sorted[j]) < 0 })
		for _, k := range sorted {
			va, inA := ma[k]
			vb, inB := mb[k]
			p := append(append(canon.Path{}, path...), k)
			switch {
			case !inA && isObject(vb):
				// An added object lists what it holds, down to its values.
				diffAt(node, p, join(k), map[string]any{}, vb, out)
			case !inB && isObject(va):
				diffAt(node, p, join(k), va, map[string]any{}, out)
			case !inA:
				*out = append(*out, change1(node, p, join(k), "added", nil, vb))
			case !inB:
				*out = append(*out, change1(node, p, join(k), "removed", va, nil))
			default:
				diffAt(node, p, join(k), va, vb, out)
			}
		}
		return
	}
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if okA && okB {
		for i := 0; i < len(la) || i < len(lb); i++ {
			el := fmt.Sprintf("%s[%d]", text, i)
			switch {
			case i >= len(la):
				*out = append(*out, change1(node, path, el, "added", nil, lb[i]))
			case i >= len(lb):
				*out = append(*out, change1(node, path, el, "removed", la[i], nil))
			default:
				diffAt(node, path, el, la[i], lb[i], out)
			}
		}
		return
	}
	ja, _ := canon.Marshal(a)
	jb, _ := canon.Marshal(b)
	if string(ja) != string(jb) {
		op := "changed"
		if a == nil && len(path) == 0 {
			op = "added"
		} else if b == nil && len(path) == 0 {
			op = "removed"
		}
		*out = append(*out, change1(node, path, text, op, a, b))
	}
}

// change1 builds a Change; the facet is the top-level key when the change
// lies below one, else @atomic (node-root files count toward @atomic only).
func change1(node string, p canon.Path, text, op string, a, b any) Change {
	facet := "@atomic"
	if len(p) > 1 {
		facet = p[0]
	}
	return Change{Node: node, Facet: facet, Path: text, Op: op, Old: a, New: b}
}

// topDirs lists the top-level directories of two node trees.
func (v *Vault) topDirs(trees ...plumbing.Hash) (map[string]bool, error) {
	dirs := map[string]bool{}
	for _, h := range trees {
		if h.IsZero() {
			continue
		}
		t, err := v.tree(h)
		if err != nil {
			return nil, err
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Dir {
				dirs[e.Name] = true
			}
		}
	}
	return dirs, nil
}

// isObject reports whether v is a non-empty JSON object.
func isObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) > 0
}
