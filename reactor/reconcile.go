package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// Disposition is what a wake came to.
type Disposition string

// The dispositions a run reports.
const (
	Rendered  Disposition = "rendered"  // a new world-model was published
	Skipped   Disposition = "skipped"   // memo key unmoved, or the render's output moved nothing
	Failed    Disposition = "failed"    // nothing published; a failed receipt
	Pruned    Disposition = "pruned"    // downstream of a wake, but no producer propagated to it
	Coalesced Disposition = "coalesced" // a wake folded into a follow-up of a render in flight
)

// Outcome is one node's disposition in a drain, with why.
type Outcome struct {
	Node        string             `json:"node"`
	Disposition Disposition        `json:"disposition"`
	Why         string             `json:"why"`
	Wake        receipt.WakeSource `json:"wake,omitempty"`
	Moved       []string           `json:"moved,omitempty"`
	Receipt     string             `json:"receipt,omitempty"`
	Tokens      receipt.Tokens     `json:"-"`
}

// Report is a drain's outcomes in the order they happened.
type Report struct {
	Outcomes []Outcome
	// RenderTime is the wall time spent preparing render directories,
	// rendering and checking outputs; StoreTime the time in the Store
	// (reads, and the vault's durable writes). What remains of a drain's
	// wall time is the reconciler's own.
	RenderTime, StoreTime time.Duration
}

// Count returns how many outcomes have disposition d.
func (r *Report) Count(d Disposition) int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Disposition == d {
			n++
		}
	}
	return n
}

// Seed is a wake to drain: a node, the wake's source and refs, and why.
type Seed struct {
	Node   string
	Source receipt.WakeSource
	Refs   []string
	Why    string

	extra int // further memo runs (Options.WakePerReceipt)
}

// Options configure a Reconciler.
type Options struct {
	Graph *Graph
	Store Store
	// Renderer picks the renderer of a node; nil (or a nil result) means
	// the node has none: waking it is a failure, except for a gateway,
	// whose world-model comes from outside.
	Renderer func(n *Node) (Renderer, error)
	// Now is the clock of cadences and valid_until (default time.Now).
	Now func() time.Time
	// WorkDir holds each node's workspace (WorkDir/<escaped node>/workspace).
	WorkDir string
	// TempDir is where render directories are made (default os.TempDir);
	// it must lie outside the vault's .git and .prose.
	TempDir string
	// WakePerReceipt re-enacts the reference reactor, which queues one
	// wake per propagating producer receipt: a node woken by n receipts
	// runs the memo path n times (the first renders, the rest skip). The
	// default folds them into one wake.
	WakePerReceipt bool
}

// Reconciler drains wakes over a graph. Wake is safe to call from other
// goroutines while Drain runs.
type Reconciler struct {
	opt Options
	g   *Graph

	mu         sync.Mutex
	renderTime time.Duration
	store      *timedStore
	queue      map[string]*Seed // woken, not yet run
	rendering  map[string]bool
	during     map[string]*Seed // the latest wake that arrived during a render
	outcomes   []Outcome
	seeds      map[string]bool // every node woken from outside the drain
	ran        map[string]bool
	result     map[string]Outcome // last outcome per node in this drain
}

// New returns a reconciler.
func New(opt Options) *Reconciler {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	ts := &timedStore{s: opt.Store}
	opt.Store = ts
	return &Reconciler{opt: opt, g: opt.Graph, store: ts, queue: map[string]*Seed{}, rendering: map[string]bool{},
		during: map[string]*Seed{}, seeds: map[string]bool{}, ran: map[string]bool{}, result: map[string]Outcome{}}
}

// Wake queues a wake. A node already queued keeps one wake (refs merged);
// a node rendering gets one follow-up after its render, however many
// wakes arrive meanwhile.
func (r *Reconciler) Wake(s Seed) error {
	if r.g.Node(s.Node) == nil {
		return fmt.Errorf("no node %s in the graph", s.Node)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seeds[s.Node] = true
	r.wakeLocked(s, false)
	return nil
}

func (r *Reconciler) wakeLocked(s Seed, fromDrain bool) {
	if s.Source == "" {
		s.Source = receipt.WakeExternal
	}
	if r.rendering[s.Node] {
		r.outcomes = append(r.outcomes, Outcome{Node: s.Node, Disposition: Coalesced, Wake: s.Source,
			Why: "woke while its render was in flight: folded into one follow-up against the latest inputs"})
		r.during[s.Node] = &s
		return
	}
	if q := r.queue[s.Node]; q != nil {
		if fromDrain && r.opt.WakePerReceipt {
			q.extra++
		}
		for _, ref := range s.Refs {
			if !slices.Contains(q.Refs, ref) {
				q.Refs = append(q.Refs, ref)
			}
		}
		if fromDrain && q.Source != receipt.WakeInput {
			q.Source = receipt.WakeInput
		}
		if s.Why != "" && !strings.Contains(q.Why, s.Why) {
			q.Why = strings.TrimPrefix(q.Why+"; "+s.Why, "; ")
		}
		return
	}
	c := s
	c.Refs = slices.Clone(s.Refs)
	r.queue[s.Node] = &c
}

// next takes the queued node of lowest (height, id).
func (r *Reconciler) next() (*Seed, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best *Seed
	for _, s := range r.queue {
		if best == nil || r.less(s.Node, best.Node) {
			best = s
		}
	}
	if best == nil {
		return nil, false
	}
	delete(r.queue, best.Node)
	r.rendering[best.Node] = true
	return best, true
}

func (r *Reconciler) less(a, b string) bool {
	ha, hb := r.g.Height(a), r.g.Height(b)
	if ha != hb {
		return ha < hb
	}
	return a < b
}

// Drain runs every queued wake, lowest height first (ties by id), and the
// wakes they propagate, until nothing is queued. An error (the store
// failing, the context ending) stops the drain; what ran until then is in
// the report, and every receipt it wrote is in the store.
func (r *Reconciler) Drain(ctx context.Context) (*Report, error) {
	for {
		if err := ctx.Err(); err != nil {
			return r.report(), err
		}
		s, ok := r.next()
		if !ok {
			break
		}
		out, moved, rec, err := r.step(ctx, s)
		for i := 0; i < s.extra && err == nil; i++ {
			r.mu.Lock()
			r.outcomes = append(r.outcomes, out)
			r.mu.Unlock()
			var m []string
			out, m, _, err = r.step(ctx, s)
			moved = append(moved, m...)
		}
		r.mu.Lock()
		delete(r.rendering, s.Node)
		r.ran[s.Node] = true
		if err == nil {
			r.outcomes = append(r.outcomes, out)
			r.result[s.Node] = out
			if f := r.during[s.Node]; f != nil {
				delete(r.during, s.Node)
				r.wakeLocked(*f, false)
			}
			r.propagateLocked(s.Node, moved, rec)
		}
		r.mu.Unlock()
		if err != nil {
			return r.report(), fmt.Errorf("%s: %w", s.Node, err)
		}
	}
	r.prune()
	return r.report(), nil
}

// propagateLocked wakes each subscriber of a facet in moved once, with
// the receipt that moved it as the wake's ref.
func (r *Reconciler) propagateLocked(node string, moved []string, rec string) {
	for _, e := range r.g.Subscribers(node) {
		if slices.Contains(moved, e.Facet) {
			r.wakeLocked(Seed{Node: e.Subscriber, Source: receipt.WakeInput, Refs: []string{rec},
				Why: fmt.Sprintf("%s moved %s", node, e.Facet)}, true)
		}
	}
}

func (r *Reconciler) report() *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Report{Outcomes: slices.Clone(r.outcomes), RenderTime: r.renderTime, StoreTime: r.store.total()}
}

// prune reports every node downstream of a seed that never ran: no
// producer propagated to it.
func (r *Reconciler) prune() {
	r.mu.Lock()
	defer r.mu.Unlock()
	down := r.g.downstream(r.seeds)
	var ids []string
	for id := range down {
		if !r.ran[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return r.less(ids[i], ids[j]) })
	for _, id := range ids {
		var whys []string
		seen := map[string]bool{}
		for _, e := range r.g.Inputs(id) {
			if seen[e.Producer] {
				continue
			}
			seen[e.Producer] = true
			o, ok := r.result[e.Producer]
			switch {
			case !ok:
				whys = append(whys, e.Producer+" did not run")
			case o.Disposition == Rendered:
				whys = append(whys, fmt.Sprintf("%s moved %s, not %s", e.Producer, strings.Join(o.Moved, ", "), e.Facet))
			default:
				whys = append(whys, fmt.Sprintf("%s %s", e.Producer, o.Disposition))
			}
		}
		why := "no producer propagated to it"
		if len(whys) > 0 {
			why += ": " + strings.Join(whys, "; ")
		}
		o := Outcome{Node: id, Disposition: Pruned, Why: why}
		r.outcomes = append(r.outcomes, o)
		r.result[id] = o
		r.ran[id] = true
	}
}

// memo is a node's memo key now: the contract fingerprint and, per input
// edge in order, the producer's token.
func (r *Reconciler) memo(n *Node) ([]Input, []string, error) {
	var inputs []Input
	var tokens []string
	for _, e := range r.g.Inputs(n.ID) {
		last, err := r.opt.Store.Last(e.Producer)
		if err != nil {
			return nil, nil, err
		}
		tok := ColdStart
		if last != nil {
			if t, ok := last.Fingerprints[e.Facet]; ok {
				tok = t
			} else {
				tok = last.Fingerprints[receipt.AtomicFacet]
			}
		}
		inputs = append(inputs, Input{Producer: e.Producer, Facet: e.Facet, Token: tok, Dir: published.EscapeNode(e.Producer)})
		tokens = append(tokens, tok)
	}
	return inputs, tokens, nil
}

// renderWhy says why a node whose memo key moved renders.
func renderWhy(last *receipt.Receipt, cfp string, inputs []Input) string {
	switch {
	case last == nil:
		return "cold start: no receipt yet"
	case last.Status == receipt.Failed:
		return "its last render failed"
	case last.ContractFingerprint != cfp:
		return "its contract changed"
	}
	var moved []string
	for i, in := range inputs {
		if i >= len(last.InputFingerprints) || last.InputFingerprints[i] != in.Token {
			moved = append(moved, in.Producer+"."+in.Facet)
		}
	}
	if len(moved) == 0 {
		return "its inputs changed"
	}
	return "input moved: " + strings.Join(moved, ", ")
}

// step runs one wake: skip, render or fail. It returns the outcome, the
// facets that moved and the receipt's content hash. An error is the store
// failing or the context ending, not a render failing.
func (r *Reconciler) step(ctx context.Context, s *Seed) (Outcome, []string, string, error) {
	n := r.g.Node(s.Node)
	out := Outcome{Node: n.ID, Wake: s.Source}
	last, err := r.opt.Store.Last(n.ID)
	if err != nil {
		return out, nil, "", err
	}
	inputs, tokens, err := r.memo(n)
	if err != nil {
		return out, nil, "", err
	}
	run := Run{ContractFingerprint: n.ContractFingerprint, InputFingerprints: tokens,
		Wake: receipt.Wake{Source: s.Source, Refs: nonNil(s.Refs)}}
	lapsed := ""
	if n.Cadence > 0 || n.Wake == receipt.WakeSelf {
		files, err := r.opt.Store.Files(n.ID)
		if err != nil {
			return out, nil, "", err
		}
		lapsed = lapsedValidUntil(files, r.opt.Now())
	}
	unmoved := last != nil && last.Status != receipt.Failed && last.ContractFingerprint == n.ContractFingerprint &&
		slices.Equal(last.InputFingerprints, tokens)
	if unmoved && lapsed == "" {
		rec, err := r.opt.Store.Record(ctx, n.ID, receipt.Skipped, run, nil)
		if err != nil {
			return out, nil, "", err
		}
		out.Disposition, out.Receipt = Skipped, rec.ContentHash
		out.Why = fmt.Sprintf("memo key unmoved (contract and %d input(s) as at its last receipt)", len(tokens))
		if s.Why != "" {
			out.Why = s.Why + ": " + out.Why
		}
		return out, nil, rec.ContentHash, nil
	}
	why := renderWhy(last, n.ContractFingerprint, inputs)
	if unmoved {
		why = "valid_until lapsed at " + lapsed
	}
	var rend Renderer
	if r.opt.Renderer != nil {
		if rend, err = r.opt.Renderer(n); err != nil {
			return r.fail(ctx, out, n, run, err, why)
		}
	}
	if rend == nil {
		if n.Wake == receipt.WakeExternal && n.Runtime.Render == "" {
			if last == nil {
				out.Disposition = Pruned
				out.Why = "a gateway without a render: its world-model comes from outside (prose publish " + n.ID + " DIR); nothing published yet"
				return out, nil, "", nil
			}
			// A gateway's memo moved only by its contract: record the
			// new key, its world-model stands.
			rec, err := r.opt.Store.Record(ctx, n.ID, receipt.Skipped, run, nil)
			if err != nil {
				return out, nil, "", err
			}
			out.Disposition, out.Receipt = Skipped, rec.ContentHash
			out.Why = why + "; a gateway without a render keeps the world-model it was given"
			return out, nil, rec.ContentHash, nil
		}
		return r.fail(ctx, out, n, run, errors.New("no render declared: give the node a ### Runtime with render: command (docs/runtime.md)"), why)
	}
	return r.render(ctx, out, n, rend, inputs, run, s, why)
}

// fail records a failed receipt: nothing published, prior truth kept,
// nobody woken.
func (r *Reconciler) fail(ctx context.Context, out Outcome, n *Node, run Run, cause error, why string) (Outcome, []string, string, error) {
	rec, err := r.opt.Store.Record(ctx, n.ID, receipt.Failed, run, cause)
	if err != nil {
		return out, nil, "", fmt.Errorf("record the failure (%v): %w", cause, err)
	}
	out.Disposition, out.Receipt, out.Tokens = Failed, rec.ContentHash, run.Tokens
	reason, _ := rec.SemanticDiff["failure_reason"].(string)
	if reason == "" {
		reason = receipt.FailureReason(cause)
	}
	out.Why = why + "; failed: " + reason
	return out, nil, rec.ContentHash, nil
}

func (r *Reconciler) render(ctx context.Context, out Outcome, n *Node, rend Renderer, inputs []Input, run Run, s *Seed, why string) (Outcome, []string, string, error) {
	start := time.Now()
	store0 := r.store.total()
	defer func() {
		d := time.Since(start) - (r.store.total() - store0)
		r.mu.Lock()
		r.renderTime += d
		r.mu.Unlock()
	}()
	files, err := r.opt.Store.Files(n.ID)
	if err != nil {
		return out, nil, "", err
	}
	tmp, err := os.MkdirTemp(r.opt.TempDir, "prose-render-")
	if err != nil {
		return out, nil, "", err
	}
	defer os.RemoveAll(tmp)
	req := &Request{Node: n, Inputs: inputs, InputsDir: filepath.Join(tmp, "inputs"), Out: filepath.Join(tmp, "out"),
		Changed: filepath.Join(tmp, "changed"), Wake: run.Wake, HadState: len(files) > 0, Now: r.opt.Now()}
	req.Workspace = filepath.Join(r.workDir(), published.EscapeNode(n.ID), "workspace")
	if err := os.MkdirAll(req.Workspace, 0o755); err != nil {
		return out, nil, "", err
	}
	if err := writeFiles(req.Out, files); err != nil {
		return out, nil, "", err
	}
	if err := os.MkdirAll(req.InputsDir, 0o755); err != nil {
		return out, nil, "", err
	}
	copied := map[string]bool{}
	for _, in := range inputs {
		if copied[in.Producer] {
			continue
		}
		copied[in.Producer] = true
		pf, err := r.opt.Store.Files(in.Producer)
		if err != nil {
			return out, nil, "", err
		}
		if err := writeFiles(filepath.Join(req.InputsDir, in.Dir), pf); err != nil {
			return out, nil, "", err
		}
	}
	idx, _ := json.MarshalIndent(nonNilInputs(inputs), "", "  ")
	if err := os.WriteFile(filepath.Join(req.InputsDir, "inputs.json"), append(idx, '\n'), 0o644); err != nil {
		return out, nil, "", err
	}
	if err := os.WriteFile(req.Changed, nil, 0o644); err != nil {
		return out, nil, "", err
	}
	before, err := treeDigest(req.InputsDir)
	if err != nil {
		return out, nil, "", err
	}

	res, rerr := rend.Render(ctx, req)
	if rerr != nil && ctx.Err() != nil {
		// Stopped from outside (SIGINT, SIGTERM): nothing published, no
		// receipt; the next run finds the node dirty again.
		return out, nil, "", ctx.Err()
	}
	run.Provider, run.Model, run.Tokens = res.Provider, res.Model, res.Tokens
	if run.Provider == "" {
		run.Provider = "prose"
	}
	if run.Model == "" {
		run.Model = n.Runtime.Render
	}
	if rerr != nil {
		return r.fail(ctx, out, n, run, rerr, why)
	}
	if after, err := treeDigest(req.InputsDir); err != nil || after != before {
		return r.fail(ctx, out, n, run, errors.New("the render changed its inputs (PROSE_INPUTS is read-only to a render)"), why)
	}
	if data, err := os.ReadFile(filepath.Join(req.Out, "__error.md")); err == nil {
		msg := strings.TrimSpace(string(data))
		if msg == "" {
			msg = "(empty)"
		}
		return r.fail(ctx, out, n, run, errors.New("the render wrote __error.md: "+msg), why)
	}
	empty, err := isEmptyTree(req.Out)
	if err != nil {
		return out, nil, "", err
	}
	if empty && req.HadState {
		return r.fail(ctx, out, n, run, errors.New("the render left its output empty, and the node had a world-model"), why)
	}
	if diff, err := checkPostconditions(n, req.Out); err != nil {
		return r.fail(ctx, out, n, run, err, why)
	} else {
		run.Diff = diff
	}
	if data, err := os.ReadFile(req.Changed); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				run.Changed = append(run.Changed, line)
			}
		}
	}
	run.AllowEmpty = !req.HadState
	rec, moved, err := r.opt.Store.Publish(ctx, n.ID, req.Out, run)
	if err != nil {
		if rec != nil {
			return out, nil, "", err // landed, but not finished: stop and say so
		}
		if ctx.Err() != nil {
			return out, nil, "", ctx.Err()
		}
		// The vault refused the output (a path rule, a size limit, a
		// hand edit in the way): the render failed, nothing landed.
		return r.fail(ctx, out, n, run, err, why)
	}
	out.Receipt, out.Tokens = rec.ContentHash, rec.Cost.Tokens
	if rec.Status == receipt.Rendered {
		out.Disposition, out.Moved = Rendered, moved
		out.Why = why + "; moved " + strings.Join(moved, ", ")
	} else {
		out.Disposition = Skipped
		out.Why = why + "; rendered, but the output moved no fingerprint"
	}
	return out, moved, rec.ContentHash, nil
}

func (r *Reconciler) workDir() string {
	if r.opt.WorkDir != "" {
		return r.opt.WorkDir
	}
	return filepath.Join(os.TempDir(), "prose-workspaces")
}

func nonNilInputs(in []Input) []Input {
	if in == nil {
		return []Input{}
	}
	return in
}
