package forme

import (
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"sort"
	"strings"
)

// Edge is one resolved subscription: subscriber reads producer's facet.
type Edge struct {
	Subscriber string `json:"subscriber"`
	Producer   string `json:"producer"`
	Facet      string `json:"facet"`
}

// Binding records how one ### Requires need (or one ### Emits line) was
// wired: the rule that decided and the edges it drew. Bindings travel beside
// the topology so every wiring decision can be audited.
type Binding struct {
	Subscriber string        `json:"subscriber"`
	Need       string        `json:"need"`
	Line       int           `json:"line"`
	Rule       string        `json:"rule"`
	Producers  []BindingEdge `json:"producers"`
	Omitted    int           `json:"omitted,omitempty"` // candidates of an ambiguity beyond the first 20
}

// maxRecorded bounds the candidates an ambiguous binding lists.
const maxRecorded = 20

// BindingEdge is one producer facet a binding subscribed to.
type BindingEdge struct {
	Producer string `json:"producer"`
	Facet    string `json:"facet"`
}

// Wiring rules, in the order they are tried.
const (
	RuleExplicit      = "explicit"       // producer.facet written in the need
	RuleFacetNeed     = "facet-need"     // the need's name equals a producer's facet
	RuleFacetMention  = "facet-mention"  // facet names mentioned, restricted to the producer named
	RuleNamedProducer = "named-producer" // the producer named: its only facet, else @atomic
	RuleNormalized    = "normalized"     // the need's name equals a facet, node or truth name after normalization
	RuleEmits         = "emits"          // a gateway's ### Emits
	RuleCallerInput   = "caller-input"
	RuleUnsatisfied   = "unsatisfied"
	RuleAmbiguous     = "ambiguous"
)

// need is one ### Requires entry.
type need struct {
	Name      string
	Text      string
	Pos       Pos
	FacetNeed bool
	Type      string
}

var noneRe = lazyre.New(`(?i)^\(?\s*(none|nothing|n/a|no upstream[^)]*)\s*\)?\.?$`)

func isNone(s string) bool { return noneRe().MatchString(strings.TrimSpace(s)) }

// readNeeds lists a contract's ### Requires needs in declared order: each
// top-level bullet, each #### facet-need, or (when the section has neither)
// each paragraph of plain prose.
func readNeeds(c *Contract) []*need {
	var out []*need
	for _, s := range c.sections("requires") {
		for _, it := range s.Items {
			if isNone(it.Head) {
				continue
			}
			out = append(out, &need{Name: it.Name, Text: it.Text, Pos: it.Pos, Type: it.Type})
		}
		for _, pt := range s.Parts {
			text := []string{pt.Name}
			for _, pa := range pt.Paras {
				text = append(text, pa.Text)
			}
			for _, it := range pt.Items {
				text = append(text, it.Text)
			}
			out = append(out, &need{Name: pt.Name, Text: strings.Join(text, " "), Pos: pt.Pos, FacetNeed: true})
		}
		if len(s.Items) == 0 && len(s.Parts) == 0 {
			for _, pa := range s.Paras {
				if !isNone(pa.Text) {
					out = append(out, &need{Text: pa.Text, Pos: pa.Pos})
				}
			}
		}
	}
	return out
}

type cand struct {
	u     *unit
	facet string
	via   string // how the name matched, for messages
}

type alias struct {
	u    *unit
	toks []string
	raw  []string
}

type wiring struct {
	nodes      []*unit
	byName     map[string]*unit
	aliases    map[string][]alias // joined tokens → aliases
	aliasLens  []int
	facetExact map[string][]cand
	norm       map[string][]cand
	edges      map[Edge]bool
	bindings   []Binding
	diags      []Diagnostic
}

func newWiring(nodes []*unit) *wiring {
	w := &wiring{
		nodes:      nodes,
		byName:     map[string]*unit{},
		aliases:    map[string][]alias{},
		facetExact: map[string][]cand{},
		norm:       map[string][]cand{},
		edges:      map[Edge]bool{},
	}
	lens := map[int]bool{}
	type aliasKey struct {
		u *unit
		k string
	}
	seenAlias := map[aliasKey]bool{}
	addAlias := func(u *unit, s string) {
		t, raw := tokenPairs(s)
		if len(t) == 0 {
			return
		}
		k := strings.Join(t, " ")
		if seenAlias[aliasKey{u, k}] {
			return
		}
		seenAlias[aliasKey{u, k}] = true
		w.aliases[k] = append(w.aliases[k], alias{u, t, raw})
		lens[len(t)] = true
	}
	type normEntry struct {
		key   string
		u     *unit
		facet string
	}
	seenNorm := map[normEntry]bool{}
	addNorm := func(key string, c cand) {
		if key == "" || seenNorm[normEntry{key, c.u, c.facet}] {
			return
		}
		seenNorm[normEntry{key, c.u, c.facet}] = true
		w.norm[key] = append(w.norm[key], c)
	}
	for _, u := range nodes {
		if _, dup := w.byName[strings.ToLower(u.c.Name)]; !dup {
			w.byName[strings.ToLower(u.c.Name)] = u
		}
		addAlias(u, u.c.Name)
		if u.c.Title != "" {
			addAlias(u, u.c.Title)
			if short := shortTitle(u.c.Title); short != u.c.Title {
				addAlias(u, short)
			}
		}
		for _, f := range u.facets {
			w.facetExact[strings.ToLower(f.Name)] = append(w.facetExact[strings.ToLower(f.Name)], cand{u, f.Name, "facet " + f.Name})
			addNorm(normKey(f.Name), cand{u, f.Name, "facet " + f.Name})
		}
		addNorm(normKey(u.c.Name), cand{u, u.onlyFacet(), "node name"})
		for _, t := range u.truths {
			addNorm(normKey(t), cand{u, AtomicFacet, "maintained truth `" + t + "`"})
		}
	}
	for l := range lens {
		w.aliasLens = append(w.aliasLens, l)
	}
	sort.Ints(w.aliasLens)
	return w
}

// shortTitle is a title without its subtitle or aside: "Package build —
// compile one package" is also called "Package build", and "Topology
// Maintainer (Forme)" "Topology Maintainer".
func shortTitle(t string) string {
	t = dropParens(t)
	for _, sep := range []string{" — ", " – ", " - ", ": "} {
		if i := strings.Index(t, sep); i > 0 {
			t = t[:i]
		}
	}
	return strings.TrimSpace(t)
}

// mention is a node named in a need's text.
type mention struct {
	u    *unit
	span span
}

// mentions finds the nodes a text names (by name or # title, compared by
// singular tokens), leaving out self and any match inside a longer match. A
// one-word name must appear exactly as written ("events" is not named by
// "event"), since single words are often ordinary prose.
func (w *wiring) mentions(toks, raw []string, self *unit) []mention {
	var ms []mention
	for i := range toks {
		for _, l := range w.aliasLens {
			if i+l > len(toks) {
				break
			}
			for _, a := range w.aliases[strings.Join(toks[i:i+l], " ")] {
				if l == 1 && raw[i] != a.raw[0] {
					continue
				}
				if a.u != self {
					ms = append(ms, mention{a.u, span{i, i + l}})
				}
			}
		}
	}
	var out []mention
	for _, m := range ms {
		inside := false
		for _, o := range ms {
			if o.u != m.u && o.span != m.span && o.span.contains(m.span) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, m)
		}
	}
	return out
}

// explicitRefs finds "producer.facet" references. Each result is
// {opening backtick or "", producer, facet, closing backtick or ""}, shaped
// like a regexp submatch with the whole match first.
func explicitRefs(text string) [][5]string {
	var out [][5]string
	isName := func(c byte) bool { return isWordByte(c) || c == '-' }
	for i := 1; i+1 < len(text); i++ {
		if text[i] != '.' || !isName(text[i-1]) {
			continue
		}
		next := text[i+1]
		if !(isWordByte(next) && next != '_' || next == '@') {
			continue
		}
		start := i
		for start > 0 && isName(text[start-1]) {
			start--
		}
		for start < i && !(isWordByte(text[start]) && text[start] != '_') {
			start++ // a name starts with a letter or digit
		}
		end := i + 1
		if text[end] == '@' {
			end++
		}
		for end < len(text) && (isName(text[end]) || text[end] == ':') {
			end++
		}
		for end > i+1 && text[end-1] == ':' {
			end--
		}
		if start == i || end == i+1 {
			continue
		}
		open, close := "", ""
		if start > 0 && text[start-1] == '`' {
			open = "`"
		}
		if end < len(text) && text[end] == '`' {
			close = "`"
		}
		out = append(out, [5]string{text[start:end], open, text[start:i], text[i+1 : end], close})
		i = end
	}
	return out
}

var (
	fanInRe  = lazyre.New(`(?i)\bfan-in\b|\ball\b|\bevery\b|\beach\s+[\w-]+'s\b`)
	callerRe = lazyre.New(`(?i)\bcaller[- ](provided|supplied|input)\b|\b(provided|supplied|passed) by the caller\b|\bfrom the caller\b`)
)

// wire resolves every need of every node, then draws the gateways' ### Emits.
func (w *wiring) wire(file func(*unit) string) {
	type job struct {
		u *unit
		n *need
	}
	var jobs []job
	for _, u := range w.nodes {
		for _, n := range u.needs {
			jobs = append(jobs, job{u, n})
		}
	}
	outs := make([]needOut, len(jobs))
	parallel(len(jobs), func(i int) {
		w.wireNeed(&outs[i], jobs[i].u, jobs[i].n, file(jobs[i].u))
	})
	for _, o := range outs {
		w.bindings = append(w.bindings, o.bindings...)
		w.diags = append(w.diags, o.diags...)
		for _, e := range o.edges {
			w.edges[e] = true
		}
	}
}

// needOut collects what wiring one need produced, so needs can be wired in
// parallel and merged in declared order.
type needOut struct {
	bindings []Binding
	diags    []Diagnostic
	edges    []Edge
}

func (o *needOut) record(u *unit, n *need, rule string, cs []cand) {
	b := Binding{Subscriber: u.c.Name, Need: needLabel(n), Line: n.Pos.Line, Rule: rule, Producers: []BindingEdge{}}
	if rule == RuleAmbiguous && len(cs) > maxRecorded {
		b.Omitted = len(cs) - maxRecorded
		cs = cs[:maxRecorded]
	}
	for _, c := range cs {
		b.Producers = append(b.Producers, BindingEdge{Producer: c.u.c.Name, Facet: c.facet})
		if rule != RuleAmbiguous {
			o.edges = append(o.edges, Edge{Subscriber: u.c.Name, Producer: c.u.c.Name, Facet: c.facet})
		}
	}
	o.bindings = append(o.bindings, b)
}

// needLabel names a need in messages: its name, else its first 80
// characters, cut at a word.
func needLabel(n *need) string {
	if n.Name != "" {
		return n.Name
	}
	r := []rune(n.Text)
	if len(r) <= 80 {
		return n.Text
	}
	cut := 80
	for i := 80; i > 40; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return string(r[:cut]) + "…"
}

func (w *wiring) wireNeed(o *needOut, u *unit, n *need, file string) {
	lower := asciiLower(n.Text)
	if n.Type != "" || strings.Contains(lower, "caller") && callerRe().MatchString(n.Text) {
		o.record(u, n, RuleCallerInput, nil)
		what := "a caller-provided input"
		if n.Type != "" {
			what = "a `" + n.Type + "` caller input"
		}
		o.diags = append(o.diags, diagAt(CodeCallerInput, file, n.Pos,
			"%s: need %s is %s, supplied when the node is run, so Forme draws no edge for it; to subscribe to a producer instead, name it (`producer.facet`)",
			u.c.Name, quoteNeed(n), what))
		return
	}
	scope := needScope(n.Text)
	toks, raw := tokenPairs(scope)
	named := w.mentions(toks, raw, u)
	fanIn := (strings.Contains(lower, "all") || strings.Contains(lower, "every") || strings.Contains(lower, "each") || strings.Contains(lower, "fan-in")) &&
		fanInRe().MatchString(n.Text)

	// 1. explicit producer.facet
	var explicit []cand
	for _, m := range explicitRefs(n.Text) {
		p := w.byName[strings.ToLower(m[2])]
		if p == nil {
			continue
		}
		if p == u {
			continue
		}
		if f, ok := p.facet(m[3]); ok {
			explicit = append(explicit, cand{p, f, "explicit"})
		} else if m[1] == "`" && m[4] == "`" {
			o.record(u, n, RuleUnsatisfied, nil)
			o.diags = append(o.diags, diagAt(CodeUnsatisfied, file, n.Pos,
				"%s: need %s names `%s.%s`, but %s has no facet %q (it exposes %s): use one of those facets or add `#### %s` under its ### Maintains",
				u.c.Name, quoteNeed(n), m[2], m[3], p.c.Name, m[3], strings.Join(p.exposed(), ", "), m[3]))
			return
		}
	}
	if len(explicit) > 0 {
		o.record(u, n, RuleExplicit, dedupeCands(explicit))
		return
	}

	namedSet := map[*unit]bool{}
	var namedUnits []*unit
	for _, m := range named {
		if !namedSet[m.u] {
			namedSet[m.u] = true
			namedUnits = append(namedUnits, m.u)
		}
	}
	restrict := func(cs []cand) []cand {
		var own []cand
		for _, c := range cs {
			if c.u != u {
				own = append(own, c)
			}
		}
		if len(namedSet) == 0 {
			return own
		}
		// A need that names its producer only matches that producer.
		var in []cand
		for _, c := range own {
			if namedSet[c.u] {
				in = append(in, c)
			}
		}
		return in
	}

	// 2. a facet-need (or item) name equal to a producer's facet
	if n.Name != "" {
		if cs := restrict(w.facetExact[strings.ToLower(n.Name)]); len(cs) > 0 {
			w.resolve(o, u, n, file, RuleFacetNeed, cs, fanIn)
			return
		}
	}

	// 3. facet names mentioned, restricted to the producers the need names
	if len(namedUnits) > 0 {
		// A backticked "`x` facet" asks for exactly that facet.
		if asked := askedFacets(scope); len(asked) > 0 {
			var cs []cand
			for _, p := range namedUnits {
				for _, a := range asked {
					if f, ok := p.facet(a); ok && f != AtomicFacet {
						cs = append(cs, cand{p, f, "facet " + f})
					}
				}
			}
			if len(cs) == 0 {
				var offers []string
				for _, p := range namedUnits {
					offers = append(offers, fmt.Sprintf("%s exposes %s", p.c.Name, strings.Join(p.exposed(), ", ")))
				}
				o.record(u, n, RuleUnsatisfied, nil)
				o.diags = append(o.diags, diagAt(CodeUnsatisfied, file, n.Pos,
					"%s: need %s asks for facet %s, which the producer it names does not declare (%s): name a declared facet, or add `#### %s` under the producer's ### Maintains",
					u.c.Name, quoteNeed(n), "`"+strings.Join(asked, "`, `")+"`", strings.Join(offers, "; "), asked[0]))
				return
			}
			w.resolve(o, u, n, file, RuleFacetMention, cs, true)
			return
		}
		// A need that says "atomic" reads the whole truth (rule 4) even when
		// a facet's name happens to appear in it.
		atomic := saysAtomic(toks)
		var cs []cand
		facetSpans := map[span][]cand{}
		for _, p := range namedUnits {
			if atomic {
				break
			}
			var own []span
			for _, m := range named {
				if m.u == p {
					own = append(own, m.span)
				}
			}
			for _, f := range p.facets {
				for _, sp := range findSeq(toks, tokens(f.Name)) {
					if negated(toks, sp) {
						continue
					}
					overlap := false
					for _, o := range own {
						if o.overlaps(sp) {
							overlap = true
						}
					}
					if !overlap {
						c := cand{p, f.Name, "facet " + f.Name}
						cs = append(cs, c)
						facetSpans[sp] = append(facetSpans[sp], c)
					}
				}
			}
		}
		if len(cs) > 0 {
			// One mention that fits facets of several named producers is
			// ambiguous unless the need declares fan-in.
			if !fanIn {
				for _, group := range facetSpans {
					if distinctProducers(group) > 1 {
						w.ambiguous(o, u, n, file, dedupeCands(group))
						return
					}
				}
			}
			o.record(u, n, RuleFacetMention, dedupeCands(cs))
			return
		}

		// 4. a named producer without a facet: its only facet, else @atomic
		// (always @atomic when the need says "atomic")
		var cs4 []cand
		for _, p := range namedUnits {
			f := p.onlyFacet()
			if atomic {
				f = AtomicFacet
			}
			cs4 = append(cs4, cand{p, f, "named"})
		}
		w.resolve(o, u, n, file, RuleNamedProducer, cs4, fanIn)
		return
	}

	// 5. normalized names: facets, node names, maintained truth names
	if n.Name != "" {
		cs := restrict(w.norm[normKey(n.Name)])
		if len(cs) > 0 {
			w.resolve(o, u, n, file, RuleNormalized, preferFacets(cs), fanIn)
			return
		}
	}

	o.record(u, n, RuleUnsatisfied, nil)
	if w.selfReference(u, n, toks) {
		o.diags = append(o.diags, diagAt(CodeUnsatisfied, file, n.Pos,
			"%s: need %s names this node's own truth; a node never subscribes to itself (it reads its prior world-model anyway, and feedback is `self-driven` continuity): remove the need from ### Requires",
			u.c.Name, quoteNeed(n)))
		return
	}
	o.diags = append(o.diags, diagAt(CodeUnsatisfied, file, n.Pos,
		"%s: need %s matches no producer. Considered %s. Name the producer and facet in the need (`producer.facet`), or declare the facet as `#### name` under the producer's ### Maintains; if the value is supplied when the node runs, say \"caller-provided\" or type it `run`",
		u.c.Name, quoteNeed(n), w.considered(u)))
}

// selfReference reports whether a need names its own node: its name, title,
// a facet or a truth name.
func (w *wiring) selfReference(u *unit, n *need, toks []string) bool {
	keys := map[string]bool{normKey(u.c.Name): true}
	if u.c.Title != "" {
		keys[normKey(u.c.Title)] = true
	}
	for _, f := range u.facets {
		keys[normKey(f.Name)] = true
	}
	for _, t := range u.truths {
		keys[normKey(t)] = true
	}
	if n.Name != "" && keys[normKey(n.Name)] {
		return true
	}
	for _, name := range backticked(n.Text) {
		if keys[normKey(name)] {
			return true
		}
	}
	return len(findSeq(toks, tokens(u.c.Name))) > 0 && len(tokens(u.c.Name)) > 1
}

var (
	askedFacetRe    = lazyre.New("`([^`]+)`\\**\\s+facets?\\b")
	sentenceEndRe   = lazyre.New(`[.!?]["')*_]*\s+`)
	pointerRe       = lazyre.New(`(?i)\b(maintained by|facet of|facets of|subscribes? to|subscribed (via|to|on)|from the)\b`)
	abbreviationsRe = lazyre.New(`(?i)\b(e\.g|i\.e|etc|vs|cf)\.$`)
)

// needScope is the part of a need's text that may name its producer: the
// first sentence, plus any later sentence that points at a producer
// ("Maintained by …", "facet of …", "subscribes to …"). Incidental mentions
// in other sentences ("because its classifier failed") name nobody.
func needScope(text string) string {
	var sentences []string
	start := 0
	for _, loc := range sentenceEndRe().FindAllStringIndex(text, -1) {
		if abbreviationsRe().MatchString(strings.TrimRight(text[start:loc[0]+1], " ")) {
			continue
		}
		sentences = append(sentences, text[start:loc[1]])
		start = loc[1]
	}
	if start < len(text) {
		sentences = append(sentences, text[start:])
	}
	if len(sentences) == 0 {
		return text
	}
	scope := []string{sentences[0]}
	for _, s := range sentences[1:] {
		if pointerRe().MatchString(s) {
			scope = append(scope, s)
		}
	}
	return strings.Join(scope, " ")
}

// askedFacets lists the facets a need names as "`x` facet", skipping
// negated ones and the atomic facet.
func askedFacets(scope string) []string {
	var out []string
	for _, m := range askedFacetRe().FindAllStringSubmatchIndex(scope, -1) {
		name := strings.TrimSpace(strings.TrimLeft(scope[m[2]:m[3]], "# "))
		if name == "" || strings.EqualFold(strings.TrimPrefix(name, "@"), "atomic") {
			continue
		}
		before := tokens(scope[:m[0]])
		if len(before) > 0 && negations[before[len(before)-1]] {
			continue
		}
		out = append(out, name)
	}
	return out
}

var negations = map[string]bool{"not": true, "never": true, "no": true, "without": true, "nor": true}

// negated reports whether a mention follows "not", "never", "no" (directly
// or with one word between, as in "never to history").
func negated(toks []string, sp span) bool {
	for k := 1; k <= 2; k++ {
		if i := sp.start - k; i >= 0 && negations[toks[i]] {
			return true
		}
	}
	return false
}

// saysAtomic reports whether a need asks for the atomic facet.
func saysAtomic(toks []string) bool {
	for i, t := range toks {
		if t == "atomic" && !negated(toks, span{i, i + 1}) {
			return true
		}
	}
	return false
}

// resolve draws edges for candidates, or reports ambiguity when they span
// several producers and the need declares no fan-in.
func (w *wiring) resolve(o *needOut, u *unit, n *need, file, rule string, cs []cand, fanIn bool) {
	cs = dedupeCands(cs)
	if distinctProducers(cs) > 1 && !fanIn {
		w.ambiguous(o, u, n, file, cs)
		return
	}
	o.record(u, n, rule, cs)
}

func (w *wiring) ambiguous(o *needOut, u *unit, n *need, file string, cs []cand) {
	o.record(u, n, RuleAmbiguous, cs)
	// candidates arrive in node-name order; name the first few
	const max = 8
	var list []string
	for _, c := range cs[:min(len(cs), max)] {
		list = append(list, fmt.Sprintf("%s.%s", c.u.c.Name, c.facet))
	}
	shown := strings.Join(list, ", ")
	if len(cs) > max {
		shown += fmt.Sprintf(", and %d more", len(cs)-max)
	}
	o.diags = append(o.diags, diagAt(CodeAmbiguous, file, n.Pos,
		"%s: need %s matches %d producers (%s); Forme does not guess: name one in the need (e.g. `%s`), or write \"all …\" or \"(fan-in)\" to subscribe to every one",
		u.c.Name, quoteNeed(n), distinctProducers(cs), shown, list[0]))
}

// considered lists the producers a failed need was compared against (the
// first eight, then a count).
func (w *wiring) considered(self *unit) string {
	const max = 8
	var list []string
	more := 0
	for _, p := range w.nodes {
		if p == self {
			continue
		}
		if len(list) == max {
			more++
			continue
		}
		list = append(list, fmt.Sprintf("%s (%s)", p.c.Name, strings.Join(p.exposed(), ", ")))
	}
	if len(list) == 0 {
		return "no other responsibility or gateway"
	}
	if more > 0 {
		return strings.Join(list, "; ") + fmt.Sprintf("; and %d more", more)
	}
	return strings.Join(list, "; ")
}

func quoteNeed(n *need) string {
	if n.Name != "" {
		return "`" + n.Name + "`"
	}
	return "\"" + needLabel(n) + "\""
}

func distinctProducers(cs []cand) int {
	seen := map[*unit]bool{}
	for _, c := range cs {
		seen[c.u] = true
	}
	return len(seen)
}

func dedupeCands(cs []cand) []cand {
	seen := map[[2]string]bool{}
	var out []cand
	for _, c := range cs {
		k := [2]string{c.u.c.Name, c.facet}
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}

// preferFacets keeps, per producer, a declared-facet match over a node-name
// or truth-name match.
func preferFacets(cs []cand) []cand {
	hasFacet := map[*unit]bool{}
	for _, c := range cs {
		if strings.HasPrefix(c.via, "facet ") {
			hasFacet[c.u] = true
		}
	}
	var out []cand
	for _, c := range cs {
		if hasFacet[c.u] && !strings.HasPrefix(c.via, "facet ") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// wireEmits draws gateway → target edges at @atomic for ### Emits.
func (w *wiring) wireEmits(g *unit, file string, targets []emit) {
	for _, e := range targets {
		t := w.emitTarget(e.Target)
		n := &need{Name: e.Target, Pos: e.Pos}
		if t == nil || t == g {
			why := "names no responsibility or gateway among the sources"
			if t == g {
				why = "names the gateway itself"
			}
			w.diags = append(w.diags, diagAt(CodeEmitsUnresolved, file, e.Pos,
				"%s: ### Emits `%s` %s: write the name of the responsibility this gateway wakes", g.c.Name, e.Target, why))
			continue
		}
		b := Binding{Subscriber: t.c.Name, Need: "emits from " + g.c.Name, Line: n.Pos.Line, Rule: RuleEmits,
			Producers: []BindingEdge{{Producer: g.c.Name, Facet: AtomicFacet}}}
		w.bindings = append(w.bindings, b)
		w.edges[Edge{Subscriber: t.c.Name, Producer: g.c.Name, Facet: AtomicFacet}] = true
	}
}

// emitTarget finds the node an Emits line names: the whole name, else the
// name before a trailing ".event" ("outreach.evidence-change").
func (w *wiring) emitTarget(s string) *unit {
	s = strings.ToLower(s)
	for s != "" {
		if u := w.byName[s]; u != nil {
			return u
		}
		i := strings.LastIndexByte(s, '.')
		if i < 0 {
			break
		}
		s = s[:i]
	}
	return nil
}

// sortedEdges returns the edges sorted by (subscriber, producer, facet).
func (w *wiring) sortedEdges() []Edge {
	out := make([]Edge, 0, len(w.edges))
	for e := range w.edges {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Subscriber != b.Subscriber {
			return a.Subscriber < b.Subscriber
		}
		if a.Producer != b.Producer {
			return a.Producer < b.Producer
		}
		return a.Facet < b.Facet
	})
	return out
}
