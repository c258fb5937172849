package published

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prose-store/prose/canon"
)

// Fingerprints are computed exactly as canon.Fingerprints computes them on
// the whole structured truth (docs/fingerprints.md), but from per-file
// parts, so that an unchanged file costs nothing:
//
//   - each file's value is reduced at its path in the truth
//     (spec.Reduce(truthPath, value)) and digested once, when the file is
//     read; the stat cache keeps the digest;
//   - a directory's digest is canon.DigestObject over its kept children; a
//     directory whose children were all dropped is dropped too, unless a
//     rule marks it material (canon's Spec.Materiality); the root is always
//     kept; "@atomic" is the root's digest;
//   - a facet's token is the digest of canon.Project(reduced truth, facet
//     paths), composed from the digests recorded at the positions of a trie
//     of the facet paths; where a facet path reaches inside a file, the
//     digest of the projection of that file's reduced value is computed when
//     the file is read and cached with it.
//
// Without declared facets (a nil spec, or one declaring none), each
// top-level directory of the node is a facet named after it, with the one
// path of that directory; files at the root count toward "@atomic" only.

// fpConfig is the fingerprint setup of a scan.
type fpConfig struct {
	alg    canon.Algorithm
	spec   *canon.Spec
	id     string   // identity for the stat cache
	facets []string // declared facet names; nil: the top-level directories
	trie   *facetTrie
	view   View
}

// fileFP is what fingerprinting needs from one file.
type fileFP struct {
	kept   bool         // false: the whole file is immaterial
	digest canon.Digest // of the reduced value, when kept
	subs   []subDigest  // projections of facets whose paths reach inside the file
}

// subDigest is the digest of the projection of a file's reduced value onto
// the paths of one facet that lie inside the file.
type subDigest struct {
	facet   uint16 // index in the declared facets
	present bool   // false: nothing selected
	digest  canon.Digest
}

// facetTrie is a node of the trie of all declared facet paths.
type facetTrie struct {
	children map[string]*facetTrie
	terminal []bool // per facet: a path of the facet ends here
	through  []bool // per facet: a path of the facet ends here or below

	// Filled by compose for the position in the current truth.
	present bool
	digest  canon.Digest
	file    int // index of the file at this position, or -1
}

func newFacetTrie(n int) *facetTrie {
	return &facetTrie{terminal: make([]bool, n), through: make([]bool, n), file: -1}
}

// newFPConfig validates the options' algorithm and spec.
func newFPConfig(opt Options) (*fpConfig, error) {
	alg, err := canon.ParseAlgorithm(string(opt.Algorithm))
	if err != nil {
		return nil, err
	}
	if err := opt.Spec.Validate(); err != nil {
		return nil, err
	}
	c := &fpConfig{alg: alg, spec: opt.Spec, id: cacheID(alg, opt.Spec, opt.View), view: opt.View}
	if opt.Spec == nil || len(opt.Spec.Facets) == 0 {
		return c, nil
	}
	n := len(opt.Spec.Facets)
	c.trie = newFacetTrie(n)
	for i, f := range opt.Spec.Facets {
		c.facets = append(c.facets, f.Facet)
		for _, raw := range f.Paths {
			p, err := canon.ParsePath(raw)
			if err != nil {
				return nil, err // unreachable: Validate parsed it
			}
			t := c.trie
			t.through[i] = true
			for _, seg := range p {
				next := t.children[seg]
				if next == nil {
					next = newFacetTrie(n)
					if t.children == nil {
						t.children = map[string]*facetTrie{}
					}
					t.children[seg] = next
				}
				t = next
				t.through[i] = true
			}
			t.terminal[i] = true
		}
	}
	return c, nil
}

// lookup returns the trie node at p, or nil.
func (t *facetTrie) lookup(p canon.Path) *facetTrie {
	for _, seg := range p {
		if t == nil {
			return nil
		}
		t = t.children[seg]
	}
	return t
}

// relPaths returns the paths of facet f below t, relative to t.
func (t *facetTrie) relPaths(f int, prefix canon.Path, out []canon.Path) []canon.Path {
	if !t.through[f] {
		return out
	}
	if t.terminal[f] {
		return append(out, slices.Clone(prefix))
	}
	for k, c := range t.children {
		out = c.relPaths(f, append(prefix, k), out)
	}
	return out
}

// reset clears the per-truth results.
func (t *facetTrie) reset() {
	t.present, t.digest, t.file = false, canon.Digest{}, -1
	for _, c := range t.children {
		c.reset()
	}
}

// fileFP reduces and digests the value v of the file at path p.
func (c *fpConfig) fileFP(p string, v any) (fileFP, error) {
	tp := truthPath(p)
	red, kept, err := c.spec.Reduce(tp, v)
	if err != nil {
		return fileFP{}, fmt.Errorf("%s: %w", p, err)
	}
	if !kept {
		return fileFP{}, nil
	}
	fp := fileFP{kept: true, digest: canon.DigestValue(c.alg, red)}
	node := c.trie.lookup(tp)
	if node == nil {
		return fp, nil
	}
	for f := range c.facets {
		if !node.through[f] || node.terminal[f] {
			continue
		}
		sd := subDigest{facet: uint16(f)}
		proj := canon.Project(red, node.relPaths(f, nil, nil))
		if m, ok := proj.(map[string]any); !ok || len(m) > 0 {
			// Project gives an empty object only when nothing is selected:
			// the paths here are below the file, so a selection is never
			// the empty object itself.
			sd.present, sd.digest = true, canon.DigestValue(c.alg, proj)
		}
		fp.subs = append(fp.subs, sd)
	}
	return fp, nil
}

// composed is the result of composing file digests.
type composed struct {
	fingerprints map[string]string
	facets       []string
}

// dirFrame is a directory being composed.
type dirFrame struct {
	path     string // relative path; "" for the root
	name     string // last segment
	trie     *facetTrie
	children []child // every child, kept or not
	fold     bool    // some child name needs case folding to compare
	kept     []canon.Child
}

// child is one entry of a directory being composed.
type child struct {
	name, key, path string // path: of the file, or of the directory with a trailing "/"
	kept            bool
	digest          canon.Digest
}

// topDir is a top-level directory: a facet when the spec declares none.
type topDir struct {
	name    string
	present bool
	digest  canon.Digest
}

// composer composes per-file digests into directory digests and the
// fingerprint map, as a treeVisitor.
type composer struct {
	c       *fpConfig
	entries []Entry
	fps     []fileFP
	open    []*dirFrame
	pool    []*dirFrame
	tops    []topDir
	atomic  canon.Digest

	// The directory left last (not the root).
	lastKept   bool
	lastDigest canon.Digest
}

func (c *fpConfig) newComposer(entries []Entry, fps []fileFP) *composer {
	if c.trie != nil {
		c.trie.reset()
	}
	return &composer{c: c, entries: entries, fps: fps}
}

func (m *composer) top() *dirFrame { return m.open[len(m.open)-1] }

// trieAt returns the facet trie node of the child name of the innermost
// open directory (or of the root), or nil.
func (m *composer) trieAt(name string) *facetTrie {
	if len(m.open) == 0 {
		return m.c.trie
	}
	if t := m.top().trie; t != nil {
		return t.children[name]
	}
	return nil
}

func (m *composer) enter(path, name string) (bool, error) {
	t := m.trieAt(name)
	var d *dirFrame
	if n := len(m.open); n < len(m.pool) {
		d = m.pool[n]
	} else {
		d = &dirFrame{}
		m.pool = append(m.pool, d)
	}
	*d = dirFrame{path: path, name: name, trie: t, children: d.children[:0], kept: d.kept[:0]}
	m.open = append(m.open, d)
	return false, nil
}

func (m *composer) file(i int, name string) error {
	d := m.top()
	key, _ := fileKey(name)
	fp := &m.fps[i]
	d.add(name, key, m.entries[i].Path, fp.kept, fp.digest)
	if d.trie != nil {
		if t := d.trie.children[key]; t != nil {
			t.present, t.digest, t.file = fp.kept, fp.digest, i
		}
	}
	return nil
}

func (m *composer) leave() error {
	d := m.top()
	m.open = m.open[:len(m.open)-1]
	dg, kept, err := m.c.finish(d)
	if err != nil {
		return err
	}
	if len(m.open) == 0 {
		m.atomic = dg // the root is always kept
		return nil
	}
	if !kept {
		// All children dropped: the directory stays (as {}) only when a
		// rule marks it material.
		material, ruled := m.c.spec.Materiality(truthOfDir(d.path))
		kept = material && ruled
	}
	m.lastKept, m.lastDigest = kept, dg
	m.addDir(d.name, d.path, kept, dg)
	return nil
}

// canSkip reports whether the child directory name of the innermost open
// directory may be taken whole from its known digest: no facet path goes
// below it.
func (m *composer) canSkip(name string) bool {
	t := m.trieAt(name)
	return t == nil || len(t.children) == 0
}

// addDir adds a directory whose digest is known to the innermost open one.
func (m *composer) addDir(name, path string, kept bool, dg canon.Digest) {
	if t := m.trieAt(name); t != nil {
		t.present, t.digest = kept, dg
	}
	m.top().add(name, name, path+"/", kept, dg)
	if len(m.open) == 1 {
		m.tops = append(m.tops, topDir{name, kept, dg})
	}
}

// result returns the fingerprint map once the root was left.
func (m *composer) result() composed {
	c := m.c
	out := composed{fingerprints: map[string]string{canon.Atomic: c.alg.DigestToken(m.atomic)}, facets: []string{canon.Atomic}}
	if c.facets == nil {
		slices.SortFunc(m.tops, func(a, b topDir) int { return strings.Compare(a.name, b.name) })
		for _, t := range m.tops {
			// A directory that reduces to nothing (wholly immaterial) is no
			// facet: adding or removing it must move no token.
			if !t.present {
				continue
			}
			d := canon.DigestObject(c.alg, []canon.Child{{Key: t.name, Digest: t.digest}})
			out.fingerprints[t.name] = c.alg.DigestToken(d)
			out.facets = append(out.facets, t.name)
		}
		return out
	}
	c.trie.present, c.trie.digest = true, m.atomic
	for f, name := range c.facets {
		d, ok := c.project(c.trie, f, m.fps)
		if !ok {
			d = canon.DigestObject(c.alg, nil)
		}
		out.fingerprints[name] = c.alg.DigestToken(d)
		out.facets = append(out.facets, name)
	}
	return out
}

// compose checks the tree formed by entries (sorted by path bytes,
// normalized) and computes the fingerprint map from each file's fileFP.
func (c *fpConfig) compose(entries []Entry, fps []fileFP) (composed, error) {
	m := c.newComposer(entries, fps)
	if err := walkTree(entries, m); err != nil {
		return composed{}, err
	}
	return m.result(), nil
}

// finish checks the children of d and returns its digest; false when no
// child was kept.
func (c *fpConfig) finish(d *dirFrame) (canon.Digest, bool, error) {
	if err := d.check(); err != nil {
		return canon.Digest{}, false, err
	}
	for i := range d.children {
		if ch := &d.children[i]; ch.kept {
			d.kept = append(d.kept, canon.Child{Key: ch.key, Digest: ch.digest})
		}
	}
	if len(d.kept) == 0 {
		return canon.DigestObject(c.alg, nil), false, nil
	}
	return canon.DigestObject(c.alg, d.kept), true, nil
}

// project returns the digest of the projection of the value at t (present)
// onto the paths of facet f below t; false when nothing is selected.
func (c *fpConfig) project(t *facetTrie, f int, fps []fileFP) (canon.Digest, bool) {
	if t.terminal[f] {
		return t.digest, true
	}
	if t.file >= 0 {
		for _, s := range fps[t.file].subs {
			if int(s.facet) == f {
				return s.digest, s.present
			}
		}
		return canon.Digest{}, false
	}
	var children []canon.Child
	for k, ct := range t.children {
		if !ct.through[f] || !ct.present {
			continue
		}
		if d, ok := c.project(ct, f, fps); ok {
			children = append(children, canon.Child{Key: k, Digest: d})
		}
	}
	if len(children) == 0 {
		return canon.Digest{}, false
	}
	return canon.DigestObject(c.alg, children), true
}

// add records a child of d.
func (d *dirFrame) add(name, key, path string, kept bool, digest canon.Digest) {
	if !d.fold {
		for i := 0; i < len(name); i++ {
			if c := name[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
				d.fold = true
				break
			}
		}
	}
	d.children = append(d.children, child{name: name, key: key, path: path, kept: kept, digest: digest})
}

// check reports two children of d that give the same key in the truth, or
// whose names differ only in case or Unicode normalization. It leaves the
// children sorted by key in UTF-16 order, the order DigestObject hashes.
func (d *dirFrame) check() error {
	if len(d.children) < 2 {
		return nil
	}
	if d.fold {
		seen := make(map[string]*child, len(d.children))
		for i := range d.children {
			n := &d.children[i]
			k := foldKey(n.name)
			if o, ok := seen[k]; ok {
				return &CollisionError{Path: strings.TrimSuffix(n.path, "/"), Other: strings.TrimSuffix(o.path, "/"),
					Reason: fmt.Sprintf("%q and %q differ only in case or Unicode normalization", n.name, o.name)}
			}
			seen[k] = n
		}
	}
	cmp := func(a, b child) int { return canon.CompareKeys(a.key, b.key) }
	if !slices.IsSortedFunc(d.children, cmp) {
		slices.SortFunc(d.children, cmp)
	}
	for i := 1; i < len(d.children); i++ {
		if a, b := &d.children[i-1], &d.children[i]; a.key == b.key {
			return keyCollision(a.path, b.path, b.key)
		}
	}
	return nil
}

// truthOfDir returns the truth path of a directory.
func truthOfDir(p string) canon.Path {
	if p == "" {
		return canon.Path{}
	}
	return canon.Path(strings.Split(p, "/"))
}

// FingerprintFiles returns the fingerprint map of a world-model given as a
// map from file path to content, exactly the map Scan computes for a
// directory holding those files. Paths are checked as TruthOfFiles checks
// them.
func FingerprintFiles(files map[string][]byte, opt Options) (map[string]string, error) {
	c, err := newFPConfig(opt)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	norm := make(map[string]string, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	if err := CheckCollisions(paths); err != nil {
		return nil, err
	}
	for i, p := range paths {
		n, _ := NormalizePath(p) // checked by CheckCollisions
		norm[n] = p
		paths[i] = n
	}
	slices.Sort(paths)
	entries := make([]Entry, len(paths))
	fps := make([]fileFP, len(paths))
	errs := make([]error, len(paths))
	parallel(len(paths), func(i int) {
		p := paths[i]
		entries[i].Path = p
		v, err := fileValue(c.view, p, files[norm[p]], nil)
		if err == nil {
			fps[i], err = c.fileFP(p, v)
		}
		errs[i] = err
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res, err := c.compose(entries, fps)
	if err != nil {
		return nil, err
	}
	return res.fingerprints, nil
}
