package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/progress"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// Defaults for the prompt fields a user may set.
const (
	DefaultPurpose  = "a navigable, linked knowledge base of the sources it is given"
	DefaultAudience = "the people who work with these sources day to day"
)

// Options tune an ingest or an enrich.
type Options struct {
	Purpose, Audience string
	// Model answers the prompts; ModelSpec is how it was named (it is part
	// of the memo key and the receipt's cost).
	Model     model.Model
	ModelSpec string
	// Budget caps a prompt's size in tokens; 0 means DefaultBudget.
	Budget int
	// DryRun plans and writes nothing; Force ignores memo keys.
	DryRun, Force bool
	// MaxTokens, above 0, is the run's token budget: sources are
	// admitted in name order while the sum of their estimates (input and
	// output) stays within it; the rest are not started (Result.Left).
	MaxTokens int64
	// Estimate asks nothing and writes nothing: each source to ingest
	// gets an estimate of its calls and tokens (Result.Estimates).
	Estimate bool
	// Into is the folder for the pages of sources named on their own
	// (not found in a directory); "" means plan.NotesFolder.
	Into string
	// Progress receives progress bars (silent unless a terminal).
	Progress io.Writer
	// Now dates the prompts ("today"); nil means time.Now.
	Now func() time.Time
	// Jobs is how many sources are worked at once with a provider; 0
	// means DefaultJobs. The result is the same at any number (pool.go).
	Jobs int
	// Fail, when set, is asked at each step ("analysis:NAME",
	// "generation:NAME", "tool:NAME:N", "bookkeeping", "commit"); an error
	// fails the run there. Tests inject failures with it.
	Fail func(step string) error
	// Redirects are the pages of the run's collections that only send a
	// reader on (source.Redirect), by source name, to the source name of
	// their target: a link to one is rendered as a link to its target.
	Redirects map[string]string
	// recordedModel is the spec of the model a replayed recording's
	// answers came from (set from Model by defaults; kept by the runs
	// of a run's conversations, whose Model wraps it).
	recordedModel string
}

// DefaultBudget is the prompt budget, in tokens (about four characters
// each), of a model spec: what its context comfortably holds beside the
// answer. Past it, an analysis prompt lists only the pages and folders
// relevant to the source.
func DefaultBudget(spec string) int {
	provider, _, _ := strings.Cut(spec, ":")
	switch provider {
	case "openai", "anthropic", "replay":
		return 100_000
	case "openai-chat":
		return 16_000 // local servers often run with small contexts
	}
	return 8_000 // offline: a bounded prompt keeps ingest linear in the wiki's size
}

// SourceResult is what happened to one source.
type SourceResult struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Title      string `json:"title"`
	Redactions int    `json:"redactions"`
	// Encoding is the encoding the source was converted from to UTF-8
	// (source.Document.Encoding); absent for a source in UTF-8.
	Encoding string `json:"encoding,omitempty"`
	// SameAs names the source whose pages hold this one's text (the same
	// text after chrome; duplicates.go).
	SameAs string `json:"same_as,omitempty"`
	// MarkupOf says SameAs is the rendering this source is the markup
	// source of (a twin: git-add.txt of git-add.html).
	MarkupOf bool     `json:"markup_of,omitempty"`
	Status   string   `json:"status"` // ingested, skipped (memo key seen), unchanged (read again, its pages came out as they were), planned (dry run)
	Pages    []string `json:"pages"`
}

// Move is a page moved during a run.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Result is what an ingest or enrich did.
type Result struct {
	Status  string           `json:"status"` // rendered, skipped, dry-run
	Sources []SourceResult   `json:"sources,omitempty"`
	Created []string         `json:"created"`
	Updated []string         `json:"updated"`
	Moved   []Move           `json:"moved"`
	Folders []string         `json:"folders_reindexed"`
	Review  []ReviewEntry    `json:"review"`
	Plans   []SourcePlan     `json:"plans,omitempty"`
	Receipt *receipt.Receipt `json:"receipt,omitempty"`
	Commit  string           `json:"commit,omitempty"`
	// ReviewCommit is the commit of the review queue alone, made when the
	// run's pages came out as they were but it queued review items.
	ReviewCommit string `json:"review_commit,omitempty"`
	// NotRecreated are the pages a person removed that the run would have
	// written again; they stay removed.
	NotRecreated []string `json:"not_recreated,omitempty"`
	// Layout counts the earlier engine's pages the run moved to where the
	// layout puts them, and those it kept (a person's words on them).
	Layout *LayoutMoves   `json:"layout,omitempty"`
	Tokens receipt.Tokens `json:"-"`
	// Estimates are the sources' estimates of an Estimate run.
	Estimates []Estimate `json:"estimates,omitempty"`
	// Left are the sources (pages, for an enrich) not started because
	// their estimates would pass what was left of MaxTokens.
	Left []string `json:"left,omitempty"`
	// Asked are the pages an enrich's dry run would ask the model to
	// improve.
	Asked []string `json:"asked,omitempty"`
	// Usage is the tokens the run's calls used.
	Usage    model.Usage `json:"usage"`
	Narrowed bool        `json:"narrowed,omitempty"`
}

// LayoutMoves counts what a run did with pages of the earlier layout.
type LayoutMoves struct {
	Moved int `json:"moved"`
	Kept  int `json:"kept"`
}

// SourcePlan is the plan made for one source (printed by --dry-run).
type SourcePlan struct {
	Source string     `json:"source"`
	Plan   *plan.Plan `json:"plan"`
}

// StepError is a failed run: the step that failed and why.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// run is one ingest or enrich in progress.
type run struct {
	// parts keeps the run's template fields and the fixed parts of its
	// prompts (callparts.go): the same for every call of a day.
	parts partsMemo

	w     *wiki.Wiki
	opt   Options
	tx    *wiki.Tx
	cat   *catalog
	res   *Result
	usage model.Usage
	files map[string][]byte
	// load are the vault files read when the commit writes them (the
	// sources' bytes a caller let go of: storeSource).
	load    map[string]func() ([]byte, error)
	review  []plan.ReviewItem
	touched map[string]bool
	// guard keeps the run from writing over slots a person changed; kept
	// are the review items for those slots (settle).
	guard   *guard
	kept    []ReviewEntry
	prompts *prompts
	bar     *progress.Bar
	// inRun are the ids of the run's sources; runNames the names that
	// hold each (two files of the same bytes share an id).
	inRun    map[string]bool
	runNames map[string][]string
	// same is how the run's sources of one text share pages
	// (duplicates.go).
	same *sameText
	// gone are the pages a person removed (RemovedFile); goneChanged is
	// set when the run dropped some of them from the record.
	gone        *removedBook
	goneChanged bool
	// base is the catalog as the run found it: every source plans
	// against it (analysis, placement), so a run's result does not
	// depend on the order of its sources, and a dry run plans what the
	// run does. placed are the pages the run's sources planned so far,
	// merged in name order.
	base   *catalog
	placed *placing
	// linker links the terms of the wiki on the pages prose renders;
	// links the pages of sources that link each other (srclinks.go).
	linker *render.Linker
	links  *sourceLinks
	// raw are the sources' titles as read, by id (the catalog keeps a
	// title's original when cleaning changed it).
	raw map[string]string
	// scripts are the sources' kept answers, by name, once their
	// conversations ran (pool.go).
	scripts map[string]*script
	// placement is where the source being worked placed its pages, by
	// origin; alias maps the paths its conversation placed them at to
	// these, where they differ (pathAlias).
	placement map[string]string
	alias     map[string]string
	// next is the source worked after this one, ahead the one being
	// worked ahead (ahead.go).
	next   *source.Document
	ahead  *ahead
	warmed bool // the base catalog is built for reads beside the run
}

func (r *run) fail(step string) error {
	if r.opt.Fail == nil {
		return nil
	}
	if err := r.opt.Fail(step); err != nil {
		return &StepError{step, err}
	}
	return nil
}

func (o *Options) defaults() {
	if o.Purpose == "" {
		o.Purpose = DefaultPurpose
	}
	if o.Audience == "" {
		o.Audience = DefaultAudience
	}
	if o.ModelSpec == "" && o.Model != nil {
		o.ModelSpec = o.Model.Name()
	}
	if rec, ok := o.Model.(interface{ RecordedModel() string }); ok {
		o.recordedModel = rec.RecordedModel()
	}
	if o.Budget <= 0 {
		spec := o.ModelSpec
		if o.recordedModel != "" {
			// A recording replays with the prompts of the model it
			// recorded: its budget decides how sources are quoted.
			spec = o.recordedModel
		}
		o.Budget = DefaultBudget(spec)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// MemoKey is the memo key of ingesting source id with opt and the prompts
// of promptVersion: equal keys mean the same source, model, options and
// prompts, so the result would be
// the same and no model is asked again.
func MemoKey(id string, opt Options, promptVersion string) string {
	opt.defaults()
	cfg := fmt.Sprintf("ingest|%s|model=%s|purpose=%s|audience=%s", promptVersion, opt.ModelSpec, opt.Purpose, opt.Audience)
	return canon.MemoKey(canon.BLAKE3, canon.BLAKE3.Token([]byte(cfg)), []string{id})
}

// Ingest turns docs into wiki pages as one receipt. On any failure nothing
// is written to the branch and a failed receipt records why; the error is
// a *StepError naming the step.
//
// Every document of a run has a name of its own (source.Collect names
// them so): two documents of other bytes under one name are refused, as
// the later would take over the pages of the earlier.
func Ingest(ctx context.Context, w *wiki.Wiki, docs []*source.Document, opt Options) (*Result, error) {
	opt.defaults()
	refs := refsOf(w, docs)
	raw := make([]string, len(docs))
	for i, d := range docs {
		raw[i] = d.Title
	}
	return runQueued(ctx, w, opt, refs, func(r *run) (*Result, error) {
		for i, d := range docs {
			// An earlier attempt let go of the text of the sources it
			// worked (release): each is read again, refused if changed.
			if err := d.Reread(); err != nil {
				return nil, &StepError{"read the sources", err}
			}
			d.Title = raw[i] // cleaned again against the catalog of this attempt
		}
		r.raw = map[string]string{}
		for _, d := range docs {
			r.raw[d.ID] = d.Title
		}
		res, err := r.ingest(ctx, docs)
		if res != nil {
			res.Usage = r.usage
		}
		return res, err
	})
}

// distinctNames refuses two documents of other bytes under one name.
func distinctNames(docs []*source.Document) error {
	ids := map[string]string{}
	for _, d := range docs {
		if id, ok := ids[d.Name]; ok && id != d.ID {
			return &StepError{"read the sources", fmt.Errorf("two sources of other contents are both named %q: give each a name of its own (its path, for instance)", d.Name)}
		}
		ids[d.Name] = d.ID
	}
	return nil
}

// baseMovedRetries is how many more times a pipeline runs when another
// command committed while it was preparing (vault.ErrBaseMoved): each run
// reads the wiki afresh, so the writers of a busy vault queue up instead of
// failing. The model is asked again each time; the receipt counts the
// tokens of every run.
const baseMovedRetries = 8

// runQueued runs one ingest or enrich (attempt), again after a random
// pause while the vault moved under it, and records a failed receipt when
// the last run fails.
func runQueued(ctx context.Context, w *wiki.Wiki, opt Options, refs []string, attempt func(*run) (*Result, error)) (*Result, error) {
	var usage model.Usage
	var scripts map[string]*script
	for i := 0; ; i++ {
		res := &Result{Created: []string{}, Updated: []string{}, Moved: []Move{}, Folders: []string{}, Review: []ReviewEntry{}}
		r := &run{w: w, opt: opt, res: res, files: map[string][]byte{}, touched: map[string]bool{}, usage: usage, guard: newGuard(), scripts: rewound(scripts)}
		out, err := attempt(r)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, vault.ErrBaseMoved) || i == baseMovedRetries || opt.DryRun {
			return nil, r.failed(err, refs)
		}
		if r.tx != nil {
			r.tx.Discard()
		}
		usage = r.usage
		// The model's answers are kept: the next attempt lands them on
		// the moved branch without asking again.
		scripts = r.scripts
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "prose: another command committed meanwhile; preparing again (%d of %d)\n", i+2, baseMovedRetries+1)
		}
		pause := time.Duration(20+rand.IntN(80*(i+1))) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, r.failed(ctx.Err(), refs)
		case <-time.After(pause):
		}
	}
}

// failed records a failed receipt for err (the run's writes were
// discarded) and returns the error to report.
func (r *run) failed(err error, refs []string) error {
	if r.tx != nil {
		r.tx.Discard()
	}
	var se *StepError
	if !errors.As(err, &se) {
		err = &StepError{"ingest", err}
	}
	var landed *vault.LandedError
	if r.opt.DryRun || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &landed) {
		// A landed commit is not a failed run: the next command finishes
		// what the vault left (its error says so).
		return err
	}
	provider, name := providerOf(r.opt.ModelSpec)
	// The record uses a fresh context: the run's may be the reason it failed.
	_, rerr := r.w.Vault().RecordReceipt(context.Background(), wiki.Node, receipt.Failed, receiptOptions(refs, provider, name, r.usage, err))
	if rerr != nil {
		return fmt.Errorf("%w (and the failed receipt could not be recorded: %v)", err, rerr)
	}
	return err
}

func receiptOptions(refs []string, provider, name string, u model.Usage, reason error) vaultReceiptOptions {
	return vaultReceiptOptions{Who: "prose ingest", Refs: refs, Provider: provider, Model: name, Tokens: tokens(u), Reason: reason}
}

// tokens turns model usage into receipt tokens: fresh is uncached input
// plus output, reused the cached input.
func tokens(u model.Usage) receipt.Tokens {
	return receipt.Tokens{Fresh: max(u.Input-u.CachedInput, 0) + u.Output, Reused: u.CachedInput}
}

func providerOf(spec string) (string, string) {
	p, n, ok := strings.Cut(spec, ":")
	if !ok {
		return p, p
	}
	if p == "replay" {
		n = path.Base(n) // a recording's file name, never a machine path
	}
	return p, n
}

// refsOf are the wake refs of a run over docs: each source's id in the
// vault's hash algorithm.
func refsOf(w *wiki.Wiki, docs []*source.Document) []string {
	alg := w.Vault().Algorithm()
	refs := []string{}
	seen := map[string]bool{}
	for _, d := range docs {
		t := d.ID
		if alg != canon.BLAKE3 {
			t = alg.Token(d.Data)
		}
		if !seen[t] {
			seen[t] = true
			refs = append(refs, t)
		}
	}
	return refs
}

func (r *run) begin(ctx context.Context) error {
	tx, err := r.w.Begin(ctx)
	if err != nil {
		return &StepError{"open the wiki", err}
	}
	r.tx = tx
	if r.prompts, err = loadPrompts(r.w.Vault().Root()); err != nil {
		return &StepError{"load the prompts", err}
	}
	cat, err := loadCatalog(tx, r.readVaultFile)
	if err != nil {
		return &StepError{"read the catalog", err}
	}
	r.cat = cat
	if r.gone, err = readRemoved(r.readVaultFile); err != nil {
		return &StepError{"read the catalog", err}
	}
	r.goneChanged = r.gone.forgetRecreated(tx)
	r.base = cat.snapshot()
	r.placed = newPlacing()
	return nil
}

func (r *run) readVaultFile(p string) ([]byte, bool, error) {
	if data, ok := r.files[p]; ok {
		return data, data != nil, nil
	}
	return r.w.Vault().ReadFile(p)
}

func (r *run) ingest(ctx context.Context, docs []*source.Document) (*Result, error) {
	if err := distinctNames(docs); err != nil {
		return nil, err
	}
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	keepEarlierNames(docs, r.base)
	known := map[string]string{}
	for _, rec := range r.cat.Sources {
		known[rec.Name] = rec.Original
		if rec.Original == "" {
			known[rec.Name] = rec.Title
		}
	}
	cleanTitles(docs, known)
	bar := progress.New(r.opt.Progress, int64(len(docs)), "ingest", progress.Items)
	defer bar.Finish()
	r.bar = bar
	r.inRun, r.runNames = map[string]bool{}, map[string][]string{}
	for _, d := range docs {
		r.inRun[d.ID] = true
		r.runNames[d.ID] = append(r.runNames[d.ID], d.Name)
	}
	r.same = r.sameTextOf(docs)
	r.links = newSourceLinks(docs, r.base, r.opt, r.same.of)
	var todo []*source.Document
	for _, d := range docs {
		sr := SourceResult{Name: d.Name, ID: d.ID, Kind: string(d.Kind), Title: d.Title, Redactions: d.Redactions, Encoding: d.Encoding, Pages: []string{}, SameAs: r.same.of[d.Name], MarkupOf: r.same.twin[d.Name]}
		memo := r.memoOf(d)
		if r.skipSame(d, memo, r.same) {
			sr.Status = "skipped"
			sr.Pages = append(sr.Pages, r.cat.pagesOf(d.ID)...)
			r.res.Sources = append(r.res.Sources, sr)
			r.release(d)
			bar.Add(1)
			continue
		}
		r.res.Sources = append(r.res.Sources, sr)
		todo = append(todo, d)
	}
	// One merge rule, one order: the sources' plans are merged in name
	// order, whatever the order they were given in.
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].Name < todo[j].Name })
	todo = orderSame(todo, r.same)
	if r.opt.Estimate {
		r.res.Estimates = []Estimate{}
		for _, d := range todo {
			if r.same.of[d.Name] != "" {
				continue // the same text as another source: never asked
			}
			e, err := r.estimate(ctx, d)
			if err != nil {
				return nil, &StepError{"estimate of " + d.Name, err}
			}
			r.res.Estimates = append(r.res.Estimates, e)
		}
		r.res.Status = "estimate"
		r.tx.Discard()
		return r.res, nil
	}
	if r.opt.MaxTokens > 0 {
		// Admission by estimate alone, in name order, so the run's
		// sources do not depend on how fast the others went.
		var admitted []*source.Document
		var spent int64
		for _, d := range todo {
			if r.same.of[d.Name] != "" {
				admitted = append(admitted, d) // costs nothing: no model is asked
				continue
			}
			e, err := r.estimate(ctx, d)
			if err != nil {
				return nil, &StepError{"estimate of " + d.Name, err}
			}
			if len(r.res.Left) == 0 && spent+e.Input+e.Output <= r.opt.MaxTokens {
				spent += e.Input + e.Output
				admitted = append(admitted, d)
				continue
			}
			r.res.Left = append(r.res.Left, d.Name)
			r.res.Sources[r.sourceIndex(d)].Status = "left"
		}
		todo = admitted
	}
	if asked := askedOf(todo, r.same); len(asked) > 0 && r.converses() {
		if err := r.converse(ctx, asked); err != nil {
			return nil, err
		}
	}
	defer r.waitAhead()
	for i, d := range todo {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r.next = nil
		if i+1 < len(todo) {
			r.next = todo[i+1]
		}
		bar.Describe(d.Name)
		var err error
		if of := r.same.of[d.Name]; of != "" {
			err = r.duplicate(d, of, r.same)
		} else {
			err = r.source(ctx, d)
		}
		if err != nil {
			return nil, err
		}
		r.release(d)
		bar.Add(1)
	}
	if f, ok := r.opt.Model.(forgetter); ok {
		f.Forget() // the sources are worked: nothing asks about them again
	}
	if err := r.leave(r.same); err != nil {
		return nil, err
	}
	if err := r.nameSame(r.same); err != nil {
		return nil, err
	}
	if r.opt.DryRun {
		r.res.Status = "dry-run"
		r.tx.Discard()
		return r.res, nil
	}
	if len(r.res.Left) > 0 {
		// The receipt covers the sources the run worked, not those left.
		var kept []*source.Document
		for _, d := range docs {
			if !contains(r.res.Left, d.Name) {
				kept = append(kept, d)
			}
		}
		docs = kept
	}
	if len(todo) == 0 {
		return r.skipped(docs)
	}
	if err := r.bookkeeping(ctx); err != nil {
		return nil, err
	}
	return r.commit(ctx, docs)
}

// forgetter is a model that keeps what it read from prompts (the offline
// engine's parsed sources) until it is told to Forget it.
type forgetter interface{ Forget() }

// forget tells the model, if it keeps what it read, to drop it.
func (r *run) forget() {
	if f, ok := r.opt.Model.(forgetter); ok {
		f.Forget()
	}
}

// source runs analysis and generation for one document.
func (r *run) source(ctx context.Context, d *source.Document) error {
	sr := &r.res.Sources[r.sourceIndex(d)]
	if err := r.fail("analysis:" + d.Name); err != nil {
		return err
	}
	var handed []handover
	if !r.opt.DryRun {
		var err error
		if handed, err = r.supersede(d); err != nil {
			return &StepError{"bookkeeping of " + d.Name, err}
		}
	}
	// The source's own text, rendered by prose whatever the model writes:
	// a long one is split into section pages, placed with the plan's.
	// The placing needs the parts' titles and anchors, not their HTML,
	// so the HTML is rendered before the model reads the source, dropped
	// (renderPlaced), and rendered again once the model has written (the
	// same bytes: rendering is deterministic): a long source's rendered
	// text is never held beside the prompts that quote it or the model's
	// copy of it. A source short enough for one page (no parts) keeps its
	// rendering: it is under render.SplitAt, and rendering it again would
	// only give the same bytes at the same cost.
	rendered, a := r.takeAhead(ctx, d)
	// The next source's analysis and rendering, while this one is worked.
	r.startAhead(ctx, r.next)
	parts := rendered.Parts
	split := len(parts) > 0
	p, err := r.analysed(a)
	if err != nil {
		return &StepError{"analysis of " + d.Name, err}
	}
	r.ensureSourcePage(d, p)
	migs, sections := r.place(d, p, parts)
	parts = nil
	r.placement = placementOf(p, sections)
	r.alias = nil
	if s := r.scripts[d.Name]; s != nil {
		if r.sharedThisRun(d, p, sections) {
			// The merge rule for a page two sources of the run write:
			// the later (in name order) is generated again, by the
			// live model, against the run's pages as merged so far.
			s.goLive()
		} else {
			r.alias = pathAlias(s.placed, r.placement)
		}
	}
	if err := r.migrate(d, migs); err != nil {
		return &StepError{"bookkeeping of " + d.Name, err}
	}
	if r.opt.DryRun {
		r.forget()
		sr.Status = "planned"
		for _, pg := range append(append([]plan.Page{}, p.Pages...), sections...) {
			if pg.Path == "" {
				continue // an empty part of a split source: no page
			}
			sr.Pages = append(sr.Pages, pg.Path)
			if pg.Action == plan.Create {
				r.addOnce(&r.res.Created, pg.Path)
			} else if !contains(r.res.Created, pg.Path) {
				r.addOnce(&r.res.Updated, pg.Path)
			}
		}
		for _, m := range migs {
			if !m.keep {
				r.res.Moved = append(r.res.Moved, Move{m.from, m.to})
			}
		}
		r.res.Plans = append(r.res.Plans, SourcePlan{Source: d.Name, Plan: p})
		return nil
	}
	if err := r.fail("generation:" + d.Name); err != nil {
		return err
	}
	tb, err := r.generate(ctx, d, p)
	if err != nil {
		return &StepError{"generation of " + d.Name, err}
	}
	// The model is done with this source: what it parsed from the prompts
	// (the offline engine's document, ≈ 3 copies of the text) goes before
	// the source is rendered, and never outlives its source, so a run's
	// peak does not grow with the number of sources it has worked.
	// A short source is left to the model's own bound (the offline
	// engine keeps four) while the next is worked ahead: forgetting now
	// would drop what the next one's analysis read.
	if d.Size > aheadBelow || r.ahead == nil {
		r.forget()
	}
	// The source's own text, rendered by prose whatever the model wrote.
	doc := rendered
	if split {
		doc = r.renderSource(d)
	}
	if err := r.document(d, p, doc, sections, tb); err != nil {
		return &StepError{"rendering of " + d.Name, err}
	}
	// What the earlier version wrote and this one no longer says.
	if err := r.letGo(d, p, tb, handed); err != nil {
		return &StepError{"bookkeeping of " + d.Name, err}
	}
	// Every page this source wrote records it, and its origin.
	origins := map[string]string{}
	for _, pg := range append(append([]plan.Page{}, p.Pages...), sections...) {
		if pg.Path != "" {
			origins[pg.Path] = pg.Origin
		}
	}
	// A page the model created beside the plan gets an origin too, as
	// the plan's page of its template and title would: a page without
	// one is the earlier engine's, which the next run would move.
	for _, rel := range tb.created {
		if origins[rel] != "" {
			continue
		}
		if pg, ok, err := r.tx.Page(rel); err == nil && ok && pg.Meta.String(plan.MetaOrigin) == "" {
			o := originOf(d, &plan.Page{Template: pg.Meta.Template(), Title: pg.Meta.Title()})
			at, planned := r.findOrigin(o)
			if planned && at != rel {
				// The plan placed that origin elsewhere: is it there?
				if _, ok, err := r.tx.Page(at); err != nil || ok {
					continue
				}
			}
			origins[rel] = o
		}
	}
	pages := append(append([]string{}, tb.created...), tb.updated...)
	sort.Strings(pages)
	for _, rel := range pages {
		pg, ok, err := r.tx.Page(rel)
		if err != nil || !ok {
			continue
		}
		if o := origins[rel]; o != "" && pg.Meta.String(plan.MetaOrigin) != o {
			if _, err := r.tx.SetMeta(rel, map[string]any{plan.MetaOrigin: o}, nil); err != nil {
				return &StepError{"bookkeeping of " + d.Name, err}
			}
			if pg, _, err = r.tx.Page(rel); err != nil {
				return &StepError{"bookkeeping of " + d.Name, err}
			}
		}
		ids := pg.Meta.Strings(metaSources)
		if !contains(ids, d.ID) {
			ids = append(ids, d.ID)
			sort.Strings(ids)
			list := make([]any, len(ids))
			for i, s := range ids {
				list[i] = s
			}
			if _, err := r.tx.SetMeta(rel, map[string]any{metaSources: list}, nil); err != nil {
				return &StepError{"bookkeeping of " + d.Name, err}
			}
		}
		r.cat.note(r.tx, rel)
		r.touched[rel] = true
	}
	for _, rel := range tb.created {
		r.addOnce(&r.res.Created, rel)
	}
	for _, rel := range tb.updated {
		if !contains(r.res.Created, rel) {
			r.addOnce(&r.res.Updated, rel)
		}
	}
	for _, m := range tb.moved {
		r.res.Moved = append(r.res.Moved, Move{m[0], m[1]})
		delete(r.cat.Pages, m[0])
		r.cat.note(r.tx, m[1])
	}
	sr.Status = "ingested"
	sr.Pages = pages
	r.cat.Sources[d.ID] = &sourceRecord{Name: d.Name, Kind: string(d.Kind), Title: d.Title, Memo: r.memoOf(d), Redactions: d.Redactions, Text: r.same.key[d.Name]}
	if raw := r.raw[d.ID]; raw != d.Title {
		r.cat.Sources[d.ID].Original = raw
	}
	r.keepBoilerplate(d)
	r.storeSource(d)
	return nil
}

// release lets go of d's parsed text once its turn is over, keeping what
// the later sources need of it (the anchors they link to): a run holds
// one source's sections at a time. A source that could not be read again
// keeps its text (Document.Release); one released is read again only by
// another attempt of the run (Ingest).
func (r *run) release(d *source.Document) {
	r.links.keep(d)
	d.Release()
}

// storeSource records d's bytes for the commit: the bytes the run holds,
// else (the caller let go of them) the file read again when the commit
// writes it, one source at a time, refused unless it still holds the
// bytes the run read (a source changed or moved since: its pages are of
// the earlier bytes).
func (r *run) storeSource(d *source.Document) {
	p := SourcePath(d.ID)
	if d.Data != nil || d.Reload == nil {
		r.files[p] = d.Data
		return
	}
	if r.load == nil {
		r.load = map[string]func() ([]byte, error){}
	}
	reload, id, name := d.Reload, d.ID, d.Name
	r.load[p] = func() ([]byte, error) {
		data, err := reload()
		if err != nil {
			return nil, fmt.Errorf("%s could not be read again to be stored (%v): run the ingest again once it is back", name, err)
		}
		if canon.BLAKE3.Token(data) != id {
			return nil, fmt.Errorf("%s changed while it was ingested (its pages were made of the bytes read first): run the ingest again", name)
		}
		return data, nil
	}
}

// settle records what the run wrote into each slot and turns the slots
// it kept into review items.
func (r *run) settle() error {
	kept, err := r.guard.settle(r.tx, r.opt.Now().UTC().Format("2006-01-02"))
	if err != nil {
		return err
	}
	r.kept = kept
	r.review = append(r.review, r.guard.metaItems()...)
	for _, e := range kept {
		r.cat.note(r.tx, e.Page)
	}
	return nil
}

// supersede hands the pages of an earlier version of d (same name,
// other bytes) over to d: their meta names d's id instead, so the model
// sees them as d's own and updates them. A source of this same run is
// never an earlier version of another. It returns the pages it handed
// over, so that those d no longer writes can be let go (letGo).
func (r *run) supersede(d *source.Document) ([]handover, error) {
	var handed []handover
	for id, rec := range r.cat.Sources {
		if rec.Name != d.Name || id == d.ID || r.inRun[id] && !r.sameAsEarlier(id, d) {
			continue
		}
		for _, rel := range r.cat.pagesOf(id) {
			pg, ok, err := r.tx.Page(rel)
			if err != nil || !ok {
				continue
			}
			var ids []any
			for _, s := range pg.Meta.Strings(metaSources) {
				if s == id {
					s = d.ID
				}
				if !containsAny(ids, s) {
					ids = append(ids, s)
				}
			}
			if _, err := r.tx.SetMeta(rel, map[string]any{metaSources: ids}, nil); err != nil {
				return nil, err
			}
			r.cat.note(r.tx, rel)
			handed = append(handed, handover{page: rel, id: id, name: rec.Name})
		}
		delete(r.cat.Sources, id)
	}
	return handed, nil
}

func containsAny(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r *run) addOnce(list *[]string, s string) {
	if !contains(*list, s) {
		*list = append(*list, s)
	}
}

func (r *run) sourceIndex(d *source.Document) int {
	for i := len(r.res.Sources) - 1; i >= 0; i-- {
		if r.res.Sources[i].ID == d.ID && r.res.Sources[i].Name == d.Name {
			return i
		}
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quoteSource is the source as prompts quote it: its outline in Markdown,
// inside a <source> field whose attributes name it.
func quoteSource(d *source.Document) string {
	// quoteWith(d, d.Markdown(), ""), without the Markdown's copy.
	return d.Quote(quoteOpen(d, ""), "</source>")
}

// templateFields are the names of the templates a plan may use and
// their descriptions, as prompts give them (made once per run: the
// wiki's templates do not change while it runs).
func (r *run) templateFields() (names, details string) {
	r.parts.mu.Lock()
	defer r.parts.mu.Unlock()
	if !r.parts.fields {
		r.parts.names, r.parts.details = r.makeTemplateFields()
		r.parts.fields = true
	}
	return r.parts.names, r.parts.details
}

func (r *run) makeTemplateFields() (names, details string) {
	var ns []string
	var sb strings.Builder
	for _, t := range r.w.Templates() {
		if t.Name == "folder" || t.Name == "section" {
			continue // prose writes these pages itself
		}
		ns = append(ns, t.Name)
		fmt.Fprintf(&sb, "- %s: %s Slots:", t.Name, t.Description)
		for _, s := range t.Slots {
			req := ""
			if s.Required {
				req = ", required"
			}
			fmt.Fprintf(&sb, " %s (%s%s);", s.ID, s.About, req)
		}
		sb.WriteString("\n")
	}
	return strings.Join(ns, ", "), strings.TrimRight(sb.String(), "\n")
}

// analysisPrompt is the analysis call of d: the run's shared system text
// and the call's message (callparts.go).
func (r *run) analysisPrompt(d *source.Document) (string, string, error) {
	system, text, narrowed, err := r.analysisCall(d)
	if narrowed {
		r.res.Narrowed = true
	}
	return system, text, err
}

// analysisCall is analysisPrompt, with whether the index was narrowed
// reported rather than recorded: it changes nothing of the run, so a
// source's analysis may be asked ahead of its turn (ahead.go).
func (r *run) analysisCall(d *source.Document) (system, text string, narrowed bool, err error) {
	names, details := r.templateFields()
	src := r.quoteAnalysed(d)
	// The index and the tree get what the budget leaves after the rest.
	room := r.opt.Budget*4 - len(src) - len(details) - 4096
	entries, folders, narrowed := r.base.index(d, max(room*3/4, 2048))
	if entries == nil {
		entries = []indexEntry{}
	}
	if folders == nil {
		folders = []string{}
	}
	idx, _ := json.Marshal(entries)
	tree, _ := json.Marshal(folders)
	fixed, variable, err := r.prompts.analysis.RenderParts(map[string]string{
		"purpose": r.opt.Purpose, "audience": r.opt.Audience, "templates": names, "template_details": details,
		"index": plan.Field("index", string(idx)), "tree": plan.Field("tree", string(tree)),
		"source_title": d.Title, "source": src,
	})
	if err != nil {
		return "", "", narrowed, err
	}
	system, text, err = r.shared(true, fixed, variable)
	return system, text, narrowed, err
}

// analysis is one source's analysis call and what it gave, not yet taken
// into the run (analysed does).
type analysis struct {
	plan     *plan.Plan
	text     string // the answer, with its review queue
	used     model.Usage
	narrowed bool
	err      error
}

// analysis asks the model for d's plan. It changes nothing of the run.
func (r *run) analysis(ctx context.Context, d *source.Document) analysis {
	system, text, narrowed, err := r.analysisCall(d)
	if err != nil {
		return analysis{err: err}
	}
	// The plan is asked for in the provider's structured form; one that
	// still does not parse or check gets one repair turn quoting why.
	var p *plan.Plan
	tools := r.callTools(r.toolbox())
	resp, used, err := model.CallChecked(ctx, r.modelOf(d.Name), model.Request{System: system, Messages: []model.Message{model.UserText(text)}, Tools: tools, Format: plan.Format()},
		func(text string) error {
			var perr error
			p, perr = plan.Parse(text)
			return perr
		})
	return analysis{plan: p, text: resp.Text, used: used, narrowed: narrowed, err: err}
}

// analysed takes an analysis into the run: its usage, its narrowing and
// its review items.
func (r *run) analysed(a analysis) (*plan.Plan, error) {
	r.usage = r.usage.Add(a.used)
	if a.narrowed {
		r.res.Narrowed = true
	}
	if a.err != nil {
		return nil, a.err
	}
	r.addReview(plan.ReviewQueue(a.text))
	return a.plan, nil
}

// generate runs the agent loop that writes the plan's pages.
func (r *run) generate(ctx context.Context, d *source.Document, p *plan.Plan) (*toolbox, error) {
	tb := r.toolbox()
	tb.source = d.Name
	tb.alias = r.alias
	tb.gone = newGoneWrites(r.gone)
	// One loop per part of a source too long for one prompt (parts.go).
	parts := r.quoteParts(d)
	for i := range parts {
		// A part is held by its prompt alone while the loop runs (a
		// 16 MiB source's quotation would otherwise be held twice).
		quoted := parts[i]
		parts[i] = ""
		system, text, err := r.generationPrompt(d.Name, plan.Field("analysis", p.JSON()), quoted)
		if err != nil {
			return nil, err
		}
		if err := r.loop(ctx, tb, system, text); err != nil {
			return tb, err
		}
	}
	return tb, r.keepRemoved(tb, d.Name)
}

func (r *run) toolbox() *toolbox {
	tb := newToolbox(r.tx, r.w)
	tb.fail = r.opt.Fail
	tb.find = r.search
	tb.guard = r.guard
	tb.onPage = func(rel string) { r.bar.Describe(rel) }
	tb.checked = !r.trusted()
	return tb
}

// loop runs the agent loop with tb's tools; a fatal tool error (or an
// injected failure) ends it and is returned.
// system is the run's shared system text (callparts.go), so every call
// of a run starts with it; prompt the call's message.
func (r *run) loop(ctx context.Context, tb *toolbox, system, prompt string) error {
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tb.cancel = cancel
	opt := model.LoopOptions{}
	if tb.checked {
		opt.MaxCallsPerTurn = MaxToolCallsPerTurn
		opt.Final = func(resp model.Response) string {
			_, refused := r.checkReview(plan.ReviewQueue(resp.Text))
			if len(refused) == 0 {
				return ""
			}
			return "error: review items refused: " + strings.Join(refused, "; ") + ". A review item's page is the path of an existing wiki page; its kind, if any, one of " + strings.Join(ReviewKinds, ", ") + ". Send the corrected items again in a <<<REVIEW_QUEUE>>>[…]<<<END>>> block."
		}
	} else {
		opt.MaxCallsPerTurn = -1
	}
	// An ingest's generation shares the run's one tool list with its
	// analyses (callparts.go); an enrichment, which makes no plan, has
	// the toolbox's tools alone.
	tools := r.callTools(tb)
	if tb.only != "" {
		tools = tb.tools(true)
	}
	answerer := tb.source
	if tb.only != "" {
		answerer = tb.only // an enrichment: its page's kept answers
	}
	lr, err := model.Loop(lctx, r.modelOf(answerer), model.Request{
		System:   system,
		Messages: []model.Message{model.UserText(prompt)},
		Tools:    tools,
	}, opt)
	r.usage = r.usage.Add(lr.Usage)
	if cause := context.Cause(lctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	var fe *fatalError
	if errors.As(context.Cause(lctx), &fe) {
		return fe.err
	}
	if err != nil {
		return err
	}
	for _, m := range lr.Messages {
		if m.Role == model.RoleAssistant {
			r.addReview(plan.ReviewQueue(m.Text))
		}
	}
	return nil
}

// trusted reports whether the run's model is prose's own offline engine,
// whose tool calls render a source and are bounded by the source limits;
// every other model's calls are held to the caps of toolcheck.go.
func (r *run) trusted() bool {
	provider, _ := providerOf(r.opt.ModelSpec)
	return provider == model.Offline && r.opt.Model != nil && r.opt.Model.Name() == model.Offline
}

// addReview queues the review items of one model answer, those a model
// may send (checkReview) when the model is not trusted.
func (r *run) addReview(items []plan.ReviewItem) {
	if !r.trusted() {
		items, _ = r.checkReview(items)
	}
	r.review = append(r.review, items...)
}

// search asks the wiki's search index (the committed pages), then the
// catalog's titles for pages this run wrote.
func (r *run) search(ctx context.Context, query string, limit int) ([]searchHit, error) {
	hits, err := r.w.Search(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]searchHit, 0, limit)
	seen := map[string]bool{}
	for _, h := range hits {
		seen[h.Path] = true
		out = append(out, searchHit{Path: h.Path, Title: h.Title, Snippet: h.Snippet})
	}
	more, _ := r.find(ctx, query, limit)
	for _, h := range more {
		if len(out) < limit && !seen[h.Path] && r.touched[h.Path] {
			out = append(out, h)
		}
	}
	return out, nil
}

// find searches the pages the catalog knows by their titles and folder:
// every query word in the title scores most, in the path next.
func (r *run) find(_ context.Context, query string, limit int) ([]searchHit, error) {
	words := strings.FieldsFunc(strings.ToLower(query), notWordRune)
	type scored struct {
		hit   searchHit
		score int
	}
	var all []scored
	for p, rec := range r.cat.Pages {
		title := strings.ToLower(rec.Title)
		s := 0
		for _, w := range words {
			if strings.Contains(title, w) {
				s += 2
			} else if strings.Contains(p, w) {
				s++
			}
		}
		if s > 0 {
			all = append(all, scored{searchHit{Path: p, Title: rec.Title}, s})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].hit.Path < all[j].hit.Path
	})
	var out []searchHit
	for i := 0; i < len(all) && i < limit; i++ {
		out = append(out, all[i].hit)
	}
	return out, nil
}

// askedOf is the sources of todo a model is asked about: all but those
// with the same text as another source, which take that one's pages.
func askedOf(todo []*source.Document, same *sameText) []*source.Document {
	var out []*source.Document
	for _, d := range todo {
		if same.of[d.Name] == "" {
			out = append(out, d)
		}
	}
	return out
}

// keepEarlierNames gives back its earlier name to a source the vault
// holds under the name an earlier prose gave it (a collection once named
// for its "html" directory, now for the package above it), so its pages
// stay where they are rather than being made again beside them. A name
// another source of the run takes, or one the vault also holds under
// the new name, is left as it is.
func keepEarlierNames(docs []*source.Document, base *catalog) {
	held := map[string]bool{}
	for _, rec := range base.Sources {
		held[rec.Name] = true
	}
	taken := map[string]bool{}
	for _, d := range docs {
		taken[d.Name] = true
	}
	for _, d := range docs {
		if d.Earlier == "" || !held[d.Earlier] || held[d.Name] || taken[d.Earlier] {
			continue
		}
		delete(taken, d.Name)
		d.Name, d.Earlier = d.Earlier, ""
		taken[d.Name] = true
	}
}
