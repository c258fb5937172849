package canon

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ColdStart is the one token for "nothing published yet". It is not a
// digest, so it never equals the token of any truth, not even of an empty
// material truth.
const ColdStart = "cold-start"

// Digest is the Merkle digest of a reduced value (see DigestValue).
type Digest [Size]byte

// String returns the digest in lowercase hex, without an algorithm prefix.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Child is one entry of an object whose digest is computed from its
// children's digests: the key and the digest of the value under it.
type Child struct {
	Key    string
	Digest Digest
}

// Domain prefixes of the two kinds of digest input, so that an object can
// never hash like a leaf.
const (
	objectPrefix = 'o'
	valuePrefix  = 'v'
)

// DigestValue returns the Merkle digest of v under algorithm a:
//
//   - an object (map[string]any or map[string]string):
//     H("o" ‖ for each key in UTF-16 code-unit order: uvarint(len(key)) ‖ key ‖ DigestValue(child))
//   - any other value: H("v" ‖ canonical JSON of the value)
//
// so a change below one key re-hashes only that key's path. v should be a
// reduced value (see Spec.Reduce), which always encodes; for a value
// Marshal rejects (NaN, invalid UTF-8, an unsupported Go type, nesting past
// 10000 levels) DigestValue returns the zero Digest.
func DigestValue(a Algorithm, v any) Digest {
	d := digester{a: a}
	sum, ok := d.value(v, 0)
	if !ok {
		return Digest{}
	}
	return sum
}

// digester computes digests with one reusable buffer: an object's input is
// assembled only after all its children are digested, so the recursion
// never clobbers a buffer in use.
type digester struct {
	a   Algorithm
	buf []byte
}

func (d *digester) value(v any, depth int) (Digest, bool) {
	if depth > maxDepth {
		return Digest{}, false
	}
	switch x := v.(type) {
	case map[string]any:
		children := make([]Child, 0, len(x))
		for k, cv := range x {
			sum, ok := d.value(cv, depth+1)
			if !ok {
				return Digest{}, false
			}
			children = append(children, Child{k, sum})
		}
		return d.object(children)
	case map[string]string:
		children := make([]Child, 0, len(x))
		for k, cv := range x {
			sum, ok := d.value(cv, depth+1)
			if !ok {
				return Digest{}, false
			}
			children = append(children, Child{k, sum})
		}
		return d.object(children)
	}
	d.buf = append(d.buf[:0], valuePrefix)
	var err error
	if d.buf, err = appendValue(d.buf, v, depth); err != nil {
		return Digest{}, false
	}
	return Digest(d.a.sum(d.buf)), true
}

// object sorts children in place and hashes them as an object.
func (d *digester) object(children []Child) (Digest, bool) {
	slices.SortFunc(children, func(x, y Child) int { return CompareKeys(x.Key, y.Key) })
	d.buf = append(d.buf[:0], objectPrefix)
	for _, c := range children {
		if !utf8.ValidString(c.Key) {
			return Digest{}, false
		}
		d.buf = binary.AppendUvarint(d.buf, uint64(len(c.Key)))
		d.buf = append(d.buf, c.Key...)
		d.buf = append(d.buf, c.Digest[:]...)
	}
	return Digest(d.a.sum(d.buf)), true
}

// DigestObject returns the digest of an object from its children's
// digests, exactly DigestValue of the equivalent map. It sorts a copy of
// children by key in UTF-16 code-unit order; keys must be distinct. A key
// that is not valid UTF-8 gives the zero Digest, as DigestValue would.
func DigestObject(a Algorithm, children []Child) Digest {
	d := digester{a: a}
	sum, ok := d.object(slices.Clone(children))
	if !ok {
		return Digest{}
	}
	return sum
}

// DigestToken formats d as a token of algorithm a, "blake3:<64 hex>".
func (a Algorithm) DigestToken(d Digest) string {
	return a.TokenOf(d[:])
}

// Project returns the part of a reduced value that lies at paths: an object
// holding only those paths, nested as in the value, with absent paths left
// out. The empty path selects the whole value. An array on the way is
// projected element by element (elements sit at their array's path);
// elements with nothing selected are left out, and so is an array with no
// selected element. When nothing is selected the result is an empty object.
// The result shares unselected-but-kept subtrees with reduced.
func Project(reduced any, paths []Path) any {
	if v, ok := project(reduced, paths, 0); ok {
		return v
	}
	return map[string]any{}
}

func project(v any, paths []Path, depth int) (any, bool) {
	if len(paths) == 0 || depth > maxDepth {
		return nil, false
	}
	for _, p := range paths {
		if len(p) == 0 {
			return v, true
		}
	}
	switch x := v.(type) {
	case map[string]any:
		byKey := map[string][]Path{}
		for _, p := range paths {
			byKey[p[0]] = append(byKey[p[0]], p[1:])
		}
		out := map[string]any{}
		for k, rest := range byKey {
			cv, present := x[k]
			if !present {
				continue
			}
			if pv, ok := project(cv, rest, depth+1); ok {
				out[k] = pv
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	case map[string]string:
		out := map[string]any{}
		for _, p := range paths {
			if len(p) == 1 {
				if s, ok := x[p[0]]; ok {
					out[p[0]] = s
				}
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	case []any:
		var out []any
		for _, e := range x {
			if pv, ok := project(e, paths, depth+1); ok {
				out = append(out, pv)
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	}
	return nil, false
}

// Fingerprints reduces truth (the whole truth, at the root) with s and
// returns its fingerprint map: "@atomic", the token of the digest of the
// reduced truth, and for each facet s declares the token of the digest of
// Project(reduced, facet paths). A nil s makes everything material and
// declares no facets. The error is Reduce's, or names an unknown algorithm.
func Fingerprints(a Algorithm, s *Spec, truth any) (map[string]string, error) {
	if _, err := ParseAlgorithm(string(a)); err != nil {
		return nil, err
	}
	c, err := s.compile()
	if err != nil {
		return nil, err
	}
	reduced, _, err := c.reduce(Path{}, truth)
	if err != nil {
		return nil, err
	}
	fps := make(map[string]string, 1+len(c.facets))
	fps[Atomic] = a.DigestToken(DigestValue(a, reduced))
	for _, f := range c.facets {
		fps[f.name] = a.DigestToken(DigestValue(a, Project(reduced, f.paths)))
	}
	return fps, nil
}

// MemoKey returns the memo key of a render: the token of the canonical JSON
// of [contractFingerprint, inputs], inputs being the input fingerprints in
// edge order. Equal keys mean the render would see the same contract and the
// same inputs. Text that is not valid UTF-8 is repaired with U+FFFD first,
// so MemoKey never fails.
func MemoKey(a Algorithm, contractFingerprint string, inputs []string) string {
	in := make([]any, len(inputs))
	for i, s := range inputs {
		in[i] = strings.ToValidUTF8(s, "\uFFFD")
	}
	b, err := Marshal([]any{strings.ToValidUTF8(contractFingerprint, "\uFFFD"), in})
	if err != nil {
		// Unreachable: the value holds only valid strings.
		panic(fmt.Sprintf("canon: memo key: %v", err))
	}
	return a.Token(b)
}
