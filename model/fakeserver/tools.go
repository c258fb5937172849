package fakeserver

import (
	"encoding/json"

	"github.com/prose-store/prose/model"
)

// PayloadTools is the tool set the golden payload tests send: one tool per
// schema shape a provider must carry faithfully.
func PayloadTools() []model.Tool {
	tool := func(name, desc, schema string) model.Tool {
		return model.Tool{Name: name, Description: desc, Schema: json.RawMessage(schema)}
	}
	return []model.Tool{
		// Fixed fields: a nested optional object, an array of objects and
		// an explicitly closed object inside.
		tool("write_page", "Write a page.", `{
		  "type": "object",
		  "properties": {
		    "path": {"type": "string", "description": "vault-relative path"},
		    "title": {"type": "string"},
		    "summary": {"type": "string"},
		    "parent": {"type": "object", "properties": {"id": {"type": "string"}, "rank": {"type": "integer"}}, "required": ["id"]},
		    "sections": {"type": "array", "items": {"type": "object", "properties": {"heading": {"type": "string"}, "body": {"type": "string"}}, "required": ["heading"]}},
		    "layout": {"type": "object", "properties": {"wide": {"type": "boolean"}}, "required": ["wide"], "additionalProperties": false}
		  },
		  "required": ["path", "title", "sections"]
		}`),
		// An empty declared object: closed, strict.
		tool("list_templates", "List the page templates.", `{"type": "object", "properties": {}}`),
		// An explicit additionalProperties false with no properties.
		tool("ping", "Check the tools answer.", `{"type": "object", "additionalProperties": false}`),
		// An open mapping.
		tool("update_meta", "Update a page's meta.", `{
		  "type": "object",
		  "properties": {"path": {"type": "string"}, "updates": {"type": "object", "additionalProperties": true, "description": "keys to set"}},
		  "required": ["path", "updates"]
		}`),
		// A nullable mapping with a typed value schema.
		tool("set_labels", "Set or clear a page's labels.", `{
		  "type": "object",
		  "properties": {"path": {"type": "string"}, "labels": {"type": ["object", "null"], "additionalProperties": {"type": "string"}}},
		  "required": ["path", "labels"]
		}`),
		// A mapping whose values have a typed schema.
		tool("count_terms", "Record term counts.", `{
		  "type": "object",
		  "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}},
		  "required": ["counts"]
		}`),
	}
}

// LossyTool has a keyword the strict dialect cannot carry, at
// LossyPointer: sending it must be refused before anything is sent.
func LossyTool() model.Tool {
	return model.Tool{Name: "rename", Description: "Rename a page.", Schema: json.RawMessage(`{
	  "type": "object",
	  "properties": {"from": {"type": "string"}, "to": {"type": "string", "minLength": 1}},
	  "required": ["from", "to"]
	}`)}
}

// LossyPointer is where LossyTool's schema loses meaning.
const LossyPointer = "/properties/to/minLength"

// PayloadRequest is the request the golden payload tests send: a system
// text, a user turn, an earlier tool call with its result, and the tools.
func PayloadRequest() model.Request {
	temp := 0.0
	return model.Request{
		System: "You write wiki pages.",
		Messages: []model.Message{
			model.UserText("Ingest the source."),
			{Role: model.RoleAssistant, Text: "Listing templates first.", ToolCalls: []model.ToolCall{{ID: "call_1", Name: "list_templates", Arguments: json.RawMessage(`{}`)}}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "call_1", Name: "list_templates", Content: "concept, entity"}}},
		},
		Tools:       PayloadTools(),
		MaxTokens:   1000,
		Temperature: &temp,
	}
}
