package canon

import (
	"reflect"
	"strings"
	"testing"
)

// TestDecodeElements: each element of an array arrives as Decode would
// give it, other values come back whole, and an element past the value
// limit is an error.
func TestDecodeElements(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		elems []any
		whole any
		err   string
	}{
		{in: `[]`, elems: nil},
		{in: ` [ 1 , "a" , {"k": [true]} ] `, elems: []any{1.0, "a", map[string]any{"k": []any{true}}}},
		{in: `{"a": 1}`, whole: map[string]any{"a": 1.0}},
		{in: `null`, whole: nil},
		{in: `[1,]`, err: "unexpected"},
		{in: `[1] x`, err: "after the JSON value"},
		{in: `[{"a":1,"a":2}]`, err: "a"},
		{in: `[[1,2],[3]]`, limit: 3, elems: []any{[]any{1.0, 2.0}, []any{3.0}}},
		{in: `[[1,2,3]]`, limit: 3, err: "more than 3 values"},
		{in: `[1,[2,[3,[4]]]]`, limit: 5, err: "more than 5 values"},
	}
	for _, tt := range tests {
		var got []any
		whole, err := DecodeElements([]byte(tt.in), tt.limit, func(v any) error {
			got = append(got, v)
			return nil
		})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("DecodeElements(%s): %v; want an error with %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.elems) || !reflect.DeepEqual(whole, tt.whole) {
			t.Errorf("DecodeElements(%s) = %v, elements %v, %v; want %v, %v", tt.in, whole, got, err, tt.whole, tt.elems)
		}
	}
}

// FuzzDecodeElements: without a limit, DecodeElements accepts exactly what
// Decode accepts and gives the same values.
func FuzzDecodeElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a",{"b":null}]`, `{"a":[1]}`, `[1,]`, `"x"`, `[[[]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := Decode(data)
		var elems []any
		whole, err := DecodeElements(data, 0, func(v any) error {
			elems = append(elems, v)
			return nil
		})
		if (err == nil) != (werr == nil) {
			t.Fatalf("Decode error %v, DecodeElements error %v", werr, err)
		}
		if err != nil {
			return
		}
		if arr, ok := want.([]any); ok {
			if len(arr) == 0 {
				arr = nil
			}
			if whole != nil || !reflect.DeepEqual(elems, arr) {
				t.Fatalf("array %v: elements %v, whole %v", arr, elems, whole)
			}
		} else if !reflect.DeepEqual(whole, want) || elems != nil {
			t.Fatalf("value %v: whole %v, elements %v", want, whole, elems)
		}
	})
}
