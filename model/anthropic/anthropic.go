package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// DefaultBaseURL is the endpoint used when ANTHROPIC_BASE_URL is unset.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version every request carries: the
// version the answers are read in.
const APIVersion = "2026-10-21"

func init() {
	model.Register("anthropic", Open)
}

// Messages is a model served by the Anthropic Messages API.
type Messages struct {
	api  transport.Endpoint
	name string
}

// Open configures the model from cfg alone (never the process
// environment behind cfg's back).
func Open(name string, cfg model.Config) (model.Model, error) {
	key := cfg.Env("ANTHROPIC_API_KEY")
	if key == "" {
		return nil, &model.Error{Op: "open anthropic", Provider: "anthropic", Kind: model.KindConfig, Message: "ANTHROPIC_API_KEY is not set", Hint: "export ANTHROPIC_API_KEY"}
	}
	base := cfg.Env("ANTHROPIC_BASE_URL")
	if base == "" {
		base = DefaultBaseURL
	}
	base, err := transport.BaseURL("open anthropic", "anthropic", "ANTHROPIC_BASE_URL", base)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	header.Set("Authorization", "Bearer "+key)
	header.Set("Anthropic-Version", APIVersion)
	return &Messages{name: name, api: transport.Endpoint{
		Provider: "anthropic", URL: base + "/v1/messages", Header: header, Key: key, Client: transport.Client(cfg),
	}}, nil
}

// Name returns "anthropic:NAME".
func (m *Messages) Name() string { return "anthropic:" + m.name }

// Call sends one request to POST /v1/messages.
func (m *Messages) Call(ctx context.Context, req model.Request) (model.Response, error) {
	op := "call " + m.Name()
	body, err := m.request(op, req)
	if err != nil {
		return model.Response{}, err
	}
	var a answer
	if err := m.api.Post(ctx, op, body, &a); err != nil {
		return model.Response{}, err
	}
	out := response(&a)
	if req.Format != nil {
		out = formatted(out, req.Format.Name)
	}
	return out, nil
}

// formatted turns the forced call of the answer-format tool into the
// answer's text, as the other providers' structured answers are text.
func formatted(r model.Response, name string) model.Response {
	var calls []model.ToolCall
	for _, c := range r.ToolCalls {
		if c.Name == name {
			r.Text = string(c.Arguments)
			continue
		}
		calls = append(calls, c)
	}
	r.ToolCalls = calls
	if len(calls) == 0 && r.StopReason == model.StopToolUse {
		r.StopReason = model.StopEnd
	}
	return r
}

func text(s string) block { return block{Type: "text", Text: &s} }

func (m *Messages) request(op string, req model.Request) (*request, error) {
	tools, err := model.WireTools(op, "anthropic", req.Tools)
	if err != nil {
		return nil, err
	}
	p := &request{Model: m.name, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Messages: []message{}}
	if p.MaxTokens <= 0 {
		p.MaxTokens = model.DefaultMaxTokens
	}
	if req.System != "" {
		// The system text is the fixed part of a run's prompts: marked
		// for the prompt cache, which then serves tools and system to
		// every later call that starts with them.
		p.System = []textBlock{{Type: "text", Text: req.System, CacheControl: &cacheControl{Type: "ephemeral"}}}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, message{Role: "user", Content: []block{text(msg.Text)}})
		case model.RoleAssistant:
			blocks := []block{}
			if msg.Text != "" {
				blocks = append(blocks, text(msg.Text))
			}
			for _, tc := range msg.ToolCalls {
				input := tc.Arguments
				if !isObject(input) {
					// The API takes only an object; the tool result
					// already told the model what was wrong.
					input = json.RawMessage("{}")
				}
				blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
			}
			p.Messages = append(p.Messages, message{Role: "assistant", Content: blocks})
		case model.RoleTool:
			blocks := []block{}
			for _, r := range msg.ToolResults {
				isError := r.IsError
				blocks = append(blocks, block{Type: "tool_result", ToolUseID: r.CallID, Content: []textBlock{{Type: "text", Text: r.Content}}, IsError: &isError})
			}
			p.Messages = append(p.Messages, message{Role: "user", Content: blocks})
		}
	}
	yes := true
	for _, t := range tools {
		tp := tool{Name: t.Name, Description: t.Description, InputSchema: inputSchema(t.Parameters)}
		if t.Strict {
			tp.Strict = &yes
		}
		p.Tools = append(p.Tools, tp)
	}
	if req.Format != nil {
		// A structured answer is a forced call of a tool whose input
		// schema is the format's: the one form every model version takes.
		// A request may carry that tool itself among its tools (a run
		// whose calls share one tool list, for the prompt cache), with
		// the format's schema; else it is added last.
		schema, err := model.WireFormat(op, "anthropic", req.Format)
		if err != nil {
			return nil, err
		}
		have := false
		for _, t := range tools {
			if t.Name == req.Format.Name {
				if !t.Strict || !sameSchema(t.Parameters, schema) {
					return nil, &model.Error{Op: op, Provider: "anthropic", Kind: model.KindSchema, Message: fmt.Sprintf("the answer format and a tool are both named %q with different schemas", t.Name), Hint: "give the answer format a name of its own, or the tool the format's schema"}
				}
				have = true
			}
		}
		if !have {
			p.Tools = append(p.Tools, tool{Name: req.Format.Name, Description: "Give the answer: its input is the whole answer, as the schema says.",
				InputSchema: inputSchema(schema), Strict: &yes})
		}
		p.ToolChoice = &toolChoice{Type: "tool", Name: req.Format.Name}
	}
	return p, nil
}

// sameSchema reports whether two wire schemas are the same JSON.
func sameSchema(a, b map[string]any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// inputSchema is params as an input_schema: every keyword kept
// (additionalProperties above all), its type the object the API requires.
func inputSchema(params map[string]any) map[string]any {
	s := maps.Clone(params)
	if s == nil {
		s = map[string]any{}
	}
	s["type"] = "object"
	return s
}

func response(r *answer) model.Response {
	out := model.Response{
		Usage: model.Usage{
			Input:       r.Usage.InputTokens + r.Usage.CacheReadInputTokens + r.Usage.CacheCreationInputTokens,
			CachedInput: r.Usage.CacheReadInputTokens,
			Output:      r.Usage.OutputTokens,
		},
	}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			out.Text += b.Text
		case "tool_use":
			args := b.Input
			if len(args) == 0 || string(args) == "null" {
				args = []byte("{}")
			}
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	switch r.StopReason {
	case "tool_use":
		out.StopReason = model.StopToolUse
	case "end_turn", "stop_sequence":
		out.StopReason = model.StopEnd
	case "max_tokens", "model_context_window_exceeded":
		out.StopReason = model.StopMaxTokens
	case "refusal":
		out.StopReason = model.StopRefusal
	default:
		out.StopReason = model.StopOther
	}
	if len(out.ToolCalls) > 0 {
		out.StopReason = model.StopToolUse
	}
	return out
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
