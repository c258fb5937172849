package wiki

import (
	"slices"
	"time"
)

// appendMetaYAML writes the meta shape prose's own pages hold — a mapping
// of plain keys to texts, booleans, nulls, lists of texts and mappings of
// texts — the way yaml.v3 writes it (yamlNode, two-space indent), without
// building a node tree or running yaml.v3's emitter. ok is false for any
// value it does not cover: a number, an empty or nested list or mapping,
// a text needing quotes other than a date, a key longer than a simple
// key; the caller then uses yaml.v3 (TestMetaYAMLMatchesYAMLv3 and
// FuzzMetaYAMLMatchesYAMLv3 hold the two to the same bytes).
func appendMetaYAML(b []byte, m Meta) ([]byte, bool) {
	if len(m) == 0 {
		return b, false // yaml.v3 writes "{}"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !plainKey(k) {
			return b, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, ':')
		switch x := m[k].(type) {
		case []any:
			if len(x) == 0 {
				return b, false
			}
			b = append(b, '\n')
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return b, false
				}
				b = append(b, "  - "...)
				if b, ok = appendScalarText(b, s); !ok {
					return b, false
				}
				b = append(b, '\n')
			}
		case map[string]any:
			if len(x) == 0 {
				return b, false
			}
			b = append(b, '\n')
			sub := make([]string, 0, len(x))
			for sk := range x {
				if !plainKey(sk) {
					return b, false
				}
				sub = append(sub, sk)
			}
			slices.Sort(sub)
			for _, sk := range sub {
				s, ok := x[sk].(string)
				if !ok {
					return b, false
				}
				b = append(b, "  "...)
				b = append(b, sk...)
				b = append(b, ": "...)
				if b, ok = appendScalarText(b, s); !ok {
					return b, false
				}
				b = append(b, '\n')
			}
		default:
			b = append(b, ' ')
			var ok bool
			if b, ok = appendScalar(b, x); !ok {
				return b, false
			}
			b = append(b, '\n')
		}
	}
	return b, true
}

// appendScalar writes a text, a boolean or a null.
func appendScalar(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if x {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case string:
		return appendScalarText(b, x)
	}
	return b, false
}

// appendScalarText writes a text plain when yaml.v3 would, a date
// (which yaml.v3 would read as a timestamp) double-quoted.
func appendScalarText(b []byte, s string) ([]byte, bool) {
	if plainYAML(s) {
		return append(b, s...), true
	}
	if isDate(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"'), true
	}
	return b, false
}

// plainKey is a key yaml.v3 writes plain as a simple key.
func plainKey(k string) bool { return len(k) <= 128 && plainYAML(k) }

// plainYAML reports texts yaml.v3 writes plain in block context, for
// certain: printable ASCII starting with a letter, '_' or '/', ending in
// neither a space nor ':', with no ": " (a mapping value), no " #" (a
// comment), not a word YAML reads as a boolean or null, and not needing
// quotes to come back (needsQuotes).
func plainYAML(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '/') {
		return false
	}
	last := s[len(s)-1]
	if last == ' ' || last == ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		if c == ':' && s[i+1] == ' ' || c == ' ' && s[i+1] == '#' { // s does not end in ':' or ' '
			return false
		}
	}
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return false
	}
	return true
}

// isDate reports a text yaml.v3 resolves as a timestamp of the form
// YYYY-MM-DD (so writes double-quoted to keep it a text).
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	_, err := time.Parse("2006-1-2", s)
	return err == nil
}
