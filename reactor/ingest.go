package reactor

import (
	"context"
	"fmt"
	"strings"

	"github.com/prose-store/prose/receipt"
)

// Ingest brings outside input into a node (a gateway): the world-model in
// dir becomes its published truth through the vault's one write path, an
// external wake, and each subscriber of a facet it moved is woken (run
// Drain to reconcile them). A payload that moves nothing is a skipped
// receipt and wakes nobody.
func (r *Reconciler) Ingest(ctx context.Context, node, dir string, refs []string) (Outcome, error) {
	n := r.g.Node(node)
	if n == nil {
		return Outcome{}, fmt.Errorf("no node %s in the graph", node)
	}
	_, tokens, err := r.memo(n)
	if err != nil {
		return Outcome{}, err
	}
	run := Run{ContractFingerprint: n.ContractFingerprint, InputFingerprints: tokens,
		Wake: receipt.Wake{Source: receipt.WakeExternal, Refs: nonNil(refs)}, Provider: "prose", Model: "ingest", AllowEmpty: false}
	diff, perr := checkPostconditions(n, dir)
	if perr != nil {
		// A payload that breaks the gateway's checked postconditions is
		// refused: a failed receipt, nothing published, nobody woken.
		out, _, _, err := r.fail(ctx, Outcome{Node: node, Wake: receipt.WakeExternal}, n, run, perr, "outside input")
		if err != nil {
			return Outcome{}, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.outcomes = append(r.outcomes, out)
		r.result[node] = out
		r.ran[node] = true
		r.seeds[node] = true
		return out, nil
	}
	run.Diff = diff
	rec, moved, err := r.opt.Store.Publish(ctx, node, dir, run)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Node: node, Wake: receipt.WakeExternal, Receipt: rec.ContentHash}
	if rec.Status != receipt.Rendered {
		out.Disposition, out.Why = Skipped, "outside input moved no fingerprint"
	} else {
		out.Disposition, out.Moved, out.Why = Rendered, moved, "outside input; moved "+strings.Join(moved, ", ")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes = append(r.outcomes, out)
	r.result[node] = out
	r.ran[node] = true
	r.seeds[node] = true
	r.propagateLocked(node, moved, rec.ContentHash)
	return out, nil
}
