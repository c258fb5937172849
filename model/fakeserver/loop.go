package fakeserver

import (
	"context"
	"encoding/json"

	"github.com/prose-store/prose/model"
)

// LoopTools is a fixed-field tool and a mapping tool that log their calls.
func LoopTools(calls *[]string) []model.Tool {
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

// LoopScript is a scripted conversation in which the model makes a bad call and a good one, reads the error,
// corrects the bad call, then finishes.
func LoopScript() []Reply {
	u := model.Usage{Input: 100, CachedInput: 40, Output: 10}
	return []Reply{
		{Turn: &Turn{Usage: u, Calls: []Call{
			{ID: "c1", Name: "write_note", Args: `{"path":3,"text":"hi"}`},
			{ID: "c2", Name: "update_meta", Args: `{"updates":{"status":"draft","owner":"ana"}}`},
		}}},
		{Turn: &Turn{Usage: u, Calls: []Call{
			{ID: "c3", Name: "write_note", Args: `{"path":"notes/a.html","text":"hi"}`},
		}}},
		{Turn: &Turn{Usage: u, Text: "All done."}},
	}
}
