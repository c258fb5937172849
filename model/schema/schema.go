package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kaptinlin/jsonschema"
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
	// The compiler reads its own copy of the canonical form, so Canonical
	// stays ours alone. It has no loaders: a $ref outside the document
	// is refused, never fetched.
	c := jsonschema.NewCompiler()
	clear(c.Loaders)
	text, err := json.Marshal(s.canonical)
	if err != nil {
		return nil, fmt.Errorf("the schema cannot be compiled: %v", err)
	}
	if s.compiled, err = c.Compile(text); err != nil {
		return nil, fmt.Errorf("the schema cannot be compiled: %v", err)
	}
	if refs := unresolvedRefs(s.compiled); len(refs) > 0 {
		return nil, fmt.Errorf("the schema cannot be compiled: $ref %s names no schema in the document (references outside it are not fetched)", strings.Join(refs, ", "))
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
	obj, ok := inst.(map[string]any)
	if !ok {
		// Every canonical schema is an object schema (Compile refuses
		// any other).
		return &ValidationError{Problems: []string{fmt.Sprintf("at the top level: got %s, want object", jsonType(inst))}}
	}
	res := s.compiled.ValidateMap(obj)
	if res.IsValid() {
		return nil
	}
	var msgs []string
	leaves(res, obj, "", false, &msgs)
	if len(msgs) == 0 {
		msgs = append(msgs, "at the top level: the arguments do not match the schema")
	}
	sort.Strings(msgs)
	return &ValidationError{Problems: slices.Compact(msgs)}
}

// ValidationError lists the problems of a call's arguments.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "; ") }

// applicators are the keywords whose failure is the failure of a part
// the result's details describe; their own message ("property x does
// not match") adds nothing to the details' messages.
var applicators = map[string]bool{
	"properties": true, "additionalProperties": true, "patternProperties": true,
	"items": true, "prefixItems": true, "contains": true, "$ref": true, "$dynamicRef": true,
	"allOf": true, "dependentSchemas": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"propertyNames": true, "if": true, "then": true, "else": true,
}

// leaves collects the problems of a failed evaluation, each at the JSON
// pointer of the part of the arguments it is about. inst is the value r
// evaluated and at its pointer; a detail's instance location is relative
// to its parent's, one key or index deeper or the same value. extra
// says r checks a property no "properties" entry declares.
func leaves(r *jsonschema.EvaluationResult, inst any, at string, extra bool, out *[]string) {
	failedChild := false
	for _, d := range r.Details {
		if d == nil || d.IsValid() {
			continue
		}
		child, childAt := inst, at
		if rel := d.InstanceLocation; rel != "" {
			key := strings.TrimPrefix(rel, "/")
			switch v := inst.(type) {
			case map[string]any:
				x, ok := v[key]
				if !ok {
					// The validator checks a required property that is
					// absent against its schema as if it were null; the
					// "required" problem says it is missing.
					failedChild = true
					continue
				}
				child = x
			case []any:
				var i int
				if _, err := fmt.Sscanf(key, "%d", &i); err != nil || i < 0 || i >= len(v) {
					continue
				}
				child = v[i]
			default:
				continue
			}
			childAt = at + "/" + escapePointer(key)
		}
		failedChild = true
		leaves(d, child, childAt, strings.HasPrefix(d.EvaluationPath, "/additionalProperties/"), out)
	}
	where := at
	if where == "" {
		where = "the top level"
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := r.Errors[k]
		if e == nil || failedChild && applicators[k] {
			continue
		}
		msg := problem(e, inst)
		if e.Code == "false_schema_mismatch" && extra {
			msg = "the property is not allowed (the schema declares no such property)"
		}
		*out = append(*out, fmt.Sprintf("at %s: %s", where, msg))
	}
}

// problem says what one failed keyword found, in the words of the
// validator prose used before (a model reading it acts on the same
// sentence whatever library checks it).
func problem(e *jsonschema.EvaluationError, inst any) string {
	param := func(k string) string {
		if v, ok := e.Params[k]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	switch e.Code {
	case "type_mismatch":
		return fmt.Sprintf("got %s, want %s", jsonType(inst), strings.Join(strings.Split(param("expected"), ", "), " or "))
	case "missing_required_property":
		return "missing property " + param("property")
	case "missing_required_properties":
		return "missing properties " + param("properties")
	case "false_schema_mismatch":
		return "no value is allowed here"
	case "value_not_in_enum":
		return "value must be one of " + param("expected")
	case "any_of_item_mismatch":
		return "matches none of the anyOf schemas"
	case "one_of_item_mismatch":
		return "matches none of the oneOf schemas"
	case "const_mismatch", "const_mismatch_null":
		return "value must be the schema's const"
	}
	return e.Error()
}

// jsonType names the JSON type of a decoded value as JSON Schema's
// "type" keyword does; an integer is a number.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// unresolvedRefs lists the $refs of a compiled schema that name no
// schema in its document.
func unresolvedRefs(s *jsonschema.Schema) []string {
	var refs []string
	for _, r := range s.UnresolvedReferenceURIs() {
		refs = append(refs, strconv.Quote(r))
	}
	sort.Strings(refs)
	return refs
}

func escapePointer(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// decode reads JSON keeping numbers exact and refusing trailing data.
func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
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
