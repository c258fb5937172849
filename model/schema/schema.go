package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled canonical tool schema.
type Schema struct {
	canonical map[string]any
	open      []string // pointers of the open mappings, in document order
	compiled  *jsonschema.Schema
}

// Compile reads a tool's argument schema, puts it in canonical form and
// compiles it for validation. The top level must be an object schema.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %v", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the schema is not a JSON object")
	}
	if !isObjectSchema(root) {
		return nil, fmt.Errorf(`the arguments schema must have "type": "object"`)
	}
	s := &Schema{}
	s.canonical = canonicalize(root, "", &s.open).(map[string]any)
	slices.Sort(s.open)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// The compiler keeps the document; hand it a copy so Canonical stays
	// ours alone.
	if err := c.AddResource("tool.json", deepCopy(s.canonical)); err != nil {
		return nil, fmt.Errorf("the schema cannot be compiled: %v", err)
	}
	if s.compiled, err = c.Compile("tool.json"); err != nil {
		return nil, fmt.Errorf("the schema cannot be compiled: %v", err)
	}
	return s, nil
}

// MustCompile is Compile for schemas written in the program text.
func MustCompile(raw string) *Schema {
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		panic(err)
	}
	return s
}

// Canonical returns a copy of the canonical schema.
func (s *Schema) Canonical() map[string]any { return deepCopy(s.canonical).(map[string]any) }

// OpenMappings returns the JSON pointers of the open mappings the schema
// holds; a tool with none can be sent strict.
func (s *Schema) OpenMappings() []string { return append([]string(nil), s.open...) }

// HasOpenMapping reports whether any part of the arguments has keys chosen
// at call time.
func (s *Schema) HasOpenMapping() bool { return len(s.open) > 0 }

// Validate checks a call's arguments against the canonical schema. The
// error lists every problem as "at POINTER: what is wrong", which a model
// can act on.
func (s *Schema) Validate(args json.RawMessage) error {
	inst, err := decode(args)
	if err != nil {
		return fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	err = s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	var msgs []string
	leaves(ve, &msgs)
	sort.Strings(msgs)
	return &ValidationError{Problems: msgs}
}

// ValidationError lists the problems of a call's arguments.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "; ") }

var printer = message.NewPrinter(language.English)

func leaves(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) == 0 {
		at := "/" + strings.Join(escapeAll(ve.InstanceLocation), "/")
		if at == "/" {
			at = "the top level"
		}
		*out = append(*out, fmt.Sprintf("at %s: %s", at, ve.ErrorKind.LocalizedString(printer)))
		return
	}
	for _, c := range ve.Causes {
		leaves(c, out)
	}
}

func escapeAll(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = escapePointer(t)
	}
	return out
}

func escapePointer(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// decode reads JSON keeping numbers exact and refusing trailing data.
func decode(raw []byte) (any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return v, nil
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, x := range v {
			a[i] = deepCopy(x)
		}
		return a
	default:
		return v
	}
}
