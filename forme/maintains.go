package forme

import (
	"regexp"
	"strings"
	"unicode"
)

// AtomicFacet is the implicit whole-truth facet every producer exposes.
const AtomicFacet = "@atomic"

// Facet is one #### part under ### Maintains.
type Facet struct {
	Name string
	Pos  Pos
	Body string
}

// CanonSpec is a node's canonicalization spec, in the shape canon.Spec reads:
// {node, fields:[{path, material}], default_material, facets:[{facet, paths}]}.
type CanonSpec struct {
	Node            string       `json:"node"`
	Fields          []CanonField `json:"fields"`
	DefaultMaterial bool         `json:"default_material"`
	Facets          []CanonFacet `json:"facets"`
}

// CanonField is one field rule of a canonicalization spec.
type CanonField struct {
	Path     string `json:"path"`
	Material bool   `json:"material"`
}

// CanonFacet maps a declared facet to the dotted paths it covers.
type CanonFacet struct {
	Facet string   `json:"facet"`
	Paths []string `json:"paths"`
}

// maintainsFacets returns the #### parts of every ### Maintains section.
func maintainsFacets(c *Contract) []Facet {
	var out []Facet
	for _, s := range c.sections("maintains") {
		for _, pt := range s.Parts {
			out = append(out, Facet{Name: pt.Name, Pos: pt.Pos, Body: pt.Body})
		}
	}
	return out
}

var truthRe = regexp.MustCompile("`([^`\\s]+)`\\s+(?:truth|world-model)\\b")

// truthNames are the names a producer gives its maintained truth: the
// contract-item names of top-level ### Maintains bullets ("- `stargazers`: …")
// and a backticked name followed by "truth" or "world-model" ("The
// `customer_signal` truth.").
// A need that names one of them subscribes to the producer's @atomic facet.
func truthNames(c *Contract) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		n = strings.TrimSpace(n)
		if n != "" && !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			out = append(out, n)
		}
	}
	for _, s := range c.sections("maintains") {
		for _, it := range s.Items {
			if it.Name != "" {
				add(it.Name)
			}
		}
		for _, m := range truthRe.FindAllStringSubmatch(s.Text, -1) {
			add(m[1])
		}
	}
	return out
}

// canonSpec lowers the material/immaterial prose of ### Maintains into a
// canonicalization spec. Top-level prose addresses top-level fields; prose in
// a #### part addresses fields under that facet's subtree. Each facet covers
// its own subtree. Everything is material unless the prose says otherwise.
func canonSpec(c *Contract) CanonSpec {
	spec := CanonSpec{Node: c.Name, DefaultMaterial: true, Fields: []CanonField{}, Facets: []CanonFacet{}}
	index := map[string]int{}
	add := func(path string, material bool) {
		if i, ok := index[path]; ok {
			if !material { // an explicit immaterial wins over material
				spec.Fields[i].Material = false
			}
			return
		}
		index[path] = len(spec.Fields)
		spec.Fields = append(spec.Fields, CanonField{Path: path, Material: material})
	}
	for _, s := range c.sections("maintains") {
		for _, f := range materialityFields(s.Text) {
			add(f.Path, f.Material)
		}
		for _, pt := range s.Parts {
			for _, f := range materialityFields(pt.Body) {
				add(pt.Name+"."+f.Path, f.Material)
			}
		}
	}
	for _, f := range maintainsFacets(c) {
		if f.Name == AtomicFacet {
			continue
		}
		spec.Facets = append(spec.Facets, CanonFacet{Facet: f.Name, Paths: []string{f.Name}})
	}
	return spec
}

var (
	sentenceSplitRe = regexp.MustCompile(`[.;!?](\s+|$)`)
	bulletRe        = regexp.MustCompile(`(?m)^[ \t]*(?:[-*+]|\d+[.)])[ \t]+`)
	blankLineRe     = regexp.MustCompile(`\n[ \t]*\n`)
	wordRe          = regexp.MustCompile(`(?i)\b(im)?material\b`)
	backtickRe      = regexp.MustCompile("`([^`]+)`")
	parenRe         = regexp.MustCompile(`\([^()]*\)`)
	listSplitRe     = regexp.MustCompile(`\s*(?:,|;|\band\b|\bor\b|\bplus\b)\s*`)
	copulaRe        = regexp.MustCompile(`(?i)\b(?:is|are|stays?|remains?)\s+(?:\w+\s+)?$`)
)

// clauses splits prose into sentence-like clauses; bullets end a clause.
func clauses(text string) []string {
	text = bulletRe.ReplaceAllString(text, ". ")
	text = blankLineRe.ReplaceAllString(text, ". ")
	text = strings.ReplaceAll(text, "\n", " ")
	var out []string
	for _, s := range sentenceSplitRe.Split(text, -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// materialityFields reads field names that prose calls material or
// immaterial: "Material: a, b and `c`", "`fetched_at` is immaterial",
// "immaterial: scan timestamps", "flips `shipped`, which is material".
func materialityFields(text string) []CanonField {
	var out []CanonField
	for _, cl := range clauses(text) {
		locs := wordRe.FindAllStringSubmatchIndex(cl, -1)
		if len(locs) == 0 {
			continue
		}
		// One clause may say both ("x is material, y is immaterial"): cut it
		// at the comma before each later keyword.
		start := 0
		for i, loc := range locs {
			end := len(cl)
			if i+1 < len(locs) {
				next := locs[i+1][0]
				if c := strings.LastIndex(cl[:next], ","); c > loc[1] {
					end = c
				} else {
					end = next
				}
			}
			part := cl[start:end]
			kw := loc[0] - start
			kwEnd := loc[1] - start
			immaterial := loc[2] >= 0
			for _, name := range fieldNames(part, kw, kwEnd) {
				out = append(out, CanonField{Path: name, Material: !immaterial})
			}
			start = end
		}
	}
	return out
}

// fieldNames finds the field list a materiality keyword governs: after
// "Material:" (or "Material per x:"), else before "is/are … material".
func fieldNames(cl string, kw, kwEnd int) []string {
	after := cl[kwEnd:]
	if i := strings.IndexByte(after, ':'); i >= 0 && len(strings.Fields(after[:i])) <= 3 {
		return phraseNames(after[i+1:])
	}
	before := cl[:kw]
	if copulaRe.MatchString(before) {
		before = copulaRe.ReplaceAllString(before, "")
		before = strings.TrimRight(before, " ,")
		if i := strings.LastIndex(before, ":"); i >= 0 {
			before = before[i+1:]
		}
		return phraseNames(before)
	}
	// "…, which is material" and other shapes: only backticked names.
	var out []string
	for _, m := range backtickRe.FindAllStringSubmatch(cl, -1) {
		if n := fieldPath(m[1]); n != "" {
			out = append(out, n)
		}
	}
	return out
}

var determiners = map[string]bool{
	"the": true, "a": true, "an": true, "any": true, "its": true, "their": true,
	"each": true, "every": true, "all": true, "per": true, "and": true, "or": true,
}

// phraseNames splits a field list into names: backticked names as written,
// short plain phrases as snake_case paths; long prose is skipped.
func phraseNames(list string) []string {
	list = parenRe.ReplaceAllString(list, " ")
	var out []string
	for _, ph := range listSplitRe.Split(list, -1) {
		ph = strings.TrimSpace(ph)
		if ph == "" {
			continue
		}
		if ms := backtickRe.FindAllStringSubmatch(ph, -1); len(ms) > 0 {
			for _, m := range ms {
				if n := fieldPath(m[1]); n != "" {
					out = append(out, n)
				}
			}
			continue
		}
		words := strings.Fields(strings.ToLower(ph))
		for len(words) > 0 && determiners[words[0]] {
			words = words[1:]
		}
		if len(words) == 0 || len(words) > 3 {
			continue
		}
		ok := true
		for _, w := range words {
			for _, r := range w {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, strings.ReplaceAll(strings.Join(words, "_"), "-", "_"))
		}
	}
	return out
}

// fieldPath accepts a backticked name that looks like a field path.
func fieldPath(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 80 {
		return ""
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.' || r == '@' || r == ':') {
			return ""
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "null":
		return ""
	}
	return s
}

var postconditionRe = regexp.MustCompile(`(?i)^postconditions?\s*:\s*`)

// postconditions collects the conditions a render must leave true:
// "Postcondition: …" prose and bullets in ### Maintains, its `each … has:`
// items, and the items of retired ### Criteria and of ### Postconditions.
func postconditions(c *Contract) []string {
	var out []string
	for _, s := range c.sections("maintains") {
		text := s.Body
		for _, cl := range clausesKeepSentences(text) {
			if loc := postconditionRe.FindStringIndex(cl); loc != nil {
				if t := strings.TrimSpace(cl[loc[1]:]); t != "" {
					out = append(out, t)
				}
			}
		}
		for _, it := range s.Items {
			if it.Each {
				out = append(out, it.Text)
			}
		}
	}
	for _, key := range []string{"criteria", "postconditions"} {
		for _, it := range c.items(key) {
			out = append(out, it.Text)
		}
	}
	return out
}

// clausesKeepSentences splits on bullets and sentence starts that open with
// "Postcondition", keeping each postcondition's full sentence.
func clausesKeepSentences(text string) []string {
	text = bulletRe.ReplaceAllString(text, "\n\n")
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.Join(strings.Fields(para), " ")
		idx := postconditionStartRe.FindAllStringIndex(para, -1)
		for i, loc := range idx {
			end := len(para)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			out = append(out, strings.TrimSpace(para[loc[0]:end]))
		}
	}
	return out
}

var postconditionStartRe = regexp.MustCompile(`(?i)\bpostconditions?\s*:`)
