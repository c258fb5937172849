package canon

import (
	"reflect"
	"testing"
)

// readAll rebuilds a value with the Reader's piecewise calls only (Object,
// Array, String, Null, and Value for numbers and booleans), as a caller
// filling its own types does.
func readAll(r *Reader) (any, error) {
	switch c := r.Next(); c {
	case '{':
		m := map[string]any{}
		err := r.Object(func(k string) error {
			v, err := readAll(r)
			m[k] = v
			return err
		})
		return m, err
	case '[':
		a := []any{}
		err := r.Array(func() error {
			v, err := readAll(r)
			a = append(a, v)
			return err
		})
		return a, err
	case '"':
		return r.String()
	case 'n':
		return nil, r.Null()
	default:
		return r.Value()
	}
}

// FuzzReader: what the Reader accepts, piece by piece or whole, Decode
// accepts, with the same value; what Decode refuses, the Reader refuses.
func FuzzReader(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null,true,{"b":{}}],"c":-0.5e3}`, ` [ ] `, `{"a":1,"a":2}`, `{"k":"\u00e9\ud83d\ude00"}`, `[1,]`, `"x" y`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := Decode(data)
		for _, whole := range []bool{false, true} {
			r, err := NewReader(data)
			var got any
			if err == nil {
				if whole {
					got, err = r.Value()
				} else {
					got, err = readAll(r)
				}
			}
			if err == nil {
				err = r.End()
			}
			if (err == nil) != (werr == nil) {
				t.Fatalf("whole=%v: Reader error %v, Decode error %v, on %q", whole, err, werr, data)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("whole=%v: Reader read %#v, Decode %#v, from %q", whole, got, want, data)
			}
		}
	})
}
