package canon

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds the nesting of values that canon encodes, decodes, reduces
// and digests, so that a hostile or cyclic value ends in an error instead of
// exhausting the stack.
const maxDepth = 10000

// Marshal returns the canonical JSON encoding of v: byte for byte what
// JavaScript's JSON.stringify prints for the same value when every object's
// keys are sorted by UTF-16 code units.
//
// v must be built from the value model (nil, bool, float64, string, []any,
// map[string]any). For convenience Marshal also accepts the Go integer and
// float32 types (converted to float64 as JavaScript would), json.Number,
// []string and map[string]string. A nil slice encodes as [] and a nil map as
// {}. NaN, infinities, strings or keys that are not valid UTF-8, values nested
// deeper than 10000 levels and any other Go type are errors.
func Marshal(v any) ([]byte, error) {
	return AppendMarshal(nil, v)
}

// AppendMarshal appends the canonical JSON encoding of v to dst and returns
// the extended buffer. See Marshal for the rules. On error dst is returned
// unchanged in length.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	n := len(dst)
	out, err := appendValue(dst, v, 0)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, fmt.Errorf("canon: value is nested more than %d levels deep", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case float64:
		return appendNumber(dst, x)
	case string:
		return appendString(dst, x)
	case map[string]any:
		return appendObject(dst, x, depth)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]string:
		keys := sortedKeys(x)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, k); err != nil {
				return dst, err
			}
			dst = append(dst, ':')
			if dst, err = appendString(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case json.Number:
		f, err := parseNumber(string(x))
		if err != nil {
			return dst, err
		}
		return appendNumber(dst, f)
	}
	if f, ok := toFloat(v); ok {
		return appendNumber(dst, f)
	}
	return dst, fmt.Errorf("canon: cannot encode a value of Go type %T (use nil, bool, float64, string, []any or map[string]any)", v)
}

// toFloat converts the Go numeric types other than float64 to the double
// JavaScript would hold for them.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func appendObject(dst []byte, m map[string]any, depth int) ([]byte, error) {
	keys := sortedKeys(m)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendString(dst, k); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = appendValue(dst, m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// sortedKeys returns the keys of m in UTF-16 code-unit order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareKeys)
	return keys
}

// CompareKeys compares a and b by their UTF-16 code units, the order
// JavaScript's default sort gives object keys, and returns -1, 0 or +1. It
// differs from byte order only between a character at or above U+10000 and
// one in U+E000..U+FFFF: the former sorts first because its leading surrogate
// is below 0xE000. Invalid UTF-8 compares byte by byte.
func CompareKeys(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	// Back up to the start of the character that holds the first difference.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	ua, ub := utf16Lead(ra), utf16Lead(rb)
	if ua == ub {
		// Both characters are astral with the same lead surrogate (their
		// trail surrogates order like the characters), or the bytes are
		// not valid UTF-8.
		ua, ub = ra, rb
		if ra == utf8.RuneError || rb == utf8.RuneError {
			ua, ub = rune(a[i]), rune(b[i])
		}
	}
	if ua < ub {
		return -1
	}
	return 1
}

// utf16Lead returns the first UTF-16 code unit of r.
func utf16Lead(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping only what
// JSON.stringify escapes.
func appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		i := firstInvalidUTF8([]byte(s))
		return dst, fmt.Errorf("canon: string %s is not valid UTF-8 (byte 0x%02x at offset %d)", quoteForError(s), s[i], i)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !mustEscape[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// mustEscape marks the bytes a canonical string escapes: the control
// characters, the quote and the backslash. Every other byte, including each
// byte of a multi-byte UTF-8 sequence, is written as it is.
var mustEscape = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// quoteForError quotes s for an error message, shortened when long.
func quoteForError(s string) string {
	const limit = 40
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "…"
	}
	return strconv.Quote(s)
}

// appendNumber appends f as JavaScript's Number.prototype.toString prints it.
func appendNumber(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("canon: number %v cannot be encoded: JSON has no NaN or infinity", f)
	}
	if f == 0 {
		return append(dst, '0'), nil // also -0, as in JavaScript
	}
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10), nil
	}
	var buf [32]byte
	// Shortest round-trip digits, as "-d.ddde±xx".
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	var digits [24]byte
	k := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[k] = e[i]
			k++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	// The decimal point sits after the first n digits (ECMA-262
	// Number::toString).
	n := exp + 1
	d := digits[:k]
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for j := k; j < n; j++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for j := 0; j < -n; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst, nil
}
