package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/fakewiki"
	"github.com/prose-store/prose/model/fakeserver"
)

// scaleSources writes n small Markdown sources into a fresh directory.
func scaleSources(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "docs")
	os.MkdirAll(dir, 0o755)
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("# Runbook %02d\n\nStep %d of the on-call rota: check the queue depth, then page the owner of service %02d.\n\n## Escalation\n\nAfter %d minutes, escalate to the duty manager.\n", i, i, i, 10+i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("runbook-%02d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func pointAt(t *testing.T, srv *fakeserver.Server) {
	env := srv.Env()
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"} {
		t.Setenv(k, env(k))
	}
}

var scaleAPIs = []struct{ api, spec string }{
	{fakeserver.Responses, "openai:fake-model"},
	{fakeserver.Chat, "openai-chat:fake-model"},
	{fakeserver.Anthropic, "anthropic:fake-model"},
}

// TestIngestRepairsABadPlan: every provider is asked for the plan in its
// structured form (the fake refuses other shapes); a plan answered as
// invalid JSON gets one repair turn and the run lands.
func TestIngestRepairsABadPlan(t *testing.T) {
	for _, tc := range scaleAPIs {
		t.Run(tc.api, func(t *testing.T) {
			fm := &fakewiki.Model{BadPlanOnce: true}
			srv := fm.Serve(t, tc.api, fakeserver.Options{})
			pointAt(t, srv)
			dir := newIngestVault(t)
			src := scaleSources(t, 2)
			out := mustProse(t, "--vault", dir, "ingest", "--model", tc.spec, src)
			if fm.Plan != 4 {
				t.Errorf("%d plan answers; want a bad one and its repair per source (4)", fm.Plan)
			}
			if !strings.Contains(out, "runbook-00-notes.html") {
				t.Errorf("the repaired plan's page is not in the output:\n%s", out)
			}
			formats := 0
			for _, b := range srv.Bodies() {
				if strings.Contains(string(b), `"json_schema"`) || strings.Contains(string(b), `"tool_choice"`) {
					formats++
				}
			}
			if formats != 4 {
				t.Errorf("%d requests asked for a structured plan, want 4", formats)
			}
		})
	}
}

// TestIngestFailsOnAPlanThatNeverParses: a model that answers a bad plan
// twice fails the run with an error saying so; nothing lands.
func TestIngestFailsOnAPlanThatNeverParses(t *testing.T) {
	bad := fakeserver.Text(`{"pages": [`)
	srv := fakeserver.New(t, fakeserver.Responses, bad, bad)
	pointAt(t, srv)
	dir := newIngestVault(t)
	before := headOf(t, dir)
	_, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai:fake-model", scaleSources(t, 1))
	if code != 1 || !strings.Contains(errs, "after a repair turn") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if headOf(t, dir) != before {
		t.Error("the branch moved")
	}
}

func treeOf(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(needGit(t), "-C", dir, "rev-parse", "HEAD^{tree}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestParallelIngestIsSerial: the same sources through the same fake
// (answering by content, each answer after a small latency, so
// conversations overlap) make the same commit tree — pages, catalog,
// review queue and the one receipt — at --jobs 1 and --jobs 6, on every
// API.
func TestParallelIngestIsSerial(t *testing.T) {
	for _, tc := range scaleAPIs {
		t.Run(tc.api, func(t *testing.T) {
			n := 12
			if testing.Short() {
				n = 6 // -short: six sources, still one per job at --jobs 6
			}
			src := scaleSources(t, n)
			var trees []string
			for _, jobs := range []string{"1", "6"} {
				fm := &fakewiki.Model{BadPlanOnce: true}
				srv := fm.Serve(t, tc.api, fakeserver.Options{Latency: 5 * time.Millisecond})
				pointAt(t, srv)
				dir := newIngestVault(t)
				out, errs, code := prose(t, "--vault", dir, "ingest", "--jobs", jobs, "--model", tc.spec, src)
				if code != 0 {
					t.Fatalf("exit %d\n%s%s", code, out, errs)
				}
				if strings.Contains(errs, "in flight") {
					t.Errorf("progress drawn on a pipe: %q", errs)
				}
				trees = append(trees, treeOf(t, dir))
				if r := lastReceipt(t, dir); r.Cost.Tokens.Fresh == 0 {
					t.Errorf("jobs %s: the receipt counts no tokens", jobs)
				}
			}
			if trees[0] != trees[1] {
				t.Errorf("the tree after --jobs 6 (%s) is not the tree after --jobs 1 (%s)", trees[1], trees[0])
			}
		})
	}
}

// TestParallelIngestInterrupted: Ctrl-C while several sources' calls are
// in flight stops every call and lands nothing; fsck stays clean.
func TestParallelIngestInterrupted(t *testing.T) {
	bin := buildProse(t)
	dir := newIngestVault(t)
	src := scaleSources(t, 8)
	var mu sync.Mutex
	inFlight := 0
	three := make(chan struct{})
	fm := &fakewiki.Model{}
	srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{Latency: time.Hour, Arrived: func(*fakeserver.Incoming) {
		mu.Lock()
		defer mu.Unlock()
		if inFlight++; inFlight == 3 {
			close(three)
		}
	}})
	env := srv.Env()
	before := snapshotVault(t, dir)
	cmd := exec.Command(bin, "--vault", dir, "ingest", "--jobs", "3", "--model", "openai:fake-model", src)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+env("OPENAI_BASE_URL"), "OPENAI_API_KEY="+env("OPENAI_API_KEY"), "PROSE_NOW=2026-01-31")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-three // three sources are waiting for the model at once
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("after SIGINT: %v\n%s", err, stderr.String())
	}
	if fm.Plan != 0 {
		t.Errorf("%d calls were answered after the interrupt", fm.Plan)
	}
	after := snapshotVault(t, dir)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files appeared: %d → %d", len(before), len(after))
	}
	mustProse(t, "--vault", dir, "fsck")
}

// TestPromptsLaidOutForCaching: every call of a run carries one shared
// system text holding both prompts' fixed parts (cache_control on
// Anthropic) and one tool list, so every request after the first — an
// analysis after a generation turn too, in arrival order at --jobs 3 —
// starts with the whole fixed part (tools and system) of the one before,
// on every API; the analysis carries the tools but may call none (tool
// choice none, or forced to the plan tool on Anthropic); a vault's
// override written before the split (no <<<PER CALL>>> line) is still
// sent whole, as the user message.
func TestPromptsLaidOutForCaching(t *testing.T) {
	for _, tc := range scaleAPIs {
		t.Run(tc.api, func(t *testing.T) {
			fm := &fakewiki.Model{}
			var mu sync.Mutex
			var systems []string
			var analyses []*fakeserver.Incoming
			srv := fm.Serve(t, tc.api, fakeserver.Options{Arrived: func(in *fakeserver.Incoming) {
				mu.Lock()
				systems = append(systems, in.System)
				if in.Format != "" {
					analyses = append(analyses, in)
				}
				mu.Unlock()
			}})
			pointAt(t, srv)
			dir := newIngestVault(t)
			mustProse(t, "--vault", dir, "ingest", "--jobs", "3", "--model", tc.spec, scaleSources(t, 4))
			for i, s := range systems {
				if !strings.Contains(s, "You plan additions") || !strings.Contains(s, "You write pages") || s != systems[0] {
					t.Fatalf("request %d does not carry the run's one shared system text: %.200q", i, s)
				}
			}
			prefixes := srv.Prefixes()
			if len(prefixes) != len(srv.Bodies())-1 || len(analyses) != 4 {
				t.Fatalf("%d prefixes of %d requests, %d analyses", len(prefixes), len(srv.Bodies()), len(analyses))
			}
			for i, p := range prefixes {
				if !p.Whole {
					t.Errorf("request %d shares %d bytes with the one before it, not the run's whole fixed part (%d)", i+1, p.Shared, p.Fixed)
				}
			}
			want := `"none"`
			if tc.api == fakeserver.Anthropic {
				want = `{"name":"plan","type":"tool"}`
			}
			for _, in := range analyses {
				if in.ToolChoice != want {
					t.Errorf("an analysis request's tool_choice is %s, want %s", in.ToolChoice, want)
				}
			}
			kinds := srv.Kinds()
			if len(kinds) != len(srv.Bodies())-2 {
				t.Errorf("%d requests after the first of their kind, want %d", len(kinds), len(srv.Bodies())-2)
			}
			for i, k := range kinds {
				if !k.Whole {
					t.Errorf("request %d shares %d bytes with the last of its kind, not its whole fixed part (%d)", i, k.Shared, k.Fixed)
				}
			}
			if tc.api == fakeserver.Anthropic && !strings.Contains(string(srv.Bodies()[0]), `"cache_control":{"type":"ephemeral"}`) {
				t.Error("the Anthropic system block has no cache_control")
			}
		})
	}
	t.Run("old override", func(t *testing.T) {
		fm := &fakewiki.Model{}
		var mu sync.Mutex
		var ins []*fakeserver.Incoming
		srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{Arrived: func(in *fakeserver.Incoming) {
			mu.Lock()
			ins = append(ins, in)
			mu.Unlock()
		}})
		pointAt(t, srv)
		dir := newIngestVault(t)
		override := "Our house planner. Plan the pages for {source_title}.\n{index}\n{tree}\n{templates} {template_details} {purpose} {audience}\n<<<SOURCE\n{source}\nSOURCE>>>\n"
		os.MkdirAll(filepath.Join(dir, "prompts"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "prompts", "analysis.md"), []byte(override), 0o644); err != nil {
			t.Fatal(err)
		}
		mustProse(t, "--vault", dir, "ingest", "--model", "openai:fake-model", scaleSources(t, 1))
		if strings.Contains(ins[0].System, "house planner") || !strings.HasPrefix(ins[0].Users[0], "Our house planner. Plan the pages for Runbook 00.") {
			t.Errorf("the old override was not sent whole as the user message: system %q, user %.60q", ins[0].System, ins[0].Users[0])
		}
	})
}

// TestIngestEstimateBesideUse: --estimate asks nothing and writes nothing,
// and its calls and tokens are near what the run then uses (the fake
// counts tokens by the estimate's rule, four bytes each); with prices in
// prose.yaml the run says what it cost.
func TestIngestEstimateBesideUse(t *testing.T) {
	fm := &fakewiki.Model{}
	srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{})
	pointAt(t, srv)
	dir := newIngestVault(t)
	cfg, _ := os.ReadFile(filepath.Join(dir, "prose.yaml"))
	os.WriteFile(filepath.Join(dir, "prose.yaml"), append(cfg, []byte("prices:\n  openai:fake-model: {input: 2, cached_input: 0.5, output: 8}\n")...), 0o644)
	src := scaleSources(t, 5)
	before := headOf(t, dir)
	out := mustProse(t, "--vault", dir, "--json", "ingest", "--estimate", "--model", "openai:fake-model", src)
	if len(srv.Bodies()) != 0 || headOf(t, dir) != before {
		t.Fatalf("--estimate asked %d calls or moved the branch", len(srv.Bodies()))
	}
	var est struct {
		Total struct {
			Calls        int   `json:"calls"`
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"total"`
		Cost float64 `json:"cost"`
	}
	if err := json.Unmarshal([]byte(out), &est); err != nil {
		t.Fatal(err)
	}
	run := mustProse(t, "--vault", dir, "ingest", "--model", "openai:fake-model", src)
	var in, cached, outTok int64
	var cost float64
	line := run[strings.Index(run, "tokens: "):]
	if _, err := fmt.Sscanf(line, "tokens: %d input (%d of them cached), %d output; cost %f", &in, &cached, &outTok, &cost); err != nil {
		t.Fatalf("no tokens line with a cost: %v\n%s", err, run)
	}
	calls := len(srv.Bodies())
	t.Logf("estimate: %d calls, %d input, %d output tokens, cost %.4f; used: %d calls, %d input, %d output, cost %.4f", est.Total.Calls, est.Total.InputTokens, est.Total.OutputTokens, est.Cost, calls, in, outTok, cost)
	if est.Total.Calls != calls {
		t.Errorf("estimated %d calls, the run made %d", est.Total.Calls, calls)
	}
	if ratio := float64(est.Total.InputTokens) / float64(in); ratio < 0.5 || ratio > 2 {
		t.Errorf("estimated input %d is not within 2× of the %d used", est.Total.InputTokens, in)
	}
	if want := (float64(in-cached)*2 + float64(cached)*0.5 + float64(outTok)*8) / 1e6; cost < want*0.999 || cost > want*1.001 || est.Cost <= 0 {
		t.Errorf("cost %f, want %f; estimate's %f", cost, want, est.Cost)
	}
}

// TestIngestMaxTokens: a budget that holds the estimates of two of five
// sources lands those two in one receipt and names the three left; the
// next run ingests the rest.
func TestIngestMaxTokens(t *testing.T) {
	fm := &fakewiki.Model{}
	srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{})
	pointAt(t, srv)
	dir := newIngestVault(t)
	src := scaleSources(t, 5)
	var est struct {
		Estimates []struct {
			Input  int64 `json:"input_tokens"`
			Output int64 `json:"output_tokens"`
		} `json:"estimates"`
	}
	json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "ingest", "--estimate", "--model", "openai:fake-model", src)), &est)
	budget := est.Estimates[0].Input + est.Estimates[0].Output + est.Estimates[1].Input + est.Estimates[1].Output + 10
	before := headOf(t, dir)
	out := mustProse(t, "--vault", dir, "ingest", "--max-tokens", fmt.Sprint(budget), "--model", "openai:fake-model", src)
	if !strings.Contains(out, "left: 3 sources not started") || !strings.Contains(out, "docs/runbook-02.md, docs/runbook-03.md, docs/runbook-04.md") {
		t.Errorf("the output does not name the sources left:\n%s", out)
	}
	if parentOf(t, dir, headOf(t, dir)) != before {
		t.Fatal("not exactly one commit")
	}
	if r := lastReceipt(t, dir); len(r.Wake.Refs) != 2 {
		t.Errorf("the receipt covers %d sources, want the 2 started", len(r.Wake.Refs))
	}
	if n := len(srv.Bodies()); n != 6 {
		t.Errorf("%d calls, want the 2 sources' 6", n)
	}
	mustProse(t, "--vault", dir, "fsck")
	if out := mustProse(t, "--vault", dir, "ingest", "--model", "openai:fake-model", src); strings.Contains(out, "left:") || !strings.Contains(out, "ingested  docs/runbook-04.md") {
		t.Errorf("the second run did not ingest the rest:\n%s", out)
	}
}

// TestIngestJSONUsage: `prose ingest --json` says what the run's calls
// used — the input tokens the fake counted (its rule: four bytes of each
// request), the cached part, the output — and, with prices in
// prose.yaml, the cost they come to.
func TestIngestJSONUsage(t *testing.T) {
	fm := &fakewiki.Model{}
	var mu sync.Mutex
	var sent int64
	srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{Arrived: func(in *fakeserver.Incoming) {
		mu.Lock()
		sent += fakeserver.Tokens(in.Order)
		mu.Unlock()
	}})
	pointAt(t, srv)
	dir := newIngestVault(t)
	cfg, _ := os.ReadFile(filepath.Join(dir, "prose.yaml"))
	os.WriteFile(filepath.Join(dir, "prose.yaml"), append(cfg, []byte("prices:\n  openai:fake-model: {input: 2, cached_input: 0.5, output: 8}\n")...), 0o644)
	out := mustProse(t, "--vault", dir, "--json", "ingest", "--model", "openai:fake-model", scaleSources(t, 3))
	var doc struct {
		Usage *struct {
			Model  string   `json:"model"`
			Input  int64    `json:"input_tokens"`
			Cached *int64   `json:"cached_input_tokens"`
			Output int64    `json:"output_tokens"`
			Cost   *float64 `json:"cost"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	u := doc.Usage
	if u == nil || u.Cached == nil || u.Cost == nil {
		t.Fatalf("no usage with tokens and cost in the --json output:\n%s", out)
	}
	if u.Model != "openai:fake-model" || u.Input != sent || u.Output <= 0 {
		t.Errorf("usage %+v; want model openai:fake-model, %d input tokens (the fake's count) and some output", *u, sent)
	}
	if want := (float64(u.Input-*u.Cached)*2 + float64(*u.Cached)*0.5 + float64(u.Output)*8) / 1e6; *u.Cost < want*0.999 || *u.Cost > want*1.001 {
		t.Errorf("cost %f, want %f", *u.Cost, want)
	}
}

// pageLines are the lines of an ingest's output that name a page it
// creates, changes or moves ("  created  PATH"), sorted.
func pageLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && (f[0] == "created" || f[0] == "updated" || f[0] == "moved") && strings.HasPrefix(l, "  ") {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	sort.Strings(lines)
	return lines
}

// TestIngestDryRunWithAProvider: `--dry-run` with a provider makes the
// analysis calls alone (one per source), says the tokens they used —
// the fake's own count — and prints the plan: the pages it names are
// exactly the pages the real run then creates and changes, against the
// same fake; the vault is as before after the dry run. On every API.
func TestIngestDryRunWithAProvider(t *testing.T) {
	for _, tc := range scaleAPIs {
		t.Run(tc.api, func(t *testing.T) {
			fm := &fakewiki.Model{}
			var mu sync.Mutex
			formats, others := 0, 0
			srv := fm.Serve(t, tc.api, fakeserver.Options{Arrived: func(in *fakeserver.Incoming) {
				mu.Lock()
				defer mu.Unlock()
				if in.Format != "" {
					formats++
				} else {
					others++
				}
			}})
			pointAt(t, srv)
			dir := newIngestVault(t)
			// The wiki holds runbook-00 already; the run ingests it again,
			// revised (its pages change), and two new sources.
			src := scaleSources(t, 1)
			mustProse(t, "--vault", dir, "ingest", "--model", tc.spec, src)
			more := scaleSources(t, 3)
			for _, n := range []string{"runbook-01.md", "runbook-02.md"} {
				data, _ := os.ReadFile(filepath.Join(more, n))
				os.WriteFile(filepath.Join(src, n), data, 0o644)
			}
			os.WriteFile(filepath.Join(src, "runbook-00.md"), []byte("# Runbook 00\n\nStep 0, revised: check the queue depth twice.\n"), 0o644)
			before := snapshotVault(t, dir)
			used0 := srv.Used()
			mu.Lock()
			formats, others = 0, 0
			mu.Unlock()

			dry := mustProse(t, "--vault", dir, "ingest", "--dry-run", "--model", tc.spec, src)
			if formats != 3 || others != 0 {
				t.Errorf("the dry run made %d analysis calls and %d others; want the 3 analyses alone", formats, others)
			}
			used := srv.Used()
			want := fmt.Sprintf("tokens: %d input (%d of them cached), %d output", used.Input-used0.Input, used.CachedInput-used0.CachedInput, used.Output-used0.Output)
			if !strings.Contains(dry, want) {
				t.Errorf("the dry run does not say the tokens the fake counted (%s):\n%s", want, dry)
			}
			for _, s := range []string{"plan for docs/runbook-00.md:", "plan for docs/runbook-02.md:", "dry run: nothing was written"} {
				if !strings.Contains(dry, s) {
					t.Errorf("the dry run does not print %q:\n%s", s, dry)
				}
			}
			after := snapshotVault(t, dir)
			for k, v := range before {
				if after[k] != v {
					t.Errorf("the dry run changed %s", k)
				}
			}
			if len(after) != len(before) {
				t.Errorf("the dry run added files: %d → %d", len(before), len(after))
			}

			real := mustProse(t, "--vault", dir, "ingest", "--model", tc.spec, src)
			planned, landed := pageLines(dry), pageLines(real)
			if !slices.Contains(landed, "updated glossary/runbook-00-notes.html") || strings.Join(planned, "\n") != strings.Join(landed, "\n") {
				t.Errorf("the dry run planned\n  %s\nthe run did\n  %s", strings.Join(planned, "\n  "), strings.Join(landed, "\n  "))
			}
		})
	}
}

// TestParallelEnrichIsSerial: `prose enrich --all` with a provider works
// its pages at once — the fake answers several calls at a time at
// --jobs 6 — and makes the same commit tree, with the same calls, as at
// --jobs 1, on every API: each page is enriched against the wiki as the
// run found it and the answers are merged in name order.
func TestParallelEnrichIsSerial(t *testing.T) {
	for _, tc := range scaleAPIs {
		t.Run(tc.api, func(t *testing.T) {
			src := scaleSources(t, 6)
			var trees []string
			var calls []int
			for _, jobs := range []string{"1", "6"} {
				fm := &fakewiki.Model{}
				srv := fm.Serve(t, tc.api, fakeserver.Options{Latency: 5 * time.Millisecond})
				pointAt(t, srv)
				dir := newIngestVault(t)
				mustProse(t, "--vault", dir, "ingest", "--model", tc.spec, src)
				srv = fm.Serve(t, tc.api, fakeserver.Options{Latency: 20 * time.Millisecond})
				pointAt(t, srv)
				out, errs, code := prose(t, "--vault", dir, "enrich", "--all", "--jobs", jobs, "--model", tc.spec)
				if code != 0 || !strings.Contains(out, "updated  glossary/runbook-05-notes.html") {
					t.Fatalf("jobs %s: exit %d\n%s%s", jobs, code, out, errs)
				}
				if n := srv.MaxInFlight(); (jobs == "1") != (n == 1) {
					t.Errorf("--jobs %s: at most %d calls at once", jobs, n)
				}
				trees = append(trees, treeOf(t, dir))
				calls = append(calls, len(srv.Bodies()))
			}
			// Each of the 6 concept pages takes two calls (its new summary,
			// then done), each of the 6 source pages one: no call is made
			// twice (the merge plays the kept answers).
			if calls[0] != 6*2+6 {
				t.Errorf("--jobs 1 made %d calls, want 18", calls[0])
			}
			if trees[0] != trees[1] || calls[0] != calls[1] {
				t.Errorf("--jobs 6 made tree %s in %d calls, --jobs 1 tree %s in %d", trees[1], calls[1], trees[0], calls[0])
			}
		})
	}
}

// TestModelRunsRefuseAPendingGitMergeBeforeAnyCall: while a merge git made
// waits (a conflicted git merge here), ingest and enrich with a model
// refuse at start, naming the way on, before asking the model anything:
// a refusal at the first write would come after the run had spent its
// tokens. Nothing is committed.
func TestModelRunsRefuseAPendingGitMergeBeforeAnyCall(t *testing.T) {
	fm := &fakewiki.Model{}
	var calls atomic.Int64
	srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{Arrived: func(*fakeserver.Incoming) { calls.Add(1) }})
	pointAt(t, srv)
	dir := newIngestVault(t)
	src := scaleSources(t, 2)
	mustProse(t, "--vault", dir, "ingest", "--model", "openai:fake-model", src)
	head := headOf(t, dir)
	if err := os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte(head+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "runbook-00.md"), []byte("# Runbook 00\n\nStep 0, revised.\n"), 0o644)
	calls.Store(0)
	for _, args := range [][]string{
		{"ingest", "--model", "openai:fake-model", src},
		{"enrich", "--all", "--model", "openai:fake-model"},
	} {
		_, errs, code := prose(t, append([]string{"--vault", dir}, args...)...)
		if code != 1 || !strings.Contains(errs, "a git merge is in progress") || !strings.Contains(errs, "prose pull --continue") {
			t.Fatalf("%s during a git merge: exit %d\n%s", args[0], code, errs)
		}
		if strings.Count(errs, "a git merge is in progress") != 1 || strings.Contains(errs, "failed receipt") {
			t.Errorf("%s: the refusal repeats itself or speaks of a failed receipt:\n%s", args[0], errs)
		}
		if n := calls.Load(); n != 0 {
			t.Fatalf("%s during a git merge asked the model %d times before refusing", args[0], n)
		}
	}
	if headOf(t, dir) != head {
		t.Fatal("a refused run committed")
	}
}

// TestEnrichEstimateDryRunAndBudget: enrich --dry-run lists the pages it
// would ask about and --estimate their calls and tokens, both asking
// nothing and writing nothing; the estimate's calls are the calls the run
// then makes and its input within 2× of what the fake counted; a
// --max-tokens holding two pages' estimates asks about those two alone, in
// one receipt, and names the pages left.
func TestEnrichEstimateDryRunAndBudget(t *testing.T) {
	fm := &fakewiki.Model{}
	srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{})
	pointAt(t, srv)
	dir := newIngestVault(t)
	mustProse(t, "--vault", dir, "ingest", "--model", "openai:fake-model", scaleSources(t, 3))
	sel := []string{"--template", "concept", "--model", "openai:fake-model"}
	head, calls0 := headOf(t, dir), len(srv.Bodies())
	var est struct {
		Estimates []struct {
			Page   string `json:"page"`
			Calls  int    `json:"calls"`
			Input  int64  `json:"input_tokens"`
			Output int64  `json:"output_tokens"`
		} `json:"estimates"`
		Total struct {
			Calls int   `json:"calls"`
			Input int64 `json:"input_tokens"`
		} `json:"total"`
	}
	out := mustProse(t, append([]string{"--vault", dir, "--json", "enrich", "--estimate"}, sel...)...)
	if err := json.Unmarshal([]byte(out), &est); err != nil || len(est.Estimates) < 3 || est.Estimates[0].Input <= 0 {
		t.Fatalf("enrich --estimate: %v\n%s", err, out)
	}
	dry := mustProse(t, append([]string{"--vault", dir, "enrich", "--dry-run"}, sel...)...)
	for _, e := range est.Estimates {
		if !strings.Contains(dry, "would ask about "+e.Page) {
			t.Errorf("the dry run does not name %s:\n%s", e.Page, dry)
		}
	}
	if n := len(srv.Bodies()) - calls0; n != 0 || headOf(t, dir) != head {
		t.Fatalf("--dry-run/--estimate asked %d calls or moved the branch", n)
	}

	budget := est.Estimates[0].Input + est.Estimates[0].Output + est.Estimates[1].Input + est.Estimates[1].Output + 10
	run := mustProse(t, append([]string{"--vault", dir, "enrich", "--max-tokens", fmt.Sprint(budget)}, sel...)...)
	if left := len(est.Estimates) - 2; !strings.Contains(run, fmt.Sprintf("left: %s not started within --max-tokens", nounCount(left, "page"))) || !strings.Contains(run, est.Estimates[2].Page) {
		t.Errorf("the output does not name the pages left:\n%s", run)
	}
	for _, e := range est.Estimates[:2] {
		if !strings.Contains(run, "updated  "+e.Page) {
			t.Errorf("the run did not update admitted page %s:\n%s", e.Page, run)
		}
	}
	calls := len(srv.Bodies()) - calls0
	if want := est.Estimates[0].Calls + est.Estimates[1].Calls; calls != want {
		t.Errorf("the run made %d calls; the two admitted pages' estimates say %d", calls, want)
	}
	var in int64
	line := run[strings.Index(run, "tokens: "):]
	if _, err := fmt.Sscanf(line, "tokens: %d input", &in); err != nil {
		t.Fatalf("no tokens line: %v\n%s", err, run)
	}
	guess := est.Estimates[0].Input + est.Estimates[1].Input
	t.Logf("estimated %d input tokens for two pages, used %d", guess, in)
	if ratio := float64(guess) / float64(in); ratio < 0.5 || ratio > 2 {
		t.Errorf("estimated input %d is not within 2× of the %d used", guess, in)
	}
	if head2 := headOf(t, dir); head2 != head && parentOf(t, dir, head2) != head {
		t.Fatal("not at most one commit")
	}
}
