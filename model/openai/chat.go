package openai

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// Chat is a model served by the Chat Completions API: OpenAI's own, or a
// compatible server's at OPENAI_BASE_URL.
type Chat struct {
	client *client
	name   string
}

// Name returns "openai-chat:NAME".
func (m *Chat) Name() string { return "openai-chat:" + m.name }

// Call sends one request to POST /chat/completions.
func (m *Chat) Call(ctx context.Context, req model.Request) (model.Response, error) {
	op := "call " + m.Name()
	params, err := m.params(op, req)
	if err != nil {
		return model.Response{}, err
	}
	var fail transport.Failure
	resp, err := m.client.sdk.Chat.Completions.New(transport.WithFailure(ctx, &fail), params)
	if err != nil {
		return model.Response{}, transport.Classify(op, "openai-chat", err, &fail, m.client.key)
	}
	if len(resp.Choices) == 0 {
		return model.Response{}, &model.Error{Op: op, Provider: "openai-chat", Kind: model.KindResponse, Message: "the answer holds no choice", Hint: "check that the server at OPENAI_BASE_URL speaks Chat Completions"}
	}
	return m.response(resp), nil
}

func (m *Chat) params(op string, req model.Request) (openai.ChatCompletionNewParams, error) {
	tools, err := model.WireTools(op, "openai-chat", req.Tools)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{Model: m.name}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
		case model.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" {
				a.Content.OfString = openai.String(msg.Text)
			}
			for _, tc := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: string(tc.Arguments)},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				p.Messages = append(p.Messages, openai.ToolMessage(r.Content, r.CallID))
			}
		}
	}
	for _, t := range tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(t.Parameters), Strict: openai.Bool(t.Strict)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

func (m *Chat) response(r *openai.ChatCompletion) model.Response {
	c := r.Choices[0]
	out := model.Response{
		Text: c.Message.Content,
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
