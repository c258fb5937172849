package openai

import (
	"encoding/json"
	"strings"
)

// The Responses and Chat Completions requests and answers, as much of
// them as prose uses. Field order is fixed (structs, maps sorted by
// encoding/json), so the same request is the same bytes: the prompt
// cache matches prefixes.

// jsonSchema is a structured-output format: text.format on Responses,
// response_format.json_schema on Chat Completions.
type jsonSchema struct {
	Type   string         `json:"type,omitempty"` // "json_schema" on Responses
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
	Strict bool           `json:"strict"`
}

// function is a function tool: the tool itself on Responses, its
// "function" on Chat Completions.
type function struct {
	Type        string         `json:"type,omitempty"` // "function" on Responses
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

type responsesRequest struct {
	Model           string     `json:"model"`
	Store           bool       `json:"store"`
	Instructions    string     `json:"instructions,omitempty"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
	Temperature     *float64   `json:"temperature,omitempty"`
	Text            *textParam `json:"text,omitempty"`
	Input           []item     `json:"input"`
	Tools           []function `json:"tools,omitempty"`
	ToolChoice      string     `json:"tool_choice,omitempty"`
}

type textParam struct {
	Format jsonSchema `json:"format"`
}

// item is one input item: a message (role and content), a function call
// or a function call's output.
type item struct {
	Type      string  `json:"type,omitempty"`
	Role      string  `json:"role,omitempty"`
	Content   *string `json:"content,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
}

type responsesAnswer struct {
	Status            string `json:"status"`
	IncompleteDetails struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type      string          `json:"type"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Content   []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
	} `json:"output"`
	Usage struct {
		InputTokens        int64 `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	Tools               []chatTool      `json:"tools,omitempty"`
	ToolChoice          string          `json:"tool_choice,omitempty"`
}

type responseFormat struct {
	Type       string     `json:"type"` // "json_schema"
	JSONSchema jsonSchema `json:"json_schema"`
}

type chatTool struct {
	Type     string   `json:"type"` // "function"
	Function function `json:"function"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatAnswer struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content   json.RawMessage `json:"content"`
			Refusal   string          `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// content is a message's text: a string, or (from some compatible
// servers) a list of parts whose texts are joined.
func content(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func ptr(s string) *string { return &s }

// arguments returns a tool call's arguments as a JSON object: the string
// the API sends unquoted (an object some compatible servers send
// instead, as it is); an empty one (some servers send one for a call
// without arguments) is {}.
func arguments(raw json.RawMessage) json.RawMessage {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		s = string(raw)
		if strings.TrimSpace(s) == "null" {
			s = ""
		}
	}
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}
