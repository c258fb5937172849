package schema

import (
	"fmt"
	"slices"
)

// LossError refuses a rewrite that would lose meaning: the strict dialect
// cannot carry the keyword at Pointer.
type LossError struct {
	Pointer string // JSON pointer into the canonical schema
	Keyword string
	Reason  string
}

func (e *LossError) Error() string {
	return fmt.Sprintf("the schema cannot be sent strict without losing meaning at %s: %s", e.Pointer, e.Reason)
}

// strictKeywords are the keywords the strict dialects of the OpenAI and
// Anthropic APIs carry; anything else would be dropped or rejected by the
// provider, so it is refused here with its pointer.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "anyOf": true,
	"$ref": true, "$defs": true, "definitions": true,
	"description": true, "title": true,
	"pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true,
}

// Strict returns the schema rewritten for a provider's strict mode: every
// object closed, every property required, the optional ones made nullable,
// recursively through nested objects, nullable objects, array items,
// anyOf branches and definitions. A schema holding an open mapping has no
// strict form (send it non-strict); a keyword the dialect cannot carry is
// refused with a *LossError.
func (s *Schema) Strict() (map[string]any, error) {
	if s.HasOpenMapping() {
		return nil, fmt.Errorf("the schema holds an open mapping at %s, which strict mode would close", s.open[0])
	}
	out, err := strictNode(s.canonical, "")
	if err != nil {
		return nil, err
	}
	m := out.(map[string]any)
	delete(m, "$schema")
	return m, nil
}

func strictNode(v any, ptr string) (any, error) {
	node, ok := v.(map[string]any)
	if !ok {
		return deepCopy(v), nil
	}
	out := make(map[string]any, len(node)+2)
	for _, k := range sortedKeys(node) {
		x := node[k]
		if k == "$schema" && ptr == "" {
			continue
		}
		if !strictKeywords[k] {
			return nil, &LossError{Pointer: pointerOrRoot(ptr + "/" + escapePointer(k)), Keyword: k, Reason: fmt.Sprintf("the strict dialect has no %q", k)}
		}
		switch k {
		case "properties", "$defs", "definitions":
			m, ok := x.(map[string]any)
			if !ok {
				return nil, &LossError{Pointer: ptr + "/" + k, Keyword: k, Reason: k + " is not an object"}
			}
			sub := make(map[string]any, len(m))
			for _, name := range sortedKeys(m) {
				y, err := strictNode(m[name], ptr+"/"+k+"/"+escapePointer(name))
				if err != nil {
					return nil, err
				}
				sub[name] = y
			}
			out[k] = sub
		case "items":
			if _, ok := x.(map[string]any); !ok {
				return nil, &LossError{Pointer: ptr + "/items", Keyword: k, Reason: "items must be one schema"}
			}
			y, err := strictNode(x, ptr+"/items")
			if err != nil {
				return nil, err
			}
			out[k] = y
		case "anyOf":
			a, ok := x.([]any)
			if !ok {
				return nil, &LossError{Pointer: ptr + "/anyOf", Keyword: k, Reason: "anyOf is not an array"}
			}
			sub := make([]any, len(a))
			for i, y := range a {
				z, err := strictNode(y, ptr+"/anyOf/"+itoa(i))
				if err != nil {
					return nil, err
				}
				sub[i] = z
			}
			out[k] = sub
		default:
			out[k] = deepCopy(x)
		}
	}
	if !isObjectSchema(node) {
		return out, nil
	}
	props, _ := out["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		out["properties"] = props
	}
	required := map[string]bool{}
	if r, ok := node["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	}
	names := sortedKeys(props)
	all := make([]any, len(names))
	for i, name := range names {
		all[i] = name
		if !required[name] {
			props[name] = nullable(props[name].(map[string]any))
		}
	}
	out["required"] = all
	out["additionalProperties"] = false
	return out, nil
}

// nullable returns node also accepting null, so an optional property can
// be required yet left empty.
func nullable(node map[string]any) map[string]any {
	if acceptsNull(node) {
		return node
	}
	if _, isConst := node["const"]; isConst {
		return wrapNull(node)
	}
	if ts := typesOf(node); len(ts) > 0 {
		types := make([]any, 0, len(ts)+1)
		for _, t := range ts {
			types = append(types, t)
		}
		node["type"] = append(types, "null")
		if e, ok := node["enum"].([]any); ok {
			node["enum"] = append(e, nil)
		}
		return node
	}
	if a, ok := node["anyOf"].([]any); ok && len(node) == 1 || ok && onlyAnnotations(node, "anyOf") {
		node["anyOf"] = append(a, map[string]any{"type": "null"})
		return node
	}
	return wrapNull(node)
}

func wrapNull(node map[string]any) map[string]any {
	wrapped := map[string]any{"anyOf": []any{node, map[string]any{"type": "null"}}}
	if d, ok := node["description"]; ok {
		wrapped["description"] = d
	}
	return wrapped
}

func acceptsNull(node map[string]any) bool {
	if slices.Contains(typesOf(node), "null") {
		return true
	}
	if a, ok := node["anyOf"].([]any); ok {
		for _, x := range a {
			if m, ok := x.(map[string]any); ok && acceptsNull(m) {
				return true
			}
		}
	}
	return false
}

func onlyAnnotations(node map[string]any, keep string) bool {
	for k := range node {
		if k != keep && k != "description" && k != "title" {
			return false
		}
	}
	return true
}

// Wire returns what a provider sends for a tool: the strict form and
// strict=true when the arguments are fixed fields, the canonical form and
// strict=false when they hold an open mapping (which strict mode would
// close). A fixed-field schema the strict dialect cannot carry is an error
// (*LossError), never sent weakened.
func (s *Schema) Wire() (params map[string]any, strict bool, err error) {
	if s.HasOpenMapping() {
		c := s.Canonical()
		delete(c, "$schema")
		return c, false, nil
	}
	p, err := s.Strict()
	if err != nil {
		return nil, false, err
	}
	return p, true, nil
}
