package model_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
)

// loopTools: a fixed-field tool and a mapping tool that log their calls.
func loopTools(calls *[]string) []model.Tool {
	return []model.Tool{
		{Name: "write_note", Description: "Write a note.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}`),
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				*calls = append(*calls, "write_note "+string(args))
				return "written", nil
			}},
		{Name: "update_meta", Description: "Update meta.", Schema: json.RawMessage(`{"type":"object","properties":{"updates":{"type":"object","additionalProperties":{"type":"string"}}},"required":["updates"]}`),
			Run: func(ctx context.Context, args json.RawMessage) (string, error) {
				*calls = append(*calls, "update_meta "+string(args))
				return "updated", nil
			}},
	}
}

// loopScript: the model makes a bad call and a good one, reads the error,
// corrects the bad call, then finishes.
func loopScript() []fakeserver.Reply {
	u := model.Usage{Input: 100, CachedInput: 40, Output: 10}
	return []fakeserver.Reply{
		{Turn: &fakeserver.Turn{Usage: u, Calls: []fakeserver.Call{
			{ID: "c1", Name: "write_note", Args: `{"path":3,"text":"hi"}`},
			{ID: "c2", Name: "update_meta", Args: `{"updates":{"status":"draft","owner":"ana"}}`},
		}}},
		{Turn: &fakeserver.Turn{Usage: u, Calls: []fakeserver.Call{
			{ID: "c3", Name: "write_note", Args: `{"path":"notes/a.html","text":"hi"}`},
		}}},
		{Turn: &fakeserver.Turn{Usage: u, Text: "All done."}},
	}
}

func TestLoopCorrectsInvalidCall(t *testing.T) {
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			srv := fakeserver.New(t, p.api, loopScript()...)
			m, err := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			res, err := model.Loop(context.Background(), m, model.Request{System: "sys", Messages: []model.Message{model.UserText("go")}, Tools: loopTools(&calls)}, model.LoopOptions{})
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
	res, err := model.Loop(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: loopTools(&calls)}, model.LoopOptions{MaxIterations: 2})
	if model.KindOf(err) != model.KindLimit || res.Iterations != 2 {
		t.Fatalf("err = %v after %d iterations, want the iteration limit after 2", err, res.Iterations)
	}
	if !strings.Contains(string(srv.Bodies()[1]), `there is no tool named \"delete_everything\"; the tools are: update_meta, write_note`) {
		t.Fatalf("unknown tool not reported to the model:\n%s", srv.Bodies()[1])
	}
}
