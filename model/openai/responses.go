package openai

import (
	"context"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// Responses is a model served by the OpenAI Responses API.
type Responses struct {
	api  transport.Endpoint
	name string
}

// Name returns "openai:NAME".
func (m *Responses) Name() string { return "openai:" + m.name }

// Call sends one request to POST /responses. Nothing is stored on the
// provider's side (store: false): every call carries the whole
// conversation, so a recording replays without server state.
func (m *Responses) Call(ctx context.Context, req model.Request) (model.Response, error) {
	op := "call " + m.Name()
	body, err := m.request(op, req)
	if err != nil {
		return model.Response{}, err
	}
	var a responsesAnswer
	if err := m.api.Post(ctx, op, body, &a); err != nil {
		return model.Response{}, err
	}
	return m.response(&a), nil
}

func (m *Responses) request(op string, req model.Request) (*responsesRequest, error) {
	tools, err := model.WireTools(op, "openai", req.Tools)
	if err != nil {
		return nil, err
	}
	p := &responsesRequest{Model: m.name, Store: false, Instructions: req.System, MaxOutputTokens: max(req.MaxTokens, 0), Temperature: req.Temperature, Input: []item{}}
	if req.Format != nil {
		schema, err := model.WireFormat(op, "openai", req.Format)
		if err != nil {
			return nil, err
		}
		p.Text = &textParam{Format: jsonSchema{Type: "json_schema", Name: req.Format.Name, Schema: schema, Strict: true}}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			p.Input = append(p.Input, item{Role: "user", Content: ptr(msg.Text)})
		case model.RoleAssistant:
			if msg.Text != "" {
				p.Input = append(p.Input, item{Role: "assistant", Content: ptr(msg.Text)})
			}
			for _, tc := range msg.ToolCalls {
				p.Input = append(p.Input, item{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: ptr(string(tc.Arguments))})
			}
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				p.Input = append(p.Input, item{Type: "function_call_output", CallID: r.CallID, Output: ptr(r.Content)})
			}
		}
	}
	for _, t := range tools {
		p.Tools = append(p.Tools, function{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict})
	}
	if req.Format != nil && len(p.Tools) > 0 {
		// The tools of a structured answer are sent so the request starts
		// as the run's other calls do (the prompt cache's prefix), but
		// none may be called: the answer is the JSON object.
		p.ToolChoice = "none"
	}
	return p, nil
}

func (m *Responses) response(r *responsesAnswer) model.Response {
	out := model.Response{
		Usage: model.Usage{
			Input:       r.Usage.InputTokens,
			CachedInput: r.Usage.InputTokensDetails.CachedTokens,
			Output:      r.Usage.OutputTokens,
		},
	}
	refused := false
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					out.Text += c.Text
				case "refusal":
					out.Text += c.Refusal
					refused = true
				}
			}
		case "function_call":
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: it.CallID, Name: it.Name, Arguments: arguments(it.Arguments)})
		}
	}
	switch {
	case len(out.ToolCalls) > 0:
		out.StopReason = model.StopToolUse
	case refused:
		out.StopReason = model.StopRefusal
	case r.Status == "incomplete" && r.IncompleteDetails.Reason == "max_output_tokens":
		out.StopReason = model.StopMaxTokens
	case r.Status == "incomplete":
		out.StopReason = model.StopRefusal
	case r.Status == "completed" || r.Status == "":
		out.StopReason = model.StopEnd
	default:
		out.StopReason = model.StopOther
	}
	return out
}
