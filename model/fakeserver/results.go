package fakeserver

import (
	"encoding/json"
	"strings"
)

// ToolResult is what the client told the model one of its tool calls
// answered, as it arrived on the wire in a later request.
type ToolResult struct {
	// Request is the index (from 0) of the request that carried it.
	Request int
	CallID  string
	Content string
	// IsError is the wire's is_error on Anthropic. Chat Completions and
	// Responses carry no such flag; there it is true when the content
	// starts with "error:", as every error result of model.Loop does.
	IsError bool
	// Flagged reports whether the wire itself carried IsError (Anthropic).
	Flagged bool
}

// ToolResults returns, request by request, the tool results each request
// carried for the model's previous turn: the tool results after the last
// assistant message of its conversation. A test asserts with it what the
// model was told about each call it made.
func (s *Server) ToolResults() []ToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Each request's results were read once, as it came in (incoming):
	// a large conversation is not decoded again on every call.
	var out []ToolResult
	for _, r := range s.results {
		out = append(out, r...)
	}
	return out
}

// Result returns the result of the call with id, looked up from the last
// request backwards (ids may repeat across conversations), and whether one
// was sent.
func (s *Server) Result(id string) (ToolResult, bool) {
	all := s.ToolResults()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].CallID == id {
			return all[i], true
		}
	}
	return ToolResult{}, false
}

func lastTurnResults(api string, n int, body []byte) []ToolResult {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	var out []ToolResult
	switch api {
	case Chat:
		var msgs []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		}
		json.Unmarshal(doc["messages"], &msgs)
		for _, m := range msgs {
			switch m.Role {
			case "assistant":
				out = out[:0]
			case "tool":
				c := text(m.Content)
				out = append(out, ToolResult{Request: n, CallID: m.ToolCallID, Content: c, IsError: strings.HasPrefix(c, "error:")})
			}
		}
	case Responses:
		var items []struct {
			Type   string          `json:"type"`
			Role   string          `json:"role"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		json.Unmarshal(doc["input"], &items)
		for _, it := range items {
			switch {
			case it.Type == "function_call" || it.Role == "assistant":
				out = out[:0]
			case it.Type == "function_call_output":
				c := text(it.Output)
				out = append(out, ToolResult{Request: n, CallID: it.CallID, Content: c, IsError: strings.HasPrefix(c, "error:")})
			}
		}
	default:
		var msgs []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   *bool           `json:"is_error"`
			} `json:"content"`
		}
		json.Unmarshal(doc["messages"], &msgs)
		for _, m := range msgs {
			if m.Role == "assistant" {
				out = out[:0]
				continue
			}
			for _, c := range m.Content {
				if c.Type != "tool_result" {
					continue
				}
				r := ToolResult{Request: n, CallID: c.ToolUseID, Content: text(c.Content)}
				if c.IsError != nil {
					r.IsError, r.Flagged = *c.IsError, true
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// text reads a content field that is a string or a list of text blocks.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// Calls is a reply whose turn makes the given tool calls.
func Calls(calls ...Call) Reply { return Reply{Turn: &Turn{Calls: calls}} }

// Text is a reply whose turn answers text and makes no tool call.
func Text(s string) Reply { return Reply{Turn: &Turn{Text: s}} }
