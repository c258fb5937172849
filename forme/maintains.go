package forme

import (
	"github.com/prose-store/prose/internal/lazyre"
	"strings"
	"unicode"

	"github.com/prose-store/prose/canon"
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

var truthRe = lazyre.New("`([^`\\s]+)`\\s+(?:truth|world-model)\\b")

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
		for _, m := range truthRe().FindAllStringSubmatch(s.Text, -1) {
			add(m[1])
		}
	}
	return out
}

// canonSpec lowers the material/immaterial prose of ### Maintains into a
// canonicalization spec. Top-level prose addresses top-level fields; prose in
// a #### part addresses fields under that facet's subtree. Each facet covers
// its own subtree. Everything is material unless the prose says otherwise.
// facets are the node's checked facets (no duplicates, no @atomic).
func canonSpec(c *Contract, facets []Facet) CanonSpec {
	spec := CanonSpec{Node: c.Name, DefaultMaterial: true, Fields: []CanonField{}, Facets: []CanonFacet{}}
	index := map[string]int{}
	add := func(path string, material bool) {
		p, err := canon.ParsePath(path)
		if err != nil {
			return // prose that does not name a usable path
		}
		path = p.String()
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
				add(escapeSegment(pt.Name)+"."+f.Path, f.Material)
			}
		}
	}
	for _, f := range facets {
		spec.Facets = append(spec.Facets, CanonFacet{Facet: f.Name, Paths: []string{escapeSegment(f.Name)}})
	}
	return spec
}

// escapeSegment writes a name as one dotted-path segment ("v1.2" → "v1\.2").
func escapeSegment(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), ".", `\.`)
}

// clauses splits prose into sentence-like clauses: a bullet, a blank line
// or a sentence end ([.;!?] before a space or the end) closes a clause.
func clauses(text string) []string {
	var out []string
	for _, para := range paragraphs(text) {
		start := 0
		for i := 0; i < len(para); i++ {
			switch para[i] {
			case '.', ';', '!', '?':
				if i+1 == len(para) || para[i+1] == ' ' {
					if cl := strings.TrimSpace(para[start:i]); cl != "" {
						out = append(out, cl)
					}
					start = i + 1
				}
			}
		}
		if cl := strings.TrimSpace(para[start:]); cl != "" {
			out = append(out, cl)
		}
	}
	return out
}

// paragraphs splits text at blank lines and list bullets, joining the lines
// of each piece with single spaces.
func paragraphs(text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			flush()
			continue
		}
		if rest, ok := cutBullet(t); ok {
			flush()
			t = rest
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(t)
	}
	flush()
	return out
}

// cutBullet strips a list marker ("- ", "* ", "+ ", "1. ", "2) ").
func cutBullet(t string) (string, bool) {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t') {
		return strings.TrimSpace(t[2:]), true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t') {
		return strings.TrimSpace(t[i+2:]), true
	}
	return t, false
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay aligned.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// keyword is one "material" or "immaterial" in a clause.
type keyword struct {
	start, end int
	immaterial bool
}

// materialWords finds the whole words "material" and "immaterial".
func materialWords(cl string) []keyword {
	lower := asciiLower(cl)
	var out []keyword
	for off := 0; ; {
		i := strings.Index(lower[off:], "material")
		if i < 0 {
			return out
		}
		i += off
		end := i + len("material")
		off = end
		if end < len(lower) && isWordByte(lower[end]) {
			continue
		}
		start, im := i, false
		if i >= 2 && lower[i-2:i] == "im" {
			start, im = i-2, true
		}
		if start > 0 && isWordByte(lower[start-1]) {
			continue
		}
		out = append(out, keyword{start, end, im})
	}
}

// materialityFields reads field names that prose calls material or
// immaterial: "Material: a, b and `c`", "`fetched_at` is immaterial",
// "immaterial: scan timestamps", "flips `shipped`, which is material".
func materialityFields(text string) []CanonField {
	if !strings.Contains(asciiLower(text), "material") {
		return nil
	}
	var out []CanonField
	for _, cl := range clauses(text) {
		kws := materialWords(cl)
		// One clause may say both ("x is material, y is immaterial"): cut it
		// at the comma before each later keyword.
		start := 0
		for i, kw := range kws {
			end := len(cl)
			if i+1 < len(kws) {
				next := kws[i+1].start
				if c := strings.LastIndex(cl[:next], ","); c > kw.end {
					end = c
				} else {
					end = next
				}
			}
			if end < start {
				end = start
			}
			for _, name := range fieldNames(cl[start:end], kw.start-start, kw.end-start) {
				out = append(out, CanonField{Path: name, Material: !kw.immaterial})
			}
			start = end
		}
	}
	return out
}

var copulas = map[string]bool{"is": true, "are": true, "stay": true, "stays": true, "remain": true, "remains": true}

// fieldNames finds the field list a materiality keyword governs: after
// "Material:" (or "Material per x:"), else before "is/are … material".
func fieldNames(cl string, kw, kwEnd int) []string {
	if kw < 0 || kwEnd > len(cl) || kw > kwEnd {
		return nil
	}
	after := cl[kwEnd:]
	if i := strings.IndexByte(after, ':'); i >= 0 && len(strings.Fields(after[:i])) <= 3 {
		return phraseNames(after[i+1:])
	}
	words := strings.Fields(cl[:kw])
	for k := 1; k <= 2 && k <= len(words); k++ {
		if copulas[asciiLower(words[len(words)-k])] {
			before := strings.TrimRight(strings.Join(words[:len(words)-k], " "), " ,")
			if i := strings.LastIndex(before, ":"); i >= 0 {
				before = before[i+1:]
			}
			return phraseNames(before)
		}
	}
	// "…, which is material" and other shapes: only backticked names.
	var out []string
	for _, name := range backticked(cl) {
		if n := fieldPath(name); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// backticked returns the `code` spans of s.
func backticked(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+1+j])
		s = s[i+2+j:]
	}
}

// dropParens removes (parenthesised asides), nested ones included.
func dropParens(s string) string {
	if !strings.ContainsRune(s, '(') {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var determiners = map[string]bool{
	"the": true, "a": true, "an": true, "any": true, "its": true, "their": true,
	"each": true, "every": true, "all": true, "per": true,
}

// pronouns stand for a field named elsewhere ("…, which is material").
var pronouns = map[string]bool{
	"which": true, "that": true, "this": true, "it": true, "these": true, "those": true,
	"they": true, "what": true, "everything": true, "nothing": true, "rest": true,
}

// listItems splits a field list at commas, semicolons and the words and,
// or, plus.
func listItems(list string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	for _, w := range strings.Fields(list) {
		lw := asciiLower(w)
		if lw == "and" || lw == "or" || lw == "plus" {
			flush()
			continue
		}
		for {
			i := strings.IndexAny(w, ",;")
			if i < 0 {
				break
			}
			if i > 0 {
				cur = append(cur, w[:i])
			}
			flush()
			w = w[i+1:]
		}
		if w != "" {
			cur = append(cur, w)
		}
	}
	flush()
	return out
}

// phraseNames splits a field list into names: backticked names as written,
// short plain phrases as snake_case paths; long prose is skipped.
func phraseNames(list string) []string {
	var out []string
	for _, ph := range listItems(dropParens(list)) {
		if strings.IndexByte(ph, '`') >= 0 {
			for _, name := range backticked(ph) {
				if n := fieldPath(name); n != "" {
					out = append(out, n)
				}
			}
			continue
		}
		words := strings.Fields(strings.ToLower(ph))
		for len(words) > 0 && determiners[words[0]] {
			words = words[1:]
		}
		if len(words) == 0 || len(words) > 3 || len(words) == 1 && pronouns[words[0]] {
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

var postconditionRe = lazyre.New(`(?i)^postconditions?\s*:\s*`)

// postconditions collects the conditions a render must leave true:
// "Postcondition: …" prose and bullets in ### Maintains, its `each … has:`
// items, and the items of retired ### Criteria and of ### Postconditions.
func postconditions(c *Contract) []string {
	var out []string
	for _, s := range c.sections("maintains") {
		text := s.Body
		if !strings.Contains(asciiLower(text), "postcondition") {
			text = ""
		}
		for _, cl := range clausesKeepSentences(text) {
			if loc := postconditionRe().FindStringIndex(cl); loc != nil {
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
	var out []string
	for _, para := range paragraphs(text) {
		if !strings.Contains(asciiLower(para), "postcondition") {
			continue
		}
		idx := postconditionStartRe().FindAllStringIndex(para, -1)
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

var postconditionStartRe = lazyre.New(`(?i)\bpostconditions?\s*:`)
