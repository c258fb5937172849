package canon

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode parses one JSON document strictly into the value model: objects
// become map[string]any, arrays []any, numbers float64 (rounded to the
// nearest double exactly as JavaScript's JSON.parse rounds them), strings
// string, and true, false and null become bool and nil.
//
// Decode rejects what JSON.parse would reject and more: invalid UTF-8, a
// \u escape of a lone surrogate, a duplicate key within one object, a number
// too large for a double, nesting deeper than 10000 levels, and anything but
// whitespace after the value. Errors name the line and column.
func Decode(data []byte) (any, error) {
	d := decoder{data: data}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		return nil, d.errorAt(i, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", data[i]))
	}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return nil, d.errorf("unexpected %s after the JSON value", d.describe())
	}
	return v, nil
}

// DecodeElements decodes data with the rules of Decode. When data is a JSON
// array it hands each element to each, in order, and keeps none of them, so
// a long array never sits in memory whole; an error from each stops the
// decoding and is returned. An element holding more than maxValues values
// (counting itself and everything nested) is an error, so one element stays
// small too; maxValues 0 means no limit. When data is any other JSON value,
// it returns that value and never calls each.
func DecodeElements(data []byte, maxValues int, each func(v any) error) (any, error) {
	d := decoder{data: data, limit: maxValues}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		return nil, d.errorAt(i, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", data[i]))
	}
	d.skipSpace()
	var v any
	if d.pos < len(d.data) && d.data[d.pos] == '[' {
		fresh := func() {
			if d.limit > 0 {
				d.left = d.limit + 1
			}
		}
		fresh()
		err := d.elements(0, func(v any) error {
			fresh()
			return each(v)
		})
		if err != nil {
			return nil, err
		}
	} else {
		var err error
		if v, err = d.value(0); err != nil {
			return nil, err
		}
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return nil, d.errorf("unexpected %s after the JSON value", d.describe())
	}
	return v, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

type decoder struct {
	data []byte
	// src, when set, holds data as one string: strings without escapes are
	// then slices of it, not copies (Reader).
	src   string
	pos   int
	limit int // values allowed in one array element (DecodeElements); 0: no limit
	left  int // values the current element may still hold, plus one
}

// SyntaxError reports where and why Decode rejected its input.
type SyntaxError struct {
	Offset int    // byte offset of the problem
	Line   int    // 1-based line of Offset
	Column int    // 1-based column of Offset, in bytes
	Msg    string // what is wrong
}

// Error returns the message with its position.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("canon: invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func (d *decoder) errorAt(offset int, msg string) error {
	line, col := 1, 1
	for _, c := range d.data[:min(offset, len(d.data))] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &SyntaxError{Offset: offset, Line: line, Column: col, Msg: msg}
}

func (d *decoder) errorf(format string, args ...any) error {
	return d.errorAt(d.pos, fmt.Sprintf(format, args...))
}

// describe names the byte at the current position for an error message.
func (d *decoder) describe() string {
	if d.pos >= len(d.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(d.data[d.pos:])
	return fmt.Sprintf("character %q", r)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.left > 0 {
		if d.left--; d.left == 0 {
			return nil, d.errorf("more than %d values in one element", d.limit)
		}
	}
	if depth > maxDepth {
		return nil, d.errorf("value is nested more than %d levels deep", maxDepth)
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input, expected a value")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.errorf("unexpected %s, expected a value", d.describe())
}

func (d *decoder) literal(word string) error {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return nil
	}
	return d.errorf("invalid literal, expected %q", word)
}

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // '{'
	m := map[string]any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return m, nil
	}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("unexpected %s, expected a string object key", d.describe())
		}
		keyPos := d.pos
		k, err := d.string()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, d.errorAt(keyPos, fmt.Sprintf("duplicate object key %s", quoteForError(k)))
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("unexpected %s, expected ':' after object key", d.describe())
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input, expected ',' or '}'")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			return m, nil
		default:
			return nil, d.errorf("unexpected %s, expected ',' or '}'", d.describe())
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	a := []any{}
	err := d.elements(depth, func(v any) error {
		a = append(a, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// elements decodes the array at d.pos, handing each element to each.
func (d *decoder) elements(depth int, each func(any) error) error {
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return nil
	}
	for {
		v, err := d.value(depth + 1)
		if err != nil {
			return err
		}
		if err := each(v); err != nil {
			return err
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.errorf("unexpected end of input, expected ',' or ']'")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			return nil
		default:
			return d.errorf("unexpected %s, expected ',' or ']'", d.describe())
		}
	}
}

// string decodes the JSON string at d.pos. The input is already known to be
// valid UTF-8.
func (d *decoder) string() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			var s string
			if d.src != "" {
				s = d.src[start:d.pos]
			} else {
				s = string(d.data[start:d.pos])
			}
			d.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.errorf("control character 0x%02x must be escaped in a string", c)
		}
		d.pos++
	}
	buf := append([]byte(nil), d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf("control character 0x%02x must be escaped in a string", c)
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		escPos := d.pos
		d.pos++
		if d.pos >= len(d.data) {
			break
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := d.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 {
					return "", d.errorAt(escPos, fmt.Sprintf("lone surrogate \\u%04x in string (a low surrogate without a high one)", r))
				}
				if d.pos+1 >= len(d.data) || d.data[d.pos] != '\\' || d.data[d.pos+1] != 'u' {
					return "", d.errorAt(escPos, fmt.Sprintf("lone surrogate \\u%04x in string (not followed by a low surrogate)", r))
				}
				d.pos += 2
				r2, err := d.hex4()
				if err != nil {
					return "", err
				}
				if r2 < 0xDC00 || r2 > 0xDFFF {
					return "", d.errorAt(escPos, fmt.Sprintf("lone surrogate \\u%04x in string (followed by \\u%04x, not a low surrogate)", r, r2))
				}
				r = utf16.DecodeRune(r, r2)
			}
			buf = utf8.AppendRune(buf, r)
		default:
			d.pos = escPos
			return "", d.errorf("invalid escape \\%c in string", e)
		}
	}
	return "", d.errorf("unexpected end of input inside a string")
}

func (d *decoder) hex4() (rune, error) {
	if len(d.data)-d.pos < 4 {
		return 0, d.errorf("incomplete \\u escape in string")
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, d.errorf("invalid hex digit %q in \\u escape", c)
		}
	}
	d.pos += 4
	return r, nil
}

func (d *decoder) number() (any, error) {
	start := d.pos
	n, ok := scanNumber(d.data[d.pos:])
	if !ok {
		d.pos += n
		return nil, d.errorf("invalid number %q", d.data[start:min(d.pos+1, len(d.data))])
	}
	d.pos += n
	lit := d.data[start:d.pos]
	if d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		return nil, d.errorAt(start, "invalid number: a leading zero must stand alone")
	}
	// Fast path: integers of at most 15 digits are exact.
	if len(lit) <= 15 {
		neg := lit[0] == '-'
		digits := lit
		if neg {
			digits = lit[1:]
		}
		var v int64
		isInt := true
		for _, c := range digits {
			if c < '0' || c > '9' {
				isInt = false
				break
			}
			v = v*10 + int64(c-'0')
		}
		if isInt {
			if neg {
				return -float64(v), nil
			}
			return float64(v), nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil && (!errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0)) {
		return nil, d.errorAt(start, fmt.Sprintf("number %s is out of range for a double", lit))
	}
	return f, nil
}

// scanNumber returns the length of the JSON number at the start of b and
// whether it is well formed.
func scanNumber(b []byte) (int, bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return i, false
		}
	}
	return i, true
}

// parseNumber parses a complete JSON number literal, as in json.Number.
func parseNumber(s string) (float64, error) {
	n, ok := scanNumber([]byte(s))
	if !ok || n != len(s) {
		return 0, fmt.Errorf("canon: %q is not a valid JSON number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && (!errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0)) {
		return 0, fmt.Errorf("canon: number %s is out of range for a double", s)
	}
	return f, nil
}
