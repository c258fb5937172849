package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/anthropic"
	"github.com/prose-store/prose/model/fakeserver"
	"github.com/prose-store/prose/model/schema"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var mappingTools = map[string]bool{"update_meta": true, "set_labels": true, "count_terms": true}

// TestPayload captures the Messages API request for the payload tool set,
// compares it with its golden file and checks the documented wire rules:
// strict true on fixed-field tools, no strict flag on mapping tools.
func TestPayload(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Anthropic, fakeserver.Reply{Turn: &fakeserver.Turn{Text: "done", Usage: model.Usage{Input: 10, CachedInput: 4, Output: 2}}})
	m, err := model.Open("anthropic:claude-test", model.Config{Getenv: srv.Env()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Call(context.Background(), fakeserver.PayloadRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "done" || resp.Usage != (model.Usage{Input: 10, CachedInput: 4, Output: 2}) || resp.StopReason != model.StopEnd {
		t.Fatalf("response = %+v", resp)
	}
	if srv.Paths()[0] != "/v1/messages" || srv.Auth()[0] != "Bearer "+fakeserver.Key {
		t.Fatalf("path %q, credential %q", srv.Paths()[0], srv.Auth()[0])
	}
	body := srv.Bodies()[0]
	fakeserver.Golden(t, *update, "messages.golden.json", body)
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	tools, _ := fakeserver.Lookup(doc, "tools").([]any)
	if len(tools) != len(fakeserver.PayloadTools()) {
		t.Fatalf("%d tools sent", len(tools))
	}
	params := map[string]any{}
	for _, tool := range tools {
		name := fakeserver.Lookup(tool, "name").(string)
		schemaDoc := fakeserver.Lookup(tool, "input_schema")
		params[name] = schemaDoc
		strict, present := tool.(map[string]any)["strict"]
		if mappingTools[name] {
			if present {
				t.Errorf("mapping tool %s carries strict %v; it must carry no flag", name, strict)
			}
			continue
		}
		if strict != true {
			t.Errorf("fixed-field tool %s: strict %v, want true", name, strict)
		}
		if err := fakeserver.CheckStrict(schemaDoc, ""); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if fakeserver.Lookup(params["update_meta"], "properties", "updates", "additionalProperties") != true {
		t.Error("update_meta.updates is not an open mapping on the wire")
	}
	if fakeserver.Lookup(params["count_terms"], "properties", "counts", "additionalProperties", "type") != "integer" {
		t.Error("count_terms.counts lost its value schema")
	}
	if m := fakeserver.Lookup(params["count_terms"], "properties", "counts", "additionalProperties", "minimum"); m != 0.0 {
		t.Errorf("count_terms.counts minimum sent as %#v, want the number 0", m)
	}
	if ts, _ := fakeserver.Lookup(params["set_labels"], "properties", "labels", "type").([]any); len(ts) != 2 || ts[1] != "null" {
		t.Error("set_labels.labels no longer nullable")
	}
	if fakeserver.Lookup(params["ping"], "additionalProperties") != false {
		t.Error("ping's explicit additionalProperties false was opened")
	}
	// The tool result went back as a user turn answering the tool_use id.
	if fakeserver.Lookup(doc, "messages", 2, "content", 0, "tool_use_id") != "call_1" {
		t.Errorf("tool result not sent as tool_result: %v", fakeserver.Lookup(doc, "messages", 2))
	}
}

func TestLossyToolRefusedBeforeSending(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Anthropic)
	m, _ := model.Open("anthropic:claude-test", model.Config{Getenv: srv.Env()})
	req := fakeserver.PayloadRequest()
	req.Tools = append(req.Tools, fakeserver.LossyTool())
	_, err := m.Call(context.Background(), req)
	var le *schema.LossError
	if !errors.As(err, &le) || le.Pointer != fakeserver.LossyPointer {
		t.Fatalf("err = %v, want a refusal at %s", err, fakeserver.LossyPointer)
	}
	if len(srv.Bodies()) != 0 {
		t.Fatal("a request was sent despite the refusal")
	}
}

func TestTwoToolsDoneWhen(t *testing.T) {
	srv := fakeserver.New(t, fakeserver.Anthropic, fakeserver.Reply{Turn: &fakeserver.Turn{Text: "ok"}})
	m, _ := model.Open("anthropic:claude-test", model.Config{Getenv: srv.Env()})
	pair := []model.Tool{fakeserver.PayloadTools()[3], fakeserver.PayloadTools()[0]}
	if _, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hi")}, Tools: pair}); err != nil {
		t.Fatal(err)
	}
	var doc any
	json.Unmarshal(srv.Bodies()[0], &doc)
	if _, has := fakeserver.Lookup(doc, "tools", 0).(map[string]any)["strict"]; has {
		t.Fatal("the mapping tool carries a strict flag")
	}
	if fakeserver.Lookup(doc, "tools", 1, "strict") != true {
		t.Fatal("the fixed-field tool is not strict")
	}
}

// TestFormatToolAmongTheTools: a request whose tools hold the format's
// own tool (a run's one shared tool list) sends that list unchanged, in
// its order, and forces the call of that tool, whose input becomes the
// answer; a tool of the format's name with another schema is refused
// before anything is sent.
func TestFormatToolAmongTheTools(t *testing.T) {
	f := &model.Format{Name: "plan", Schema: json.RawMessage(`{"type":"object","properties":{"pages":{"type":"array","items":{"type":"string"}}},"required":["pages"]}`)}
	other := model.Tool{Name: "tree", Description: "List a folder.", Schema: json.RawMessage(`{"type":"object","properties":{"folder":{"type":"string"}},"required":["folder"]}`)}
	own := model.Tool{Name: "plan", Description: "Give the plan.", Schema: f.Schema}
	srv := fakeserver.New(t, fakeserver.Anthropic, fakeserver.Reply{Turn: &fakeserver.Turn{Calls: []fakeserver.Call{{ID: "toolu_1", Name: "plan", Args: `{"pages":["a"]}`}}}})
	m, _ := model.Open("anthropic:claude-test", model.Config{Getenv: srv.Env()})
	resp, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("plan it")}, Tools: []model.Tool{other, own}, Format: f})
	if err != nil || resp.Text != `{"pages":["a"]}` || len(resp.ToolCalls) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	var doc struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
		ToolChoice map[string]any `json:"tool_choice"`
	}
	json.Unmarshal(srv.Bodies()[0], &doc)
	if len(doc.Tools) != 2 || doc.Tools[0].Name != "tree" || doc.Tools[1].Name != "plan" || doc.Tools[1].Description != "Give the plan." {
		t.Errorf("tools on the wire %+v, want the request's two, in order", doc.Tools)
	}
	if doc.ToolChoice["type"] != "tool" || doc.ToolChoice["name"] != "plan" {
		t.Errorf("tool_choice %v, want the forced plan tool", doc.ToolChoice)
	}
	own.Schema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)
	_, err = m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("plan it")}, Tools: []model.Tool{other, own}, Format: f})
	var me *model.Error
	if !errors.As(err, &me) || me.Kind != model.KindSchema || len(srv.Bodies()) != 1 {
		t.Errorf("a plan tool of another schema: %v after %d requests, want a schema error before sending", err, len(srv.Bodies()))
	}
}

// TestHeaders: the key as a bearer token and the API version on every
// request, the process environment not consulted.
func TestHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`))
	}))
	defer srv.Close()
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-abc", "ANTHROPIC_BASE_URL": srv.URL + "/"}
	m, err := model.Open("anthropic:x", model.Config{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hi")}})
	if err != nil || resp.Text != "ok" {
		t.Fatalf("%+v %v", resp, err)
	}
	for k, v := range map[string]string{"Authorization": "Bearer sk-ant-abc", "Anthropic-Version": anthropic.APIVersion, "Content-Type": "application/json", "X-Leak": ""} {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}
}
