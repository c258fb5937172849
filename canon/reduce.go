package canon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// state is what the rules say about one position in the truth.
type state struct {
	material   bool
	ruled      bool // a rule, not default_material, decided material
	text       textRule
	quantum    float64
	collection string // applies only to arrays exactly at this path
}

func (c *compiledSpec) rootState() (state, *ruleTrie) {
	st := state{material: c.defaultMaterial, text: defaultText}
	return st.apply(c.root.rule), c.root
}

func (st state) apply(r *rule) state {
	if r == nil {
		return st
	}
	st.material = r.material
	st.ruled = true
	if r.text != nil {
		st.text = *r.text
	}
	if r.quantum != 0 {
		st.quantum = r.quantum
	}
	st.collection = r.collection
	return st
}

// child returns the state of key below a value whose state is st.
func (st state) child(t *ruleTrie, key string) (state, *ruleTrie) {
	st.collection = ""
	if t != nil {
		t = t.children[key]
	}
	if t != nil {
		st = st.apply(t.rule)
	}
	return st, t
}

func (c *compiledSpec) stateAt(p Path) (state, *ruleTrie) {
	st, t := c.rootState()
	for _, seg := range p {
		st, t = st.child(t, seg)
	}
	return st, t
}

// Materiality reports what the rules say about the value at p: whether it
// is material, and whether a rule (true) or default_material (false)
// decided. The root is always material. Callers that build truth from many
// parts use it to apply the dropped-record rule themselves: a record whose
// children were all dropped is kept only when material and ruled are both
// true. An invalid spec reports everything material and unruled.
func (s *Spec) Materiality(p Path) (material bool, ruled bool) {
	c, err := s.compile()
	if err != nil {
		return true, false
	}
	st, _ := c.stateAt(p)
	if len(p) == 0 {
		return true, st.ruled
	}
	return st.material, st.ruled
}

// Reduce returns the material part of v, the value found at path in the
// whole truth (the root is Path{}), normalized as the spec says; kept is
// false when the whole of v is dropped. The rules are in the package
// documentation. The result is a fresh value of the value model (Go integer
// types, json.Number, []string and map[string]string in v are converted);
// v is not modified. Reduce fails on an invalid spec and on values canonical
// JSON cannot hold (NaN, infinities, invalid UTF-8, other Go types), even
// inside dropped parts.
func (s *Spec) Reduce(path Path, v any) (any, bool, error) {
	c, err := s.compile()
	if err != nil {
		return nil, false, err
	}
	return c.reduce(path, v)
}

func (c *compiledSpec) reduce(path Path, v any) (any, bool, error) {
	st, t := c.stateAt(path)
	r := reducer{}
	out, kept, err := r.reduce(st, t, v, len(path) == 0, 0)
	if err != nil {
		if len(path) > 0 {
			return nil, false, fmt.Errorf("canon: reduce %s: %w", path.String(), trimPrefix(err))
		}
		return nil, false, err
	}
	return out, kept, nil
}

type reducer struct {
	buf []byte // scratch for set sorting
}

func (r *reducer) reduce(st state, t *ruleTrie, v any, isRoot bool, depth int) (any, bool, error) {
	if depth > maxDepth {
		return nil, false, fmt.Errorf("canon: value is nested more than %d levels deep", maxDepth)
	}
	material := st.material || isRoot
	switch x := v.(type) {
	case nil:
		return nil, material, nil
	case bool:
		return x, material, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, false, fmt.Errorf("canon: string %s is not valid UTF-8", quoteForError(x))
		}
		if !material {
			return nil, false, nil
		}
		return normalizeText(x, st.text), true, nil
	case float64:
		return r.number(st, x, material)
	case json.Number:
		f, err := parseNumber(string(x))
		if err != nil {
			return nil, false, err
		}
		return r.number(st, f, material)
	case map[string]any:
		return r.object(st, t, x, isRoot, depth)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, cv := range x {
			m[k] = cv
		}
		return r.object(st, t, m, isRoot, depth)
	case []any:
		return r.array(st, t, len(x), func(i int) any { return x[i] }, isRoot, depth)
	case []string:
		return r.array(st, t, len(x), func(i int) any { return x[i] }, isRoot, depth)
	}
	if f, ok := toFloat(v); ok {
		return r.number(st, f, material)
	}
	return nil, false, fmt.Errorf("canon: cannot reduce a value of Go type %T (use nil, bool, float64, string, []any or map[string]any)", v)
}

func (r *reducer) number(st state, f float64, material bool) (any, bool, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false, fmt.Errorf("canon: number %v is not allowed: JSON has no NaN or infinity", f)
	}
	if !material {
		return nil, false, nil
	}
	if st.quantum != 0 {
		f = quantize(f, st.quantum)
	}
	if f == 0 {
		f = 0 // no -0
	}
	return f, true, nil
}

func (r *reducer) object(st state, t *ruleTrie, x map[string]any, isRoot bool, depth int) (any, bool, error) {
	material := st.material || isRoot
	out := make(map[string]any, len(x))
	if len(x) == 0 {
		return out, material, nil
	}
	for k, cv := range x {
		if !utf8.ValidString(k) {
			return nil, false, fmt.Errorf("canon: object key %s is not valid UTF-8", quoteForError(k))
		}
		cst, ct := st.child(t, k)
		rv, kept, err := r.reduce(cst, ct, cv, false, depth+1)
		if err != nil {
			return nil, false, err
		}
		if kept {
			out[k] = rv
		}
	}
	// A record whose children were all dropped goes too, unless a rule
	// marks it material (or it is the root, which is always kept).
	if len(out) == 0 && !isRoot && !(st.material && st.ruled) {
		return nil, false, nil
	}
	return out, true, nil
}

func (r *reducer) array(st state, t *ruleTrie, n int, at func(int) any, isRoot bool, depth int) (any, bool, error) {
	material := st.material || isRoot
	out := make([]any, 0, n)
	for i := 0; i < n; i++ {
		// Elements sit at the array's own path.
		rv, kept, err := r.reduce(st, t, at(i), false, depth+1)
		if err != nil {
			return nil, false, err
		}
		if kept {
			out = append(out, rv)
		}
	}
	if st.collection == CollectionSet && len(out) > 1 {
		if err := r.sortSet(out); err != nil {
			return nil, false, err
		}
	}
	if len(out) == 0 && !material {
		return nil, false, nil
	}
	return out, true, nil
}

// sortSet orders the elements of a set by their canonical JSON bytes.
func (r *reducer) sortSet(elems []any) error {
	type keyed struct {
		key []byte
		v   any
	}
	ks := make([]keyed, len(elems))
	for i, e := range elems {
		start := len(r.buf)
		var err error
		r.buf, err = AppendMarshal(r.buf, e)
		if err != nil {
			return err
		}
		ks[i] = keyed{r.buf[start:len(r.buf):len(r.buf)], e}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return bytes.Compare(a.key, b.key) })
	for i := range ks {
		elems[i] = ks[i].v
	}
	r.buf = r.buf[:0]
	return nil
}

// quantize rounds x to the nearest multiple of q, halves away from zero.
// When 1/q is a whole number (0.1, 0.25, 0.001) the multiple is computed as
// n / (1/q), which gives the double nearest the decimal result (0.3, not
// 0.30000000000000004). Where the multiple is not representable (the count
// of quanta reaches 2^53, or rounding up passes the largest double) x is
// returned unchanged.
func quantize(x, q float64) float64 {
	inv := 1 / q
	whole := inv == math.Trunc(inv) && inv <= 1<<53
	var n float64
	if whole {
		n = math.Round(x * inv)
	} else {
		n = math.Round(x / q)
	}
	if math.IsInf(n, 0) || math.IsNaN(n) || math.Abs(n) >= 1<<53 {
		return x
	}
	var y float64
	if whole {
		y = n / inv
	} else {
		y = n * q
	}
	if math.IsInf(y, 0) || math.IsNaN(y) {
		return x
	}
	return y
}

// normalizeText applies NFC, optional case folding and optional whitespace
// collapsing to s, which is valid UTF-8.
func normalizeText(s string, r textRule) string {
	ascii := isASCII(s)
	if !ascii {
		s = norm.NFC.String(s)
	}
	if r.caseInsensitive {
		if ascii {
			s = strings.ToLower(s)
		} else {
			// Full case folding (ß and ss, σ and ς compare equal), then NFC
			// again because folding can decompose.
			s = norm.NFC.String(cases.Fold().String(s))
		}
	}
	if r.collapse {
		s = collapseSpace(s)
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isSpace reports whether r is whitespace for JavaScript's \s: the
// ECMAScript WhiteSpace and LineTerminator characters.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// collapseSpace replaces each run of whitespace with one space and trims
// both ends.
func collapseSpace(s string) string {
	// Fast path: nothing to change.
	clean := true
	prevSpace := true // a leading space is not clean
	for i := 0; i < len(s); {
		c := s[i]
		var sp bool
		if c < utf8.RuneSelf {
			sp = c == ' ' || c >= '\t' && c <= '\r'
			if sp && c != ' ' {
				clean = false
				break
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			sp = isSpace(r)
			if sp {
				clean = false
				break
			}
			i += size
		}
		if sp && prevSpace {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && !prevSpace || s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); {
		if n := spaceLen(s, i); n > 0 {
			pending = b.Len() > 0
			i += n
			continue
		}
		// A run of what is not white space, written at once (s is valid
		// UTF-8: its runes' bytes are what WriteRune writes).
		j := i + 1
		for j < len(s) && spaceLen(s, j) == 0 {
			j++
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// spaceLen is the length of the white space (isSpace) starting at s[i],
// 0 when what starts there is not; ASCII is read byte by byte, a rune
// decoded only past it.
func spaceLen(s string, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if c == ' ' || c >= '\t' && c <= '\r' {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if isSpace(r) {
		return n
	}
	return 0
}
