package plan

import (
	"encoding/json"

	"github.com/prose-store/prose/model"
)

// schemaJSON is the plan's JSON Schema in canonical form: the fields
// Parse reads, the optional ones sent nullable in the strict dialect.
const schemaJSON = `{
  "type": "object",
  "properties": {
    "summary": {"type": "string", "description": "one paragraph on what the source is about"},
    "pages": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "action": {"type": "string", "enum": ["create", "update"]},
          "path": {"type": "string", "description": "wiki path of the page, ending in .html"},
          "template": {"type": "string"},
          "title": {"type": "string"},
          "why": {"type": "string"},
          "links": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}, "title": {"type": "string"}}, "required": ["path", "title"]}}
        },
        "required": ["action", "path", "template", "title"]
      }
    },
    "questions": {"type": "array", "items": {"type": "string"}, "description": "anything a human should review"}
  },
  "required": ["pages"]
}`

// Format is the structured answer an analysis call asks for: a plan.
func Format() *model.Format {
	return &model.Format{Name: "plan", Schema: json.RawMessage(schemaJSON)}
}
