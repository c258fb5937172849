package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/progress"
	"github.com/prose-store/prose/model"
)

// DefaultJobs is how many sources a run works at once with a provider
// (Options.Jobs; --jobs, or jobs: in prose.yaml): enough to hide a
// provider's latency, few enough to stay under most rate limits.
const DefaultJobs = 4

// A run with a provider works its sources in two phases, so that its
// result and its receipt are the same at any number of jobs:
//
//  1. Conversations, in parallel (at most Jobs at once): each source is
//     analysed and generated on a run of its own, against the run's base
//     state (the wiki as the run found it) alone, and every answer the
//     model gave is kept, in order. Nothing of these runs is kept but the
//     answers and their usage.
//  2. Merge, in name order, one source after another: each source is
//     worked again on the run itself, the model's part played by its
//     kept answers (no call is made), so its tool calls land in the
//     run's one Tx as the merge rule orders them.
//
// What a model is asked depends only on the base state and the source,
// never on the other sources or their order. The offline engine, which
// makes no call, works each source once, in name order.

// script plays a source's kept answers back in order; should the merge
// ask for more than were kept (a check of the final answer that the
// conversation passed), the live model answers.
type script struct {
	live    model.Model
	answers []model.Response
	// placed is where the source's conversation placed its pages, by
	// origin: against the base state alone. The merge may place some
	// elsewhere (an earlier source of the run took the path first:
	// "runbook.md" beside "runbook.txt"), and the kept answers' tool
	// calls follow the merge's places (see pathAlias).
	placed map[string]string
	mu     sync.Mutex
	next   int
	extra  model.Usage
}

func (s *script) Name() string { return s.live.Name() }

// goLive lets the live model answer every call from now on: the kept
// answers left were given for a plan the merge changed (see
// run.sharedThisRun).
func (s *script) goLive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = len(s.answers)
}

func (s *script) Call(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, &model.Error{Op: "call " + s.Name(), Kind: model.KindCanceled, Message: "stopped: " + err.Error(), Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next < len(s.answers) {
		resp := s.answers[s.next]
		s.next++
		resp.Usage = model.Usage{} // counted when the conversation ran
		return resp, nil
	}
	return s.live.Call(ctx, req)
}

// keeper passes calls to a model and keeps each answer.
type keeper struct {
	model.Model
	answers []model.Response
	meter   *meter
	source  string
}

// meter counts the pool's calls in flight and tokens so far, for the
// progress bar (drawn on a terminal only).
type meter struct {
	mu       sync.Mutex
	inFlight int
	tokens   int64
	bar      *progress.Bar
}

func (m *meter) note(delta int, tokens int64, source string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight += delta
	m.tokens += tokens
	calls := "calls"
	if m.inFlight == 1 {
		calls = "call"
	}
	m.bar.Describe(fmt.Sprintf("%s · %d %s in flight · %d tokens", source, m.inFlight, calls, m.tokens))
}

func (k *keeper) Call(ctx context.Context, req model.Request) (model.Response, error) {
	k.meter.note(1, 0, k.source)
	resp, err := k.Model.Call(ctx, req)
	k.meter.note(-1, resp.Usage.Input+resp.Usage.Output, k.source)
	if err == nil {
		k.answers = append(k.answers, resp)
	}
	return resp, err
}

// converses reports whether the run's sources are worked in two phases:
// with every model but the offline engine, and with the offline engine
// too when it is recorded (so the recording replays as any model's).
func (r *run) converses() bool {
	_, recorded := r.opt.Model.(interface{ Recording() string })
	return !r.trusted() || recorded
}

// rewound is scripts to be played again from their first answer.
func rewound(scripts map[string]*script) map[string]*script {
	if scripts == nil {
		return nil
	}
	out := make(map[string]*script, len(scripts))
	for name, s := range scripts {
		out[name] = &script{live: s.live, answers: s.answers, placed: s.placed}
	}
	return out
}

// modelOf is the model that answers for the source named name: its kept
// answers during the merge, else the run's model.
func (r *run) modelOf(name string) model.Model {
	if s, ok := r.scripts[name]; ok {
		return s
	}
	return r.opt.Model
}

// converse runs phase 1 for todo (in name order) with at most Jobs
// sources at once, and keeps each source's answers for the merge. The
// first source to fail stops the others at once; the error of the first
// failed source in name order is returned, with the usage of every call.
func (r *run) converse(ctx context.Context, todo []*source.Document) error {
	names := make([]string, len(todo))
	for i, d := range todo {
		names[i] = d.Name
	}
	var mu sync.Mutex
	placed := map[string]map[string]string{}
	err := r.pool(ctx, names, func(ctx context.Context, i int, m model.Model) (model.Usage, error) {
		u, at, err := r.conversation(ctx, todo[i], m)
		mu.Lock()
		placed[todo[i].Name] = at
		mu.Unlock()
		return u, err
	})
	for name, at := range placed {
		if s := r.scripts[name]; s != nil && at != nil {
			s.placed = at
		}
	}
	return err
}

// pool runs work for each of names (a source's, or a page's for an
// enrich) with at most Jobs at once, each asking the model it is given,
// and keeps the answers of each under its name (r.scripts) for the
// merge; work names a unit already worked by an earlier attempt of the
// run is not asked again.
func (r *run) pool(ctx context.Context, names []string, work func(ctx context.Context, i int, m model.Model) (model.Usage, error)) error {
	todo := names
	jobs := r.opt.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bar := progress.New(r.opt.Progress, int64(len(todo)), "model", progress.Items)
	defer bar.Finish()
	meter := &meter{bar: bar}
	if bar.Enabled() {
		// Calls take seconds and a source several calls: the bar is
		// drawn (after its delay) and kept current — calls in flight,
		// tokens so far, time — between the calls' own reports.
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					bar.Add(0)
				}
			}
		}()
	}
	type outcome struct {
		answers []model.Response
		usage   model.Usage
		err     error
	}
	out := make([]outcome, len(todo))
	var ask []int
	for i, name := range todo {
		if s, ok := r.scripts[name]; ok {
			out[i].answers = s.answers // kept by an earlier attempt of the run
			continue
		}
		ask = append(ask, i)
	}
	jobs = max(min(jobs, len(ask)), 1)
	bar.Add(int64(len(todo) - len(ask)))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				k := &keeper{Model: r.opt.Model, meter: meter, source: todo[i]}
				usage, err := work(ctx, i, k)
				out[i] = outcome{answers: k.answers, usage: usage, err: err}
				if err != nil {
					cancel()
				}
				bar.Add(1)
			}
		}()
	}
feed:
	for _, i := range ask {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	r.scripts = map[string]*script{}
	var first error
	for i, o := range out {
		r.usage = r.usage.Add(o.usage)
		if o.err != nil && first == nil && !(ctx.Err() != nil && model.KindOf(o.err) == model.KindCanceled) {
			first = o.err
		}
		r.scripts[todo[i]] = &script{live: r.opt.Model, answers: o.answers}
	}
	if first == nil {
		for _, o := range out {
			if o.err != nil {
				first = o.err
				break
			}
		}
	}
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// conversation works d on a run of its own against the base state,
// asking m, and returns the usage of its calls and where it placed d's
// pages (by origin).
func (r *run) conversation(ctx context.Context, d *source.Document, m model.Model) (model.Usage, map[string]string, error) {
	c, err := r.apart(ctx, m)
	if err != nil {
		return c.usage, nil, err
	}
	defer c.tx.Discard()
	sr := SourceResult{Name: d.Name, ID: d.ID, Kind: string(d.Kind), Title: d.Title, Pages: []string{}}
	c.res.Sources = append(c.res.Sources, sr)
	err = c.source(ctx, d)
	return c.usage, c.placement, err
}

// apart is a run of its own against the base state, asking m: what a
// conversation works on.
func (r *run) apart(ctx context.Context, m model.Model) (*run, error) {
	opt := r.opt
	opt.Model, opt.Progress, opt.Fail = m, nil, nil
	c := &run{w: r.w, opt: opt, res: &Result{Created: []string{}, Updated: []string{}, Moved: []Move{}, Folders: []string{}, Review: []ReviewEntry{}},
		files: map[string][]byte{}, touched: map[string]bool{}, guard: newGuard(), inRun: r.inRun, raw: r.raw, same: r.same}
	c.bar = progress.New(nil, 1, "", progress.Items)
	if err := c.begin(ctx); err != nil {
		if c.tx != nil {
			c.tx.Discard()
		}
		return c, err
	}
	return c, nil
}

// enrichment enriches the page rel on a run of its own against the base
// state, asking m, and returns the usage of its calls.
func (r *run) enrichment(ctx context.Context, rel string, m model.Model) (model.Usage, error) {
	c, err := r.apart(ctx, m)
	if err != nil {
		return c.usage, err
	}
	defer c.tx.Discard()
	if err := c.enrichPage(ctx, rel); err != nil {
		return c.usage, &StepError{"enrichment of " + rel, err}
	}
	return c.usage, nil
}
