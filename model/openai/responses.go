package openai

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/model/internal/transport"
)

// Responses is a model served by the OpenAI Responses API.
type Responses struct {
	client *client
	name   string
}

// Name returns "openai:NAME".
func (m *Responses) Name() string { return "openai:" + m.name }

// Call sends one request to POST /responses. Nothing is stored on the
// provider's side (store: false): every call carries the whole
// conversation, so a recording replays without server state.
func (m *Responses) Call(ctx context.Context, req model.Request) (model.Response, error) {
	op := "call " + m.Name()
	params, err := m.params(op, req)
	if err != nil {
		return model.Response{}, err
	}
	var fail transport.Failure
	resp, err := m.client.sdk.Responses.New(transport.WithFailure(ctx, &fail), params)
	if err != nil {
		return model.Response{}, transport.Classify(op, "openai", err, &fail, m.client.key)
	}
	return m.response(resp), nil
}

func (m *Responses) params(op string, req model.Request) (responses.ResponseNewParams, error) {
	tools, err := model.WireTools(op, "openai", req.Tools)
	if err != nil {
		return responses.ResponseNewParams{}, err
	}
	p := responses.ResponseNewParams{
		Model: m.name,
		Store: openai.Bool(false),
	}
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.Format != nil {
		schema, err := model.WireFormat(op, "openai", req.Format)
		if err != nil {
			return responses.ResponseNewParams{}, err
		}
		p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: req.Format.Name, Schema: schema, Strict: openai.Bool(true)}}}
	}
	var input responses.ResponseInputParam
	for _, msg := range req.Messages {
		switch msg.Role {
		case model.RoleUser:
			input = append(input, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleUser))
		case model.RoleAssistant:
			if msg.Text != "" {
				input = append(input, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleAssistant))
			}
			for _, tc := range msg.ToolCalls {
				input = append(input, responses.ResponseInputItemParamOfFunctionCall(string(tc.Arguments), tc.ID, tc.Name))
			}
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				item := responses.ResponseInputItemParamOfFunctionCallOutput(r.Content)
				item.OfFunctionCallOutput.CallID = openai.String(r.CallID)
				input = append(input, item)
			}
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	for _, t := range tools {
		ft := &responses.FunctionToolParam{Name: t.Name, Parameters: t.Parameters, Strict: openai.Bool(t.Strict)}
		if t.Description != "" {
			ft.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
	}
	if req.Format != nil && len(p.Tools) > 0 {
		// The tools of a structured answer are sent so the request starts
		// as the run's other calls do (the prompt cache's prefix), but
		// none may be called: the answer is the JSON object.
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}
	}
	return p, nil
}

func (m *Responses) response(r *responses.Response) model.Response {
	out := model.Response{
		Usage: model.Usage{
			Input:       r.Usage.InputTokens,
			CachedInput: r.Usage.InputTokensDetails.CachedTokens,
			Output:      r.Usage.OutputTokens,
		},
	}
	refused := false
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					out.Text += c.Text
				case "refusal":
					out.Text += c.Refusal
					refused = true
				}
			}
		case "function_call":
			out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: item.CallID, Name: item.Name, Arguments: arguments(item.Arguments.OfString)})
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
