package model_test

import (
	"context"
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
