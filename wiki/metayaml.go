package wiki

import (
	"slices"
	"strings"
	"time"
)

// appendMetaYAML writes the meta shape prose's own pages hold — a mapping
// of plain keys to texts, booleans, nulls, lists of texts and mappings of
// texts — the way yaml.v3 writes it (yamlNode, two-space indent), without
// building a node tree or running yaml.v3's emitter. ok is false for any
// value it does not cover: a number, an empty or nested list or mapping,
// a text not of printable ASCII or one that might read as a number or a
// timestamp, a key not written plain or longer than a simple key; the
// caller then uses yaml.v3 (TestMetaYAMLMatchesYAMLv3 and
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

// appendScalarText writes a text of printable ASCII in the style yaml.v3
// gives it: double-quoted when it needs quotes (needsQuotes) or reads
// as another type, single-quoted when plain would read otherwise, plain
// else.
func appendScalarText(b []byte, s string) ([]byte, bool) {
	switch textStyle(s) {
	case plainStyle:
		return append(b, s...), true
	case singleQuoted:
		b = append(b, '\'')
		for i := 0; i < len(s); i++ {
			if s[i] == '\'' {
				b = append(b, '\'')
			}
			b = append(b, s[i])
		}
		return append(b, '\''), true
	case doubleQuoted:
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"'), true
	}
	return b, false
}

// The styles textStyle tells; unknown is a text it leaves to yaml.v3.
const (
	unknown = iota
	plainStyle
	singleQuoted
	doubleQuoted
)

// textStyle is the style yaml.v3 writes s in (as yamlNode gives it: a
// !!str, double-quoted when needsQuotes), for the texts it can tell for
// certain: printable ASCII. Double-quoted is written as is only when s
// holds no '"' or '\\' (else unknown).
func textStyle(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return unknown
		}
	}
	if s == "" || s == "<<" || s[0] == ' ' || s[len(s)-1] == ' ' || otherWord(s) || isDate(s) {
		// needsQuotes, or a text YAML reads as a boolean, a null, a
		// float or a timestamp: yaml.v3 double-quotes it.
		if strings.ContainsAny(s, "\"\\") {
			return unknown
		}
		return doubleQuoted
	}
	if !readsAsText(s) {
		return unknown // perhaps a number or a timestamp
	}
	if plainIndicated(s) {
		return singleQuoted
	}
	return plainStyle
}

// otherWord reports the words yaml.v3's resolver reads as another type
// than text whatever their first character (its map of words).
func otherWord(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return true
	}
	return false
}

// readsAsText reports texts (not otherWord) yaml.v3's resolver reads as
// text for certain: those it does not try as a number or timestamp (the
// first character is no sign, digit or '.'), and those holding a
// character no number or timestamp it tries holds.
func readsAsText(s string) bool {
	if !strings.ContainsRune("+-0123456789.", rune(s[0])) {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || strings.IndexByte("+-._: xXoObBtTzZ", c) >= 0) {
			return true
		}
	}
	return false
}

// plainIndicated reports a text of printable ASCII, without a space at
// either end, that yaml.v3's emitter will not write plain in block
// context (yaml_emitter_analyze_scalar's block indicators): a document
// marker at the start, an indicator first, ": " or a final ':', " #".
func plainIndicated(s string) bool {
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return true
	}
	spaceAfter := func(i int) bool { return i+1 >= len(s) || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return true
	case '?', ':', '-':
		if spaceAfter(0) {
			return true
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if spaceAfter(i) {
				return true
			}
		case '#':
			if s[i-1] == ' ' {
				return true
			}
		}
	}
	return false
}

// plainKey is a key yaml.v3 writes plain as a simple key.
func plainKey(k string) bool { return len(k) <= 128 && textStyle(k) == plainStyle }

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

// parseMetaYAML reads the meta shape appendMetaYAML writes without
// yaml.v3's parser: lines "key: scalar", "key:" then "  - text" lines, or
// "key:" then "  sub: text" lines, each scalar plain (a text, true, false
// or null), single-quoted or double-quoted without escapes. It reports
// false for anything else, and for a reading appendMetaYAML would not
// write back to the same bytes: whatever it reports true for is a text
// appendMetaYAML writes as yaml.v3 does, which yaml.v3 reads back as the
// same meta (FuzzParseMetaYAMLMatchesYAMLv3 holds it to that).
func parseMetaYAML(body []byte) (Meta, bool) {
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return nil, false
	}
	m := Meta{}
	rest := string(body)
	line := func() (string, bool) {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			return "", false
		}
		l := rest[:i]
		rest = rest[i+1:]
		return l, true
	}
	for rest != "" {
		l, _ := line()
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || !plainKey(k) {
			return nil, false
		}
		if _, dup := m[k]; dup {
			return nil, false
		}
		if v != "" {
			if v[0] != ' ' {
				return nil, false
			}
			x, ok := parseScalar(v[1:], true)
			if !ok {
				return nil, false
			}
			m[k] = x
			continue
		}
		// A list or a mapping: its lines are indented by two.
		var list []any
		var sub map[string]any
		for strings.HasPrefix(rest, "  ") {
			l, _ := line()
			l = l[2:]
			if e, ok := strings.CutPrefix(l, "- "); ok && sub == nil {
				x, ok := parseScalar(e, false)
				if !ok {
					return nil, false
				}
				list = append(list, x)
				continue
			}
			sk, sv, ok := strings.Cut(l, ": ")
			if !ok || list != nil || sk == "" || !plainKey(sk) {
				return nil, false
			}
			if sub == nil {
				sub = map[string]any{}
			}
			if _, dup := sub[sk]; dup {
				return nil, false
			}
			x, ok := parseScalar(sv, false)
			if !ok {
				return nil, false
			}
			sub[sk] = x
		}
		switch {
		case list != nil:
			m[k] = list
		case sub != nil:
			m[k] = sub
		default:
			return nil, false
		}
	}
	if len(m) == 0 {
		return nil, false
	}
	if b, ok := appendMetaYAML(make([]byte, 0, len(body)), m); !ok || string(b) != string(body) {
		return nil, false
	}
	return m, true
}

// parseScalar reads one scalar as appendScalar writes it; with words,
// plain true, false and null are a boolean and a null (else only texts).
func parseScalar(s string, words bool) (any, bool) {
	switch {
	case s == "":
		return nil, false
	case s[0] == '"':
		if len(s) < 2 || s[len(s)-1] != '"' {
			return nil, false
		}
		return s[1 : len(s)-1], true
	case s[0] == '\'':
		if len(s) < 2 || s[len(s)-1] != '\'' {
			return nil, false
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), true
	}
	if words {
		switch s {
		case "true":
			return true, true
		case "false":
			return false, true
		case "null":
			return nil, true
		}
	}
	return s, true
}
