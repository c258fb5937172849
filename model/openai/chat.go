package openai

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// Chat is a model served by the Chat Completions API: OpenAI's own, or a
// compatible server's at OPENAI_BASE_URL.
type Chat struct {
	api    transport.Endpoint
	name   string
	notice func(string)
	// plain is set once the server refused response_format: every later
	// structured request carries its schema in the prompt instead.
	plain atomic.Bool
}

// Name returns "openai-chat:NAME".
func (m *Chat) Name() string { return "openai-chat:" + m.name }

// Call sends one request to POST /chat/completions.
func (m *Chat) Call(ctx context.Context, req model.Request) (model.Response, error) {
	op := "call " + m.Name()
	structured := req.Format != nil && !m.plain.Load()
	body, err := m.request(op, req, structured)
	if err != nil {
		return model.Response{}, err
	}
	var a chatAnswer
	if err := m.api.Post(ctx, op, body, &a); err != nil {
		if !structured || !refusedFormat(err) {
			return model.Response{}, err
		}
		// The server does not take response_format: ask with the schema
		// in the prompt, now and for the rest of this model's calls.
		if body, err = m.request(op, req, false); err != nil {
			return model.Response{}, err
		}
		a = chatAnswer{}
		if err := m.api.Post(ctx, op, body, &a); err != nil {
			return model.Response{}, err
		}
		if !m.plain.Swap(true) && m.notice != nil {
			m.notice(fmt.Sprintf("%s does not take response_format json_schema; asking for JSON in the prompt instead", m.Name()))
		}
	}
	if len(a.Choices) == 0 {
		return model.Response{}, &model.Error{Op: op, Provider: "openai-chat", Kind: model.KindResponse, Message: "the answer holds no choice", Hint: "check that the server at OPENAI_BASE_URL speaks Chat Completions"}
	}
	return m.response(&a), nil
}

// refusedFormat reports a 400 or 422 answer to a request carrying
// response_format: a server that does not support it says so that way.
func refusedFormat(err error) bool {
	var e *model.Error
	return errors.As(err, &e) && e.Kind == model.KindBadRequest && (e.Status == 400 || e.Status == 422)
}

func (m *Chat) request(op string, req model.Request, structured bool) (*chatRequest, error) {
	tools, err := model.WireTools(op, "openai-chat", req.Tools)
	if err != nil {
		return nil, err
	}
	p := &chatRequest{Model: m.name, MaxCompletionTokens: max(req.MaxTokens, 0), Temperature: req.Temperature, Messages: []chatMessage{}}
	if req.Format != nil {
		schema, err := model.WireFormat(op, "openai-chat", req.Format)
		if err != nil {
			return nil, err
		}
		if structured {
			p.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: req.Format.Name, Schema: schema, Strict: true}}
		} else {
			// The ask goes after the first user text, not into the
			// system text, which stays the run's shared leading part.
			msgs := append([]model.Message(nil), req.Messages...)
			for i := range msgs {
				if msgs[i].Role == model.RoleUser {
					msgs[i].Text = strings.TrimSpace(msgs[i].Text + "\n\n" + model.FormatPrompt(req.Format))
					break
				}
			}
			req.Messages = msgs
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, chatMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, chatMessage{Role: "user", Content: ptr(msg.Text)})
		case model.RoleAssistant:
			a := chatMessage{Role: "assistant"}
			if msg.Text != "" {
				a.Content = ptr(msg.Text)
			}
			for _, tc := range msg.ToolCalls {
				call := chatToolCall{ID: tc.ID, Type: "function"}
				call.Function.Name, call.Function.Arguments = tc.Name, string(tc.Arguments)
				a.ToolCalls = append(a.ToolCalls, call)
			}
			p.Messages = append(p.Messages, a)
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				p.Messages = append(p.Messages, chatMessage{Role: "tool", Content: ptr(r.Content), ToolCallID: r.CallID})
			}
		}
	}
	for _, t := range tools {
		p.Tools = append(p.Tools, chatTool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	if req.Format != nil && len(p.Tools) > 0 {
		// Tools ride along for the shared prefix; the structured answer
		// may call none of them.
		p.ToolChoice = "none"
	}
	return p, nil
}

func (m *Chat) response(r *chatAnswer) model.Response {
	c := r.Choices[0]
	out := model.Response{
		Text: content(c.Message.Content),
		Usage: model.Usage{
			Input:       r.Usage.PromptTokens,
			CachedInput: r.Usage.PromptTokensDetails.CachedTokens,
			Output:      r.Usage.CompletionTokens,
		},
	}
	if out.Text == "" && c.Message.Refusal != "" {
		out.Text = c.Message.Refusal
	}
	for i, tc := range c.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		id := tc.ID
		if id == "" {
			// Some compatible servers send no id; results need one.
			id = fmt.Sprintf("call_%d", i)
		}
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: id, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
	}
	switch {
	case len(out.ToolCalls) > 0:
		out.StopReason = model.StopToolUse
	case c.FinishReason == "length":
		out.StopReason = model.StopMaxTokens
	case c.FinishReason == "content_filter" || c.Message.Refusal != "":
		out.StopReason = model.StopRefusal
	case c.FinishReason == "stop" || c.FinishReason == "":
		out.StopReason = model.StopEnd
	default:
		out.StopReason = model.StopOther
	}
	return out
}
