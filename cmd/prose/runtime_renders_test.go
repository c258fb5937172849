package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
)

// renderVault makes a vault holding contracts (file name → text) and
// extra project files, compiled and activated.
func renderVault(t *testing.T, contracts, files map[string]string) string {
	t.Helper()
	needGit(t)
	v := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", v)
	for name, text := range contracts {
		files["src/"+name] = text
	}
	for p, c := range files {
		full := filepath.Join(v, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	return v
}

const feedGateway = "---\nname: feed\nkind: gateway\n---\n\n# Feed\n\n### Continuity: external-driven\n\n### Maintains\n\nThe latest payload: `items`.\n"

type shownReceipt struct {
	Status string `json:"status"`
	Cost   struct {
		Provider, Model string
		Tokens          struct{ Fresh, Reused int64 }
	} `json:"cost"`
	SemanticDiff map[string]any `json:"semantic_diff"`
}

func nodeReceipt(t *testing.T, v, node string) shownReceipt {
	t.Helper()
	var r shownReceipt
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", v, "receipts", "show", node)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReplayRender: render: replay serves the first recorded render whose
// match holds against the inputs; a recorded error and an input no render
// matches are failures; the recorded cost is the receipt's.
func TestReplayRender(t *testing.T) {
	digest := "---\nname: digest\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6VM\n---\n\n# Digest\n\n### Requires\n\n- `items`: from feed\n\n" +
		"### Maintains\n\n- `digest`: the items, summarized\n- postcondition: `digest.count` is required.\n\n### Runtime\n\n- render: replay\n- recording: demo/digest.json\n"
	rec := `{"format": "prose.render-recording/1", "renders": [
  {"match": {"feed/items.json": "[1,2]"}, "files": {"digest.json": "{\"count\": 2}\n", "notes/why.md": "two items\n"},
   "cost": {"provider": "anthropic", "model": "claude-sonnet-4-5", "tokens": {"fresh": 120, "reused": 30}}},
  {"match": {"feed/items.json": "[]"}, "error": "nothing to digest"},
  {"match": {"feed/items.json": "[3]"}, "files": {"digest.json": "{\"total\": 3}\n"}}
]}`
	v := renderVault(t, map[string]string{"feed.prose.md": feedGateway, "digest.prose.md": digest}, map[string]string{"demo/digest.json": rec})
	payload := filepath.Join(t.TempDir(), "p")
	trigger := func(items string) (string, int) {
		writeFiles(t, payload, map[string]string{"items.json": items})
		out, _, code := prose(t, "--vault", v, "trigger", "feed", payload)
		return out, code
	}
	out, code := trigger("[1,2]")
	if code != 0 || !strings.Contains(out, "digest  rendered   cold start: no receipt yet; moved @atomic") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/digest/notes/why.md")); string(got) != "two items\n" {
		t.Fatalf("published %q", got)
	}
	r := nodeReceipt(t, v, "digest")
	if r.Cost.Provider != "replay" || r.Cost.Model != "anthropic:claude-sonnet-4-5" || r.Cost.Tokens.Fresh != 120 || r.Cost.Tokens.Reused != 30 {
		t.Fatalf("cost %+v", r.Cost)
	}
	out, code = trigger("[]")
	if code != 1 || !strings.Contains(out, "digest  failed     input moved: feed.@atomic; failed: nothing to digest") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	out, code = trigger("[9]")
	if code != 1 || !strings.Contains(out, "failed: no recorded render in digest.json matches these inputs (3 recorded)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// A recorded output that breaks a checked postcondition fails too.
	out, code = trigger("[3]")
	if code != 1 || !strings.Contains(out, "postcondition broken: `digest.count` is required (digest.count is missing)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/digest/digest.json")); string(got) != "{\"count\": 2}\n" {
		t.Fatalf("the prior truth moved: %q", got)
	}
	// A malformed recording is a failure naming the file, not a crash.
	os.WriteFile(filepath.Join(v, "demo/digest.json"), []byte(`{"format": "prose.render-recording/1", "renders": [{"files": {"../x": "y"}}]}`), 0o644)
	out, code = trigger("[1,2]")
	if code != 1 || !strings.Contains(out, `file "../x" is not a path inside the node's world-model`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestModelRender: render: model puts the contract and the inputs in the
// prompt, lets the model write its world-model through tools confined to
// the output, and records provider, model and tokens in the receipt.
func TestModelRender(t *testing.T) {
	brief := "---\nname: brief\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6VN\n---\n\n# Brief\n\n### Requires\n\n- `items`: from feed\n\n" +
		"### Maintains\n\n- `brief`: one line per item; the BRIEF-MARKER contract text\n\n### Runtime\n\n- render: model\n- model: openai-chat:fake-7b\n"
	v := renderVault(t, map[string]string{"feed.prose.md": feedGateway, "brief.prose.md": brief}, map[string]string{})
	srv := fakeserver.New(t, fakeserver.Chat,
		fakeserver.Reply{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{
			{ID: "c1", Name: "read_input", Args: `{"path":"feed/items.json"}`},
			{ID: "c2", Name: "write_output", Args: `{"path":"brief.json","content":"{\"lines\":2}\n"}`},
			{ID: "c3", Name: "write_output", Args: `{"path":"../escape.txt","content":"x"}`},
			{ID: "c4", Name: "read_input", Args: `{"path":"../../etc/passwd"}`},
		}, Usage: model.Usage{Input: 400, CachedInput: 100, Output: 50}}},
		fakeserver.Reply{Turn: &fakeserver.Turn{Text: "wrote the brief", Usage: model.Usage{Input: 500, CachedInput: 300, Output: 10}}},
	)
	env := srv.Env()
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, env(k))
	}
	payload := filepath.Join(t.TempDir(), "p")
	writeFiles(t, payload, map[string]string{"items.json": `["ITEM-ONE","ITEM-TWO"]`})
	out, errs, code := prose(t, "--vault", v, "trigger", "feed", payload)
	if code != 0 || !strings.Contains(out, "brief  rendered   cold start: no receipt yet; moved @atomic") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/brief/brief.json")); string(got) != "{\"lines\":2}\n" {
		t.Fatalf("published %q", got)
	}
	r := nodeReceipt(t, v, "brief")
	if r.Cost.Provider != "openai-chat" || r.Cost.Model != "fake-7b" || r.Cost.Tokens.Fresh != 300+50+200+10 || r.Cost.Tokens.Reused != 400 {
		t.Fatalf("cost %+v", r.Cost)
	}
	bodies := srv.Bodies()
	if len(bodies) != 2 || !strings.Contains(string(bodies[0]), "BRIEF-MARKER") || !strings.Contains(string(bodies[0]), "ITEM-ONE") {
		t.Fatalf("the prompt lacks the contract or the inputs: %s", bodies[0])
	}
	if res, _ := srv.Result("c1"); res.IsError || !strings.Contains(res.Content, "ITEM-TWO") {
		t.Fatalf("read_input: %+v", res)
	}
	for _, id := range []string{"c3", "c4"} {
		if res, _ := srv.Result(id); !res.IsError || !strings.Contains(res.Content, "not a relative path inside the directory") {
			t.Fatalf("%s: %+v", id, res)
		}
	}
	if strings.Contains(strings.Join(srv.Auth(), ""), "") && strings.Contains(string(bodies[0]), fakeserver.Key) {
		t.Fatal("the key reached the prompt")
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "prose-render-*", "escape.txt"))
	if _, err := os.Stat(filepath.Join(v, "published", "escape.txt")); err == nil || len(matches) > 0 {
		t.Fatal("a write escaped PROSE_OUT")
	}
	// A model that gives up fails the render with its reason.
	srv2 := fakeserver.New(t, fakeserver.Chat,
		fakeserver.Calls(fakeserver.Call{ID: "f1", Name: "fail", Args: `{"reason":"the feed is unreadable"}`}),
		fakeserver.Text("gave up"))
	t.Setenv("OPENAI_BASE_URL", srv2.Env()("OPENAI_BASE_URL"))
	writeFiles(t, payload, map[string]string{"items.json": `["ITEM-THREE"]`})
	out, _, code = prose(t, "--vault", v, "trigger", "feed", payload)
	if code != 1 || !strings.Contains(out, "failed: the render wrote __error.md: the feed is unreadable") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "published/brief/brief.json")); string(got) != "{\"lines\":2}\n" {
		t.Fatalf("the prior truth moved: %q", got)
	}
}

// TestRuntimeKeysChecked: an unknown ### Runtime key is a warning naming
// it, a render kind prose does not have is an error.
func TestRuntimeKeysChecked(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.prose.md"), []byte("---\nname: a\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6VP\n---\n\n### Maintains\n\n- `x`: x\n\n"+
		"### Runtime\n\n- render: replay\n- recording: r.json\n- rendr: model\n"), 0o644)
	out, errs, code := prose(t, "check", dir)
	if code != 0 || !strings.Contains(out+errs, `runtime_key_unknown: a: ### Runtime key "rendr" is not one prose reads`) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	os.WriteFile(filepath.Join(dir, "a.prose.md"), []byte("---\nname: a\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6VP\n---\n\n### Maintains\n\n- `x`: x\n\n"+
		"### Runtime\n\n- render: modle\n"), 0o644)
	out, errs, code = prose(t, "check", dir)
	if code != 1 || !strings.Contains(out+errs, `runtime_value_invalid: a: ### Runtime: render "modle" is not command, model or replay`) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// TestReceiptsCost: prose receipts cost sums renders, skips, failures and
// tokens per node and per run (an outside wake and what it caused), with
// the skip ratio.
func TestReceiptsCost(t *testing.T) {
	digest := "---\nname: digest\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6VM\n---\n\n# Digest\n\n### Requires\n\n- `items`: from feed\n\n" +
		"### Maintains\n\n- `digest`: the items, summarized\n\n### Runtime\n\n- render: replay\n"
	rec := `{"format": "prose.render-recording/1", "renders": [
  {"match": {"feed/items.json": "[1,2]"}, "files": {"digest.json": "{\"count\": 2}\n"},
   "cost": {"provider": "anthropic", "model": "claude-sonnet-4-5", "tokens": {"fresh": 120, "reused": 30}}},
  {"match": {"feed/items.json": "[]"}, "error": "nothing to digest", "cost": {"provider": "anthropic", "model": "claude-sonnet-4-5", "tokens": {"fresh": 7, "reused": 0}}}
]}`
	v := renderVault(t, map[string]string{"feed.prose.md": feedGateway, "digest.prose.md": digest}, map[string]string{"recordings/digest.json": rec})
	payload := filepath.Join(t.TempDir(), "p")
	for _, step := range []struct {
		items string
		args  []string
	}{{"[1,2]", nil}, {"[1,2]", nil}, {"", []string{"run", "digest"}}, {"[]", nil}} {
		args := step.args
		if args == nil {
			writeFiles(t, payload, map[string]string{"items.json": step.items})
			args = []string{"trigger", "feed", payload}
		}
		prose(t, append([]string{"--vault", v}, args...)...)
	}
	var doc struct {
		Nodes []struct {
			Node                     string
			Renders, Skips, Failures int
			Fresh                    int64   `json:"fresh_tokens"`
			Reused                   int64   `json:"reused_tokens"`
			SkipRatio                float64 `json:"skip_ratio"`
		}
		Runs []struct {
			StartedBy                []string `json:"started_by"`
			Renders, Skips, Failures int
			Fresh                    int64 `json:"fresh_tokens"`
		}
		Total struct {
			Receipts, Renders, Skips, Failures int
			Fresh                              int64 `json:"fresh_tokens"`
		}
	}
	out := mustProse(t, "--vault", v, "--json", "receipts", "cost")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Nodes) != 2 {
		t.Fatalf("%s", out)
	}
	d, f := doc.Nodes[0], doc.Nodes[1]
	if d.Node != "digest" || d.Renders != 1 || d.Skips != 1 || d.Failures != 1 || d.Fresh != 127 || d.Reused != 30 ||
		f.Node != "feed" || f.Renders != 2 || f.Skips != 1 || f.Fresh != 0 || f.SkipRatio < 0.333 || f.SkipRatio > 0.334 {
		t.Fatalf("nodes: %+v", doc.Nodes)
	}
	if doc.Total.Receipts != 6 || doc.Total.Renders != 3 || doc.Total.Fresh != 127 {
		t.Fatalf("total: %+v", doc.Total)
	}
	type run = struct {
		by                       string
		renders, skips, failures int
		fresh                    int64
	}
	want := []run{{"feed (external)", 2, 0, 0, 120}, {"feed (external)", 0, 1, 0, 0}, {"digest (external)", 0, 1, 0, 0}, {"feed (external)", 1, 0, 1, 7}}
	if len(doc.Runs) != len(want) {
		t.Fatalf("runs: %+v", doc.Runs)
	}
	for i, w := range want {
		r := doc.Runs[i]
		if len(r.StartedBy) != 1 || r.StartedBy[0] != w.by || r.Renders != w.renders || r.Skips != w.skips || r.Failures != w.failures || r.Fresh != w.fresh {
			t.Fatalf("run %d: %+v, want %+v", i, r, w)
		}
	}
	out = mustProse(t, "--vault", v, "receipts", "cost", "--runs", "1")
	for _, s := range []string{"digest         1       1         1           127             30       33.3%", "runs: 4 (the last 1; --runs 0 lists all)",
		"feed (external)           1 render, 0 skips, 1 failure, 7 fresh tokens"} {
		if !strings.Contains(out, s) {
			t.Fatalf("lacks %q:\n%s", s, out)
		}
	}
}

// TestModelHintAlias: a ### Runtime model hint is looked up in prose.yaml's
// models map; a hint not there is served by the run's model.
func TestModelHintAlias(t *testing.T) {
	node := func(name, hint string) string {
		return "---\nname: " + name + "\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6V" + strings.ToUpper(name[:1]) + "\n---\n\n# " + name + "\n\n### Requires\n\n- `items`: from feed\n\n" +
			"### Maintains\n\n- `out`: anything\n\n### Runtime\n\n- render: model\n- model: " + hint + "\n"
	}
	v := renderVault(t, map[string]string{"feed.prose.md": feedGateway, "aa.prose.md": node("aa", "small"), "bb.prose.md": node("bb", "big")}, map[string]string{})
	f, err := os.OpenFile(filepath.Join(v, "prose.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("models:\n  small: openai-chat:aliased-1\n")
	f.Close()
	write := fakeserver.Calls(fakeserver.Call{ID: "w", Name: "write_output", Args: `{"path":"out.txt","content":"x"}`})
	srv := fakeserver.New(t, fakeserver.Chat, write, fakeserver.Text("ok"), write, fakeserver.Text("ok"))
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, srv.Env()(k))
	}
	payload := filepath.Join(t.TempDir(), "p")
	writeFiles(t, payload, map[string]string{"items.json": `[1]`})
	out, errs, code := prose(t, "--vault", v, "--model", "openai-chat:default-2", "trigger", "feed", payload)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if m := nodeReceipt(t, v, "aa").Cost.Model; m != "aliased-1" {
		t.Fatalf("aa rendered with %q", m)
	}
	if m := nodeReceipt(t, v, "bb").Cost.Model; m != "default-2" {
		t.Fatalf("bb rendered with %q", m)
	}
}

// TestModelRenderTimeout: ### Runtime timeout bounds a model render; a
// model that never answers fails the render saying so.
func TestModelRenderTimeout(t *testing.T) {
	timeout := "1s"
	if testing.Short() {
		timeout = "200ms" // the model never answers: any timeout shows it
	}
	slow := "---\nname: slow\nkind: responsibility\nid: 01M8SXGDYSF1SBSJXHPWMMD6VS\n---\n\n# Slow\n\n### Requires\n\n- `items`: from feed\n\n" +
		"### Maintains\n\n- `out`: anything\n\n### Runtime\n\n- render: model\n- model: openai-chat:slow\n- timeout: " + timeout + "\n"
	v := renderVault(t, map[string]string{"feed.prose.md": feedGateway, "slow.prose.md": slow}, map[string]string{})
	srv := fakeserver.New(t, fakeserver.Chat, fakeserver.Reply{Hang: true})
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, srv.Env()(k))
	}
	payload := filepath.Join(t.TempDir(), "p")
	writeFiles(t, payload, map[string]string{"items.json": `[1]`})
	out, errs, code := prose(t, "--vault", v, "trigger", "feed", payload)
	if code != 1 || !strings.Contains(out, "slow  failed     cold start: no receipt yet; failed: timed out after "+timeout+" (### Runtime timeout)") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}
