package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prose-store/prose/model"
)

func TestWireToolsRefusals(t *testing.T) {
	obj := json.RawMessage(`{"type":"object","properties":{}}`)
	cases := []struct {
		tools []model.Tool
		want  string
	}{
		{[]model.Tool{{Name: "has space", Schema: obj}}, `tool name "has space"`},
		{[]model.Tool{{Name: strings.Repeat("x", 65), Schema: obj}}, "is not accepted"},
		{[]model.Tool{{Name: "a", Schema: obj}, {Name: "a", Schema: obj}}, `two tools are named "a"`},
		{[]model.Tool{{Name: "a", Schema: json.RawMessage(`{"type":"string"}`)}}, `tool a: the arguments schema must have "type": "object"`},
		{[]model.Tool{{Name: "a", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","maxLength":3}}}`)}}, "at /properties/x/maxLength"},
	}
	for _, c := range cases {
		_, err := model.WireTools("call x", "openai", c.tools)
		if model.KindOf(err) != model.KindSchema || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
	got, err := model.WireTools("call x", "openai", []model.Tool{{Name: "ok_tool-1", Schema: obj}, {Name: "map", Schema: json.RawMessage(`{"type":"object","additionalProperties":{"type":"number"}}`)}})
	if err != nil || !got[0].Strict || got[1].Strict {
		t.Fatalf("%+v %v", got, err)
	}
}
