package canon

import (
	"fmt"
	"math"
	"strings"
	"sync"
)

// rule is a Field with its defaults resolved.
type rule struct {
	material   bool
	text       *textRule
	quantum    float64 // 0: no number rule
	collection string  // "" or CollectionSet; "ordered" is stored as ""
}

type textRule struct {
	collapse        bool
	caseInsensitive bool
}

// defaultText is how strings are normalized where no text rule applies.
var defaultText = textRule{collapse: true}

// ruleTrie indexes rules by path segment, so that a walk down the truth
// finds the rule of each value without building path strings.
type ruleTrie struct {
	rule     *rule
	children map[string]*ruleTrie
}

type compiledSpec struct {
	root            *ruleTrie
	defaultMaterial bool
	facets          []compiledFacet
}

type compiledFacet struct {
	name  string
	paths []Path
}

var everythingMaterial = &compiledSpec{root: &ruleTrie{}, defaultMaterial: true}

// compile validates s and indexes its rules.
func (s *Spec) compile() (*compiledSpec, error) {
	if s == nil {
		return everythingMaterial, nil
	}
	return compileCache.get(s)
}

// build validates s and indexes its rules, without the cache.
func (s *Spec) build() (*compiledSpec, error) {
	c := &compiledSpec{root: &ruleTrie{}, defaultMaterial: s.DefaultMaterial == nil || *s.DefaultMaterial}
	for i, f := range s.Fields {
		where := func() string { return fmt.Sprintf("canon: spec fields[%d] (path %q)", i, f.Path) }
		p, err := ParsePath(f.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where(), trimPrefix(err))
		}
		r := &rule{material: f.Material}
		if f.Text != nil {
			r.text = &textRule{
				collapse:        f.Text.CollapseWhitespace == nil || *f.Text.CollapseWhitespace,
				caseInsensitive: f.Text.CaseInsensitive,
			}
		}
		if f.Number != nil {
			q := f.Number.Quantum
			if !(q > 0) || math.IsInf(q, 0) {
				return nil, fmt.Errorf("%s: number.quantum must be a positive finite number, not %v", where(), q)
			}
			r.quantum = q
		}
		switch f.Collection {
		case "", CollectionOrdered:
		case CollectionSet:
			r.collection = CollectionSet
		default:
			return nil, fmt.Errorf("%s: collection must be \"ordered\" or \"set\", not %q", where(), f.Collection)
		}
		t := c.root
		for _, seg := range p {
			next := t.children[seg]
			if next == nil {
				next = &ruleTrie{}
				if t.children == nil {
					t.children = map[string]*ruleTrie{}
				}
				t.children[seg] = next
			}
			t = next
		}
		if t.rule != nil {
			return nil, fmt.Errorf("%s: a rule for path %q is declared twice", where(), p.String())
		}
		t.rule = r
	}
	seen := map[string]bool{}
	for i, f := range s.Facets {
		where := func() string { return fmt.Sprintf("canon: spec facets[%d] (facet %q)", i, f.Facet) }
		switch {
		case f.Facet == "":
			return nil, fmt.Errorf("canon: spec facets[%d]: the facet name is empty", i)
		case f.Facet == Atomic:
			return nil, fmt.Errorf("%s: %q is reserved for the whole truth and cannot be declared", where(), Atomic)
		case seen[f.Facet]:
			return nil, fmt.Errorf("%s: facet declared twice", where())
		case len(f.Paths) == 0:
			return nil, fmt.Errorf("%s: a facet needs at least one path", where())
		}
		seen[f.Facet] = true
		cf := compiledFacet{name: f.Facet}
		for j, raw := range f.Paths {
			p, err := ParsePath(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: paths[%d]: %w", where(), j, trimPrefix(err))
			}
			cf.paths = append(cf.paths, p)
		}
		c.facets = append(c.facets, cf)
	}
	return c, nil
}

// trimPrefix drops the "canon: " prefix of an error wrapped inside another
// canon error, so messages do not stutter.
func trimPrefix(err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "canon: "); ok {
		return fmt.Errorf("%s", rest)
	}
	return err
}

// compileCache remembers the compiled form of recently used specs, so the
// per-file calls of a directory scan (Reduce, Materiality) do not re-parse
// every rule. An entry is keyed by the Spec's address and holds a deep copy
// of what it compiled, compared on every hit, so a Spec modified after use,
// or a new Spec at a reused address, is compiled afresh rather than served
// stale.
var compileCache = &specCache{}

const specCacheSize = 32

type specCache struct {
	mu      sync.Mutex
	entries [specCacheSize]specCacheEntry
	next    int
}

type specCacheEntry struct {
	key      *Spec
	snapshot Spec
	c        *compiledSpec
	err      error
}

func (sc *specCache) get(s *Spec) (*compiledSpec, error) {
	sc.mu.Lock()
	for i := range sc.entries {
		e := &sc.entries[i]
		if e.key == s && specEqual(&e.snapshot, s) {
			c, err := e.c, e.err
			sc.mu.Unlock()
			return c, err
		}
	}
	sc.mu.Unlock()
	snapshot := specCopy(s)
	c, err := snapshot.build()
	sc.mu.Lock()
	sc.entries[sc.next] = specCacheEntry{key: s, snapshot: snapshot, c: c, err: err}
	sc.next = (sc.next + 1) % specCacheSize
	sc.mu.Unlock()
	return c, err
}

// specCopy returns a deep copy of the parts of s that compile reads.
func specCopy(s *Spec) Spec {
	c := Spec{Node: s.Node}
	if s.DefaultMaterial != nil {
		b := *s.DefaultMaterial
		c.DefaultMaterial = &b
	}
	c.Fields = make([]Field, len(s.Fields))
	for i, f := range s.Fields {
		if f.Text != nil {
			t := *f.Text
			if t.CollapseWhitespace != nil {
				b := *t.CollapseWhitespace
				t.CollapseWhitespace = &b
			}
			f.Text = &t
		}
		if f.Number != nil {
			n := *f.Number
			f.Number = &n
		}
		c.Fields[i] = f
	}
	c.Facets = make([]Facet, len(s.Facets))
	for i, f := range s.Facets {
		c.Facets[i] = Facet{Facet: f.Facet, Paths: append([]string(nil), f.Paths...)}
	}
	return c
}

// specEqual reports whether a and b compile alike (the node name aside).
func specEqual(a, b *Spec) bool {
	if !boolPtrEqual(a.DefaultMaterial, b.DefaultMaterial) || len(a.Fields) != len(b.Fields) || len(a.Facets) != len(b.Facets) {
		return false
	}
	for i := range a.Fields {
		fa, fb := &a.Fields[i], &b.Fields[i]
		if fa.Path != fb.Path || fa.Material != fb.Material || fa.Collection != fb.Collection {
			return false
		}
		if (fa.Text == nil) != (fb.Text == nil) || (fa.Number == nil) != (fb.Number == nil) {
			return false
		}
		if fa.Text != nil && (fa.Text.CaseInsensitive != fb.Text.CaseInsensitive || !boolPtrEqual(fa.Text.CollapseWhitespace, fb.Text.CollapseWhitespace)) {
			return false
		}
		if fa.Number != nil && fa.Number.Quantum != fb.Number.Quantum {
			return false
		}
	}
	for i := range a.Facets {
		if a.Facets[i].Facet != b.Facets[i].Facet || !slicesEqual(a.Facets[i].Paths, b.Facets[i].Paths) {
			return false
		}
	}
	return true
}

func boolPtrEqual(a, b *bool) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
