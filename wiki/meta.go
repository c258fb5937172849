package wiki

import (
	"bytes"
	"fmt"
	"maps"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/prose-store/prose/canon"
)

// Meta is a page's meta block: an open mapping of keys to values of the
// value model (string, float64, bool, nil, []any, map[string]any). A few keys
// have a meaning to prose; every other key is kept as written.
type Meta map[string]any

// The meta keys prose reads.
const (
	KeyTitle    = "title"
	KeyTemplate = "template"
	KeyTags     = "tags"
	KeyRelated  = "related"
	KeyCreated  = "created"
	KeyUpdated  = "updated" // immaterial: it never moves a fingerprint
)

// Clone returns a deep copy of m.
func (m Meta) Clone() Meta {
	if m == nil {
		return Meta{}
	}
	out := make(Meta, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	}
	return v
}

// String returns the text value of key, or "".
func (m Meta) String(key string) string {
	s, _ := m[key].(string)
	return s
}

// Title is the page's title.
func (m Meta) Title() string { return m.String(KeyTitle) }

// Template is the name of the page's template.
func (m Meta) Template() string { return m.String(KeyTemplate) }

// Strings returns the list of texts under key: a list keeps its text
// elements, one text becomes a list of one.
func (m Meta) Strings(key string) []string {
	switch x := m[key].(type) {
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Tags are the page's tags.
func (m Meta) Tags() []string { return m.Strings(KeyTags) }

// Related are the pages the page names as related (wiki paths).
func (m Meta) Related() []string { return m.Strings(KeyRelated) }

// material returns the meta as it counts toward the page's structured
// truth: without the updated date.
func (m Meta) material() map[string]any {
	out := maps.Clone(map[string]any(m))
	delete(out, KeyUpdated)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// YAML returns m as the meta block stores it: a YAML mapping with sorted
// keys (before the comment escaping of the block).
func (m Meta) YAML() ([]byte, error) { return m.yaml() }

// yaml encodes m as a YAML mapping with sorted keys: directly for the
// shape prose's pages hold (appendMetaYAML), else with yaml.v3.
func (m Meta) yaml() ([]byte, error) {
	if b, ok := appendMetaYAML(make([]byte, 0, 1024), m); ok {
		return b, nil
	}
	return m.yamlv3()
}

// yamlv3 encodes m with yaml.v3: the reference appendMetaYAML matches.
func (m Meta) yamlv3() ([]byte, error) {
	if m == nil {
		m = Meta{}
	}
	n, err := yamlNode(map[string]any(m))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ParseAssignment reads one set-meta argument: "k=v" keeps v as text,
// "k:=JSON" gives a typed value, "k=" removes the key (remove is true).
func ParseAssignment(arg string) (key string, value any, remove bool, err error) {
	i := strings.IndexByte(arg, '=')
	if i <= 0 {
		return "", nil, false, fmt.Errorf("meta assignment %q: write key=value, key:=JSON or key= to remove", arg)
	}
	key, val := arg[:i], arg[i+1:]
	if strings.HasSuffix(key, ":") {
		key = key[:len(key)-1]
		if key == "" {
			return "", nil, false, fmt.Errorf("meta assignment %q: the key is empty", arg)
		}
		v, err := canon.Decode([]byte(val))
		if err != nil {
			return "", nil, false, fmt.Errorf("meta assignment %q: the value after := is not valid JSON (%v); quote text as key=text", arg, err)
		}
		return key, v, false, nil
	}
	if val == "" {
		return key, nil, true, nil
	}
	return key, val, false, nil
}

// formatNumber writes a number as JavaScript would, which YAML reads back
// to the same float64.
func formatNumber(f float64) string {
	b, err := canon.AppendMarshal(nil, f)
	if err != nil {
		return "0"
	}
	return string(b)
}
