package ingest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/schema"
)

// schemaChecking is the offline engine behind a wrapper that is no
// model.BuiltCalls, so the agent loop validates its calls as it does a
// provider's, and that itself checks every call it passes on against the
// schema of the tool it names.
type schemaChecking struct {
	eng   offline.Engine
	t     *testing.T
	calls int
}

func (m *schemaChecking) Name() string { return m.eng.Name() }

func (m *schemaChecking) Call(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := m.eng.Call(ctx, req)
	for _, tc := range resp.ToolCalls {
		var raw json.RawMessage
		for _, tool := range req.Tools {
			if tool.Name == tc.Name {
				raw = tool.Schema
			}
		}
		if raw == nil {
			m.t.Errorf("the offline engine called %s, which is no tool of the request", tc.Name)
			continue
		}
		s, cerr := schema.Compile(raw)
		if cerr != nil {
			m.t.Fatal(cerr)
		}
		if verr := s.Validate(tc.Arguments); verr != nil {
			m.t.Errorf("the offline engine's call %s %s does not match its schema: %v", tc.Name, tc.Arguments, verr)
		}
		m.calls++
	}
	return resp, err
}

// The offline engine tells the agent loop that its calls need no schema
// check (model.BuiltCalls); that holds: every call of an ingest of real
// and generated documents and of an enrichment matches its tool's schema.
func TestOfflineCallsMatchSchemas(t *testing.T) {
	if b, ok := model.Model(offline.Engine{}).(model.BuiltCalls); !ok || !b.CallsMatchSchemas() {
		t.Fatal("the offline engine does not vouch for its calls")
	}
	docs := corpus(t, 6)
	paths, _ := filepath.Glob("../fixtures/sources/*")
	for _, g := range []string{"source/testdata/libffi/*.html", "source/testdata/lmdb/*.html"} {
		more, _ := filepath.Glob(g)
		paths = append(paths, more...)
	}
	if len(paths) < 10 {
		t.Fatalf("found %d fixture documents", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := source.Read(filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p))), data, "")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	_, w := newWiki(t)
	m := &schemaChecking{t: t}
	res, err := ingest.Ingest(context.Background(), w, docs, opts(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) == 0 {
		t.Fatal("the ingest created no page")
	}
	if _, err := ingest.Enrich(context.Background(), w, ingest.Selection{All: true}, opts(m)); err != nil {
		t.Fatal(err)
	}
	if m.calls < 50 {
		t.Fatalf("only %d tool calls were checked", m.calls)
	}
}

// badCalls makes one tool call whose arguments break the schema, then
// ends: a model that is no model.BuiltCalls, as every provider is.
type badCalls struct{ turns int }

func (*badCalls) Name() string { return "bad" }

func (m *badCalls) Call(ctx context.Context, req model.Request) (model.Response, error) {
	m.turns++
	if m.turns > 1 {
		return model.Response{Text: "done", StopReason: model.StopEnd}, nil
	}
	return model.Response{StopReason: model.StopToolUse, ToolCalls: []model.ToolCall{
		{ID: "c1", Name: "write", Arguments: json.RawMessage(`{"path":7}`)}}}, nil
}

// A model's calls are still validated: skipping the check is for the
// offline engine alone.
func TestModelCallsStillValidated(t *testing.T) {
	ran := 0
	tools := []model.Tool{{Name: "write", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Run: func(context.Context, json.RawMessage) (string, error) { ran++; return "ok", nil }}}
	var got []model.ToolResult
	res, err := model.Loop(context.Background(), &badCalls{}, model.Request{Messages: []model.Message{model.UserText("go")}, Tools: tools},
		model.LoopOptions{OnToolResult: func(_ model.ToolCall, r model.ToolResult) { got = append(got, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if ran != 0 || res.ToolErrors != 1 || len(got) != 1 || !strings.Contains(got[0].Content, "the arguments of write are invalid") {
		t.Fatalf("the bad call ran %d times, %d errors, results %+v", ran, res.ToolErrors, got)
	}
}
