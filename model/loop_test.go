package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
)

func TestLoopCorrectsInvalidCall(t *testing.T) {
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			srv := fakeserver.New(t, p.api, fakeserver.LoopScript()...)
			m, err := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			res, err := model.Loop(context.Background(), m, model.Request{System: "sys", Messages: []model.Message{model.UserText("go")}, Tools: fakeserver.LoopTools(&calls)}, model.LoopOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				`update_meta {"updates":{"status":"draft","owner":"ana"}}`,
				`write_note {"path":"notes/a.html","text":"hi"}`,
			}
			if strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Fatalf("tools ran with\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
			}
			if res.Final.Text != "All done." || res.Iterations != 3 || res.ToolCalls != 3 || res.ToolErrors != 1 {
				t.Fatalf("result: text %q, %d iterations, %d calls, %d errors", res.Final.Text, res.Iterations, res.ToolCalls, res.ToolErrors)
			}
			if res.Usage != (model.Usage{Input: 300, CachedInput: 120, Output: 30}) {
				t.Fatalf("usage %+v", res.Usage)
			}
			// The second request carried the validation error back to the
			// model, as a tool result for the bad call.
			second := string(srv.Bodies()[1])
			if !strings.Contains(second, `the arguments of write_note are invalid: at /path: got number, want string`) {
				t.Fatalf("the error did not reach the model:\n%s", second)
			}
			if !strings.Contains(second, "c1") || !strings.Contains(second, "updated") {
				t.Fatalf("results not paired with their calls:\n%s", second)
			}
		})
	}
}

func TestLoopUnknownToolAndLimit(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Chat,
		fakeserver.Reply{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{{ID: "x", Name: "delete_everything", Args: `{}`}}}},
		fakeserver.Reply{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{{ID: "y", Name: "delete_everything", Args: `{}`}}}},
	)
	m, _ := model.Open("openai-chat:gpt-test", model.Config{Getenv: srv.Env()})
	var calls []string
	res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: fakeserver.LoopTools(&calls)}, model.LoopOptions{MaxIterations: 2})
	if model.KindOf(err) != model.KindLimit || res.Iterations != 2 {
		t.Fatalf("err = %v after %d iterations, want the iteration limit after 2", err, res.Iterations)
	}
	if !strings.Contains(string(srv.Bodies()[1]), `there is no tool named \"delete_everything\"; the tools are: update_meta, write_note`) {
		t.Fatalf("unknown tool not reported to the model:\n%s", srv.Bodies()[1])
	}
}

// TestLoopMalformedArguments: arguments that are not JSON come back to the
// model as an error, and the next request is still well formed.
func TestLoopMalformedArguments(t *testing.T) {
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			replies := []fakeserver.Reply{
				{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{{ID: "c1", Name: "write_note", Args: `{"path": "a", "text": `}}}},
				{Turn: &fakeserver.Turn{Text: "sorry"}},
			}
			if p.api == fakeserver.Anthropic {
				// Anthropic sends objects; an argument of the wrong shape
				// stands in for malformed text.
				replies[0].Turn.Calls[0].Args = `{"path": ["a"]}`
			}
			srv := fakeserver.New(t, p.api, replies...)
			m, _ := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			var calls []string
			res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: fakeserver.LoopTools(&calls)}, model.LoopOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ToolErrors != 1 || len(calls) != 0 || res.Final.Text != "sorry" {
				t.Fatalf("errors %d, calls %v, final %q", res.ToolErrors, calls, res.Final.Text)
			}
		})
	}
}

// TestLoopCapsCallsPerTurn: an answer making more tool calls than the cap
// runs the first DefaultMaxCallsPerTurn of them; each call beyond is
// answered with an error result naming the cap (counted among the tool
// errors) and its tool does not run.
func TestLoopCapsCallsPerTurn(t *testing.T) {
	const made = model.DefaultMaxCallsPerTurn*3 + 5
	var calls []fakeserver.Call
	for i := range made {
		calls = append(calls, fakeserver.Call{ID: fmt.Sprintf("c%d", i), Name: "write_note", Args: `{"path":"a","text":"b"}`})
	}
	srv := fakeserver.New(t, fakeserver.Chat, fakeserver.Calls(calls...), fakeserver.Text("done"))
	m, _ := model.Open("openai-chat:gpt-test", model.Config{Getenv: srv.Env()})
	var ran []string
	res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: fakeserver.LoopTools(&ran)}, model.LoopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != model.DefaultMaxCallsPerTurn || res.ToolCalls != made || res.ToolErrors != made-model.DefaultMaxCallsPerTurn {
		t.Fatalf("ran %d, calls %d, errors %d; want %d run of %d", len(ran), res.ToolCalls, res.ToolErrors, model.DefaultMaxCallsPerTurn, made)
	}
	results := srv.ToolResults()
	if len(results) != made {
		t.Fatalf("%d results sent for %d calls", len(results), made)
	}
	for i, r := range results {
		over := i >= model.DefaultMaxCallsPerTurn
		if r.IsError != over || over && !strings.Contains(r.Content, fmt.Sprintf("at most %d are run from one answer", model.DefaultMaxCallsPerTurn)) {
			t.Fatalf("result %d (%s): error %v %q", i, r.CallID, r.IsError, r.Content)
		}
	}
	// A negative cap (a trusted engine) runs every call.
	srv = fakeserver.New(t, fakeserver.Chat, fakeserver.Calls(calls...), fakeserver.Text("done"))
	m, _ = model.Open("openai-chat:gpt-test", model.Config{Getenv: srv.Env()})
	ran = nil
	if _, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: fakeserver.LoopTools(&ran)}, model.LoopOptions{MaxCallsPerTurn: -1}); err != nil || len(ran) != made {
		t.Fatalf("uncapped: %v, ran %d of %d", err, len(ran), made)
	}
}

// TestLoopToolFailureIsAnErrorOnTheWire: a tool whose run fails is
// counted among the loop's tool errors and reaches Anthropic as a
// tool_result with is_error true (a success with is_error absent or false).
func TestLoopToolFailureIsAnErrorOnTheWire(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Anthropic,
		fakeserver.Calls(fakeserver.Call{ID: "bad", Name: "break", Args: `{}`}, fakeserver.Call{ID: "good", Name: "fine", Args: `{}`}),
		fakeserver.Text("done"))
	m, err := model.Open("anthropic:claude-test", model.Config{Getenv: srv.Env()})
	if err != nil {
		t.Fatal(err)
	}
	obj := json.RawMessage(`{"type":"object","properties":{}}`)
	tools := []model.Tool{
		{Name: "break", Description: "Fails.", Schema: obj, Run: func(context.Context, json.RawMessage) (string, error) { return "", errors.New("the disk is full") }},
		{Name: "fine", Description: "Works.", Schema: obj, Run: func(context.Context, json.RawMessage) (string, error) { return "ok", nil }},
	}
	res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: tools}, model.LoopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ToolCalls != 2 || res.ToolErrors != 1 {
		t.Fatalf("calls %d, errors %d", res.ToolCalls, res.ToolErrors)
	}
	bad, ok := srv.Result("bad")
	if !ok || !bad.Flagged || !bad.IsError || !strings.Contains(bad.Content, "the disk is full") {
		t.Fatalf("failed tool sent as %+v", bad)
	}
	if good, ok := srv.Result("good"); !ok || good.IsError || good.Content != "ok" {
		t.Fatalf("working tool sent as %+v", good)
	}
}

// TestFakeServerReadsToolResults: the fake reads back, for each API, the
// result each tool call answered, in the request that carried it.
func TestFakeServerReadsToolResults(t *testing.T) {
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			srv := fakeserver.New(t, p.api, fakeserver.LoopScript()...)
			m, _ := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			var calls []string
			if _, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: fakeserver.LoopTools(&calls)}, model.LoopOptions{}); err != nil {
				t.Fatal(err)
			}
			got := srv.ToolResults()
			if len(got) != 3 {
				t.Fatalf("results %+v", got)
			}
			want := []struct {
				id, content string
				req         int
				isErr       bool
			}{{"c1", "the arguments of write_note are invalid", 1, true}, {"c2", "updated", 1, false}, {"c3", "written", 2, false}}
			for i, w := range want {
				if r := got[i]; r.CallID != w.id || r.Request != w.req || r.IsError != w.isErr || !strings.Contains(r.Content, w.content) || r.Flagged != (p.api == fakeserver.Anthropic) {
					t.Errorf("result %d: %+v, want %+v", i, r, w)
				}
			}
		})
	}
}
