package schema

import "slices"

// typesOf returns the "type" keyword as a list.
func typesOf(node map[string]any) []string {
	switch t := node["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// isObjectSchema reports whether node describes objects: its type says so,
// or it has no type and uses object keywords.
func isObjectSchema(node map[string]any) bool {
	if _, ok := node["type"]; ok {
		return slices.Contains(typesOf(node), "object")
	}
	_, p := node["properties"]
	_, ap := node["additionalProperties"]
	return p || ap
}

// canonicalize returns a copy of node in canonical form, appending the
// pointers of open mappings to open.
func canonicalize(v any, ptr string, open *[]string) any {
	node, ok := v.(map[string]any)
	if !ok {
		return deepCopy(v)
	}
	out := make(map[string]any, len(node)+1)
	for k, x := range node {
		switch k {
		case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
			if m, ok := x.(map[string]any); ok {
				sub := make(map[string]any, len(m))
				for _, name := range sortedKeys(m) {
					sub[name] = canonicalize(m[name], ptr+"/"+k+"/"+escapePointer(name), open)
				}
				out[k] = sub
				continue
			}
		case "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "additionalItems", "unevaluatedProperties", "unevaluatedItems":
			if _, ok := x.(map[string]any); ok {
				out[k] = canonicalize(x, ptr+"/"+k, open)
				continue
			}
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if a, ok := x.([]any); ok {
				sub := make([]any, len(a))
				for i, y := range a {
					sub[i] = canonicalize(y, ptr+"/"+k+"/"+itoa(i), open)
				}
				out[k] = sub
				continue
			}
		}
		out[k] = deepCopy(x)
	}
	if !isObjectSchema(node) {
		return out
	}
	_, declared := node["properties"]
	ap, hasAP := node["additionalProperties"]
	switch {
	case ap == false:
		// Closed by the author; never opened.
	case declared && !hasAP:
		out["additionalProperties"] = false
	case !hasAP:
		// An object with neither declared fields nor a value schema is
		// an open mapping, as JSON Schema reads it.
		out["additionalProperties"] = true
		*open = append(*open, pointerOrRoot(ptr))
	default:
		*open = append(*open, pointerOrRoot(ptr))
	}
	return out
}

func pointerOrRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
