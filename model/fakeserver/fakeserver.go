package fakeserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/prose-store/prose/model"
)

// The APIs a Server can speak.
const (
	Responses = "responses"
	Chat      = "chat"
	Anthropic = "anthropic"
)

// Key is the API key the fake expects; tests check it never leaks.
const Key = "sk-test-SECRET-0123456789abcdef"

// Reply is one scripted answer.
type Reply struct {
	Turn   *Turn             // a successful answer in the API's format
	Status int               // an error status (with Body or a default error)
	Body   string            // a raw body for an error status
	Header map[string]string // extra headers (Retry-After)
	Hang   bool              // never answer: the client must time out
	Drop   bool              // close the connection without an answer
	// Arrived, if set, is called when the request arrives, before the
	// reply (a test cancels its context here).
	Arrived func()
}

// Turn is a model's answer.
type Turn struct {
	Text  string
	Calls []Call
	Usage model.Usage
}

// Call is one tool call in a Turn.
type Call struct{ ID, Name, Args string }

// Server is a loopback fake of one API.
type Server struct {
	*httptest.Server
	api string
	opt Options

	mu       sync.Mutex
	script   []Reply
	bodies   [][]byte
	results  [][]ToolResult // of each body, as ToolResults reads them
	auth     []string
	paths    []string
	hangDone chan struct{}
	// prev is the last request in the provider's order (Order), for
	// Prefixes; prefixes the shared leading bytes of each with the one
	// before it.
	prev      string
	prevFixed int
	prefixes  []Prefix
	calls     int
	// lastOfKind is the last request of each kind (Kinds).
	lastOfKind map[string]string
	kinds      []KindPrefix
	// used is the usage of every answer given; inFlight the requests
	// being answered, maxInFlight the most at once.
	used                  model.Usage
	inFlight, maxInFlight int
}

// New starts a fake of api answering with replies in order; once they run
// out every request gets a 500 naming the problem. It stops with the test.
func New(t interface{ Cleanup(func()) }, api string, replies ...Reply) *Server {
	return NewWith(t, api, Options{}, replies...)
}

// NewWith starts a fake of api with opt; without opt.Respond it answers
// with replies in order, as New does.
func NewWith(t interface{ Cleanup(func()) }, api string, opt Options, replies ...Reply) *Server {
	s := &Server{api: api, opt: opt, script: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Env returns a Getenv for model.Config pointing the provider of the
// server's API at it, with Key as the key.
func (s *Server) Env() func(string) string {
	vars := map[string]string{
		"OPENAI_BASE_URL":    s.URL + "/v1",
		"OPENAI_API_KEY":     Key,
		"ANTHROPIC_BASE_URL": s.URL,
		"ANTHROPIC_API_KEY":  Key,
	}
	return func(k string) string { return vars[k] }
}

// Bodies returns the request bodies received so far.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Used returns the usage of every answer given so far, as the answers
// reported it (a reply without usage is counted by the Tokens rule).
func (s *Server) Used() model.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// MaxInFlight returns the most requests the server was answering at
// once: above 1 when calls overlapped.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Paths returns the request paths received so far.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// Auth returns the credential header of each request (Authorization or
// x-api-key), so tests can check the key was sent where it belongs.
func (s *Server) Auth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.paths = append(s.paths, r.URL.Path)
	cred := r.Header.Get("Authorization")
	if cred == "" {
		cred = r.Header.Get("X-Api-Key")
	}
	s.auth = append(s.auth, cred)
	n := len(s.bodies)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	in := s.incoming(n-1, body)
	s.results = append(s.results, in.Results)
	if p := checkHeaders(s.api, r.Header); p != "" && in.problem == "" {
		in.problem = p
	}
	s.calls++
	limited := s.opt.RateLimitEvery > 0 && s.calls%s.opt.RateLimitEvery == 0
	var reply Reply
	switch {
	case limited:
		after := s.opt.RetryAfter
		if after == "" {
			after = "1"
		}
		reply = Reply{Status: 429, Body: `{"error":{"message":"rate limit reached (the fake's every-N rule)","type":"rate_limit_error"}}`, Header: map[string]string{"Retry-After": after}}
	case s.opt.Respond != nil || in.problem != "":
	case len(s.script) > 0:
		reply, s.script = s.script[0], s.script[1:]
	default:
		reply = Reply{Status: 500, Body: `{"error":{"message":"the fake server's script is exhausted"}}`}
	}
	if !limited && in.problem == "" {
		s.notePrefix(in)
		s.noteFixed(in)
	}
	s.mu.Unlock()

	if want := s.path(); r.URL.Path != want {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"fake %s serves %s, not %s"}}`, s.api, want, r.URL.Path), 404)
		return
	}
	if in.problem != "" {
		// A request the API would refuse, refused as it would be.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		msg, _ := json.Marshal(in.problem)
		fmt.Fprintf(w, `{"error":{"message":%s,"type":"invalid_request_error"}}`, msg)
		return
	}
	if s.opt.Arrived != nil {
		s.opt.Arrived(in)
	}
	if s.opt.Latency > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.opt.Latency):
		}
	}
	if !limited && s.opt.Respond != nil {
		reply = s.opt.Respond(in)
	}
	if reply.Turn != nil && reply.Turn.Usage == (model.Usage{}) {
		t := *reply.Turn
		t.Usage = model.Usage{Input: Tokens(in.Order), Output: Tokens(t.Text) + callTokens(t.Calls)}
		reply.Turn = &t
	}
	if reply.Turn != nil {
		s.mu.Lock()
		s.used = s.used.Add(reply.Turn.Usage)
		s.mu.Unlock()
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Arrived != nil {
		reply.Arrived()
	}
	if reply.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.Turn == nil {
		status := reply.Status
		if status == 0 {
			status = 500
		}
		b := reply.Body
		if b == "" {
			b = fmt.Sprintf(`{"error":{"message":"scripted failure %d"}}`, status)
		}
		w.WriteHeader(status)
		io.WriteString(w, b)
		return
	}
	out, _ := json.Marshal(s.render(reply.Turn, n))
	w.Write(out)
}

// checkHeaders checks the headers each API documents as required: a JSON
// content type, and on Anthropic the anthropic-version.
func checkHeaders(api string, h http.Header) string {
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("content-type %q: the body must be sent as application/json", ct)
	}
	if api == Anthropic && h.Get("Anthropic-Version") == "" {
		return "anthropic-version: header is required"
	}
	return ""
}

func (s *Server) path() string {
	switch s.api {
	case Responses:
		return "/v1/responses"
	case Chat:
		return "/v1/chat/completions"
	default:
		return "/v1/messages"
	}
}

// render writes t in the API's documented response shape.
func (s *Server) render(t *Turn, n int) any {
	switch s.api {
	case Responses:
		var output []any
		if t.Text != "" {
			output = append(output, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}})
		}
		for _, c := range t.Calls {
			output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args, "status": "completed"})
		}
		return map[string]any{"id": fmt.Sprintf("resp_%d", n), "object": "response", "status": "completed", "model": "fake", "output": output,
			"usage": map[string]any{"input_tokens": t.Usage.Input, "input_tokens_details": map[string]any{"cached_tokens": t.Usage.CachedInput},
				"output_tokens": t.Usage.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": t.Usage.Input + t.Usage.Output}}
	case Chat:
		msg := map[string]any{"role": "assistant", "content": t.Text}
		finish := "stop"
		if len(t.Calls) > 0 {
			var calls []any
			for _, c := range t.Calls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = calls
			finish = "tool_calls"
		}
		return map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage": map[string]any{"prompt_tokens": t.Usage.Input, "completion_tokens": t.Usage.Output, "total_tokens": t.Usage.Input + t.Usage.Output,
				"prompt_tokens_details": map[string]any{"cached_tokens": t.Usage.CachedInput}}}
	default:
		var content []any
		if t.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		stop := "end_turn"
		for _, c := range t.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
			stop = "tool_use"
		}
		return map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": "fake", "content": content, "stop_reason": stop,
			"usage": map[string]any{"input_tokens": t.Usage.Input - t.Usage.CachedInput, "cache_read_input_tokens": t.Usage.CachedInput, "cache_creation_input_tokens": 0, "output_tokens": t.Usage.Output}}
	}
}
