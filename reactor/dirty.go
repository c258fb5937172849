package reactor

import (
	"slices"
	"time"

	"github.com/prose-store/prose/receipt"
)

// Dirty returns the wakes a run starts from, in (height, id) order: each
// node with no receipt (cold start), whose memo key moved since its last
// receipt (a failed receipt records the key it failed at, so a failure is
// not retried until something moves or the node is named), whose cadence
// has passed since its last receipt, or, for a self-driven node, whose
// world-model holds a lapsed valid_until.
func (r *Reconciler) Dirty() ([]Seed, error) {
	var out []Seed
	now := r.opt.Now()
	for _, id := range r.g.IDs() {
		n := r.g.Node(id)
		last, err := r.opt.Store.Last(id)
		if err != nil {
			return nil, err
		}
		if last == nil {
			out = append(out, Seed{Node: id, Source: coldSource(n), Why: "cold start"})
			continue
		}
		_, tokens, err := r.memo(n)
		if err != nil {
			return nil, err
		}
		switch {
		case last.ContractFingerprint != n.ContractFingerprint:
			out = append(out, Seed{Node: id, Source: coldSource(n), Why: "contract changed"})
			continue
		case !slices.Equal(last.InputFingerprints, tokens):
			out = append(out, Seed{Node: id, Source: receipt.WakeInput, Why: "inputs moved"})
			continue
		}
		var when time.Time
		if n.Cadence > 0 {
			if when, err = r.opt.Store.When(id); err != nil {
				return nil, err
			}
		}
		if n.Cadence > 0 && !now.Before(when.Add(n.Cadence)) {
			out = append(out, Seed{Node: id, Source: receipt.WakeSelf, Why: "cadence " + n.Cadence.String() + " passed"})
			continue
		}
		if n.Cadence > 0 || n.Wake == receipt.WakeSelf {
			files, err := r.opt.Store.Files(id)
			if err != nil {
				return nil, err
			}
			if p := lapsedValidUntil(files, now); p != "" {
				out = append(out, Seed{Node: id, Source: receipt.WakeSelf, Why: "valid_until lapsed at " + p})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Seed) int {
		if r.less(a.Node, b.Node) {
			return -1
		}
		if r.less(b.Node, a.Node) {
			return 1
		}
		return 0
	})
	return out, nil
}

// coldSource is the wake source of a node's first wake: its continuity.
func coldSource(n *Node) receipt.WakeSource {
	switch n.Wake {
	case receipt.WakeSelf, receipt.WakeExternal:
		return n.Wake
	}
	return receipt.WakeInput
}
