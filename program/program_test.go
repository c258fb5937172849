package program_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
	_ "github.com/prose-store/prose/model/openai"
	"github.com/prose-store/prose/program"
)

// testRegistry holds two test programs; ran logs what reached them.
func testRegistry(t *testing.T, ran *[]string) *program.Registry {
	r := program.NewRegistry()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.Register(program.Program{
		Name: "research", Description: "Research a task.",
		Params: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"what to do"},"depth":{"type":"integer"},"filters":{"type":"object","additionalProperties":{"type":"string"}}},"required":["task"]}`),
		Run: func(ctx context.Context, args map[string]any) (string, error) {
			*ran = append(*ran, fmt.Sprintf("research task=%v depth=%v", args["task"], args["depth"]))
			return "found 3 sources", nil
		},
	}))
	must(r.Register(program.Program{
		Name: "lint", Params: json.RawMessage(`{"type":"object","properties":{}}`),
		Run: func(ctx context.Context, args map[string]any) (string, error) {
			*ran = append(*ran, "lint")
			return "clean", nil
		},
	}))
	return r
}

// TestProgramToolThroughLoop: a program call with args {"task": …}
// reaches the registered program through the agent loop; an unknown
// program, an unsupported keyword and a wrong type are refused with
// errors naming them, returned to the model.
func TestProgramToolThroughLoop(t *testing.T) {
	call := func(id, args string) fakeserver.Call { return fakeserver.Call{ID: id, Name: "program", Args: args} }
	srv := fakeserver.New(t, fakeserver.Responses,
		fakeserver.Reply{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{
			call("c1", `{"name":"research","args":{"task":"summarize the source"}}`),
			call("c2", `{"name":"publish","args":{"task":"x"}}`),
			call("c3", `{"name":"research","args":{"task":"x","colour":"red"}}`),
			call("c4", `{"name":"research","args":{"task":5}}`),
			call("c5", `{"name":"research","args":{"task":"y","depth":2,"filters":{"lang":"en"}}}`),
			call("c6", `{"name":"research","args":{"task":"y","filters":{"lang":1}}}`),
		}}},
		fakeserver.Reply{Turn: &fakeserver.Turn{Text: "done"}},
	)
	m, err := model.Open("openai:gpt-test", model.Config{Getenv: srv.Env()})
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	reg := testRegistry(t, &ran)
	var results []model.ToolResult
	res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: []model.Tool{reg.Tool()}},
		model.LoopOptions{OnToolResult: func(_ model.ToolCall, r model.ToolResult) { results = append(results, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := "research task=summarize the source depth=<nil>\nresearch task=y depth=2"; strings.Join(ran, "\n") != want {
		t.Fatalf("programs ran with:\n%s\nwant:\n%s", strings.Join(ran, "\n"), want)
	}
	wants := []struct {
		isErr bool
		text  string
	}{
		{false, "found 3 sources"},
		{true, `unknown program "publish"; the programs are: lint, research`},
		{true, `program research does not take "colour"; its parameters are: depth, filters, task`},
		{true, "program research: invalid args: at /task: got number, want string"},
		{false, "found 3 sources"},
		{true, "at /filters/lang: got number, want string"},
	}
	for i, w := range wants {
		if results[i].IsError != w.isErr || !strings.Contains(results[i].Content, w.text) {
			t.Errorf("call %d: %+v, want error=%v with %q", i+1, results[i], w.isErr, w.text)
		}
	}
	if res.ToolErrors != 4 || res.Final.Text != "done" {
		t.Fatalf("errors %d, final %q", res.ToolErrors, res.Final.Text)
	}
	// The refusals reached the model.
	if !strings.Contains(string(srv.Bodies()[1]), `does not take \"colour\"`) {
		t.Fatal("the refusal was not sent back to the model")
	}
	// On the wire, args is an open mapping and the tool is not strict.
	var doc any
	json.Unmarshal(srv.Bodies()[0], &doc)
	tool := fakeserver.Lookup(doc, "tools", 0)
	if fakeserver.Lookup(tool, "strict") != false || fakeserver.Lookup(tool, "parameters", "properties", "args", "additionalProperties") != true {
		t.Fatalf("program tool sent as %v", tool)
	}
}

func TestRegisterRefusals(t *testing.T) {
	r := program.NewRegistry()
	run := func(context.Context, map[string]any) (string, error) { return "", nil }
	if err := r.Register(program.Program{Name: "a", Params: json.RawMessage(`{"type":"object"}`), Run: run}); err == nil {
		t.Error("parameters without declared properties accepted")
	}
	if err := r.Register(program.Program{Name: "a", Params: json.RawMessage(`{"type":"object","properties":{}}`), Run: run}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(program.Program{Name: "a", Params: json.RawMessage(`{"type":"object","properties":{}}`), Run: run}); err == nil {
		t.Error("duplicate accepted")
	}
	if _, err := program.NewRegistry().Call(context.Background(), "x", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "no programs are registered") {
		t.Errorf("empty registry: %v", err)
	}
}

func TestInfo(t *testing.T) {
	var ran []string
	info, err := testRegistry(t, &ran).Get("research")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(info.Params)
	if want := `[{"name":"depth","type":"integer","required":false},{"name":"filters","type":"object","required":false},{"name":"task","type":"string","required":true,"description":"what to do"}]`; string(b) != want {
		t.Fatalf("params %s", b)
	}
}

// TestRegisterRefusesParamsOpenAtTheRoot: a program whose parameters take
// keys not declared (open at the root) is refused, since its arguments
// could not be checked; an open mapping below the root is allowed.
func TestRegisterRefusesParamsOpenAtTheRoot(t *testing.T) {
	run := func(context.Context, map[string]any) (string, error) { return "", nil }
	for _, params := range []string{
		`{"type":"object","properties":{"task":{"type":"string"}},"additionalProperties":true}`,
		`{"type":"object","properties":{"task":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
	} {
		err := program.NewRegistry().Register(program.Program{Name: "open", Params: json.RawMessage(params), Run: run})
		if err == nil || !strings.Contains(err.Error(), "declared properties") {
			t.Errorf("%s: %v, want a refusal", params, err)
		}
	}
	if err := program.NewRegistry().Register(program.Program{Name: "nested", Params: json.RawMessage(`{"type":"object","properties":{"filters":{"type":"object","additionalProperties":{"type":"string"}}}}`), Run: run}); err != nil {
		t.Errorf("an open mapping below the root: %v", err)
	}
}
