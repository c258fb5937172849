package ingest

import (
	"context"
	"sync/atomic"

	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
)

// A run that works its sources one after the other (the offline engine,
// any trusted in-process model) asks the next source's analysis, and
// renders its text, while the one before finishes: both depend on the
// source and the run's base state alone (every source plans against the
// base state), never on what the sources before it wrote, so asking them
// early gives the very answers asked in turn. What they add to the run
// (usage, review items, a narrowed index) is taken in at the source's
// turn, in name order, as if asked then.
//
// At most one source is worked ahead, and only one short enough to hold
// beside the source being finished (aheadBelow): a long source is read,
// rendered and analysed in its turn, so a run's peak memory stays that of
// its longest source.

// workAhead turns working ahead on (tests turn it off to compare);
// takenAhead counts the turns that took a source worked ahead.
var (
	workAhead  = true
	takenAhead atomic.Int64
)

// aheadBelow is the size of the largest source worked ahead.
const aheadBelow = 1 << 20

// ahead is a source being worked ahead: done is closed once rendered and
// analysis hold its results.
type ahead struct {
	d        *source.Document
	done     chan struct{}
	rendered render.Result
	analysis analysis
}

// worksAhead says whether the run may work its next source ahead: it
// works them in turn with a model that answers in-process and alike for
// the same prompt (not a conversation, a recording or a dry run).
func (r *run) worksAhead() bool {
	return workAhead && !r.opt.DryRun && !r.converses() && r.scripts == nil
}

// startAhead starts working d ahead, when it qualifies; the run's next
// turn for d takes the results (takeAhead).
func (r *run) startAhead(ctx context.Context, d *source.Document) {
	if d == nil || r.ahead != nil || !r.worksAhead() || d.Size > aheadBelow || d.Released() || r.same.of[d.Name] != "" {
		return
	}
	if !r.warmed {
		r.base.warm()
		r.warmed = true
	}
	a := &ahead{d: d, done: make(chan struct{})}
	r.ahead = a
	go func() {
		defer close(a.done)
		a.rendered = r.renderPlaced(d)
		a.analysis = r.analysis(ctx, d)
	}()
}

// takeAhead is d's rendering and analysis: worked ahead, or now.
func (r *run) takeAhead(ctx context.Context, d *source.Document) (render.Result, analysis) {
	if a := r.ahead; a != nil {
		<-a.done
		r.ahead = nil
		if a.d == d {
			takenAhead.Add(1)
			return a.rendered, a.analysis
		}
	}
	rendered := r.renderPlaced(d) // before the analysis: its HTML is let go first
	return rendered, r.analysis(ctx, d)
}

// renderPlaced is d's rendering as its placing needs it: a source short
// enough for one page keeps its HTML (its page shows it); a long one's
// parts keep their titles and anchors, their HTML dropped at once, so a
// 16 MiB source's rendered text is never held beside the prompts that
// quote it (it is rendered again once the model has written).
func (r *run) renderPlaced(d *source.Document) render.Result {
	res := r.renderSource(d)
	if len(res.Parts) > 0 {
		parts := res.Parts
		for i := range parts {
			parts[i].HTML = ""
		}
		res = render.Result{Parts: parts}
	}
	return res
}

// waitAhead waits for a source worked ahead whose turn did not come (the
// run stopped before it).
func (r *run) waitAhead() {
	if a := r.ahead; a != nil {
		<-a.done
		r.ahead = nil
	}
}

// renderSource renders d's text as its pages show it.
func (r *run) renderSource(d *source.Document) render.Result {
	return render.Document(d, render.Options{Link: r.links.resolver(d)})
}
