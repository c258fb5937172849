package reactor

import (
	"sort"
	"time"

	"github.com/prose-store/prose/published"
)

// Settle returns the outcomes recorded since the last Settle and, when
// nothing is queued or rendering, forgets the bookkeeping of the drains
// that finished (which nodes were woken from outside, which ran), so a
// long-lived reconciler (prose serve) reports and prunes each drain on its
// own and its memory stays bounded. Call it between drains.
func (r *Reconciler) Settle() []Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.outcomes
	r.outcomes = nil
	if len(r.queue) == 0 && len(r.rendering) == 0 {
		r.seeds = map[string]bool{}
		r.ran = map[string]bool{}
		r.result = map[string]Outcome{}
	}
	return out
}

// Rendering returns the nodes whose render is in flight, sorted.
func (r *Reconciler) Rendering() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id := range r.rendering {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Queued returns the nodes woken and not yet run, sorted.
func (r *Reconciler) Queued() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id := range r.queue {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Graph returns the graph the reconciler drains over.
func (r *Reconciler) Graph() *Graph { return r.g }

// Store returns the store the reconciler reads and writes.
func (r *Reconciler) Store() Store { return r.opt.Store }

// NextValidUntil returns the earliest valid_until in a world-model that is
// after now (zero when none is): the moment a self-driven node's truth
// lapses and the node must render again.
func NextValidUntil(files map[string][]byte, now time.Time) time.Time {
	if len(files) == 0 {
		return time.Time{}
	}
	truth, err := published.TruthOfFiles(files)
	if err != nil {
		return time.Time{}
	}
	var next time.Time
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "valid_until" {
					if s, ok := c.(string); ok {
						if t, ok := parseTime(s); ok && t.After(now) && (next.IsZero() || t.Before(next)) {
							next = t
						}
					}
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(truth)
	return next
}
