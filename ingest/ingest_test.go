package ingest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/browsertest"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/program"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

var day = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newWiki(t testing.TB) (*vault.Vault, *wiki.Wiki) {
	t.Helper()
	v, err := vault.Init(filepath.Join(t.TempDir(), "vault"), vault.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wiki.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	w.Now = func() time.Time { return day }
	return v, w
}

func fixtureDocs(t *testing.T) []*source.Document {
	t.Helper()
	inputs, _, err := source.Collect([]string{"../fixtures/sources"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var docs []*source.Document
	for _, in := range inputs {
		d, err := source.Read(in.Name, in.Data, in.Kind)
		if err != nil {
			t.Fatal(err)
		}
		d.Collection = in.Found // as the CLI reads a directory: its pages mirror it
		docs = append(docs, d)
	}
	return docs
}

// counting wraps a model and counts its calls.
type counting struct {
	model.Model
	calls atomic.Int64
	// failAt, when > 0, fails that call.
	failAt int64
}

func (c *counting) Call(ctx context.Context, req model.Request) (model.Response, error) {
	n := c.calls.Add(1)
	if n == c.failAt {
		return model.Response{}, errors.New("the provider answered 503 Service Unavailable")
	}
	return c.Model.Call(ctx, req)
}

func opts(m model.Model) ingest.Options {
	return ingest.Options{Model: m, ModelSpec: "offline", Now: func() time.Time { return day }}
}

func branchCommits(t *testing.T, v *vault.Vault) int {
	t.Helper()
	repo, err := git.PlainOpen(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	iter, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = iter.ForEach(func(*object.Commit) error { n++; return nil })
	return n
}

func lintClean(t *testing.T, w *wiki.Wiki) {
	t.Helper()
	rep, err := w.Lint(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity != wiki.SevInfo {
			t.Errorf("lint: %s %s %s: %s", f.Severity, f.Kind, f.Page, f.Detail)
		}
	}
}

func TestOfflineIngestFixtures(t *testing.T) {
	v, w := newWiki(t)
	m := &counting{Model: offline.Engine{}}
	docs := fixtureDocs(t)
	before := branchCommits(t, v)
	res, err := ingest.Ingest(context.Background(), w, docs, opts(m))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "rendered" || branchCommits(t, v) != before+1 {
		t.Fatalf("status %s, %d commits after %d", res.Status, branchCommits(t, v), before)
	}
	if len(res.Created) < 10 {
		t.Errorf("created only %v", res.Created)
	}
	r := res.Receipt
	if r.Wake.Source != receipt.WakeExternal || len(r.Wake.Refs) != len(docs) || r.Cost.Provider != "offline" {
		t.Errorf("receipt wake %+v cost %+v", r.Wake, r.Cost)
	}
	for _, k := range []string{"pages_created", "pages_updated", "pages_moved"} {
		if _, ok := r.SemanticDiff[k]; !ok {
			t.Errorf("semantic_diff has no %s: %v", k, r.SemanticDiff)
		}
	}
	if err := r.CheckShape(); err != nil {
		t.Error(err)
	}
	lintClean(t, w)

	// Every page traces back to committed source bytes.
	for _, rel := range res.Created {
		_, p, err := w.Read(rel)
		if err != nil {
			t.Fatal(err)
		}
		ids := p.Meta.Strings("sources")
		if len(ids) == 0 {
			t.Fatalf("%s records no source", rel)
		}
		for _, id := range ids {
			data, ok, err := v.ReadFile(ingest.SourcePath(id))
			if err != nil || !ok {
				t.Fatalf("%s: source %s not committed (%v)", rel, id, err)
			}
			if canon.BLAKE3.Token(data) != id {
				t.Fatalf("%s: stored source does not hash to %s", rel, id)
			}
		}
	}
	// The duplicate definition went to the review queue, committed.
	if len(res.Review) == 0 {
		t.Error("no review item for the term two sources define")
	}
	if _, ok, _ := v.ReadFile(ingest.ReviewFile); !ok {
		t.Error("the review queue is not committed")
	}

	// Again: nothing new, no model call, no commit, a skipped receipt.
	calls := m.calls.Load()
	res2, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), opts(m))
	if err != nil {
		t.Fatal(err)
	}
	if res2.Status != "skipped" || m.calls.Load() != calls || branchCommits(t, v) != before+1 {
		t.Fatalf("second ingest: status %s, %d more model calls, %d commits", res2.Status, m.calls.Load()-calls, branchCommits(t, v))
	}
	last, err := v.LastReceipt(wiki.Node)
	if err != nil || last.Status != receipt.Skipped || last.Cost.Tokens.Fresh != 0 {
		t.Fatalf("last receipt %+v, %v", last, err)
	}

	// --force runs the model again. The first forced run may link pages
	// the first run could not see yet; after it the wiki is a fixed point.
	force := opts(m)
	force.Force = true
	if _, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), force); err != nil {
		t.Fatal(err)
	}
	commits := branchCommits(t, v)
	calls = m.calls.Load()
	res3, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), force)
	if err != nil {
		t.Fatal(err)
	}
	if m.calls.Load() == calls || res3.Status != "skipped" || branchCommits(t, v) != commits {
		t.Fatalf("forced ingest: status %s, calls %d→%d, commits %d→%d", res3.Status, calls, m.calls.Load(), commits, branchCommits(t, v))
	}
	lintClean(t, w)
}

func TestChangedSourceUpdatesItsPages(t *testing.T) {
	v, w := newWiki(t)
	m := offline.Engine{}
	doc := func(body string) []*source.Document {
		d, err := source.Read("notes/runbook.md", []byte(body), "")
		if err != nil {
			t.Fatal(err)
		}
		return []*source.Document{d}
	}
	if _, err := ingest.Ingest(context.Background(), w, doc("# Runbook\n\nRestart things carefully.\n\n1. Drain the node.\n2. Restart it.\n"), opts(m)); err != nil {
		t.Fatal(err)
	}
	n := branchCommits(t, v)
	res, err := ingest.Ingest(context.Background(), w, doc("# Runbook\n\nRestart things carefully.\n\n1. Drain the node.\n2. Restart it.\n3. Watch the logs.\n"), opts(m))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "rendered" || len(res.Created) != 0 || len(res.Updated) == 0 || branchCommits(t, v) != n+1 {
		t.Fatalf("changed source: %s created %v updated %v", res.Status, res.Created, res.Updated)
	}
	h, err := w.SlotOf("notes/notes/runbook/steps.html", "steps")
	if err != nil || !strings.Contains(h, "Watch the logs") {
		t.Fatalf("steps = %q, %v", h, err)
	}
	lintClean(t, w)
}

// snapshot is everything a failed run must leave alone: the branch, the
// git index, the working tree and the search index.
func snapshot(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := v.Root()
	ref, err := os.ReadFile(filepath.Join(root, ".git", "refs", "heads", "main"))
	if err != nil {
		t.Fatal(err)
	}
	out["ref"] = string(ref)
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if e.IsDir() {
			if rel == ".git" || rel == ".prose" {
				return fs.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{filepath.Join(".git", "index"), filepath.Join(".prose", "search")} {
		_ = filepath.WalkDir(filepath.Join(root, extra), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(p)
			sum := sha256.Sum256(data)
			rel, _ := filepath.Rel(root, p)
			out[rel] = hex.EncodeToString(sum[:])
			return nil
		})
	}
	return out
}

func sameSnapshot(t *testing.T, step string, a, b map[string]string) {
	t.Helper()
	for k, va := range a {
		if b[k] != va {
			t.Errorf("%s: %s changed", step, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s appeared", step, k)
		}
	}
}

// TestFailureLeavesVaultAsItWas injects a failure at every step of an
// ingest — the analysis of each source, each tool call, bookkeeping, the
// commit — and a model failure at each model call, into a vault that
// already holds a wiki (with a search index): each time the branch, the
// git index, the working tree and the search index are byte-identical
// afterwards, and the ledger gains one failed receipt.
func TestFailureLeavesVaultAsItWas(t *testing.T) {
	docs := fixtureDocs(t)
	// The steps of a good run, and how many model calls it makes.
	var steps []string
	_, w0 := newWiki(t)
	if _, err := ingest.Ingest(context.Background(), w0, docs[:1], opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	probe := &counting{Model: offline.Engine{}}
	o := opts(probe)
	o.Fail = func(step string) error { steps = append(steps, step); return nil }
	if _, err := ingest.Ingest(context.Background(), w0, docs[1:], o); err != nil {
		t.Fatal(err)
	}
	tools := 0
	for _, s := range steps {
		if strings.HasPrefix(s, "tool:") {
			tools++
		}
	}
	for _, want := range []string{"analysis:sources/deploy-guide.md", "bookkeeping", "commit"} {
		if !slices.Contains(steps, want) {
			t.Fatalf("steps %v lack %s", steps, want)
		}
	}
	if tools < 10 {
		t.Fatalf("only %d tool steps: %v", tools, steps)
	}

	type injection struct {
		name   string
		step   string
		callAt int64
	}
	var cases []injection
	for _, s := range steps {
		cases = append(cases, injection{name: s, step: s})
	}
	for i := int64(1); i <= probe.calls.Load(); i++ {
		cases = append(cases, injection{name: "model call " + string(rune('0'+i%10)), callAt: i})
	}
	v, w := newWiki(t)
	if _, err := ingest.Ingest(context.Background(), w, docs[:1], opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Search(context.Background(), "canary", 5); err != nil {
		t.Fatal(err) // builds the search index, so it is part of the snapshot
	}
	for _, c := range cases {
		before := snapshot(t, v)
		m := &counting{Model: offline.Engine{}, failAt: c.callAt}
		o := opts(m)
		o.Fail = func(step string) error {
			if step == c.step {
				return errors.New("injected failure")
			}
			return nil
		}
		_, err := ingest.Ingest(context.Background(), w, docs[1:], o)
		var se *ingest.StepError
		if !errors.As(err, &se) {
			t.Fatalf("%s: err = %v, want a StepError", c.name, err)
		}
		sameSnapshot(t, c.name, before, snapshot(t, v))
		last, err := v.LastReceipt(wiki.Node)
		if err != nil || last.Status != receipt.Failed {
			t.Fatalf("%s: last receipt %+v, %v", c.name, last, err)
		}
		if reason, _ := last.SemanticDiff["failure_reason"].(string); reason == "" {
			t.Errorf("%s: failed receipt without a reason", c.name)
		}
		if err := last.CheckShape(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Faults inside the commit itself, before the branch ref has moved: a
	// loose object, the branch ref. (Past the branch move the run has
	// landed; the vault's own tests cover the rest.)
	for _, f := range []struct {
		step durable.Step
		path string
	}{{durable.StepWrite, "objects"}, {durable.StepRename, "refs/heads/main"}} {
		name := fmt.Sprintf("commit fault at %s %s", f.step, f.path)
		before := snapshot(t, v)
		restore := durable.SetFault(durable.FailAt(f.step, f.path))
		_, err := ingest.Ingest(context.Background(), w, docs[1:], opts(offline.Engine{}))
		restore()
		if err == nil {
			t.Fatalf("%s: the ingest succeeded", name)
		}
		sameSnapshot(t, name, before, snapshot(t, v))
		last, err := v.LastReceipt(wiki.Node)
		if err != nil || last.Status != receipt.Failed {
			t.Fatalf("%s: last receipt %+v, %v", name, last, err)
		}
	}
	// And the run that does not fail still lands.
	if res, err := ingest.Ingest(context.Background(), w, docs[1:], opts(offline.Engine{})); err != nil || res.Status != "rendered" {
		t.Fatalf("after the failures: %v, %v", res, err)
	}
	lintClean(t, w)
}

func TestProgramsAreRegistered(t *testing.T) {
	v, w := newWiki(t)
	_ = v
	reg := program.NewRegistry()
	if err := ingest.RegisterPrograms(reg, func(context.Context) (*wiki.Wiki, error) { return w, nil }); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range reg.List() {
		names = append(names, p.Name)
	}
	want := []string{"enrich", "ingest", "lint", "read", "search", "tree"}
	if !slices.Equal(names, want) {
		t.Fatalf("programs %v, want %v", names, want)
	}
	out, err := reg.Call(context.Background(), "ingest", []byte(`{"paths":["../fixtures/sources"]}`))
	if err != nil || !strings.Contains(out, `"rendered"`) {
		t.Fatalf("ingest program: %s, %v", out, err)
	}
	out, err = reg.Call(context.Background(), "read", []byte(`{"page":"glossary/rollback"}`))
	if err != nil || !strings.Contains(out, "Rollback") {
		t.Fatalf("read program: %s, %v", out, err)
	}
	// The page exists: only the keyword check (or, without it, the
	// closed schema) can refuse these calls.
	if out, err := reg.Call(context.Background(), "read", []byte(`{"page":"billing/rollback","bogus":1}`)); err == nil || !strings.Contains(err.Error(), `"bogus"`) && !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("an unsupported keyword was accepted: %s, %v", out, err)
	}
	if out, err := reg.Call(context.Background(), "read", []byte(`{"page":["billing/rollback"]}`)); err == nil || !strings.Contains(err.Error(), "invalid args") || !strings.Contains(err.Error(), "/page") {
		t.Fatalf("an argument of the wrong type was accepted: %s, %v", out, err)
	}
	if out, err := reg.Call(context.Background(), "read", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "invalid args") {
		t.Fatalf("a missing required argument was accepted: %s, %v", out, err)
	}
}

// TestIngestedWikiInABrowser opens the ingested wiki's root README.html
// and a procedure page in headless Chromium with no network: styled
// (more than a few colours, the stylesheet's font), links that lead to
// pages, and no script anywhere.
func TestIngestedWikiInABrowser(t *testing.T) {
	v, w := newWiki(t)
	if _, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	b := browsertest.Start(t)
	for _, page := range []string{"README.html", "sources/deploy-guide/deploy-steps.html"} {
		b.Open(t, filepath.Join(v.Root(), "published", "wiki", page))
		if n := browsertest.Colors(t, b.Screenshot(t)); n < 3 {
			t.Errorf("%s renders in %d colours: unstyled?", page, n)
		}
		if font := browsertest.Eval[string](t, b, `getComputedStyle(document.body).fontFamily`); strings.Contains(font, "Times") {
			t.Errorf("%s: body font %q, the stylesheet did not apply", page, font)
		}
		if n := browsertest.Eval[int](t, b, `document.querySelectorAll("script").length`); n != 0 {
			t.Errorf("%s holds %d scripts", page, n)
		}
		if n := browsertest.Eval[int](t, b, `document.querySelectorAll("main a[href$='.html'], .index-folders a, .index-pages a").length`); n == 0 {
			t.Errorf("%s has no links to pages", page)
		}
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("ol.steps li").length`); n != 5 {
		t.Errorf("the procedure shows %d steps, want 5", n)
	}
}

// TestEnrichFailureLeavesVaultAsItWas: enrich shares the pipeline's Tx; a
// failure at its first write, at bookkeeping or at the commit leaves the
// branch, index and working tree byte-identical and the search index
// answering as before (enrich searches, and the search library may
// reorganise its files on a read), and a run that succeeds is one commit.
func TestEnrichFailureLeavesVaultAsItWas(t *testing.T) {
	v, w := newWiki(t)
	if _, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	// A page a person made with empty slots: enrich has something to do
	// (the ingest left nothing undone on its own pages).
	if _, err := w.Update(context.Background(), func(tx *wiki.Tx) error {
		_, _, err := tx.New("glossary/canary-notes.html", wiki.NewOptions{Template: "concept", Title: "Canary notes",
			Slots: map[string]string{"body": "<p>The canary takes five percent of traffic. We watch it closely.</p>"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The first tool step of an enrich, as a probe run reports it.
	first := ""
	probe := opts(offline.Engine{})
	probe.Fail = func(s string) error {
		if first == "" && strings.HasPrefix(s, "tool:") {
			first = s
			return errors.New("probe")
		}
		return nil
	}
	_, _ = ingest.Enrich(context.Background(), w, ingest.Selection{All: true}, probe)
	if first == "" {
		t.Fatal("enrich made no tool call")
	}
	searchAll := func() string {
		var sb strings.Builder
		for _, q := range []string{"rollback", "canary", "incident commander", "migration"} {
			hits, err := w.Search(context.Background(), q, 20)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				sb.WriteString(h.Path + " " + h.Snippet + "\n")
			}
		}
		return sb.String()
	}
	withoutSearch := func(m map[string]string) map[string]string {
		for k := range m {
			if strings.HasPrefix(k, filepath.Join(".prose", "search")) {
				delete(m, k)
			}
		}
		return m
	}
	for _, step := range []string{first, "bookkeeping", "commit"} {
		before := withoutSearch(snapshot(t, v))
		hitsBefore := searchAll()
		o := opts(offline.Engine{})
		o.Fail = func(s string) error {
			if s == step {
				return errors.New("injected failure")
			}
			return nil
		}
		if _, err := ingest.Enrich(context.Background(), w, ingest.Selection{All: true}, o); err == nil {
			t.Fatalf("%s: enrich succeeded", step)
		}
		sameSnapshot(t, step, before, withoutSearch(snapshot(t, v)))
		if searchAll() != hitsBefore {
			t.Errorf("%s: search answers differently after the failed run", step)
		}
		if last, err := v.LastReceipt(wiki.Node); err != nil || last.Status != receipt.Failed {
			t.Fatalf("%s: last receipt %+v, %v", step, last, err)
		}
	}
	n := branchCommits(t, v)
	res, err := ingest.Enrich(context.Background(), w, ingest.Selection{All: true}, opts(offline.Engine{}))
	if err != nil || res.Status != "rendered" || len(res.Updated) == 0 || branchCommits(t, v) != n+1 {
		t.Fatalf("enrich: %+v, %v", res, err)
	}
	lintClean(t, w)
}

// TestEnrichSelection: --template and --limit choose the pages an enrich
// asks about; named pages resolve by stem; an unknown page or template is
// an error and changes nothing.
func TestEnrichSelection(t *testing.T) {
	v, w := newWiki(t)
	if _, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	asked := func(sel ingest.Selection) []string {
		var pages []string
		o := opts(offline.Engine{})
		o.Fail = func(step string) error {
			if p, ok := strings.CutPrefix(step, "enrichment:"); ok {
				pages = append(pages, p)
			}
			return nil
		}
		if _, err := ingest.Enrich(context.Background(), w, sel, o); err != nil {
			t.Fatal(err)
		}
		return pages
	}
	if got := asked(ingest.Selection{All: true, Template: "procedure"}); !slices.Equal(got, []string{"sources/deploy-guide/deploy-steps.html", "sources/incident-glossary/opening-an-incident.html"}) { // a conversation makes no procedure
		t.Errorf("--template procedure asked about %v", got)
	}
	if got := asked(ingest.Selection{All: true, Limit: 2}); len(got) != 2 {
		t.Errorf("--limit 2 asked about %v", got)
	}
	if got := asked(ingest.Selection{Pages: []string{"rollback"}}); !slices.Equal(got, []string{"glossary/rollback.html"}) {
		t.Errorf("a page by stem: %v", got)
	}
	n := branchCommits(t, v)
	for _, sel := range []ingest.Selection{{Pages: []string{"no-such-page"}}, {All: true, Template: "nosuch"}} {
		if _, err := ingest.Enrich(context.Background(), w, sel, opts(offline.Engine{})); err == nil {
			t.Errorf("%+v: no error", sel)
		}
	}
	if branchCommits(t, v) != n {
		t.Error("a refused enrich committed")
	}
}

// An ingest whose commit finds that another command committed meanwhile
// prepares again from the new state and lands: concurrent writers queue
// rather than fail, and no failed receipt is recorded for the lost race.
func TestIngestPreparesAgainWhenTheVaultMoved(t *testing.T) {
	v, w := newWiki(t)
	docs := fixtureDocs(t)
	if _, err := ingest.Ingest(context.Background(), w, docs[:1], opts(offline.Engine{})); err != nil {
		t.Fatal(err)
	}
	commits := 0
	o := opts(offline.Engine{})
	o.Fail = func(step string) error {
		if step != "commit" {
			return nil
		}
		commits++
		if commits == 1 { // another writer lands between preparing and committing
			other, err := wiki.Open(v)
			if err != nil {
				return err
			}
			tx, err := other.Begin(context.Background())
			if err != nil {
				return err
			}
			if _, _, err := tx.New("elsewhere/meanwhile", wiki.NewOptions{Template: "note"}); err != nil {
				return err
			}
			if _, err := tx.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
	var progress strings.Builder
	o.Progress = &progress
	res, err := ingest.Ingest(context.Background(), w, docs[1:], o)
	if err != nil {
		t.Fatalf("ingest after a concurrent commit: %v", err)
	}
	if commits != 2 || !strings.Contains(progress.String(), "preparing again") {
		t.Fatalf("%d commit attempts, progress %q; want a second run that says so", commits, progress.String())
	}
	if res.Receipt == nil || res.Receipt.Status != receipt.Rendered {
		t.Fatalf("result %+v", res)
	}
	recs, err := v.AllReceipts()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Receipt.Status == receipt.Failed {
			t.Fatalf("a failed receipt was recorded for the lost race: %+v", r.Receipt.SemanticDiff)
		}
	}
	if _, ok, err := v.ReadFile("published/wiki/elsewhere/meanwhile.html"); err != nil || !ok {
		t.Fatalf("the other writer's page is gone: %v %v", ok, err)
	}
}

// TestReceiptNamesAReplayByFileName: a run whose model is a replay of a
// recording names the recording by its file name in the receipt's cost,
// never by the local path it was read from (a machine path is no part of
// the ledger), for a run that commits and for one skipped.
func TestReceiptNamesAReplayByFileName(t *testing.T) {
	v, w := newWiki(t)
	o := opts(offline.Engine{})
	local := filepath.Join(t.TempDir(), "home", "someone", "recordings")
	o.ModelSpec = "replay:" + filepath.Join(local, "replay-ingest.json")
	for _, want := range []receipt.Status{receipt.Rendered, receipt.Skipped} {
		if _, err := ingest.Ingest(context.Background(), w, fixtureDocs(t), o); err != nil {
			t.Fatal(err)
		}
		r, err := v.LastReceipt(wiki.Node)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != want || r.Cost.Provider != "replay" || r.Cost.Model != "replay-ingest.json" {
			t.Fatalf("receipt %s: cost %+v", r.Status, r.Cost)
		}
		if b := fmt.Sprintf("%+v", *r); strings.Contains(b, local) || strings.Contains(b, "someone") {
			t.Fatalf("the receipt holds the local path:\n%s", b)
		}
	}
}
