package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
)

var answerFormat = &model.Format{Name: "plan", Schema: json.RawMessage(`{"type":"object","properties":{"pages":{"type":"array","items":{"type":"string"}},"note":{"type":"string"}},"required":["pages"]}`)}

// TestStructuredAnswer: a request with a Format is sent in each API's
// structured form (the fake refuses any other shape with a 400, as the
// APIs do), and the answer's text is the JSON object on every provider,
// Anthropic's forced tool call included.
func TestStructuredAnswer(t *testing.T) {
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			var srv *fakeserver.Server
			srv = fakeserver.NewWith(t, p.api, fakeserver.Options{Respond: func(in *fakeserver.Incoming) fakeserver.Reply {
				if in.Format != "plan" {
					return fakeserver.Reply{Status: 400, Body: `{"error":{"message":"no structured format asked for"}}`}
				}
				return srv.Answer(in, `{"pages":["a.html"],"note":null}`)
			}})
			m, err := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("plan it")}, Format: answerFormat})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != `{"pages":["a.html"],"note":null}` || len(resp.ToolCalls) != 0 || resp.StopReason != model.StopEnd {
				t.Fatalf("response %+v", resp)
			}
			if resp.Usage.Input == 0 || resp.Usage.Output == 0 {
				t.Errorf("the fake counted no tokens: %+v", resp.Usage)
			}
		})
	}
}

// TestStructuredShapesRefused: the fake checks the structured part of a
// request as the API documents it: a schema that is not strict is a 400.
func TestStructuredShapesRefused(t *testing.T) {
	bodies := map[string]string{
		fakeserver.Responses: `{"model":"m","input":[],"text":{"format":{"type":"json_schema","name":"plan","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
		fakeserver.Chat:      `{"model":"m","messages":[],"response_format":{"type":"json_schema","json_schema":{"name":"p lan","strict":true,"schema":{"type":"object","properties":{},"additionalProperties":false,"required":[]}}}}`,
		fakeserver.Anthropic: `{"model":"m","max_tokens":10,"messages":[],"tool_choice":{"type":"tool","name":"plan"},"tools":[]}`,
	}
	want := map[string]string{fakeserver.Responses: "not closed", fakeserver.Chat: "json_schema.name", fakeserver.Anthropic: "names no tool"}
	for api, body := range bodies {
		srv := fakeserver.New(t, api, ok("never"))
		path := map[string]string{fakeserver.Responses: "/v1/responses", fakeserver.Chat: "/v1/chat/completions", fakeserver.Anthropic: "/v1/messages"}[api]
		resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Error struct{ Message string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(doc.Error.Message, want[api]) {
			t.Errorf("%s: %d %q, want 400 naming %q", api, resp.StatusCode, doc.Error.Message, want[api])
		}
	}
}

// TestChatFallsBackFromResponseFormat: a Chat Completions server that
// refuses response_format is asked again with the schema in the prompt
// (after the first user text: the system text stays the run's shared
// leading part), said once; later calls go plain at once.
func TestChatFallsBackFromResponseFormat(t *testing.T) {
	srv := fakeserver.NewWith(t, fakeserver.Chat, fakeserver.Options{RefuseFormat: true, Respond: func(in *fakeserver.Incoming) fakeserver.Reply {
		if in.System != "You plan." || !strings.Contains(in.Users[0], `"pages"`) {
			return fakeserver.Reply{Status: 400, Body: `{"error":{"message":"the schema is not in the prompt"}}`}
		}
		return fakeserver.Text(`{"pages":[]}`)
	}})
	var notices []string
	m, err := model.Open("openai-chat:local", model.Config{Getenv: srv.Env(), Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		resp, err := m.Call(context.Background(), model.Request{System: "You plan.", Messages: []model.Message{model.UserText("plan it")}, Format: answerFormat})
		if err != nil || resp.Text != `{"pages":[]}` {
			t.Fatalf("call %d: %+v %v", i, resp, err)
		}
	}
	if len(srv.Bodies()) != 3 {
		t.Errorf("%d requests; want the refused one, its plain retry, and one plain call", len(srv.Bodies()))
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "response_format") {
		t.Errorf("notices %q, want one naming response_format", notices)
	}
}

// TestCallCheckedRepairs: an answer that does not check gets one repair
// turn quoting the problem; a second bad answer is a clear failure.
func TestCallCheckedRepairs(t *testing.T) {
	check := func(text string) error {
		var v struct{ Pages []string }
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return err
		}
		if v.Pages == nil {
			return errors.New(`no "pages" list`)
		}
		return nil
	}
	for _, tc := range []struct {
		name    string
		answers []string
		fails   bool
	}{
		{"repaired", []string{`{"pages": [`, `{"pages":["a"]}`}, false},
		{"twice bad", []string{`{"pages": [`, `{"nope":1}`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeserver.New(t, fakeserver.Responses, fakeserver.Text(tc.answers[0]), fakeserver.Text(tc.answers[1]))
			m, err := model.Open("openai:gpt-test", model.Config{Getenv: srv.Env()})
			if err != nil {
				t.Fatal(err)
			}
			resp, used, err := model.CallChecked(context.Background(), m, model.Request{Messages: []model.Message{model.UserText("plan it")}, Format: answerFormat}, check)
			if used.Input == 0 {
				t.Error("usage not totalled")
			}
			if tc.fails {
				if model.KindOf(err) != model.KindResponse || !strings.Contains(err.Error(), "after a repair turn") || !strings.Contains(err.Error(), `no "pages" list`) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || resp.Text != tc.answers[1] {
				t.Fatalf("%+v %v", resp, err)
			}
			repair := string(srv.Bodies()[1])
			if !strings.Contains(repair, "unexpected end of JSON input") || !strings.Contains(repair, `{\"pages\": [`) {
				t.Errorf("the repair turn does not quote the error and the answer: %s", repair)
			}
		})
	}
}

// TestStructuredAnswerForbidsTheTools: a structured request that carries
// tools (for the shared prompt prefix) forbids calling them: tool_choice
// "none" on both OpenAI APIs, the forced format tool on Anthropic.
func TestStructuredAnswerForbidsTheTools(t *testing.T) {
	want := map[string]string{
		fakeserver.Responses: `"none"`,
		fakeserver.Chat:      `"none"`,
		fakeserver.Anthropic: `{"name":"plan","type":"tool"}`,
	}
	tree := model.Tool{Name: "tree", Description: "List a folder.", Schema: json.RawMessage(`{"type":"object","properties":{"folder":{"type":"string"}},"required":["folder"]}`)}
	for _, p := range providers {
		t.Run(p.api, func(t *testing.T) {
			var srv *fakeserver.Server
			var got string
			srv = fakeserver.NewWith(t, p.api, fakeserver.Options{Respond: func(in *fakeserver.Incoming) fakeserver.Reply {
				got = in.ToolChoice
				return srv.Answer(in, `{"pages":[],"note":null}`)
			}})
			m, err := model.Open(p.spec, model.Config{Getenv: srv.Env()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("plan it")}, Tools: []model.Tool{tree}, Format: answerFormat}); err != nil {
				t.Fatal(err)
			}
			if got != want[p.api] {
				t.Errorf("tool_choice %s, want %s", got, want[p.api])
			}
		})
	}
}
