package canon

import (
	"fmt"
	"unicode/utf8"
)

// Reader reads one JSON document piece by piece with Decode's rules, for a
// caller that fills its own types instead of building the whole value
// model: the receipt reader, which reads thousands of receipts at a time.
// Whatever a Reader accepts, Decode accepts and decodes to the same values;
// its errors are Decode's.
type Reader struct {
	d     decoder
	depth int
}

// NewReader checks that data is UTF-8 and returns a Reader at its first
// value. The strings it returns share one copy of data.
func NewReader(data []byte) (*Reader, error) {
	r := &Reader{d: decoder{data: data, src: string(data)}}
	if !utf8.Valid(data) {
		i := firstInvalidUTF8(data)
		return nil, r.d.errorAt(i, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", data[i]))
	}
	r.d.skipSpace()
	return r, nil
}

// Next returns the first byte of the next value ('{', '[', '"', 'n', 't',
// 'f', '-' or a digit), or 0 at the end of the input. It consumes nothing.
func (r *Reader) Next() byte {
	if r.d.pos >= len(r.d.data) {
		return 0
	}
	return r.d.data[r.d.pos]
}

// String reads a string value.
func (r *Reader) String() (string, error) {
	if r.Next() != '"' {
		return "", r.d.errorf("unexpected %s, expected a string", r.d.describe())
	}
	s, err := r.d.string()
	r.d.skipSpace()
	return s, err
}

// Null reads a null.
func (r *Reader) Null() error {
	err := r.d.literal("null")
	r.d.skipSpace()
	return err
}

// Value reads any value into the value model, as Decode would.
func (r *Reader) Value() (any, error) {
	v, err := r.d.value(r.depth)
	r.d.skipSpace()
	return v, err
}

// open reads the bracket opening an object or array (what names it in an
// error), and the closing one when it follows at once: empty.
func (r *Reader) open(open, close byte, what string) (empty bool, err error) {
	if r.Next() != open {
		return false, r.d.errorf("unexpected %s, expected %s", r.d.describe(), what)
	}
	if r.depth > maxDepth {
		return false, r.d.errorf("value is nested more than %d levels deep", maxDepth)
	}
	d := &r.d
	d.pos++
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == close {
		d.pos++
		d.skipSpace()
		return true, nil
	}
	return false, nil
}

// Object reads an object, calling field with each key; field must read the
// key's value with the Reader. A duplicate key is an error, as in Decode.
func (r *Reader) Object(field func(key string) error) error {
	if empty, err := r.open('{', '}', "an object"); empty || err != nil {
		return err
	}
	r.depth++
	defer func() { r.depth-- }()
	d := &r.d
	var seen []string
	var seenMap map[string]bool
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return d.errorf("unexpected %s, expected a string object key", d.describe())
		}
		keyPos := d.pos
		k, err := d.string()
		if err != nil {
			return err
		}
		dup := false
		if seenMap != nil {
			dup = seenMap[k]
			seenMap[k] = true
		} else {
			for _, s := range seen {
				dup = dup || s == k
			}
			if seen = append(seen, k); len(seen) > 16 {
				seenMap = make(map[string]bool, 2*len(seen))
				for _, s := range seen {
					seenMap[s] = true
				}
			}
		}
		if dup {
			return d.errorAt(keyPos, fmt.Sprintf("duplicate object key %s", quoteForError(k)))
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.errorf("unexpected %s, expected ':' after object key", d.describe())
		}
		d.pos++
		d.skipSpace()
		if err := field(k); err != nil {
			return err
		}
		if d.pos >= len(d.data) {
			return d.errorf("unexpected end of input, expected ',' or '}'")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			d.skipSpace()
			return nil
		default:
			return d.errorf("unexpected %s, expected ',' or '}'", d.describe())
		}
	}
}

// Array reads an array, calling elem once per element; elem must read the
// element with the Reader.
func (r *Reader) Array(elem func() error) error {
	if empty, err := r.open('[', ']', "an array"); empty || err != nil {
		return err
	}
	r.depth++
	defer func() { r.depth-- }()
	d := &r.d
	for {
		if err := elem(); err != nil {
			return err
		}
		if d.pos >= len(d.data) {
			return d.errorf("unexpected end of input, expected ',' or ']'")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			d.skipSpace()
			return nil
		default:
			return d.errorf("unexpected %s, expected ',' or ']'", d.describe())
		}
	}
}

// End checks that nothing but whitespace follows the value read.
func (r *Reader) End() error {
	r.d.skipSpace()
	if r.d.pos < len(r.d.data) {
		return r.d.errorf("unexpected %s after the JSON value", r.d.describe())
	}
	return nil
}
