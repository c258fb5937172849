package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
	"github.com/prose-store/prose/model/replay"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

var updateIngest = flag.Bool("update-ingest", false, "re-record the ingest and enrich recordings and goldens in testdata/")

const alertLiteral = "alert alert-{info|warning|success|error}"

// newIngestVault makes a vault with a fixed clock.
func newIngestVault(t *testing.T) string {
	t.Helper()
	t.Setenv("PROSE_NOW", "2026-01-31")
	dir := filepath.Join(t.TempDir(), "vault")
	mustProse(t, "init", dir)
	return dir
}

func headOf(t *testing.T, dir string) string {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := v.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func parentOf(t *testing.T, dir, rev string) string {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := v.Resolve(rev + "~1")
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func lastReceipt(t *testing.T, dir string) *receipt.Receipt {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.LastReceipt(wiki.Node)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readPageMeta(t *testing.T, dir, page string) wiki.Meta {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wiki.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := w.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	return p.Meta
}

// TestIngestFixturesThroughTheCLI is the README's first command: the
// example sources into a fresh vault with the offline engine, lint clean,
// a second ingest commits nothing, and enrich --all right after it (and
// again) commits nothing and stays lint clean.
func TestIngestFixturesThroughTheCLI(t *testing.T) {
	dir := newIngestVault(t)
	before := headOf(t, dir)
	out := mustProse(t, "--vault", dir, "ingest", "--dry-run", "../../fixtures/sources")
	if !strings.Contains(out, "plan for sources/deploy-guide.md") || !strings.Contains(out, "procedure") || headOf(t, dir) != before || lastReceipt(t, dir) != nil {
		t.Fatalf("--dry-run wrote something or printed no plan:\n%s", out)
	}
	out = mustProse(t, "--vault", dir, "ingest", "../../fixtures/sources")
	if !strings.Contains(out, "open "+filepath.Join(dir, "published/wiki/README.html")) {
		t.Errorf("ingest does not say where to open the wiki:\n%s", out)
	}
	head := headOf(t, dir)
	if head == before || parentOf(t, dir, head) != before {
		t.Fatalf("ingest made no commit, or more than one")
	}
	// Every page the engine made is linked from its source page: none is
	// found only through a folder index.
	if lint := mustProse(t, "--vault", dir, "wiki", "lint"); strings.Contains(lint, "orphan-page") {
		t.Errorf("pages only a folder index links to:\n%s", lint)
	}
	out = mustProse(t, "--vault", dir, "ingest", "../../fixtures/sources")
	if !strings.Contains(out, "skipped") || headOf(t, dir) != head {
		t.Fatalf("second ingest committed:\n%s", out)
	}
	if r := lastReceipt(t, dir); r.Status != receipt.Skipped {
		t.Fatalf("second ingest receipt %s", r.Status)
	}
	// enrich --all right after the ingest commits nothing (the ingest
	// left nothing undone), and neither does it run again.
	for i := 1; i <= 2; i++ {
		if out = mustProse(t, "--vault", dir, "enrich", "--all"); !strings.Contains(out, "wiki: skipped") || headOf(t, dir) != head {
			t.Fatalf("enrich --all number %d after the ingest changed pages:\n%s", i, out)
		}
	}
	mustProse(t, "--vault", dir, "wiki", "lint")
	if out, errs, code := prose(t, "--vault", dir, "wiki", "review", "list", "--json"); code != 0 || !strings.Contains(out, `"merge"`) {
		t.Fatalf("review list: %d %s %s", code, out, errs)
	}
	if _, _, code := prose(t, "--vault", dir, "wiki", "review", "resolve", "nosuch"); code != 1 {
		t.Errorf("resolving an unknown item exits %d", code)
	}
	var queue struct {
		Items []ingest.ReviewEntry `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "review", "list")), &queue); err != nil || len(queue.Items) == 0 {
		t.Fatalf("review list: %v %+v", err, queue)
	}
	beforeResolve := headOf(t, dir)
	mustProse(t, "--vault", dir, "wiki", "review", "resolve", queue.Items[0].ID)
	if parentOf(t, dir, headOf(t, dir)) != beforeResolve {
		t.Error("resolve is not one commit")
	}
	if out := mustProse(t, "--vault", dir, "wiki", "review", "list"); strings.Contains(out, queue.Items[0].ID) {
		t.Errorf("a resolved item is still listed as open:\n%s", out)
	}
	if _, _, code := prose(t, "--vault", dir, "wiki", "review", "resolve", queue.Items[0].ID); code != 1 {
		t.Error("resolving twice succeeded")
	}
	progs := mustProse(t, "programs", "list", "--json")
	for _, name := range []string{"ingest", "enrich", "search", "lint", "read", "tree"} {
		if !strings.Contains(progs, `"name": "`+name+`"`) {
			t.Errorf("prose programs list --json lacks %s", name)
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		st, err := exec.Command(git, "-C", dir, "status", "--porcelain").CombinedOutput()
		if err != nil || len(st) != 0 {
			t.Errorf("git status after ingest and enrich: %s %v", st, err)
		}
		if out, err := exec.Command(git, "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
			t.Errorf("git fsck --strict: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("git is needed in CI")
	}
}

// TestIngestMixedDirectory: a directory of every kind gives one commit,
// reports what it skipped, and a markdown diff (golden).
func TestIngestMixedDirectory(t *testing.T) {
	src := filepath.Join(t.TempDir(), "mixed")
	writeFiles(t, src, map[string]string{
		"caching.md":        "# Caching\n\nCaches keep answers close to the reader.\n\n- **TTL**: how long an entry lives in the cache.\n- **Eviction**: removing entries to make room.\n",
		"notes/standup.txt": "Standup notes\n\nWe agreed to freeze deploys on Fridays.\n\n1. Announce the freeze.\n2. Lock the pipeline.\n",
		"pager.html":        "<html><head><title>Pager</title><script>x()</script></head><body><nav>Home</nav><h1>Pager</h1><p>The pager wakes the on-call engineer.</p></body></html>",
		"chat.jsonl":        "{\"role\":\"user\",\"content\":\"What is a feature flag?\"}\n{\"role\":\"assistant\",\"content\":\"- **Feature flag**: a switch that turns code on without a deploy.\"}\n",
		"logo.png":          "\x89PNG",
		"broken.md":         "not \x00 text",
		".drafts/secret.md": "# Draft\n",
	})
	dir := newIngestVault(t)
	before := headOf(t, dir)
	out, errs, code := prose(t, "--vault", dir, "ingest", src)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "skipped mixed/logo.png") || !strings.Contains(errs, "skipped mixed/broken.md: not text") || strings.Contains(out+errs, "secret") {
		t.Errorf("skips not reported as they should be:\n%s", errs)
	}
	if parentOf(t, dir, "HEAD") != before {
		t.Fatal("more than one commit")
	}
	if !strings.Contains(out, "glossary/feature-flag.html") {
		t.Errorf("no concept page from the transcript's definition:\n%s", out)
	}
	diff := mustProse(t, "--vault", dir, "diff", "--format", "markdown")
	diff = strings.ReplaceAll(diff, before[:12], "BASE")
	diff = strings.ReplaceAll(diff, headOf(t, dir)[:12], "HEAD")
	golden := filepath.Join("testdata", "ingest-mixed-diff.md")
	if *updateIngest {
		if err := os.WriteFile(golden, []byte(diff), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestIngestMixedDirectory -update-ingest)", err)
	}
	if diff != string(want) {
		t.Errorf("diff differs from %s:\n%s", golden, diff)
	}
}

// TestIngestWithRecordedModel replays recorded exchanges (made with the
// offline engine and --record; re-record with -update-ingest): the prompts
// that reached the model hold the component-palette braces unchanged, the
// recorded tool calls create pages, write slots and set meta keys no
// schema declares, and ingest and enrich make one commit each.
// TestRecordedIngestWritesEachSourcesOwnPage: two sources of one run
// whose pages the layout puts at one path (docs/runbook.md and
// docs/runbook.txt: the second gets docs/runbook-txt.html) are planned by
// conversations against the base state, each of which places its source
// page at docs/runbook.html. Recorded (so the offline engine works in two
// phases, as any provider does), the run must publish the tree the
// one-phase run does: the second source's kept tool calls write its own
// page, not the first's; and a term two sources define keeps what both
// say (the later is generated again against the merged pages).
func TestRecordedIngestWritesEachSourcesOwnPage(t *testing.T) {
	src := filepath.Join(t.TempDir(), "docs")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "runbook.md"), []byte("# Runbook\n\nRestart the service with `svc restart`.\n\n## Checks\n\nLook at the dashboard first.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "runbook.txt"), []byte("Runbook for the batch jobs\n\nThe batch queue drains nightly. Use qctl drain to drain it by hand.\n\nGLOSSARY\n\nDrain window: the hour in which the batch queue is emptied.\nBatch queue: the jobs waiting for the nightly run.\n"), 0o644)
	// Two sources defining one term: its one page says what each says.
	os.WriteFile(filepath.Join(src, "alpha.md"), []byte("# Alpha guide\n\n## Glossary\n\n- **Queue depth**: the number of jobs waiting in the batch queue.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "beta.md"), []byte("# Beta guide\n\n## Glossary\n\n- **Queue depth**: how many requests wait before a worker takes them.\n"), 0o644)
	published := func(dir string) string {
		out, err := exec.Command(needGit(t), "-C", dir, "rev-parse", "HEAD:published").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	direct := newIngestVault(t)
	mustProse(t, "--vault", direct, "ingest", src)
	recorded := newIngestVault(t)
	mustProse(t, "--vault", recorded, "ingest", "--record", filepath.Join(t.TempDir(), "rec.json"), src)
	for page, own := range map[string]string{"docs/runbook.html": "docs/runbook.md", "docs/runbook-txt.html": "docs/runbook.txt"} {
		body, err := os.ReadFile(filepath.Join(recorded, "published", "wiki", page))
		if err != nil {
			t.Fatal(err)
		}
		cite := regexp.MustCompile(`(?s)id="slot-citation">(.*?)</section>`).FindStringSubmatch(string(body))
		if cite == nil || !strings.Contains(cite[1], "<code>"+own+"</code>") {
			t.Errorf("recorded run: %s does not cite its own source %s: %q", page, own, cite)
		}
	}
	// The term runbook.txt defines links to runbook.txt's page, where
	// the merge put it, not to the path its conversation planned.
	drain, err := os.ReadFile(filepath.Join(recorded, "published", "wiki", "glossary", "drain-window.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(drain), `href="../docs/runbook-txt.html"`) || strings.Contains(string(drain), `href="../docs/runbook.html"`) {
		t.Errorf("recorded run: the term runbook.txt defines does not link to runbook.txt's page:\n%s", drain)
	}
	term, err := os.ReadFile(filepath.Join(recorded, "published", "wiki", "glossary", "queue-depth.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, says := range []string{"jobs waiting in the batch queue", "requests wait before a worker"} {
		if !strings.Contains(string(term), says) {
			t.Errorf("recorded run: the term page lost %q (one source's writes replaced the other's)", says)
		}
	}
	if a, b := published(direct), published(recorded); a != b {
		t.Errorf("the recorded run published tree %s; the one-phase run %s", b, a)
	}
}

// TestARecordingOfALongSourceReplays: the offline engine is shown a long
// source whole; a replay of its recording builds the prompts it built
// (the recorded model's budget and quoting, not a provider's outline and
// parts), so the recording replays and publishes the recorded tree.
func TestARecordingOfALongSourceReplays(t *testing.T) {
	src := filepath.Join(t.TempDir(), "manual")
	os.MkdirAll(src, 0o755)
	var b strings.Builder
	b.WriteString("# Operations manual\n\n")
	for i := 0; b.Len() < 300<<10; i++ {
		fmt.Fprintf(&b, "## Procedure %d\n\nWhen queue %d backs up, drain it with `qctl drain %d` and watch the depth fall before paging anyone.\n\n", i, i, i)
	}
	os.WriteFile(filepath.Join(src, "manual.md"), []byte(b.String()), 0o644)
	rec := filepath.Join(t.TempDir(), "rec.json")
	recorded := newIngestVault(t)
	mustProse(t, "--vault", recorded, "ingest", "--record", rec, src)
	replayed := newIngestVault(t)
	mustProse(t, "--vault", replayed, "ingest", "--model", "replay:"+rec, src)
	published := func(dir string) string {
		out, err := exec.Command(needGit(t), "-C", dir, "rev-parse", "HEAD:published").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if a, b := published(recorded), published(replayed); a != b {
		t.Errorf("the replay published tree %s; the recorded run %s", b, a)
	}
}

func TestIngestWithRecordedModel(t *testing.T) {
	recIngest, _ := filepath.Abs(filepath.Join("testdata", "replay-ingest.json"))
	recEnrich, _ := filepath.Abs(filepath.Join("testdata", "replay-enrich.json"))
	if *updateIngest {
		dir := newIngestVault(t)
		os.Remove(recIngest)
		os.Remove(recEnrich)
		mustProse(t, "--vault", dir, "ingest", "--model", "offline", "--record", recIngest, "../../fixtures/sources")
		personsPage(t, dir)
		mustProse(t, "--vault", dir, "enrich", "--model", "offline", "--record", recEnrich, "glossary/rollback-notes")
	}
	dir := newIngestVault(t)
	before := headOf(t, dir)
	mustProse(t, "--vault", dir, "ingest", "--model", "replay:"+recIngest, "../../fixtures/sources")
	afterIngest := headOf(t, dir)
	if parentOf(t, dir, afterIngest) != before {
		t.Fatal("ingest with the recorded model did not make exactly one commit")
	}
	r := lastReceipt(t, dir)
	if r.Cost.Provider != "replay" || r.Cost.Model != "replay-ingest.json" {
		t.Errorf("receipt cost %+v", r.Cost)
	}
	// The ingest left nothing undone on its own pages: enrich a page a
	// person made with empty slots.
	personsPage(t, dir)
	afterIngest = headOf(t, dir)
	mustProse(t, "--vault", dir, "enrich", "--model", "replay:"+recEnrich, "glossary/rollback-notes")
	if parentOf(t, dir, headOf(t, dir)) != afterIngest {
		t.Fatal("enrich with the recorded model did not make exactly one commit")
	}

	sawMeta := false
	for _, rec := range []string{recIngest, recEnrich} {
		f, err := replay.Load(rec)
		if err != nil {
			t.Fatal(err)
		}
		prompts := 0
		for _, ex := range f.Exchanges {
			for _, m := range ex.Request.Messages {
				// A prompt's fixed part travels as the system text.
				text := ex.Request.System + "\n" + m.Text
				if strings.Contains(text, "You write pages") || strings.Contains(text, "You improve one page") {
					prompts++
					if !strings.Contains(text, alertLiteral) {
						t.Errorf("%s: a prompt lost %q", filepath.Base(rec), alertLiteral)
					}
				}
			}
			for _, c := range ex.Response.ToolCalls {
				if c.Name == "set_meta" && strings.Contains(c.Arguments, `"source_kind"`) {
					sawMeta = true
				}
			}
		}
		if prompts == 0 {
			t.Errorf("%s holds no generation or enrichment prompt", rec)
		}
	}
	if !sawMeta {
		t.Error("no recorded set_meta with an undeclared key")
	}
	if meta := readPageMeta(t, dir, "sources/deploy-guide/deploy-steps"); meta["source_kind"] != "markdown" || len(meta.Strings("sources")) != 1 {
		t.Errorf("meta of a recorded page: %v", meta)
	}
}

// personsPage makes the page a person writes beside the ingested
// fixtures: a concept with a body and nothing else, for enrich to fill.
func personsPage(t *testing.T, dir string) {
	t.Helper()
	mustProse(t, "--vault", dir, "wiki", "new", "glossary/rollback-notes", "--template", "concept", "--title", "Rollback notes")
	mustProse(t, "--vault", dir, "wiki", "write-slot", "glossary/rollback-notes", "body", "--content", "<p>We rolled back twice in March. Both times the canary caught it.</p>")
}

// scriptedIngest is what a fake provider answers: a plan, then tool calls
// that create a page, write its slots and set undeclared meta, then a
// final answer with a review item.
func scriptedIngest() []fakeserver.Reply {
	planJSON := `{"pages":[{"action":"create","path":"ops/release-train.html","template":"concept","title":"Release train"}]}`
	return []fakeserver.Reply{
		{Turn: &fakeserver.Turn{Text: "```json\n" + planJSON + "\n```", Usage: modelUsage(1200, 200, 80)}},
		{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{
			{ID: "c1", Name: "new_page", Args: `{"path":"ops/release-train.html","template":"concept","title":"Release train"}`},
			{ID: "c2", Name: "write_slot", Args: `{"path":"ops/release-train.html","slot":"summary","html":"<p>A fixed weekly schedule for shipping.</p>"}`},
			{ID: "c3", Name: "write_slot", Args: `{"path":"ops/release-train.html","slot":"body","html":"<div class=\"alert alert-info\"><p>Trains leave on Tuesdays.</p></div><script>alert(1)</script>"}`},
			{ID: "c4", Name: "set_meta", Args: `{"path":"ops/release-train.html","updates":{"owner":"release-team","reviewed":false,"aliases":["train"]}}`},
		}, Usage: modelUsage(1500, 1000, 300)}},
		{Turn: &fakeserver.Turn{Text: "Done. <<<REVIEW_QUEUE>>>[{\"page\":\"ops/release-train.html\",\"kind\":\"check\",\"detail\":\"Confirm the weekday.\"}]<<<END>>>", Usage: modelUsage(1700, 1500, 20)}},
	}
}

func TestIngestWithFakeProviders(t *testing.T) {
	for _, tc := range []struct{ api, spec string }{
		{fakeserver.Chat, "openai-chat:fake-model"},
		{fakeserver.Anthropic, "anthropic:fake-model"},
	} {
		t.Run(tc.api, func(t *testing.T) {
			srv := fakeserver.New(t, tc.api, scriptedIngest()...)
			env := srv.Env()
			for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"} {
				t.Setenv(k, env(k))
			}
			dir := newIngestVault(t)
			src := filepath.Join(t.TempDir(), "train.md")
			if err := os.WriteFile(src, []byte("# Release train\n\nWe ship every Tuesday. Deploy token: ghp_abcdefghijklmnopqrstuvwxyz0123\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := headOf(t, dir)
			out, errs, code := prose(t, "--vault", dir, "--json", "ingest", "--model", tc.spec, src)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errs)
			}
			if parentOf(t, dir, headOf(t, dir)) != before {
				t.Fatal("not exactly one commit")
			}
			var doc struct {
				Created []string              `json:"created"`
				Review  []ingest.ReviewEntry  `json:"review"`
				Sources []ingest.SourceResult `json:"sources"`
				Receipt map[string]any        `json:"receipt"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			// The model's page, and the source page prose renders itself
			// (the scripted plan has none), placed by the layout: a file named
			// on its own goes to notes/.
			if strings.Join(doc.Created, " ") != "ops/release-train.html notes/train.html" || len(doc.Review) != 1 || doc.Sources[0].Redactions != 1 {
				t.Errorf("result %+v", doc)
			}
			r := lastReceipt(t, dir)
			provider, _, _ := strings.Cut(tc.spec, ":")
			// fresh = uncached input + output over the three calls; reused = cached input.
			if r.Cost.Provider != provider || r.Cost.Model != "fake-model" || r.Cost.Tokens.Fresh != (1000+500+200)+(80+300+20) || r.Cost.Tokens.Reused != 200+1000+1500 {
				t.Errorf("cost %+v", r.Cost)
			}
			meta := readPageMeta(t, dir, "ops/release-train")
			if meta["owner"] != "release-team" || meta["reviewed"] != false {
				t.Errorf("undeclared meta not set: %v", meta)
			}
			// What reached the provider: the braces intact, no secret, the
			// set_meta tool sent non-strict with its mapping open.
			bodies := srv.Bodies()
			all := string(bodies[1])
			if !strings.Contains(all, "alert-{info|warning|success|error}") {
				t.Error("the generation prompt lost the palette braces")
			}
			for _, b := range bodies {
				if strings.Contains(string(b), "ghp_abcdefghij") {
					t.Fatal("a secret from the source reached the provider")
				}
			}
			if !strings.Contains(all, `"set_meta"`) {
				t.Error("the set_meta tool was not offered")
			}
			// Nothing written holds the key or the source's secret.
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err != nil || fi.IsDir() || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)+"objects") {
					return nil
				}
				data, _ := os.ReadFile(p)
				if strings.Contains(string(data), fakeserver.Key) || strings.Contains(string(data), "ghp_abcdefghij") {
					t.Errorf("%s holds a secret", p)
				}
				return nil
			})
			if h, err := os.ReadFile(filepath.Join(dir, "published", "wiki", "ops", "release-train.html")); err != nil || strings.Contains(string(h), "<script>alert") {
				t.Errorf("page not written or not sanitized: %v", err)
			}
		})
	}
}

// TestIngestFailureThroughTheCLI: the provider fails mid-run; the command
// exits 1 saying what failed and what to do, the branch does not move,
// and the ledger holds a failed receipt without the key.
func TestIngestFailureThroughTheCLI(t *testing.T) {
	replies := scriptedIngest()[:1]
	replies = append(replies, fakeserver.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-test-SECRET-0123456789abcdef","type":"invalid_request_error"}}`})
	srv := fakeserver.New(t, fakeserver.Chat, replies...)
	env := srv.Env()
	t.Setenv("OPENAI_BASE_URL", env("OPENAI_BASE_URL"))
	t.Setenv("OPENAI_API_KEY", env("OPENAI_API_KEY"))
	dir := newIngestVault(t)
	before := headOf(t, dir)
	out, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", "../../fixtures/sources/deploy-guide.md")
	if code != 1 || !strings.Contains(errs, "generation of deploy-guide.md") || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(errs, fakeserver.Key) {
		t.Fatal("the key reached the error message")
	}
	if headOf(t, dir) != before {
		t.Fatal("the branch moved")
	}
	r := lastReceipt(t, dir)
	reason, _ := r.SemanticDiff["failure_reason"].(string)
	if r.Status != receipt.Failed || reason == "" || strings.Contains(reason, fakeserver.Key) {
		t.Fatalf("receipt %s %q", r.Status, reason)
	}
}

// modelUsage is a call's usage: input tokens (cached among them) and
// output tokens.
func modelUsage(input, cached, output int64) model.Usage {
	return model.Usage{Input: input, CachedInput: cached, Output: output}
}

// TestIngestKilledLeavesBranch stops a real prose process in the middle of
// an ingest (while it waits for the model during generation), first with
// SIGINT (exit 130, "as before") and then with SIGKILL: each time the
// branch, the git index and the working tree are as before, and the next
// commands find a sound vault.
func TestIngestKilledLeavesBranch(t *testing.T) {
	bin := buildProse(t)
	dir := newIngestVault(t)
	// A wiki already there, so there is something to lose.
	mustProse(t, "--vault", dir, "ingest", "../../fixtures/sources/deploy-guide.md")
	for _, sig := range []os.Signal{os.Interrupt, os.Kill} {
		arrived := make(chan struct{})
		replies := scriptedIngest()[:1]
		replies = append(replies, fakeserver.Reply{Hang: true, Arrived: func() { close(arrived) }})
		srv := fakeserver.New(t, fakeserver.Chat, replies...)
		env := srv.Env()
		before := snapshotVault(t, dir)
		cmd := exec.Command(bin, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", "../../fixtures/sources/incident-glossary.html")
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+env("OPENAI_BASE_URL"), "OPENAI_API_KEY="+env("OPENAI_API_KEY"), "PROSE_NOW=2026-01-31")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		<-arrived // the process is inside generation, waiting for the model
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if sig == os.Interrupt {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "stopped at a safe point") {
				t.Errorf("after SIGINT: %v\n%s", err, stderr.String())
			}
		}
		after := snapshotVault(t, dir)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s changed after %v", k, sig)
			}
		}
		if len(after) != len(before) {
			t.Errorf("files appeared after %v: %d → %d", sig, len(before), len(after))
		}
		mustProse(t, "--vault", dir, "fsck")
		mustProse(t, "--vault", dir, "wiki", "lint")
	}
}

// snapshotVault reads the branch ref, the git index and every working-tree
// file outside .git and .prose.
func snapshotVault(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{".git/refs/heads/main", ".git/index"} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(data)
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() && (rel == ".git" || rel == ".prose") {
			return filepath.SkipDir
		}
		if !fi.IsDir() {
			data, _ := os.ReadFile(p)
			out[rel] = string(data)
		}
		return nil
	})
	return out
}

// TestIngestStdin: "-" reads standard input; --name titles it.
func TestIngestStdin(t *testing.T) {
	dir := newIngestVault(t)
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("We rotate the on-call schedule every Monday.\n\n1. Swap the pager.\n2. Update the calendar.\n")
	f.Seek(0, 0)
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	out := mustProse(t, "--vault", dir, "ingest", "-", "--name", "Rotation notes")
	if !strings.Contains(out, "ingested  Rotation notes (text)") || !strings.Contains(out, "notes/rotation-notes.html") {
		t.Fatalf("stdin ingest:\n%s", out)
	}
	if _, _, code := prose(t, "--vault", dir, "ingest"); code != 2 {
		t.Errorf("ingest without a source exits %d, want 2", code)
	}
	if _, errs, code := prose(t, "--vault", dir, "ingest", filepath.Join(dir, "missing.md")); code != 2 || !strings.Contains(errs, "no such file") {
		t.Errorf("a missing source: exit %d %s", code, errs)
	}
}

// TestIngestKeepsWhatAPersonWrote: through the CLI, a slot rewritten with
// wiki write-slot and another edited in the page file and taken in with
// wiki commit both survive an ingest of the changed source; the review
// queue names each page and slot with the text prose would have written,
// and review take writes it. A source that changes on a page two sources
// share replaces its paragraph there, once.
func TestIngestKeepsWhatAPersonWrote(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	deploy := "# Deploying the service\n\nWe deploy every Tuesday.\n\n## Glossary\n\nCanary: a small slice of production traffic that sees a release first.\nRollback: returning production to the previous release.\n"
	release := "# Release handbook\n\nReleases go out weekly.\n\n## Glossary\n\nCanary: the first hosts that take a new build.\n"
	writeFiles(t, src, map[string]string{"deploy.md": deploy, "release.md": release})
	mustProse(t, "--vault", dir, "ingest", src)
	mustProse(t, "--vault", dir, "wiki", "write-slot", "canary", "summary", "--content", "<p>Ours.</p>")
	file := filepath.Join(dir, "published", "wiki", "glossary", "rollback.html")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := "<p>Returning production to the previous release.</p><!-- /prose:slot id=\"summary\" -->"
	if !strings.Contains(string(data), old) {
		t.Fatalf("rollback page:\n%s", data)
	}
	os.WriteFile(file, []byte(strings.Replace(string(data), old, "<p>Edited in the file.</p><!-- /prose:slot id=\"summary\" -->", 1)), 0o644)
	mustProse(t, "--vault", dir, "wiki", "commit")

	writeFiles(t, src, map[string]string{
		"deploy.md":  strings.NewReplacer("production traffic", "live traffic", "returning production", "returning users").Replace(deploy),
		"release.md": strings.Replace(release, "first hosts", "first servers", 1),
	})
	mustProse(t, "--vault", dir, "ingest", src)
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "canary", "summary"); got != "<p>Ours.</p>" {
		t.Fatalf("canary summary written over: %q", got)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "rollback", "summary"); got != "<p>Edited in the file.</p>" {
		t.Fatalf("rollback summary written over: %q", got)
	}
	body := mustProse(t, "--vault", dir, "wiki", "slot", "canary", "body")
	if strings.Count(body, "Release handbook") != 1 || !strings.Contains(body, "first servers") || strings.Contains(body, "first hosts") {
		t.Fatalf("canary body:\n%s", body)
	}
	var q struct {
		Items []ingest.ReviewEntry `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "review", "list")), &q); err != nil {
		t.Fatal(err)
	}
	kept := map[string]ingest.ReviewEntry{}
	for _, it := range q.Items {
		if it.Kind == ingest.ReviewKept {
			kept[it.Page+" "+it.Slot] = it
		}
	}
	it, ok := kept["glossary/rollback.html summary"]
	if len(kept) != 2 || !ok || !strings.Contains(it.Proposed, "Returning users") || !strings.Contains(kept["glossary/canary.html summary"].Proposed, "live traffic") {
		t.Fatalf("kept-edit items: %+v", q.Items)
	}
	mustProse(t, "--vault", dir, "wiki", "review", "take", it.ID)
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "rollback", "summary"); got != it.Proposed {
		t.Fatalf("after review take: %q, want %q", got, it.Proposed)
	}
	if _, errs, code := prose(t, "--vault", dir, "wiki", "review", "take", it.ID); code != 1 || !strings.Contains(errs, "resolved") {
		t.Fatalf("take of a resolved item: exit %d %q", code, errs)
	}
	cleanAndFsck(t, dir)
}

// TestIngestCountsFilesThatAreNotSources: a manual's folder of images and
// stylesheets is summed up in one line of counts by extension, while a
// file that is a surprise (unreadable as text) is still named.
func TestIngestCountsFilesThatAreNotSources(t *testing.T) {
	src := filepath.Join(t.TempDir(), "manual")
	files := map[string]string{
		"index.html": "<html><head><title>Manual</title></head><body><h1>Manual</h1><p>The manual starts here.</p></body></html>",
		"style.css":  "body{}",
		"broken.md":  "not \x00 text",
	}
	for i := 0; i < 6; i++ {
		files[fmt.Sprintf("images/shot-%d.png", i)] = "\x89PNG"
	}
	writeFiles(t, src, files)
	dir := newIngestVault(t)
	_, errs, code := prose(t, "--vault", dir, "ingest", src)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "skipped 7 files that are not sources (6 .png, 1 .css)") {
		t.Errorf("files that are not sources are not counted in one line:\n%s", errs)
	}
	if strings.Count(errs, "shot-") > 1 {
		t.Errorf("each image is named:\n%s", errs)
	}
	if !strings.Contains(errs, "skipped manual/broken.md: not text") {
		t.Errorf("a file that does not read is not named:\n%s", errs)
	}
}

// TestIngestSourceChangedDuringTheRun: the run lets go of a source's
// bytes once it is parsed and reads the file again when its commit
// stores it; a source changed or moved while the model was working on it
// (its pages are of the bytes read first) fails the run at the commit,
// exit 1, naming the source and what to do, and nothing is written.
func TestIngestSourceChangedDuringTheRun(t *testing.T) {
	for _, tc := range []struct {
		name, says string
		change     func(src string)
	}{
		{"changed", "train.md changed while it was ingested", func(src string) {
			os.WriteFile(src, []byte("# Release train\n\nWe ship every Wednesday now.\n"), 0o644)
		}},
		{"moved", "train.md could not be read again to be stored", func(src string) { os.Rename(src, src+".moved") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "train.md")
			if err := os.WriteFile(src, []byte("# Release train\n\nWe ship every Tuesday.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			replies := scriptedIngest()
			replies[1].Arrived = func() { tc.change(src) } // during generation
			srv := fakeserver.New(t, fakeserver.Chat, replies...)
			env := srv.Env()
			t.Setenv("OPENAI_BASE_URL", env("OPENAI_BASE_URL"))
			t.Setenv("OPENAI_API_KEY", env("OPENAI_API_KEY"))
			dir := newIngestVault(t)
			before := snapshotVault(t, dir)
			out, errs, code := prose(t, "--vault", dir, "ingest", "--model", "openai-chat:fake-model", src)
			if code != 1 || !strings.Contains(errs, tc.says) || !strings.Contains(errs, "run the ingest again") || !strings.Contains(errs, "nothing was written") {
				t.Fatalf("exit %d, want 1 saying %q:\n%s%s", code, tc.says, out, errs)
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
		})
	}
}

// TestIngestFollowsRedirectPages: a generator's pages that only redirect
// (rustdoc leaves one per re-exported item) make no page — counted in one
// line when many — and a link to one leads to the page of its target.
func TestIngestFollowsRedirectPages(t *testing.T) {
	src := filepath.Join(t.TempDir(), "api")
	redirect := func(to string) string {
		return `<html><head><meta http-equiv="refresh" content="0;URL=` + to + `"><title>Redirection</title></head><body><p>Redirecting to <a href="` + to + `">` + to + `</a>...</p></body></html>`
	}
	files := map[string]string{
		"index.html":        `<html><head><title>API</title></head><body><h1>API</h1><p>Start with <a href="old/thing.html">the thing</a>.</p></body></html>`,
		"struct.Thing.html": `<html><head><title>Thing</title></head><body><h1>Thing</h1><p>A thing holds things.</p></body></html>`,
	}
	for i := 0; i < 7; i++ {
		files[fmt.Sprintf("old/r%d.html", i)] = redirect("../struct.Thing.html")
	}
	files["old/thing.html"] = redirect("../struct.Thing.html")
	writeFiles(t, src, files)
	dir := newIngestVault(t)
	_, errs, code := prose(t, "--vault", dir, "ingest", src)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "skipped 8 pages that only redirect to another") {
		t.Errorf("the redirect pages are not counted in one line:\n%s", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "published", "wiki", "api", "old")); !os.IsNotExist(err) {
		t.Errorf("redirect pages became pages (%v)", err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "published", "wiki", "api", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<a href="struct-thing.html">the thing</a>`) {
		t.Errorf("the link to a redirect does not lead to its target:\n%s", page)
	}
}
