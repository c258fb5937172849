package published

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/prose-store/prose/canon"
)

// vocab supplies names for directories, files and object keys, so that
// random spec paths hit random truth often. No two differ only in case.
var vocab = []string{"a", "b", "items", "n", "m.v", "Über", "x y"}

// genValue returns a random value of the value model.
func genValue(r *rand.Rand, depth int) any {
	k := r.IntN(10)
	if depth > 2 && k >= 7 {
		k = r.IntN(7)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return float64(r.IntN(7)) / 4
	case 3, 4:
		return []string{"Hello  World", "hello world", " hello world ", "caf\u00e9", "cafe\u0301", "x", ""}[r.IntN(7)]
	case 5, 6:
		arr := make([]any, r.IntN(4))
		for i := range arr {
			arr[i] = genValue(r, depth+1)
		}
		return arr
	}
	obj := map[string]any{}
	for range r.IntN(4) {
		obj[vocab[r.IntN(len(vocab))]] = genValue(r, depth+1)
	}
	return obj
}

// genTree returns random world-model files: JSON, YAML, text and binary
// files in nested directories, without key collisions.
func genTree(t *testing.T, r *rand.Rand) map[string]string {
	files := map[string]string{}
	var dir func(prefix string, depth int)
	dir = func(prefix string, depth int) {
		used := map[string]bool{}
		for range r.IntN(5) {
			key := vocab[r.IntN(len(vocab))]
			if used[key] {
				continue
			}
			used[key] = true
			if depth < 3 && r.IntN(3) == 0 {
				dir(prefix+key+"/", depth+1)
				continue
			}
			v := genValue(r, 0)
			switch r.IntN(5) {
			case 0:
				b, err := canon.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				files[prefix+key+".json"] = string(b)
			case 1:
				b, err := yaml.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				files[prefix+key+[]string{".yaml", ".yml"}[r.IntN(2)]] = string(b)
			case 2:
				files[prefix+key] = []string{"text", "Text  here\n", "\xff\x00binary", ""}[r.IntN(4)]
			default:
				b, _ := canon.Marshal(v)
				files[prefix+key+".json"] = string(b)
			}
		}
	}
	dir("", 0)
	return files
}

// genPath returns a random dotted path: half the time one of known (paths
// that exist in the truth), else up to three random segments.
func genPath(r *rand.Rand, known []string) string {
	if len(known) > 0 && r.IntN(2) == 0 {
		return known[r.IntN(len(known))]
	}
	var p canon.Path
	for range r.IntN(4) {
		p = append(p, vocab[r.IntN(len(vocab))])
	}
	return p.String()
}

// truthPaths returns the dotted paths of the directories and files of a
// tree, in sorted order.
func truthPaths(files map[string]string) []string {
	seen := map[string]bool{}
	for p := range files {
		tp := truthPath(p)
		for i := 1; i <= len(tp); i++ {
			seen[tp[:i].String()] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// genSpec returns a random valid spec, or nil, with paths drawn partly from
// known.
func genSpec(r *rand.Rand, known []string) *canon.Spec {
	if r.IntN(5) == 0 {
		return nil
	}
	s := &canon.Spec{}
	if k := r.IntN(3); k > 0 {
		b := k == 1
		s.DefaultMaterial = &b
	}
	seen := map[string]bool{}
	for range r.IntN(5) {
		p := genPath(r, known)
		if seen[p] {
			continue
		}
		seen[p] = true
		f := canon.Field{Path: p, Material: r.IntN(3) > 0}
		switch r.IntN(5) {
		case 0:
			f.Text = &canon.TextRule{CaseInsensitive: true}
		case 1:
			f.Number = &canon.NumberRule{Quantum: 0.5}
		case 2:
			f.Collection = canon.CollectionSet
		}
		s.Fields = append(s.Fields, f)
	}
	for i := range r.IntN(4) {
		f := canon.Facet{Facet: fmt.Sprintf("facet-%d", i)}
		for range 1 + r.IntN(3) {
			f.Paths = append(f.Paths, genPath(r, known))
		}
		s.Facets = append(s.Facets, f)
	}
	return s
}

// effectiveSpec returns the spec canon.Fingerprints must see to give the
// facets Scan gives: without declared facets, one per top-level directory
// that the reduction keeps (truth is the structured truth of paths).
func effectiveSpec(spec *canon.Spec, paths []string, truth any) *canon.Spec {
	if spec != nil && len(spec.Facets) > 0 {
		return spec
	}
	eff := &canon.Spec{}
	if spec != nil {
		*eff = *spec
	}
	eff.Facets = nil
	reduced, _, _ := spec.Reduce(canon.Path{}, truth)
	kept, _ := reduced.(map[string]any)
	seen := map[string]bool{}
	slices.Sort(paths)
	for _, p := range paths {
		top, _, ok := strings.Cut(p, "/")
		if _, isKept := kept[top]; ok && !seen[top] && isKept {
			seen[top] = true
			eff.Facets = append(eff.Facets, canon.Facet{Facet: top, Paths: []string{canon.Path{top}.String()}})
		}
	}
	return eff
}

// TestScanMatchesCanon checks, on random trees and random specs, that the
// tokens Scan and FingerprintFiles compose from per-file digests equal
// canon.Fingerprints over the whole structured truth.
func TestScanMatchesCanon(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		files := genTree(t, r)
		spec := genSpec(r, truthPaths(files))
		alg := canon.BLAKE3
		if r.IntN(4) == 0 {
			alg = canon.SHA256
		}
		dir := t.TempDir()
		writeFiles(t, dir, files)

		snap, err := Scan(dir, Options{Algorithm: alg, Spec: spec})
		if err != nil {
			t.Fatalf("seed %d: Scan: %v", seed, err)
		}
		truth, err := ReadTruth(dir)
		if err != nil {
			t.Fatalf("seed %d: ReadTruth: %v", seed, err)
		}
		paths := slices.Collect(maps.Keys(files))
		eff := effectiveSpec(spec, paths, truth)
		want, err := canon.Fingerprints(alg, eff, truth)
		if err != nil {
			t.Fatalf("seed %d: canon.Fingerprints: %v", seed, err)
		}
		if !maps.Equal(snap.Fingerprints, want) {
			b, _ := canon.Marshal(truth)
			t.Fatalf("seed %d: Scan tokens differ from canon.Fingerprints\ntruth %s\nspec %+v\n got %v\nwant %v", seed, b, eff, snap.Fingerprints, want)
		}
		wantFacets := append([]string{canon.Atomic}, canon.FacetNames(eff)...)
		if !slices.Equal(snap.Facets, wantFacets) {
			t.Fatalf("seed %d: facets %q, want %q", seed, snap.Facets, wantFacets)
		}

		mem := map[string][]byte{}
		for p, c := range files {
			mem[p] = []byte(c)
		}
		got, err := FingerprintFiles(mem, Options{Algorithm: alg, Spec: spec})
		if err != nil {
			t.Fatalf("seed %d: FingerprintFiles: %v", seed, err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("seed %d: FingerprintFiles tokens differ from canon.Fingerprints", seed)
		}
		mt, err := TruthOfFiles(mem)
		if err != nil {
			t.Fatalf("seed %d: TruthOfFiles: %v", seed, err)
		}
		a, _ := canon.Marshal(mt)
		b, _ := canon.Marshal(truth)
		if string(a) != string(b) {
			t.Fatalf("seed %d: TruthOfFiles differs from ReadTruth", seed)
		}
	}
}

// TestInformedMatchesFull checks, on random trees and random edits, that
// an informed scan told what changed equals a full scan, and that a full
// scan through the cache equals one without it.
func TestInformedMatchesFull(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 20
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		dir := t.TempDir()
		files := genTree(t, r)
		spec := genSpec(r, truthPaths(files))
		writeFiles(t, dir, files)
		cacheDir := t.TempDir()
		informedCache := filepath.Join(cacheDir, "informed")
		fullCache := filepath.Join(cacheDir, "full")
		opt := Options{Spec: spec}
		for _, c := range []string{informedCache, fullCache} {
			opt.CachePath = c
			mustScan(t, dir, opt)
		}
		for round := range 4 {
			changed := []string{}
			for range 1 + r.IntN(3) {
				next := genTree(t, r)
				switch k := r.IntN(3); {
				case k == 0 && len(files) > 0:
					// Remove a file or its whole top-level directory.
					p := slices.Sorted(maps.Keys(files))[r.IntN(len(files))]
					if top, _, ok := strings.Cut(p, "/"); ok && r.IntN(2) == 0 {
						p = top
					}
					os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p)))
					changed = append(changed, p)
					for q := range files {
						if isUnder(q, p) {
							delete(files, q)
						}
					}
				default:
					// Rewrite or add files, unless that would collide.
					for p, c := range next {
						if _, err := TruthOfFiles(toBytes(withFile(files, p, c))); err != nil {
							continue
						}
						// A directory left empty by a removal may sit where
						// the file goes.
						os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p)))
						writeFile(t, dir, p, c)
						files[p] = c
						changed = append(changed, p)
					}
				}
			}
			opt.CachePath, opt.Changed = informedCache, changed
			inf := mustScan(t, dir, opt)
			opt.CachePath, opt.Changed = fullCache, nil
			full := mustScan(t, dir, opt)
			opt.CachePath = ""
			plain := mustScan(t, dir, opt)
			for _, s := range []*Snapshot{inf, full} {
				if !slices.Equal(s.Entries, plain.Entries) || s.Version != plain.Version ||
					!maps.Equal(s.Fingerprints, plain.Fingerprints) || !slices.Equal(s.Facets, plain.Facets) {
					t.Fatalf("seed %d round %d: cached scan differs from a plain scan (changed %q)", seed, round, changed)
				}
			}
		}
	}
}

func withFile(files map[string]string, p, c string) map[string]string {
	m := maps.Clone(files)
	m[p] = c
	return m
}

func toBytes(files map[string]string) map[string][]byte {
	m := make(map[string][]byte, len(files))
	for p, c := range files {
		m[p] = []byte(c)
	}
	return m
}

func TestFingerprintFilesColdAndEmpty(t *testing.T) {
	fps, err := FingerprintFiles(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	empty := canon.BLAKE3.DigestToken(canon.DigestObject(canon.BLAKE3, nil))
	if len(fps) != 1 || fps[canon.Atomic] != empty {
		t.Errorf("empty world-model fingerprints = %v, want only @atomic = %s", fps, empty)
	}
	if fps[canon.Atomic] == canon.ColdStart {
		t.Error("empty world-model has the cold-start token")
	}
	if _, err := FingerprintFiles(map[string][]byte{"../x": nil}, Options{}); err == nil {
		t.Error("path with ..: no error")
	}
	if _, err := FingerprintFiles(map[string][]byte{"a.json": []byte("{")}, Options{}); err == nil || !strings.Contains(err.Error(), "a.json") {
		t.Errorf("bad JSON: error %v, want one naming a.json", err)
	}
}
