package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/fakeserver"
	_ "github.com/prose-store/prose/model/openai"
	"github.com/prose-store/prose/model/schema"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var mappingTools = map[string]bool{"update_meta": true, "set_labels": true, "count_terms": true}

// TestPayloads captures the request each OpenAI API receives for the
// payload tool set, compares it with its golden file, and checks the
// documented wire rules on it independently of the snapshot.
func TestPayloads(t *testing.T) {
	for _, c := range []struct{ provider, api, golden string }{
		{"openai", fakeserver.Responses, "responses.golden.json"},
		{"openai-chat", fakeserver.Chat, "chat.golden.json"},
	} {
		t.Run(c.provider, func(t *testing.T) {
			srv := fakeserver.New(t, c.api, fakeserver.Reply{Turn: &fakeserver.Turn{Text: "done", Usage: model.Usage{Input: 10, CachedInput: 4, Output: 2}}})
			m, err := model.Open(c.provider+":gpt-test", model.Config{Getenv: srv.Env()})
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
			body := srv.Bodies()[0]
			fakeserver.Golden(t, *update, c.golden, body)
			if got := srv.Auth()[0]; got != "Bearer "+fakeserver.Key {
				t.Fatalf("credential header = %q", got)
			}
			var doc any
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatal(err)
			}
			tools, _ := fakeserver.Lookup(doc, "tools").([]any)
			if len(tools) != len(fakeserver.PayloadTools()) {
				t.Fatalf("%d tools sent, want %d", len(tools), len(fakeserver.PayloadTools()))
			}
			for _, tool := range tools {
				fn := tool
				if c.api == fakeserver.Chat {
					fn = fakeserver.Lookup(tool, "function")
				}
				name, _ := fakeserver.Lookup(fn, "name").(string)
				strict, present := fakeserver.Lookup(fn, "strict").(bool)
				if !present {
					t.Fatalf("%s: no explicit strict flag", name)
				}
				params := fakeserver.Lookup(fn, "parameters")
				if mappingTools[name] {
					if strict {
						t.Errorf("%s holds an open mapping but was sent strict", name)
					}
					continue
				}
				if !strict {
					t.Errorf("fixed-field tool %s not sent strict", name)
				}
				if err := fakeserver.CheckStrict(params, ""); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			checkMappings(t, tools, c.api == fakeserver.Chat)
		})
	}
}

// checkMappings: the open mappings reach the wire open, typed values keep
// their schema, the nullable mapping still accepts null.
func checkMappings(t *testing.T, tools []any, chat bool) {
	t.Helper()
	params := map[string]any{}
	for _, tool := range tools {
		fn := tool
		if chat {
			fn = fakeserver.Lookup(tool, "function")
		}
		params[fakeserver.Lookup(fn, "name").(string)] = fakeserver.Lookup(fn, "parameters")
	}
	if ap := fakeserver.Lookup(params["update_meta"], "properties", "updates", "additionalProperties"); ap != true {
		t.Errorf("update_meta.updates sent as %v, want an open mapping", fakeserver.Lookup(params["update_meta"], "properties", "updates"))
	}
	if ty := fakeserver.Lookup(params["count_terms"], "properties", "counts", "additionalProperties", "type"); ty != "integer" {
		t.Errorf("count_terms.counts lost its value schema")
	}
	if m := fakeserver.Lookup(params["count_terms"], "properties", "counts", "additionalProperties", "minimum"); m != 0.0 {
		t.Errorf("count_terms.counts minimum sent as %#v, want the number 0", m)
	}
	labels := fakeserver.Lookup(params["set_labels"], "properties", "labels")
	if ts, _ := fakeserver.Lookup(labels, "type").([]any); len(ts) != 2 || ts[1] != "null" {
		t.Errorf("set_labels.labels no longer nullable: %v", labels)
	}
	if fakeserver.Lookup(params["ping"], "additionalProperties") != false {
		t.Errorf("ping's explicit additionalProperties false was opened")
	}
}

// TestLossyToolRefusedBeforeSending: a keyword the strict dialect cannot
// carry stops the call with its JSON pointer; the server sees nothing.
func TestLossyToolRefusedBeforeSending(t *testing.T) {
	for _, c := range []struct{ provider, api string }{{"openai", fakeserver.Responses}, {"openai-chat", fakeserver.Chat}} {
		srv := fakeserver.New(t, c.api)
		m, err := model.Open(c.provider+":gpt-test", model.Config{Getenv: srv.Env()})
		if err != nil {
			t.Fatal(err)
		}
		req := fakeserver.PayloadRequest()
		req.Tools = append(req.Tools, fakeserver.LossyTool())
		_, err = m.Call(context.Background(), req)
		var le *schema.LossError
		if !errors.As(err, &le) || le.Pointer != fakeserver.LossyPointer || !strings.Contains(err.Error(), fakeserver.LossyPointer) || !strings.Contains(err.Error(), "rename") {
			t.Fatalf("%s: err = %v, want a refusal naming rename at %s", c.provider, err, fakeserver.LossyPointer)
		}
		if model.KindOf(err) != model.KindSchema {
			t.Fatalf("kind = %q", model.KindOf(err))
		}
		if n := len(srv.Bodies()); n != 0 {
			t.Fatalf("%d requests sent despite the refusal", n)
		}
	}
}

// TestTwoToolsDoneWhen is the acceptance pair: one mapping tool,
// one fixed-field tool, in the same request.
func TestTwoToolsDoneWhen(t *testing.T) {
	pair := []model.Tool{fakeserver.PayloadTools()[3], fakeserver.PayloadTools()[0]}
	for _, c := range []struct{ provider, api string }{{"openai", fakeserver.Responses}, {"openai-chat", fakeserver.Chat}} {
		srv := fakeserver.New(t, c.api, fakeserver.Reply{Turn: &fakeserver.Turn{Text: "ok"}})
		m, _ := model.Open(c.provider+":gpt-test", model.Config{Getenv: srv.Env()})
		if _, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hi")}, Tools: pair}); err != nil {
			t.Fatal(err)
		}
		var doc any
		json.Unmarshal(srv.Bodies()[0], &doc)
		first, second := fakeserver.Lookup(doc, "tools", 0), fakeserver.Lookup(doc, "tools", 1)
		if c.api == fakeserver.Chat {
			first, second = fakeserver.Lookup(first, "function"), fakeserver.Lookup(second, "function")
		}
		if fakeserver.Lookup(first, "strict") != false || fakeserver.Lookup(second, "strict") != true {
			t.Fatalf("%s: strict flags %v, %v; want false, true", c.provider, fakeserver.Lookup(first, "strict"), fakeserver.Lookup(second, "strict"))
		}
		if err := fakeserver.CheckStrict(fakeserver.Lookup(second, "parameters"), ""); err != nil {
			t.Fatalf("%s: %v", c.provider, err)
		}
	}
}

// TestHeaders: the key goes as a bearer token, the organization and
// project settings as their headers, read through the config; a
// compatible server without a key gets no Authorization at all.
func TestHeaders(t *testing.T) {
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"completed","output":[],"choices":[{"message":{"content":"ok"}}]}`))
	}))
	defer srv.Close()
	for _, c := range []struct {
		provider string
		env      map[string]string
		want     map[string]string
	}{
		{"openai", map[string]string{"OPENAI_API_KEY": "sk-abc", "OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT_ID": "proj-1"},
			map[string]string{"Authorization": "Bearer sk-abc", "Openai-Organization": "org-1", "Openai-Project": "proj-1", "Content-Type": "application/json"}},
		{"openai-chat", map[string]string{}, map[string]string{"Authorization": "", "Openai-Organization": "", "Content-Type": "application/json"}},
	} {
		c.env["OPENAI_BASE_URL"] = srv.URL + "/v1/"
		m, err := model.Open(c.provider+":x", model.Config{Getenv: func(k string) string { return c.env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hi")}}); err != nil {
			t.Fatalf("%s: %v", c.provider, err)
		}
		h := got[len(got)-1]
		for k, v := range c.want {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", c.provider, k, h.Get(k), v)
			}
		}
	}
}

// TestBaseURLChecked: a base URL that is not http(s) is refused when the
// model is opened, naming the variable and never the URL's password.
func TestBaseURLChecked(t *testing.T) {
	for _, base := range []string{"ftp://u:hunter2@example.com/v1", "127.0.0.1:11434/v1", "http://"} {
		env := map[string]string{"OPENAI_BASE_URL": base}
		_, err := model.Open("openai-chat:x", model.Config{Getenv: func(k string) string { return env[k] }})
		if model.KindOf(err) != model.KindConfig || !strings.Contains(err.Error(), "OPENAI_BASE_URL") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: err = %v", base, err)
		}
	}
}
