package canon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Atomic is the reserved facet whose token covers a node's whole material
// truth. Every fingerprint map holds it; a spec may not declare it.
const Atomic = "@atomic"

// Spec is a node's canonicalization spec: which parts of its structured
// truth are material and how values are normalized before hashing. Its JSON
// and YAML form is the reference shape
//
//	{node, fields: [{path, material, text?: {collapse_whitespace, case_insensitive},
//	 number?: {quantum}, collection?: "ordered"|"set"}], default_material, facets: [{facet, paths}]}
//
// A nil *Spec means "everything material, no facets"; every method accepts a
// nil receiver. canon never modifies a Spec and may be called from many
// goroutines at once; it keeps the compiled rules of recently used specs and
// notices when a Spec was changed between calls (but do not change one while
// another goroutine uses it).
type Spec struct {
	Node            string  // the node the spec belongs to; informational
	Fields          []Field // rules, at most one per path
	DefaultMaterial *bool   // materiality where no rule applies; nil means true
	Facets          []Facet // declared facets, in declared order
}

// Field is one rule of a Spec, applying to the value at Path and, where
// noted in the package documentation, to the values below it.
type Field struct {
	Path       string      // dotted path (see ParsePath); "" is the root
	Material   bool        // whether the value at Path (and below, unless a nearer rule says otherwise) is material
	Text       *TextRule   // string normalization for Path and below; nil inherits
	Number     *NumberRule // number rounding for Path and below; nil inherits
	Collection string      // "set", "ordered" or "": how arrays exactly at Path compare
}

// TextRule says how strings are normalized. Every string is put in Unicode
// NFC first.
type TextRule struct {
	CollapseWhitespace *bool // collapse whitespace runs to one space and trim; nil means true
	CaseInsensitive    bool  // fold case
}

// NumberRule says how numbers are rounded.
type NumberRule struct {
	Quantum float64 // round to the nearest multiple of Quantum; must be > 0
}

// Facet is a named, independently subscribable part of a node's truth: the
// values at Paths.
type Facet struct {
	Facet string   // the facet name; never "@atomic"
	Paths []string // dotted paths (see ParsePath); at least one
}

// The collection kinds of a Field.
const (
	CollectionOrdered = "ordered"
	CollectionSet     = "set"
)

// ParseSpec parses and validates a spec written as JSON or YAML in the
// reference shape. Unknown keys, duplicate keys, values of the wrong type, a
// field without "material", and everything Validate rejects are errors that
// name the offending key.
func ParseSpec(data []byte) (*Spec, error) {
	v, err := decodeSpecDocument(data)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("canon: the spec is empty (write {} for a spec without rules)")
	}
	s, err := specFromValue(v)
	if err != nil {
		return nil, fmt.Errorf("canon: spec: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeSpecDocument turns JSON or YAML into the value model. A document
// starting with '{' is read as JSON first; YAML is the fallback, and when
// both fail the JSON error is reported.
func decodeSpecDocument(data []byte) (any, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		v, jerr := Decode(data)
		if jerr == nil {
			return v, nil
		}
		if v, yerr := decodeYAML(data); yerr == nil {
			return v, nil
		}
		return nil, fmt.Errorf("canon: spec is not valid JSON: %w", jerr)
	}
	v, err := decodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("canon: spec is not valid YAML: %w", err)
	}
	return v, nil
}

// decodeYAML converts one YAML document to the value model; an input
// without a document is nil. Anchors,
// aliases and merge keys are refused: a spec has no use for them.
func decodeYAML(data []byte) (any, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // no document at all
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: more than one YAML document", extra.Line)
	}
	return yamlValue(&doc, 0)
}

func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested more than %d levels deep", n.Line, maxDepth)
	}
	if n.Anchor != "" {
		return nil, fmt.Errorf("line %d: anchors are not supported in a spec (&%s)", n.Line, n.Anchor)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: aliases are not supported in a spec (*%s)", n.Line, n.Value)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind != yaml.ScalarNode || kn.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: mapping keys must be plain scalars", kn.Line)
			}
			if _, dup := m[kn.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q", kn.Line, kn.Value)
			}
			v, err := yamlValue(vn, depth+1)
			if err != nil {
				return nil, err
			}
			m[kn.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, err
			}
			return b, nil
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, err
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("line %d: number %s is not finite", n.Line, n.Value)
			}
			return f, nil
		default:
			return n.Value, nil
		}
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// specFromValue builds a Spec from its decoded reference shape.
func specFromValue(v any) (*Spec, error) {
	top, err := asObject(v, "the spec", "node", "fields", "default_material", "facets")
	if err != nil {
		return nil, err
	}
	s := &Spec{}
	if s.Node, err = optString(top, "node", "node"); err != nil {
		return nil, err
	}
	if dm, ok := top["default_material"]; ok && dm != nil {
		b, ok := dm.(bool)
		if !ok {
			return nil, fmt.Errorf("default_material must be true or false, not %s", describeValue(dm))
		}
		s.DefaultMaterial = &b
	}
	fields, err := optArray(top, "fields", "fields")
	if err != nil {
		return nil, err
	}
	for i, fv := range fields {
		where := fmt.Sprintf("fields[%d]", i)
		fm, err := asObject(fv, where, "path", "material", "text", "number", "collection")
		if err != nil {
			return nil, err
		}
		var f Field
		pv, ok := fm["path"]
		if !ok {
			return nil, fmt.Errorf("%s: missing \"path\"", where)
		}
		if f.Path, ok = pv.(string); !ok {
			return nil, fmt.Errorf("%s.path must be a string, not %s", where, describeValue(pv))
		}
		where = fmt.Sprintf("fields[%d] (path %q)", i, f.Path)
		mv, ok := fm["material"]
		if !ok {
			return nil, fmt.Errorf("%s: missing \"material\" (true or false)", where)
		}
		if f.Material, ok = mv.(bool); !ok {
			return nil, fmt.Errorf("%s: material must be true or false, not %s", where, describeValue(mv))
		}
		if tv, ok := fm["text"]; ok && tv != nil {
			tm, err := asObject(tv, where+": text", "collapse_whitespace", "case_insensitive")
			if err != nil {
				return nil, err
			}
			f.Text = &TextRule{}
			if cw, ok := tm["collapse_whitespace"]; ok && cw != nil {
				b, ok := cw.(bool)
				if !ok {
					return nil, fmt.Errorf("%s: text.collapse_whitespace must be true or false, not %s", where, describeValue(cw))
				}
				f.Text.CollapseWhitespace = &b
			}
			if ci, ok := tm["case_insensitive"]; ok && ci != nil {
				b, ok := ci.(bool)
				if !ok {
					return nil, fmt.Errorf("%s: text.case_insensitive must be true or false, not %s", where, describeValue(ci))
				}
				f.Text.CaseInsensitive = b
			}
		}
		if nv, ok := fm["number"]; ok && nv != nil {
			nm, err := asObject(nv, where+": number", "quantum")
			if err != nil {
				return nil, err
			}
			qv, ok := nm["quantum"]
			if !ok {
				return nil, fmt.Errorf("%s: number: missing \"quantum\"", where)
			}
			q, ok := qv.(float64)
			if !ok {
				return nil, fmt.Errorf("%s: number.quantum must be a number, not %s", where, describeValue(qv))
			}
			f.Number = &NumberRule{Quantum: q}
		}
		if f.Collection, err = optString(fm, "collection", where+": collection"); err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	facets, err := optArray(top, "facets", "facets")
	if err != nil {
		return nil, err
	}
	for i, fv := range facets {
		where := fmt.Sprintf("facets[%d]", i)
		fm, err := asObject(fv, where, "facet", "paths")
		if err != nil {
			return nil, err
		}
		var f Facet
		nv, ok := fm["facet"]
		if !ok {
			return nil, fmt.Errorf("%s: missing \"facet\"", where)
		}
		if f.Facet, ok = nv.(string); !ok {
			return nil, fmt.Errorf("%s.facet must be a string, not %s", where, describeValue(nv))
		}
		paths, err := optArray(fm, "paths", fmt.Sprintf("%s (facet %q): paths", where, f.Facet))
		if err != nil {
			return nil, err
		}
		for j, pv := range paths {
			p, ok := pv.(string)
			if !ok {
				return nil, fmt.Errorf("%s (facet %q): paths[%d] must be a string, not %s", where, f.Facet, j, describeValue(pv))
			}
			f.Paths = append(f.Paths, p)
		}
		s.Facets = append(s.Facets, f)
	}
	return s, nil
}

// asObject checks that v is an object holding only the allowed keys.
func asObject(v any, where string, allowed ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object, not %s", where, describeValue(v))
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%s: unknown key %s (allowed: %s)", where, strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return m, nil
}

func optString(m map[string]any, key, where string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, not %s", where, describeValue(v))
	}
	return s, nil
}

func optArray(m map[string]any, key, where string) ([]any, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list, not %s", where, describeValue(v))
	}
	return a, nil
}

// describeValue names the kind of a value-model value for an error message.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case string:
		return fmt.Sprintf("the string %s", quoteForError(x))
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// Validate reports the first problem that makes s unusable: a field path or
// facet path that does not parse, two fields with the same path, a
// collection other than "ordered" or "set", a quantum that is not a positive
// finite number, a facet that is unnamed, named "@atomic", declared twice or
// without paths. A nil Spec is valid.
func (s *Spec) Validate() error {
	_, err := s.compile()
	return err
}

// FacetNames returns the names of the facets s declares, in declared order,
// without "@atomic". It returns nil for a nil Spec.
func FacetNames(s *Spec) []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Facets))
	for _, f := range s.Facets {
		names = append(names, f.Facet)
	}
	return names
}

// specFormatVersion is part of every spec hash, so that a change to the
// reduction rules retires every cache keyed by a spec hash.
const specFormatVersion = 1

// Hash returns the identity of the spec, for caches keyed by how truth is
// reduced and fingerprinted: the BLAKE3 token of the canonical JSON of the
// normalized spec. Normalization resolves defaults (default_material,
// collapse_whitespace), writes paths in their canonical dotted form, sorts
// fields by path, facets by name and facet paths, and leaves out the node
// name, so specs that reduce and fingerprint every truth alike share a hash.
// A nil Spec hashes like an empty one. The hash of an invalid spec is still
// defined but names no usable spec.
func (s *Spec) Hash() string {
	if s == nil {
		s = &Spec{}
	}
	canonicalPath := func(raw string) string {
		if p, err := ParsePath(raw); err == nil {
			return p.String()
		}
		return raw
	}
	fields := make([]any, 0, len(s.Fields))
	for _, f := range s.Fields {
		m := map[string]any{"path": canonicalPath(f.Path), "material": f.Material}
		if f.Text != nil {
			m["text"] = map[string]any{
				"collapse_whitespace": f.Text.CollapseWhitespace == nil || *f.Text.CollapseWhitespace,
				"case_insensitive":    f.Text.CaseInsensitive,
			}
		}
		if f.Number != nil {
			q := f.Number.Quantum
			if math.IsNaN(q) || math.IsInf(q, 0) {
				m["number"] = map[string]any{"quantum": fmt.Sprint(q)}
			} else {
				m["number"] = map[string]any{"quantum": q}
			}
		}
		if f.Collection != "" && f.Collection != CollectionOrdered {
			m["collection"] = f.Collection
		}
		fields = append(fields, m)
	}
	slices.SortStableFunc(fields, func(a, b any) int {
		return CompareKeys(a.(map[string]any)["path"].(string), b.(map[string]any)["path"].(string))
	})
	facets := make([]any, 0, len(s.Facets))
	for _, f := range s.Facets {
		paths := make([]string, 0, len(f.Paths))
		for _, p := range f.Paths {
			paths = append(paths, canonicalPath(p))
		}
		slices.SortFunc(paths, CompareKeys)
		paths = slices.Compact(paths)
		facets = append(facets, map[string]any{"facet": f.Facet, "paths": paths})
	}
	slices.SortStableFunc(facets, func(a, b any) int {
		return CompareKeys(a.(map[string]any)["facet"].(string), b.(map[string]any)["facet"].(string))
	})
	norm := map[string]any{
		"version":          specFormatVersion,
		"default_material": s.DefaultMaterial == nil || *s.DefaultMaterial,
		"fields":           fields,
		"facets":           facets,
	}
	b, err := Marshal(norm)
	if err != nil {
		// Only strings that are not valid UTF-8 get here; hash them
		// repaired so the result is still a deterministic identity.
		b = []byte(strings.ToValidUTF8(fmt.Sprint(norm), "\uFFFD"))
	}
	return BLAKE3.Token(b)
}
