package model_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/model"
)

// loopback starts a server answering every request with handle, and
// returns a Getenv pointing every provider at it with key.
func loopback(t *testing.T, key string, handle http.HandlerFunc) func(string) string {
	t.Helper()
	srv := httptest.NewServer(handle)
	t.Cleanup(srv.Close)
	vars := map[string]string{
		"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": key,
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": key,
	}
	return func(k string) string { return vars[k] }
}

var compatible = []string{"openai:gpt-test", "openai-chat:gpt-test", "anthropic:claude-test"}

// A provider answering 200 with a body that is not the API's JSON (a web
// page, a proxy's login form, plain text) is reported as what came back:
// the status, the content type and a short prefix of the body, with the
// key removed from it — not as a failed connection.
func TestAnOKThatIsNotJSONSaysWhatCameBack(t *testing.T) {
	const key = "ZZTOKEN123456"
	page := "<!doctype html><html><head><title>Sign in to the proxy</title></head><body>token " + key + " " + strings.Repeat("padding ", 200) + "</body></html>"
	for _, spec := range compatible {
		t.Run(spec, func(t *testing.T) {
			env := loopback(t, key, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, page)
			})
			m, err := model.Open(spec, model.Config{Getenv: env, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hello")}})
			if model.KindOf(err) != model.KindResponse {
				t.Fatalf("err = %v (kind %q), want kind %q", err, model.KindOf(err), model.KindResponse)
			}
			msg := err.Error()
			for _, w := range []string{"HTTP 200", "text/html", "Sign in to the proxy", "not JSON", "_BASE_URL"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			for _, w := range []string{"connection failed", key, "padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding"} {
				if strings.Contains(msg, w) {
					t.Errorf("error %q says %q", msg, w[:min(len(w), 40)])
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// A timed-out attempt's hint names the flag and variable that raise the
// timeout, and the timeout in force.
func TestATimeoutNamesTheFlagThatRaisesIt(t *testing.T) {
	for _, spec := range compatible {
		t.Run(spec, func(t *testing.T) {
			env := loopback(t, "k", func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body) // the server notices the client leave only once the body is read
				<-r.Context().Done()
			})
			m, err := model.Open(spec, model.Config{Getenv: env, Timeout: 40 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hello")}})
			if model.KindOf(err) != model.KindTimeout {
				t.Fatalf("err = %v, want a timeout", err)
			}
			for _, w := range []string{"no answer within 40ms", "--model-timeout", "PROSE_MODEL_TIMEOUT"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A key of no known shape (a compatible server's own token) echoed back
// whole or masked in a 401 answer, in the error message or in the body of
// a 200 that is not JSON, appears in no error and no recording. A short
// key (8 characters) is removed as it is; a longer one also when echoed
// masked (its start kept, the rest starred).
func TestAKeyOfNoKnownShapeIsRedacted(t *testing.T) {
	for _, key := range []string{"ZZTOKEN123456", "QQ7x9Kp2"} {
		bodies := map[string]string{
			"nested":  `{"error":{"message":"Incorrect API key provided: ` + key + `. You can find your key at the console."}}`,
			"flat":    `{"error":"invalid token ` + key + `"}`,
			"textual": "401 Unauthorized: bearer " + key + " rejected",
		}
		leaks := []string{key}
		if len(key) >= 12 {
			bodies["masked"] = `{"message":"invalid token ` + key[:8] + `*****` + key[len(key)-3:] + `"}`
			leaks = append(leaks, key[:8])
		}
		for _, spec := range compatible {
			for name, body := range bodies {
				t.Run(key+"/"+spec+"/"+name, func(t *testing.T) {
					env := loopback(t, key, func(w http.ResponseWriter, r *http.Request) {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(401)
						io.WriteString(w, body)
					})
					rec := filepath.Join(t.TempDir(), "rec.json")
					m, err := model.Open(spec, model.Config{Getenv: env, Record: rec})
					if err != nil {
						t.Fatal(err)
					}
					_, err = m.Call(context.Background(), model.Request{Messages: []model.Message{model.UserText("hello")}})
					if model.KindOf(err) != model.KindAuth {
						t.Fatalf("err = %v, want an auth error", err)
					}
					for _, leak := range leaks {
						if strings.Contains(err.Error(), leak) || strings.Contains(fmt.Sprintf("%+v", err), leak) {
							t.Fatalf("the key leaked into the error: %v", err)
						}
					}
					if !strings.Contains(err.Error(), "[redacted]") {
						t.Errorf("error %q does not show where the key was", err)
					}
					if data, rerr := os.ReadFile(rec); rerr == nil && strings.Contains(string(data), key[:6]) {
						t.Fatalf("the key leaked into the recording")
					}
				})
			}
		}
	}
}
