package receipt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prose-store/prose/internal/parallel"
)

// Problem is one thing wrong with one receipt of a sequence: its index in
// append order, its node and recorded content_hash, and why.
type Problem struct {
	Index       int
	Node        string
	ContentHash string
	Reason      string
}

// String names the receipt and the reason, as in
// `receipt 12 (node "a", sha256:…): content_hash mismatch (…)`.
func (p Problem) String() string {
	return fmt.Sprintf("receipt %d (node %q, %s): %s", p.Index, p.Node, p.ContentHash, p.Reason)
}

// Error returns String, so a Problem can travel as an error.
func (p Problem) Error() string { return p.String() }

// VerifyChains checks receipts given in append order and returns every
// problem found, in order; none means the sequence verifies. For each
// receipt it checks the CheckBasic rules; that content_hash recomputes
// ("content_hash mismatch"); that no receipt repeats an earlier one; and
// that prev is the content_hash of the previous receipt of the same node, or
// null for the node's first, so each node has one unforked chain that never
// links into another node's. A nil entry is reported and skipped.
//
// Chains are followed by recorded content hashes, so a receipt altered after
// sealing is reported once, as a mismatch, and its successor still links.
func VerifyChains(rs []*Receipt) []Problem {
	return verify(rs, true, nil, nil)
}

// VerifyChainsHashed is VerifyChains for receipts whose content hashes the
// caller recomputed while reading them (hashes[i], errs[i] are what
// rs[i].ComputeContentHash returned), on every core with the parsing.
func VerifyChainsHashed(rs []*Receipt, hashes []string, errs []error) []Problem {
	if len(hashes) != len(rs) || len(errs) != len(rs) {
		return verify(rs, true, nil, nil)
	}
	return verify(rs, true, hashes, errs)
}

// verify is VerifyChains; reportNil false skips nil entries silently, for
// callers that reported them already.
func verify(rs []*Receipt, reportNil bool, hashes []string, hashErrs []error) []Problem {
	var problems []Problem
	byHash := make(map[string]int, len(rs)) // recorded content_hash → first index
	// Nodes that hold a merge receipt are checked as a graph.
	joins := map[string]bool{}
	for _, r := range rs {
		if r != nil {
			if _, ok := MergeOf(r); ok {
				joins[r.Node] = true
			}
		}
	}
	graphs := map[string]*nodeGraph{}
	last := make(map[string]int) // node → index of its latest receipt
	// Recomputing the content hashes is most of the work and each is
	// independent: do them on every core first.
	computed := hashes != nil
	if !computed {
		hashes = make([]string, len(rs))
		hashErrs = make([]error, len(rs))
	}
	basic := make([][]string, len(rs))
	parallel.For(len(rs), func(i int) {
		if rs[i] == nil {
			return
		}
		if !computed {
			hashes[i], hashErrs[i] = rs[i].ComputeContentHash()
		}
		basic[i] = rs[i].basicProblems()
	})
	for i, r := range rs {
		if r == nil {
			if reportNil {
				problems = append(problems, Problem{Index: i, Reason: "missing receipt (nil)"})
			}
			continue
		}
		report := func(format string, args ...any) {
			problems = append(problems, Problem{Index: i, Node: r.Node, ContentHash: r.ContentHash, Reason: fmt.Sprintf(format, args...)})
		}
		for _, p := range basic[i] {
			report("%s", p)
		}
		if h, err := hashes[i], hashErrs[i]; err != nil {
			report("content_hash cannot be recomputed: %v", err)
		} else if h != r.ContentHash {
			report("content_hash mismatch (the receipt's content hashes to %s)", h)
		}
		if j, dup := byHash[r.ContentHash]; dup {
			report("duplicate of receipt %d", j)
			continue // a repeat does not extend its chain
		}

		if joins[r.Node] {
			// A node with merge receipts: its receipts form a graph,
			// checked by mergeAware (below).
			g := graphs[r.Node]
			if g == nil {
				g = &nodeGraph{heads: map[string]int{}}
				graphs[r.Node] = g
			}
			problems = append(problems, g.add(i, r, byHash, rs)...)
			byHash[r.ContentHash] = i
			continue
		}
		prevIdx, hasPrev := last[r.Node]
		last[r.Node] = i
		switch {
		case r.Prev == nil && !hasPrev:
			// the node's first receipt
		case r.Prev == nil:
			report("prev is null, but node %q already has receipt %d (%s)", r.Node, prevIdx, rs[prevIdx].ContentHash)
		case hasPrev && *r.Prev == rs[prevIdx].ContentHash:
			// the chain goes on
		default:
			want := "null (this is the node's first receipt)"
			if hasPrev {
				want = fmt.Sprintf("%s (receipt %d)", rs[prevIdx].ContentHash, prevIdx)
			}
			j, known := byHash[*r.Prev]
			switch {
			case !known:
				report("prev %s is no earlier receipt; want %s", *r.Prev, want)
			case rs[j].Node != r.Node:
				report("prev links to receipt %d of node %q, another node's chain; want %s", j, rs[j].Node, want)
			default:
				report("prev links to receipt %d, an older receipt of this node, so the chain forks; want %s", j, want)
			}
		}
		byHash[r.ContentHash] = i
	}
	nodes := make([]string, 0, len(graphs))
	for n := range graphs {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		problems = append(problems, graphs[n].finish(n, rs)...)
	}
	return problems
}

// Merge is what a merge receipt's semantic_diff.merge records: the content
// hashes of the node's last receipt on each side of a merge.
type Merge struct {
	Ours, Theirs string
}

// MergeOf returns the merge a receipt records, when it is a merge
// receipt: semantic_diff.merge {ours, theirs} (docs/vault-format.md).
func MergeOf(r *Receipt) (Merge, bool) {
	m, ok := r.SemanticDiff["merge"].(map[string]any)
	if !ok {
		return Merge{}, false
	}
	ours, _ := m["ours"].(string)
	theirs, _ := m["theirs"].(string)
	return Merge{Ours: ours, Theirs: theirs}, true
}

// nodeGraph follows one node's receipts when some are merge receipts:
// every prev and every merged head names an earlier receipt of the node,
// and in the end exactly one receipt is named by no later one (the
// node's last), so every fork is joined by a merge receipt.
type nodeGraph struct {
	heads map[string]int // content hash → index, of receipts no later one names
}

func (g *nodeGraph) add(i int, r *Receipt, byHash map[string]int, rs []*Receipt) []Problem {
	var problems []Problem
	report := func(format string, args ...any) {
		problems = append(problems, Problem{Index: i, Node: r.Node, ContentHash: r.ContentHash, Reason: fmt.Sprintf(format, args...)})
	}
	name := func(what, h string) {
		j, known := byHash[h]
		switch {
		case !known:
			report("%s %s is no earlier receipt", what, h)
		case rs[j].Node != r.Node:
			report("%s links to receipt %d of node %q, another node's chain", what, j, rs[j].Node)
		default:
			delete(g.heads, h)
		}
	}
	// A second first receipt (prev null: both sides of a merge created
	// the node) is a fork like any other: accepted only where a merge
	// receipt joins it (finish).
	if r.Prev != nil {
		name("prev", *r.Prev)
	}
	if m, ok := MergeOf(r); ok {
		switch {
		case r.Prev == nil || m.Ours != *r.Prev:
			report("a merge receipt's semantic_diff.merge.ours must equal its prev")
		case m.Theirs == "":
			report("a merge receipt names no merged head (semantic_diff.merge.theirs)")
		case len(r.Wake.Refs) == 0 || r.Wake.Refs[0] != m.Theirs:
			report("a merge receipt's wake.refs[0] must name the merged head %s", m.Theirs)
		default:
			name("semantic_diff.merge.theirs", m.Theirs)
		}
	}
	g.heads[r.ContentHash] = i
	return problems
}

// finish reports a node left with more than one last receipt: a fork no
// merge receipt joins.
func (g *nodeGraph) finish(node string, rs []*Receipt) []Problem {
	if len(g.heads) <= 1 {
		return nil
	}
	idx := make([]int, 0, len(g.heads))
	for _, i := range g.heads {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var hs []string
	for _, i := range idx {
		hs = append(hs, fmt.Sprintf("%s (receipt %d)", rs[i].ContentHash, i))
	}
	last := idx[len(idx)-1]
	return []Problem{{Index: last, Node: node, ContentHash: rs[last].ContentHash, Reason: "the chain forks and no merge receipt joins it: " + strings.Join(hs, " and ") + " are each the last of a chain"}}
}
