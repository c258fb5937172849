package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/program"
)

func init() {
	// A test program, so programs list/show have something to show.
	if err := program.Default.Register(program.Program{
		Name: "echo", Description: "Echo a task.",
		Params: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"what to echo"},"times":{"type":"integer"}},"required":["task"]}`),
		Run:    func(ctx context.Context, args map[string]any) (string, error) { return args["task"].(string), nil },
	}); err != nil {
		panic(err)
	}
}

func vaultWithModel(t *testing.T, spec string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", dir)
	if spec != "" {
		f, err := os.OpenFile(filepath.Join(dir, "prose.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("model: " + spec + "\n")
		f.Close()
	}
	return dir
}

func doctorJSON(t *testing.T, args ...string) (map[string]any, string, int) {
	t.Helper()
	out, errs, code := prose(t, append(args, "doctor", "--json")...)
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errs)
	}
	return rep, out + errs, code
}

func TestModelResolutionOrder(t *testing.T) {
	const secret = "sk-proj-SECRETSECRET123456"
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("PROSE_MODEL", "")
	dir := vaultWithModel(t, "openai-chat:llama3.1")
	cases := []struct {
		env  string
		args []string
		spec string
		from string
	}{
		{"", []string{"--vault", dir}, "openai-chat:llama3.1", "prose.yaml"},
		{"openai:gpt-5", []string{"--vault", dir}, "openai:gpt-5", "$PROSE_MODEL"},
		{"openai:gpt-5", []string{"--vault", dir, "--model", "anthropic:claude-x"}, "anthropic:claude-x", "--model"},
		{"", []string{"--vault", vaultWithModel(t, "")}, "offline", "default"},
	}
	for _, c := range cases {
		t.Setenv("PROSE_MODEL", c.env)
		rep, all, _ := doctorJSON(t, c.args...)
		if rep["model"] != c.spec || rep["source"] != c.from {
			t.Errorf("%v with PROSE_MODEL=%q: model %v from %v, want %s from %s", c.args, c.env, rep["model"], rep["source"], c.spec, c.from)
		}
		if strings.Contains(all, "SECRET") {
			t.Fatalf("doctor printed the key:\n%s", all)
		}
	}
	// Outside any vault, with nothing set: the offline engine.
	t.Setenv("PROSE_MODEL", "")
	t.Chdir(t.TempDir())
	rep, _, _ := doctorJSON(t)
	if rep["model"] != "offline" || rep["source"] != "default" {
		t.Fatalf("outside a vault: %v", rep)
	}
}

func TestDoctorReportsKeyWithoutPrintingIt(t *testing.T) {
	const secret = "sk-ant-SECRETSECRET123456"
	t.Setenv("PROSE_MODEL", "")
	t.Setenv("ANTHROPIC_API_KEY", secret)
	out := mustProse(t, "--model", "anthropic:claude-x", "doctor")
	if !strings.Contains(out, "ANTHROPIC_API_KEY present") || strings.Contains(out, "SECRET") {
		t.Fatalf("doctor output:\n%s", out)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	rep, all, code := doctorJSON(t, "--model", "anthropic:claude-x")
	if code != 1 || rep["key_present"] != false || rep["ok"] != false || !strings.Contains(all, "ANTHROPIC_API_KEY is not set") {
		t.Fatalf("missing key: exit %d\n%s", code, all)
	}
	if !slices.Contains(model.Providers(), model.Offline) {
		out, errs, code := prose(t, "--model", "offline", "doctor")
		if code != 1 || !strings.Contains(out+errs, "offline engine is not available in this build yet") {
			t.Fatalf("offline: exit %d\n%s%s", code, out, errs)
		}
	}
	out, errs, code := prose(t, "--model", "nosuch:x", "doctor")
	if code != 1 || !strings.Contains(out, `unknown model provider "nosuch"`) {
		t.Fatalf("unknown provider: exit %d\n%s%s", code, out, errs)
	}
}

func TestPromptsCommands(t *testing.T) {
	dir := vaultWithModel(t, "")
	out := mustProse(t, "--vault", dir, "prompts", "list")
	for _, w := range []string{"analysis", "generation", "enrichment", "component_palette", "built-in"} {
		if !strings.Contains(out, w) {
			t.Errorf("prompts list lacks %q:\n%s", w, out)
		}
	}
	out = mustProse(t, "--vault", dir, "prompts", "show", "generation")
	if !strings.Contains(out, "alert alert-{info|warning|success|error}") || !strings.Contains(out, "fields: vault_root, source_slug") {
		t.Fatalf("prompts show:\n%s", out)
	}
	os.MkdirAll(filepath.Join(dir, "prompts"), 0o755)
	os.WriteFile(filepath.Join(dir, "prompts", "enrichment.md"), []byte("---\ndialect: str.format\n---\n{page_path} {{literal}}\n"), 0o644)
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "prompts", "show", "enrichment", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["source"] != "prompts/enrichment.md" || doc["dialect"] != "str.format" {
		t.Fatalf("override not shown: %v", doc)
	}
	if _, errs, code := prose(t, "prompts", "show", "nosuch"); code != 2 || !strings.Contains(errs, "no built-in prompt") {
		t.Fatalf("unknown prompt: %d %s", code, errs)
	}
}

func TestProgramsCommands(t *testing.T) {
	out := mustProse(t, "programs", "list")
	if !strings.Contains(out, "echo") || !strings.Contains(out, "(task: string, times: integer?)") {
		t.Fatalf("programs list:\n%s", out)
	}
	var info program.Info
	if err := json.Unmarshal([]byte(mustProse(t, "programs", "show", "echo", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "echo" || len(info.Params) != 2 || !info.Params[0].Required {
		t.Fatalf("programs show --json: %+v", info)
	}
	if _, errs, code := prose(t, "programs", "show", "nosuch"); code != 2 || !strings.Contains(errs, `unknown program "nosuch"; the programs are: echo`) {
		t.Fatalf("unknown program: %d %s", code, errs)
	}
}

// The global --model and --record reach ingest and enrich, which define
// the same flags: a command's unset flag does not shadow the global one.
func TestGlobalModelFlagsReachThePipeline(t *testing.T) {
	t.Setenv("PROSE_MODEL", "")
	dir := vaultWithModel(t, "")
	src := filepath.Join(t.TempDir(), "f.md")
	if err := os.WriteFile(src, []byte("# Fresh\n\nBody.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--vault", dir, "--model", "bogus", "ingest", "--dry-run", src},
		{"--model", "bogus", "--vault", dir, "enrich", "--all"},
	} {
		_, errs, code := prose(t, args...)
		if code != 2 || !strings.Contains(errs, "bogus") {
			t.Errorf("%v: exit %d, %q; want the global --model refused (exit 2)", args, code, errs)
		}
	}
	rec := filepath.Join(t.TempDir(), "rec.json")
	if _, errs, code := prose(t, "--vault", dir, "--record", rec, "ingest", "--dry-run", src); code != 0 {
		t.Fatalf("ingest --dry-run: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Fatalf("the global --record wrote nothing: %v", err)
	}
}
