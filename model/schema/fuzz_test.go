package schema

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzCompile: any schema text compiles or is refused; a compiled schema
// yields a wire form or a refusal, validates any arguments without
// panicking, and never changes what it was given.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(toolSchema), []byte(`{"path":"a","meta":{"k":1}}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["object","null"],"properties":{"b":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/x"}]}}}},"$defs":{"x":{"type":"integer"}}}`), []byte(`{"a":null}`))
	f.Add([]byte(`{"type":"object","additionalProperties":{"type":"array","items":{"type":"object"}}}`), []byte(`{"x":[{}]}`))
	f.Fuzz(func(t *testing.T, raw, args []byte) {
		rawCopy, argsCopy := append([]byte(nil), raw...), append([]byte(nil), args...)
		s, err := Compile(raw)
		if err != nil {
			return
		}
		before := s.Canonical()
		params, strict, err := s.Wire()
		if err == nil && strict {
			if _, err := json.Marshal(params); err != nil {
				t.Fatalf("strict form not encodable: %v", err)
			}
		}
		_ = s.Validate(args)
		if !reflect.DeepEqual(before, s.Canonical()) {
			t.Fatal("Wire or Validate changed the canonical schema")
		}
		if string(raw) != string(rawCopy) || string(args) != string(argsCopy) {
			t.Fatal("input mutated")
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	s := MustCompile(toolSchema)
	args := []byte(`{"path":"notes/a.html","meta":{"status":"draft","tags":["a","b"]},"counts":{"x":1,"y":2},"labels":null,"closed":{"a":"x"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}
