package fakeserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Options make a Server behave as a busy provider does.
type Options struct {
	// Respond, when set, answers each request by its content (parallel
	// calls arrive in any order) instead of the script.
	Respond func(in *Incoming) Reply
	// Latency is how long each answer takes (a canceled request ends the
	// wait at once).
	Latency time.Duration
	// RateLimitEvery, when above 0, answers every Nth request 429 with
	// Retry-After: RetryAfter (seconds, default "1").
	RateLimitEvery int
	RetryAfter     string
	// Arrived, when set, sees each request as it arrives, before the
	// latency (a test counts the calls in flight here).
	Arrived func(in *Incoming)
	// RefuseFormat makes a Chat Completions fake refuse response_format
	// with a 400, as servers without structured output do.
	RefuseFormat bool
}

// Incoming is one request as a Respond function sees it.
type Incoming struct {
	// N is the request's index in arrival order, from 0.
	N    int
	Body []byte
	// Format is the name of the structured answer asked for: text.format
	// (Responses), response_format (Chat) or the forced tool (Anthropic);
	// "" when none.
	Format string
	// ToolChoice is the request's tool_choice as JSON ("" when absent).
	ToolChoice string
	// System is the system text; Users the user texts, oldest first.
	System string
	Users  []string
	// Assistant counts the assistant turns so far.
	Assistant int
	// Results are the tool results the request carries for the model's
	// previous turn.
	Results []ToolResult
	// Order is the request as the provider reads it for its prompt cache:
	// tools, then system, then messages, each as JSON.
	Order string
	// FixedLen is how much of Order is tools and system: the part a run
	// keeps the same across the calls of one kind.
	FixedLen int

	problem string
}

// Text is every text of the request: system and user texts.
func (in *Incoming) Text() string { return in.System + "\n" + strings.Join(in.Users, "\n") }

// Tokens is the fake's token count of s: one token per four bytes,
// rounded up. Usage left zero in a reply is counted by this rule: input
// the request's Order, output the answer's text and call arguments.
func Tokens(s string) int64 { return int64(len(s)+3) / 4 }

func callTokens(calls []Call) int64 {
	var n int64
	for _, c := range calls {
		n += Tokens(c.Name + c.Args)
	}
	return n
}

// Prefix is how much of one request repeats the one before it.
type Prefix struct {
	// Shared is the length in bytes of the leading part of the request
	// (in the provider's order) equal to the previous request's; Len the
	// request's whole length; Fixed the bytes of its tools and system.
	Shared, Len, Fixed int
	// Whole is whether the request starts with the whole of the previous
	// request's tools and system, and those are as long as its own: the
	// run's fixed part, shared by consecutive calls of any kind.
	Whole bool
}

// KindPrefix is how much of a request repeats the last request of its
// kind (same tools and format: an analysis call, a generation turn).
type KindPrefix struct {
	// Shared is the bytes of the leading part (in the provider's cache
	// order) equal to the last request of the kind; Fixed the bytes of
	// this request's tools and system; Whole whether the request starts
	// with the whole of that request's tools and system.
	Shared, Fixed int
	Whole         bool
}

// Kinds returns, for each answered request after the first of its kind,
// its shared leading part with the last request of that kind: prompts
// laid out for caching start every such request with the whole fixed
// part (tools and system), and a fixed part of some length.
func (s *Server) Kinds() []KindPrefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]KindPrefix(nil), s.kinds...)
}

// Prefixes returns, for each request after the first that was answered,
// its shared leading part with the one before it, in arrival order.
func (s *Server) Prefixes() []Prefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Prefix(nil), s.prefixes...)
}

func (s *Server) noteFixed(in *Incoming) {
	kind := in.Format + "|" + in.Order[:strings.Index(in.Order, "\n")]
	if s.lastOfKind == nil {
		s.lastOfKind = map[string]string{}
	}
	if prev, ok := s.lastOfKind[kind]; ok {
		n := 0
		for n < len(in.Order) && n < len(prev) && in.Order[n] == prev[n] {
			n++
		}
		s.kinds = append(s.kinds, KindPrefix{Shared: n, Fixed: in.FixedLen, Whole: n >= in.FixedLen})
	}
	s.lastOfKind[kind] = in.Order
}

func (s *Server) notePrefix(in *Incoming) {
	if s.prev != "" {
		n := 0
		for n < len(in.Order) && n < len(s.prev) && in.Order[n] == s.prev[n] {
			n++
		}
		s.prefixes = append(s.prefixes, Prefix{Shared: n, Len: len(in.Order), Fixed: in.FixedLen, Whole: n >= in.FixedLen && in.FixedLen == s.prevFixed})
	}
	s.prev, s.prevFixed = in.Order, in.FixedLen
}

var nameRule = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// incoming reads a request body and checks it against the API's
// documented payload; a problem is answered 400 as the API would.
func (s *Server) incoming(n int, body []byte) *Incoming {
	in := &Incoming{N: n, Body: body}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		in.problem = "the body is not JSON: " + err.Error()
		return in
	}
	in.Results = lastTurnResults(s.api, n, body)
	if m, _ := doc["model"].(string); m == "" {
		in.problem = "model: required"
		return in
	}
	in.problem = s.checkShape(doc, in)
	tools, _ := json.Marshal(doc["tools"])
	if tc, ok := doc["tool_choice"]; ok {
		in.ToolChoice = string(raw(tc))
	}
	switch s.api {
	case Responses:
		in.System, _ = doc["instructions"].(string)
		items, _ := doc["input"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			switch {
			case m["role"] == "user":
				in.Users = append(in.Users, text(raw(m["content"])))
			case m["role"] == "assistant" || m["type"] == "function_call":
				in.Assistant++
			}
		}
		sys, _ := json.Marshal(doc["instructions"])
		input, _ := json.Marshal(doc["input"])
		in.Order = string(tools) + "\n" + string(sys) + "\n" + string(input)
		in.FixedLen = len(tools) + len(sys) + 2
	case Chat:
		msgs, _ := doc["messages"].([]any)
		for _, it := range msgs {
			m, _ := it.(map[string]any)
			switch m["role"] {
			case "system", "developer":
				in.System += text(raw(m["content"]))
			case "user":
				in.Users = append(in.Users, text(raw(m["content"])))
			case "assistant":
				in.Assistant++
			}
		}
		all, _ := json.Marshal(doc["messages"])
		in.Order = string(tools) + "\n" + string(all)
		if msgs, _ := doc["messages"].([]any); len(msgs) > 0 && Lookup(msgs, 0, "role") == "system" {
			first, _ := json.Marshal(msgs[0])
			in.FixedLen = len(tools) + 2 + len(first)
		} else {
			in.FixedLen = len(tools) + 1
		}
	default:
		in.System = text(raw(doc["system"]))
		msgs, _ := doc["messages"].([]any)
		for _, it := range msgs {
			m, _ := it.(map[string]any)
			switch m["role"] {
			case "user":
				if t := text(raw(m["content"])); t != "" {
					in.Users = append(in.Users, t)
				}
			case "assistant":
				in.Assistant++
			}
		}
		sys, _ := json.Marshal(doc["system"])
		all, _ := json.Marshal(doc["messages"])
		in.Order = string(tools) + "\n" + string(sys) + "\n" + string(all)
		in.FixedLen = len(tools) + len(sys) + 2
	}
	return in
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// checkShape checks the structured-output part of a request as each
// API documents it, and the fields every request needs.
func (s *Server) checkShape(doc map[string]any, in *Incoming) string {
	strictSchema := func(where string, v any) string {
		sch, ok := v.(map[string]any)
		if !ok {
			return where + ": schema must be an object"
		}
		if sch["type"] != "object" {
			return where + ": the schema's root must be an object"
		}
		if err := CheckStrict(sch, where); err != nil {
			return "invalid schema for strict output: " + err.Error()
		}
		return ""
	}
	switch s.api {
	case Responses:
		if _, ok := doc["input"].([]any); !ok {
			return "input: required list"
		}
		if _, ok := doc["response_format"]; ok {
			return "response_format is not a Responses parameter: use text.format"
		}
		f, ok := Lookup(doc, "text", "format").(map[string]any)
		if !ok {
			return ""
		}
		if f["type"] != "json_schema" {
			return fmt.Sprintf("text.format.type %v is not json_schema", f["type"])
		}
		name, _ := f["name"].(string)
		if !nameRule.MatchString(name) {
			return fmt.Sprintf("text.format.name %q: 1 to 64 of a-z, A-Z, 0-9, _ and -", name)
		}
		if f["strict"] != true {
			return "text.format.strict: prose always asks for strict output"
		}
		in.Format = name
		return strictSchema("text.format.schema", f["schema"])
	case Chat:
		if _, ok := doc["messages"].([]any); !ok {
			return "messages: required list"
		}
		rf, ok := doc["response_format"].(map[string]any)
		if !ok {
			return ""
		}
		if s.opt.RefuseFormat {
			return "response_format is not supported by this server"
		}
		if rf["type"] != "json_schema" {
			return fmt.Sprintf("response_format.type %v is not json_schema", rf["type"])
		}
		js, _ := rf["json_schema"].(map[string]any)
		name, _ := js["name"].(string)
		if !nameRule.MatchString(name) {
			return fmt.Sprintf("response_format.json_schema.name %q: 1 to 64 of a-z, A-Z, 0-9, _ and -", name)
		}
		if js["strict"] != true {
			return "response_format.json_schema.strict: prose always asks for strict output"
		}
		in.Format = name
		return strictSchema("response_format.json_schema.schema", js["schema"])
	default:
		if _, ok := doc["messages"].([]any); !ok {
			return "messages: required list"
		}
		if mt, ok := doc["max_tokens"].(float64); !ok || mt < 1 {
			return "max_tokens: required, at least 1"
		}
		if _, ok := doc["response_format"]; ok {
			return "response_format: Extra inputs are not permitted"
		}
		if sys, ok := doc["system"].([]any); ok {
			for i, b := range sys {
				m, _ := b.(map[string]any)
				if m["type"] != "text" {
					return fmt.Sprintf("system.%d.type: must be text", i)
				}
				if cc, ok := m["cache_control"].(map[string]any); ok && cc["type"] != "ephemeral" {
					return fmt.Sprintf("system.%d.cache_control.type: must be ephemeral", i)
				}
			}
		}
		tc, ok := doc["tool_choice"].(map[string]any)
		if !ok || tc["type"] != "tool" {
			return ""
		}
		name, _ := tc["name"].(string)
		tools, _ := doc["tools"].([]any)
		for _, t := range tools {
			m, _ := t.(map[string]any)
			if m["name"] == name {
				if sch, ok := m["input_schema"].(map[string]any); !ok || sch["type"] != "object" {
					return "tools: input_schema.type must be object"
				}
				in.Format = name
				return ""
			}
		}
		return fmt.Sprintf("tool_choice.name %q names no tool of the request", name)
	}
}

// Answer is a reply giving text as the answer in the form the request
// asked for: the forced tool's call on Anthropic when a format was asked
// for (text that is not JSON, which no tool input can be, comes back as
// a text block instead), the text itself everywhere else.
func (s *Server) Answer(in *Incoming, text string) Reply {
	if s.api == Anthropic && in.Format != "" && json.Valid([]byte(text)) {
		return Reply{Turn: &Turn{Calls: []Call{{ID: fmt.Sprintf("toolu_%d", in.N), Name: in.Format, Args: text}}}}
	}
	return Reply{Turn: &Turn{Text: text}}
}
