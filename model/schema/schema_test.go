package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// toolSchema holds every shape the canonical form must tell apart.
const toolSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "empty": {"type": "object", "properties": {}},
    "meta": {"type": "object", "additionalProperties": true},
    "labels": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
    "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
    "closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false},
    "bare": {"type": "object", "additionalProperties": false}
  },
  "required": ["path"]
}`

func TestValidate(t *testing.T) {
	s := MustCompile(toolSchema)
	cases := []struct {
		name, args string
		wantErr    string // substring; "" means valid
	}{
		{"minimal", `{"path":"a"}`, ""},
		{"mapping keys accepted", `{"path":"a","meta":{"anything":1,"else":{"deep":[1]}}}`, ""},
		{"typed mapping keys accepted", `{"path":"a","counts":{"x":1,"y":2}}`, ""},
		{"typed mapping wrong value type", `{"path":"a","counts":{"x":"one"}}`, "/counts/x"},
		{"nullable mapping accepts null", `{"path":"a","labels":null}`, ""},
		{"nullable mapping accepts keys", `{"path":"a","labels":{"k":"v"}}`, ""},
		{"nullable mapping wrong value type", `{"path":"a","labels":{"k":3}}`, "/labels/k"},
		{"extra key at top level", `{"path":"a","surprise":1}`, "surprise"},
		{"extra key in empty declared object", `{"path":"a","empty":{"x":1}}`, "/empty"},
		{"extra key in explicitly closed object", `{"path":"a","closed":{"a":"x","b":1}}`, "/closed"},
		{"extra key in bare closed object", `{"path":"a","bare":{"b":1}}`, "/bare"},
		{"missing required", `{}`, "path"},
		{"wrong type", `{"path":3}`, "/path"},
		{"not JSON", `{"path":`, "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []byte(c.args)
			before := append([]byte(nil), args...)
			err := s.Validate(args)
			if !reflect.DeepEqual(args, before) {
				t.Fatalf("Validate mutated its input")
			}
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("refused valid arguments: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want one naming %q", err, c.wantErr)
			}
		})
	}
}

func TestCanonicalForm(t *testing.T) {
	raw := []byte(toolSchema)
	before := append([]byte(nil), raw...)
	s, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(before) {
		t.Fatal("Compile mutated its input")
	}
	c := s.Canonical()
	props := c["properties"].(map[string]any)
	prop := func(name string) map[string]any { return props[name].(map[string]any) }
	if c["additionalProperties"] != false {
		t.Errorf("top level with declared fields not closed: %v", c["additionalProperties"])
	}
	if prop("empty")["additionalProperties"] != false {
		t.Errorf("empty declared object not closed")
	}
	if prop("meta")["additionalProperties"] != true {
		t.Errorf("open mapping closed: %v", prop("meta"))
	}
	if _, ok := prop("counts")["additionalProperties"].(map[string]any); !ok {
		t.Errorf("mapping lost its value schema: %v", prop("counts"))
	}
	if prop("bare")["additionalProperties"] != false {
		t.Errorf("explicit additionalProperties false opened")
	}
	want := []string{"/properties/counts", "/properties/labels", "/properties/meta"}
	if got := s.OpenMappings(); !reflect.DeepEqual(got, want) {
		t.Errorf("open mappings = %v, want %v", got, want)
	}
	// Canonical returns a copy: changing it changes nothing inside.
	props["meta"] = "x"
	if _, ok := s.Canonical()["properties"].(map[string]any)["meta"].(map[string]any); !ok {
		t.Error("Canonical shares memory with the compiled schema")
	}
}

func TestImplicitOpenTopLevelStaysOpen(t *testing.T) {
	s := MustCompile(`{"type":"object"}`)
	if !s.HasOpenMapping() {
		t.Fatal("an object with neither properties nor additionalProperties was closed")
	}
	if err := s.Validate([]byte(`{"any":"key"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestStrict(t *testing.T) {
	s := MustCompile(`{
	  "type": "object",
	  "properties": {
	    "title": {"type": "string"},
	    "note": {"type": "string", "description": "optional"},
	    "kind": {"type": "string", "enum": ["a", "b"]},
	    "parent": {"type": "object", "properties": {"id": {"type": "string"}, "rank": {"type": "integer"}}, "required": ["id"]},
	    "maybe": {"type": ["object", "null"], "properties": {"x": {"type": "number"}}},
	    "rows": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"$ref": "#/$defs/val"}}, "required": ["k"]}},
	    "none": {"type": "object", "properties": {}}
	  },
	  "required": ["title"],
	  "$defs": {"val": {"type": "string"}}
	}`)
	got, err := s.Strict()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"$defs":{"val":{"type":"string"}},"additionalProperties":false,"properties":{` +
		`"kind":{"enum":["a","b",null],"type":["string","null"]},` +
		`"maybe":{"additionalProperties":false,"properties":{"x":{"type":["number","null"]}},"required":["x"],"type":["object","null"]},` +
		`"none":{"additionalProperties":false,"properties":{},"required":[],"type":["object","null"]},` +
		`"note":{"description":"optional","type":["string","null"]},` +
		`"parent":{"additionalProperties":false,"properties":{"id":{"type":"string"},"rank":{"type":["integer","null"]}},"required":["id","rank"],"type":["object","null"]},` +
		`"rows":{"items":{"additionalProperties":false,"properties":{"k":{"type":"string"},"v":{"anyOf":[{"$ref":"#/$defs/val"},{"type":"null"}]}},"required":["k","v"],"type":"object"},"type":["array","null"]},` +
		`"title":{"type":"string"}},"required":["kind","maybe","none","note","parent","rows","title"],"type":"object"}`
	if string(b) != want {
		t.Fatalf("strict form\n got %s\nwant %s", b, want)
	}
}

func TestStrictRefusals(t *testing.T) {
	cases := []struct{ schema, pointer string }{
		{`{"type":"object","properties":{"name":{"type":"string","minLength":1}}}`, "/properties/name/minLength"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"not":{"type":"null"}}}}}}}`, "/properties/a/items/properties/b/not"},
		{`{"type":"object","properties":{"a~b/c":{"type":"object","properties":{},"patternProperties":{"^x":{}}}}}`, "/properties/a~0b~1c/patternProperties"},
	}
	for _, c := range cases {
		_, err := MustCompile(c.schema).Strict()
		var le *LossError
		if !errors.As(err, &le) {
			t.Fatalf("%s: err = %v, want a LossError", c.schema, err)
		}
		if le.Pointer != c.pointer || !strings.Contains(err.Error(), c.pointer) {
			t.Fatalf("pointer = %q (%v), want %q", le.Pointer, err, c.pointer)
		}
	}
	if _, err := MustCompile(`{"type":"object","properties":{"m":{"type":"object"}}}`).Strict(); err == nil {
		t.Fatal("a schema with an open mapping was given a strict form")
	}
}

func TestCompileRefusesNonObject(t *testing.T) {
	for _, raw := range []string{`[]`, `{"type":"string"}`, `nope`} {
		if _, err := Compile([]byte(raw)); err == nil {
			t.Errorf("Compile(%s) accepted", raw)
		}
	}
}
