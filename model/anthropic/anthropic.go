package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// DefaultBaseURL is the endpoint used when ANTHROPIC_BASE_URL is unset.
const DefaultBaseURL = "https://api.anthropic.com"

func init() {
	model.Register("anthropic", Open)
}

// Messages is a model served by the Anthropic Messages API.
type Messages struct {
	sdk  anthropic.Client
	key  string
	name string
}

// Open configures the SDK from cfg alone (never the process environment
// behind cfg's back).
func Open(name string, cfg model.Config) (model.Model, error) {
	key := cfg.Env("ANTHROPIC_API_KEY")
	if key == "" {
		return nil, &model.Error{Op: "open anthropic", Provider: "anthropic", Kind: model.KindConfig, Message: "ANTHROPIC_API_KEY is not set", Hint: "export ANTHROPIC_API_KEY"}
	}
	base := strings.TrimRight(cfg.Env("ANTHROPIC_BASE_URL"), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	sdk := anthropic.NewClient(
		option.WithAPIKey(key),
		option.WithBaseURL(base+"/"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(transport.Client(cfg)),
	)
	return &Messages{sdk: sdk, key: key, name: name}, nil
}

// Name returns "anthropic:NAME".
func (m *Messages) Name() string { return "anthropic:" + m.name }

// Call sends one request to POST /v1/messages.
func (m *Messages) Call(ctx context.Context, req model.Request) (model.Response, error) {
	op := "call " + m.Name()
	params, err := m.params(op, req)
	if err != nil {
		return model.Response{}, err
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		// This SDK version has no temperature field; the API still takes it.
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	var fail transport.Failure
	resp, err := m.sdk.Messages.New(transport.WithFailure(ctx, &fail), params, opts...)
	if err != nil {
		return model.Response{}, transport.Classify(op, "anthropic", err, &fail, m.key)
	}
	out := response(resp)
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

func (m *Messages) params(op string, req model.Request) (anthropic.MessageNewParams, error) {
	tools, err := model.WireTools(op, "anthropic", req.Tools)
	if err != nil {
		return anthropic.MessageNewParams{}, err
	}
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.name), MaxTokens: int64(req.MaxTokens)}
	if p.MaxTokens <= 0 {
		p.MaxTokens = model.DefaultMaxTokens
	}
	if req.System != "" {
		// The system text is the fixed part of a run's prompts: marked
		// for the prompt cache, which then serves tools and system to
		// every later call that starts with them.
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(msg.Text)))
		case model.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if msg.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			}
			for _, tc := range msg.ToolCalls {
				input := tc.Arguments
				if !isObject(input) {
					// The API takes only an object; the tool result
					// already told the model what was wrong.
					input = json.RawMessage("{}")
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		case model.RoleTool:
			var blocks []anthropic.ContentBlockParamUnion
			for _, r := range msg.ToolResults {
				blocks = append(blocks, anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError))
			}
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for _, t := range tools {
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Parameters)}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		if t.Strict {
			tp.Strict = anthropic.Bool(true)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	if req.Format != nil {
		// A structured answer is a forced call of a tool whose input
		// schema is the format's: the one form every model version takes.
		// A request may carry that tool itself among its tools (a run
		// whose calls share one tool list, for the prompt cache), with
		// the format's schema; else it is added last.
		schema, err := model.WireFormat(op, "anthropic", req.Format)
		if err != nil {
			return anthropic.MessageNewParams{}, err
		}
		have := false
		for _, t := range tools {
			if t.Name == req.Format.Name {
				if !t.Strict || !sameSchema(t.Parameters, schema) {
					return anthropic.MessageNewParams{}, &model.Error{Op: op, Provider: "anthropic", Kind: model.KindSchema, Message: fmt.Sprintf("the answer format and a tool are both named %q with different schemas", t.Name), Hint: "give the answer format a name of its own, or the tool the format's schema"}
				}
				have = true
			}
		}
		if !have {
			tp := &anthropic.ToolParam{Name: req.Format.Name, Description: anthropic.String("Give the answer: its input is the whole answer, as the schema says."),
				InputSchema: inputSchema(schema), Strict: anthropic.Bool(true)}
			p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
		}
		p.ToolChoice = anthropic.ToolChoiceParamOfTool(req.Format.Name)
	}
	return p, nil
}

// sameSchema reports whether two wire schemas are the same JSON.
func sameSchema(a, b map[string]any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// inputSchema carries every keyword of params: properties and required in
// the SDK's fields, the rest (additionalProperties above all) as extra
// fields, so nothing the canonical schema says is dropped.
func inputSchema(params map[string]any) anthropic.ToolInputSchemaParam {
	s := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range params {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if list, ok := v.([]any); ok {
				s.Required = make([]string, 0, len(list))
				for _, x := range list {
					if name, ok := x.(string); ok {
						s.Required = append(s.Required, name)
					}
				}
			}
		default:
			s.ExtraFields[k] = v
		}
	}
	return s
}

func response(r *anthropic.Message) model.Response {
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
			if len(args) == 0 {
				args = []byte("{}")
			}
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	switch r.StopReason {
	case anthropic.StopReasonToolUse:
		out.StopReason = model.StopToolUse
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		out.StopReason = model.StopEnd
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		out.StopReason = model.StopMaxTokens
	case anthropic.StopReasonRefusal:
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
