package model

import (
	"context"
	"encoding/json"
)

// A Model answers one request. Implementations must honour ctx
// cancellation and return errors that never contain a credential.
type Model interface {
	// Call sends req and returns the model's answer.
	Call(ctx context.Context, req Request) (Response, error)
	// Name is the spec the model was opened with, e.g. "openai:gpt-5".
	Name() string
}

// Role says who wrote a message.
type Role string

// The roles of a conversation. Tool results travel in a RoleTool message.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Request is one call to a model.
type Request struct {
	// System is the system (developer) instruction text.
	System string `json:"system,omitempty"`
	// Messages is the conversation so far, oldest first.
	Messages []Message `json:"messages"`
	// Tools the model may call. Only Name, Description and Schema are sent.
	Tools []Tool `json:"tools,omitempty"`
	// MaxTokens caps the output tokens of this call; 0 means the
	// provider's default (Anthropic requires one: DefaultMaxTokens).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Temperature, when set, is sent as is.
	Temperature *float64 `json:"temperature,omitempty"`
	// Format, when set, asks for the answer's text as one JSON object
	// matching a schema, in the provider's structured form (see Format).
	Format *Format `json:"format,omitempty"`
}

// Format asks for a structured answer: Response.Text is then one JSON
// object matching Schema. OpenAI Responses sends it as text.format
// json_schema (strict), Chat Completions as response_format json_schema
// (strict; a server that refuses it is asked again with the schema in the
// prompt, once said through Config.Notice), Anthropic as a tool the
// answer is forced to call, whose input becomes the text.
type Format struct {
	// Name is the schema's name: 1 to 64 letters, digits, _ or -.
	Name string `json:"name"`
	// Schema is a canonical JSON Schema (model/schema) of an object with
	// declared properties; it is sent in the strict dialect.
	Schema json.RawMessage `json:"schema"`
}

// DefaultMaxTokens is used where a provider requires an output limit and
// the request sets none.
const DefaultMaxTokens = 8192

// Message is one turn of a conversation.
type Message struct {
	Role Role `json:"role"`
	// Text is the message text (user or assistant).
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolResults answer the tool calls of the previous assistant message
	// (RoleTool).
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// UserText is a user message holding text.
func UserText(text string) Message { return Message{Role: RoleUser, Text: text} }

// ToolCall is one call of a tool by the model.
type ToolCall struct {
	// ID is the provider's call id; results refer to it.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object the model sent, as sent.
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID string `json:"call_id"`
	Name   string `json:"name,omitempty"`
	// Content is what the model reads: the tool's output or, when IsError,
	// a readable description of what was wrong and how to fix it.
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Tool is something the model may call: a canonical JSON Schema for its
// arguments and the function that runs it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the arguments object, in the canonical
	// form model/schema describes: an object with declared properties is
	// closed, an object with only additionalProperties is an open mapping.
	Schema json.RawMessage `json:"schema"`
	// Run executes a call whose arguments passed validation. Its error is
	// returned to the model as a tool result, not to the caller of Loop.
	Run func(ctx context.Context, args json.RawMessage) (string, error) `json:"-"`
}

// Response is a model's answer to one Request.
type Response struct {
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, mapped from each provider's own words.
const (
	StopEnd       StopReason = "end"        // the model finished its answer
	StopToolUse   StopReason = "tool_use"   // the model wants tool results
	StopMaxTokens StopReason = "max_tokens" // the output limit cut the answer
	StopRefusal   StopReason = "refusal"    // the provider refused or filtered
	StopOther     StopReason = "other"
)

// Usage counts tokens. Input includes CachedInput: CachedInput is the part
// of the input served from the provider's prompt cache.
type Usage struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, CachedInput: u.CachedInput + v.CachedInput, Output: u.Output + v.Output}
}
