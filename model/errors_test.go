package model_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/model"
	_ "github.com/prose-store/prose/model/anthropic"
	"github.com/prose-store/prose/model/fakeserver"
	_ "github.com/prose-store/prose/model/openai"
	_ "github.com/prose-store/prose/model/replay"
)

var providers = []struct{ spec, api string }{
	{"openai:gpt-test", fakeserver.Responses},
	{"openai-chat:gpt-test", fakeserver.Chat},
	{"anthropic:claude-test", fakeserver.Anthropic},
}

// sleeps records the waits between retries instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func ok(text string) fakeserver.Reply {
	return fakeserver.Reply{Turn: &fakeserver.Turn{Text: text, Usage: model.Usage{Input: 3, Output: 1}}}
}

func TestProviderFailures(t *testing.T) {
	leak := `{"error":{"message":"Incorrect API key provided: ` + fakeserver.Key + `","type":"invalid_request_error"}}`
	cases := []struct {
		name      string
		replies   []fakeserver.Reply
		timeout   time.Duration
		wantKind  model.Kind
		wantText  []string
		wantCalls int
		wantSleep []time.Duration
	}{
		{name: "429 then success", replies: []fakeserver.Reply{{Status: 429, Header: map[string]string{"Retry-After": "7"}}, ok("fine")},
			wantCalls: 2, wantSleep: []time.Duration{7 * time.Second}},
		{name: "429 with an HTTP-date far away is capped", replies: []fakeserver.Reply{{Status: 429, Header: map[string]string{"Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"}}, ok("fine")},
			wantCalls: 2, wantSleep: []time.Duration{60 * time.Second}},
		{name: "500s until retries run out", replies: []fakeserver.Reply{{Status: 500}, {Status: 502}, {Status: 503}, {Status: 500, Body: `{"error":{"message":"overloaded, try later"}}`}},
			wantKind: model.KindServer, wantText: []string{"HTTP 500", "overloaded, try later", "failed 4 times"}, wantCalls: 4,
			wantSleep: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{name: "dropped connection then success", replies: []fakeserver.Reply{{Drop: true}, ok("fine")},
			wantCalls: 2, wantSleep: []time.Duration{500 * time.Millisecond}},
		{name: "dropped connections until retries run out", replies: []fakeserver.Reply{{Drop: true}, {Drop: true}, {Drop: true}, {Drop: true}},
			wantKind: model.KindNetwork, wantText: []string{"the connection failed after 4 attempts", "check the base URL and the network"}, wantCalls: 4},
		{name: "timeout", replies: []fakeserver.Reply{{Hang: true}}, timeout: 50 * time.Millisecond,
			wantKind: model.KindTimeout, wantText: []string{"no answer within 50ms"}, wantCalls: 1},
		{name: "401 echoing the key", replies: []fakeserver.Reply{{Status: 401, Body: leak}},
			wantKind: model.KindAuth, wantText: []string{"HTTP 401", "Incorrect API key provided", "_API_KEY"}, wantCalls: 1},
		{name: "403", replies: []fakeserver.Reply{{Status: 403, Body: `{"error":{"message":"not allowed"}}`}},
			wantKind: model.KindAuth, wantText: []string{"not allowed"}, wantCalls: 1},
		{name: "404", replies: []fakeserver.Reply{{Status: 404, Body: `{"error":{"message":"model gpt-test does not exist"}}`}},
			wantKind: model.KindNotFound, wantText: []string{"does not exist", "check the model name"}, wantCalls: 1},
		{name: "400 in the compatible-server shape", replies: []fakeserver.Reply{{Status: 400, Body: `{"error":"bad tool schema"}`}},
			wantKind: model.KindBadRequest, wantText: []string{"bad tool schema"}, wantCalls: 1},
	}
	for _, p := range providers {
		for _, c := range cases {
			t.Run(p.api+"/"+c.name, func(t *testing.T) {
				srv := fakeserver.New(t, p.api, c.replies...)
				var sl sleeps
				rec := filepath.Join(t.TempDir(), "rec.json")
				m, err := model.Open(p.spec, model.Config{Getenv: srv.Env(), Sleep: sl.sleep, Timeout: c.timeout, Record: rec})
				if err != nil {
					t.Fatal(err)
				}
				resp, err := m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hello")}})
				if got := len(srv.Bodies()); got != c.wantCalls {
					t.Errorf("server saw %d requests, want %d", got, c.wantCalls)
				}
				if c.wantKind == "" {
					if err != nil || resp.Text != "fine" {
						t.Fatalf("resp %+v, err %v", resp, err)
					}
				} else {
					if model.KindOf(err) != c.wantKind {
						t.Fatalf("err = %v (kind %q), want kind %q", err, model.KindOf(err), c.wantKind)
					}
					for _, w := range c.wantText {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q does not say %q", err, w)
						}
					}
					if strings.Count(err.Error(), "\n") > 0 {
						t.Errorf("error is not one line: %q", err)
					}
				}
				if err != nil && strings.Contains(err.Error(), "SECRET") {
					t.Fatalf("the key leaked into the error: %v", err)
				}
				if data, rerr := os.ReadFile(rec); rerr == nil && strings.Contains(string(data), "SECRET") {
					t.Fatalf("the key leaked into the recording")
				}
				sl.mu.Lock()
				defer sl.mu.Unlock()
				if len(c.wantSleep) > 0 && !equalDurations(sl.d, c.wantSleep) {
					t.Errorf("waits %v, want %v", sl.d, c.wantSleep)
				}
			})
		}
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCanceledCallStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := fakeserver.New(t, fakeserver.Responses, fakeserver.Reply{Hang: true, Arrived: cancel})
	m, err := model.Open("openai:gpt-test", model.Config{Getenv: srv.Env()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Call(ctx, model.Request{Messages: []model.Message{model.UserText("hi")}})
	if model.KindOf(err) != model.KindCanceled {
		t.Fatalf("err = %v, want canceled", err)
	}
}

func TestMissingKey(t *testing.T) {
	for _, spec := range []string{"openai:gpt-5", "anthropic:claude"} {
		_, err := model.Open(spec, model.Config{Getenv: func(string) string { return "" }})
		if model.KindOf(err) != model.KindConfig || !strings.Contains(err.Error(), "_API_KEY is not set") {
			t.Errorf("%s: err = %v", spec, err)
		}
	}
	// A local compatible server needs no key.
	env := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
	if _, err := model.Open("openai-chat:llama3.1", model.Config{Getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatal(err)
	}
}

func TestSpecs(t *testing.T) {
	cases := map[string]string{
		"":                             "has no provider",
		"gpt-5":                        "names no provider (write PROVIDER:NAME, e.g. openai:gpt-5; the providers are ",
		"openai":                       "names no model (write openai:NAME)",
		"OpenAI:gpt":                   "invalid provider name",
		"nosuch:x":                     `unknown model provider "nosuch"`,
		"offline":                      "not available in this build yet",
		"replay:/nonexistent/rec.json": "no such file",
	}
	if slices.Contains(model.Providers(), model.Offline) {
		delete(cases, "offline")
	}
	for spec, want := range cases {
		_, err := model.Open(spec, model.Config{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want %q", spec, err, want)
		}
	}
}
