package model_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/model"
)

func TestNow(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "PROSE_NOW" {
				return v
			}
			return ""
		}
	}
	for v, want := range map[string]time.Time{
		"2026-01-31":                time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC),
		"2026-01-31T12:30:00+02:00": time.Date(2026, 1, 31, 10, 30, 0, 0, time.UTC),
	} {
		got, err := model.Now(env(v))
		if err != nil || !got.Equal(want) {
			t.Errorf("PROSE_NOW=%s: %v %v", v, got, err)
		}
	}
	if _, err := model.Now(env("yesterday")); err == nil || !strings.Contains(err.Error(), "PROSE_NOW") {
		t.Errorf("bad PROSE_NOW accepted: %v", err)
	}
	if got, err := model.Now(env("")); err != nil || time.Since(got) > time.Hour {
		t.Errorf("unset PROSE_NOW: %v %v", got, err)
	}
}

// TestLoopStopsWhenCanceled: a cancellation during a tool call ends the
// loop before the next model call.
func TestLoopStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &scripted{
		{ToolCalls: []model.ToolCall{{ID: "1", Name: "stop", Arguments: json.RawMessage(`{}`)}}},
		{Text: "never reached"},
	}
	stop := model.Tool{Name: "stop", Schema: json.RawMessage(`{"type":"object","properties":{}}`),
		Run: func(context.Context, json.RawMessage) (string, error) { cancel(); return "", nil }}
	res, err := model.Loop(ctx, m, model.Request{Tools: []model.Tool{stop}}, model.LoopOptions{})
	if model.KindOf(err) != model.KindCanceled || res.Iterations != 1 || len(*m) != 1 {
		t.Fatalf("err %v after %d iterations, %d answers left", err, res.Iterations, len(*m))
	}
}
