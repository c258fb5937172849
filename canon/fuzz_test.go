package canon

import (
	"bytes"
	"testing"
)

var jsonSeeds = []string{
	`null`, `true`, `0`, `-0`, `1e21`, `1e-7`, `9007199254740993`, `"a\u0000\ud83d\ude00\u2028"`,
	`{"b":1,"a":[{},[],"x"]}`, `{"😀":1,"\uffff":2}`, `[1,2,{"a":{"b":null}}]`, `"\ud800"`, `{"a":1,"a":2}`,
	`[1e400]`, "\"\xff\"", `{"a":1} x`, `  [ 1 , 2 ]  `,
}

// FuzzDecodeMarshal checks that whatever Decode accepts, Marshal encodes,
// and that canonical bytes are a fixed point: decoding and re-encoding them
// gives the same bytes.
func FuzzDecodeMarshal(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		b1, err := Marshal(v)
		if err != nil {
			t.Fatalf("Decode accepted %q but Marshal failed: %v", data, err)
		}
		v2, err := Decode(b1)
		if err != nil {
			t.Fatalf("canonical bytes %q do not decode: %v", b1, err)
		}
		b2, err := Marshal(v2)
		if err != nil {
			t.Fatalf("Marshal of re-decoded %q: %v", b1, err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("canonical form is not stable: %q then %q", b1, b2)
		}
		if DigestValue(BLAKE3, v) != DigestValue(BLAKE3, v2) {
			t.Fatalf("digest of %q is not stable", b1)
		}
	})
}

// FuzzReduce checks that reduction never panics on decodable input, that
// its result always encodes, and that reducing twice changes nothing.
func FuzzReduce(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(fingerprintBase))
	spec, err := ParseSpec([]byte(`
default_material: false
fields:
  - {path: a, material: true, collection: set, text: {collapse_whitespace: false}}
  - {path: a.x, material: false}
  - {path: b, material: true, number: {quantum: 0.1}, text: {case_insensitive: true}}
  - {path: c, material: true}
  - {path: c.d, material: false}
facets:
  - {facet: f, paths: [a, b.c]}
`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		for _, s := range []*Spec{nil, spec} {
			r1, kept, err := s.Reduce(Path{}, v)
			if err != nil || !kept {
				t.Fatalf("Reduce(%q) = kept %v, %v; the root is always kept", data, kept, err)
			}
			b1, err := Marshal(r1)
			if err != nil {
				t.Fatalf("reduced value does not encode: %v", err)
			}
			r2, _, err := s.Reduce(Path{}, r1)
			if err != nil {
				t.Fatal(err)
			}
			if b2, _ := Marshal(r2); !bytes.Equal(b1, b2) {
				t.Fatalf("Reduce is not idempotent on %q: %s then %s", data, b1, b2)
			}
			if _, err := Fingerprints(BLAKE3, s, v); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzParseSpec checks that no spec text panics the parser and that every
// accepted spec is valid and hashes.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(specJSON))
	f.Add([]byte(specYAML))
	f.Add([]byte(fingerprintSpec))
	f.Add([]byte("fields:\n  - &a {path: x, material: true}\n  - *a\n"))
	f.Add([]byte(`{"facets":[{"facet":"@atomic","paths":["a"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseSpec accepted an invalid spec: %v", err)
		}
		_ = s.Hash()
		if _, err := Fingerprints(SHA256, s, map[string]any{"a": []any{"x"}}); err != nil {
			t.Fatal(err)
		}
	})
}
