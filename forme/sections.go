package forme

import "strings"

// sectionSpec says which kinds a canonical section applies to.
type sectionSpec struct {
	name  string // as the spec writes it
	kinds []Kind // nil: every kind
}

var (
	rsp = KindResponsibility
	fn  = KindFunction
	gw  = KindGateway
	pat = KindPattern
	tst = KindTest
)

// canonicalSections is the Contract Markdown section table. Applicability is
// a little wider than the spec's table where the corpus (and the pattern
// grammar) uses a section on more kinds without changing its meaning.
var canonicalSections = map[string]sectionSpec{
	"description": {"Description", nil},
	"goal":        {"Goal", []Kind{rsp, gw}},
	"requires":    {"Requires", []Kind{rsp, pat}},
	"maintains":   {"Maintains", []Kind{rsp, gw}},
	"parameters":  {"Parameters", []Kind{fn, pat}},
	"returns":     {"Returns", []Kind{fn, pat}},
	"continuity":  {"Continuity", []Kind{rsp, gw}},
	"errors":      {"Errors", []Kind{rsp, fn, gw, pat}},
	"invariants":  {"Invariants", []Kind{rsp, fn, gw, pat}},
	"strategies":  {"Strategies", []Kind{rsp, fn, gw, pat, tst}},
	"environment": {"Environment", []Kind{rsp, fn, gw}},
	"runtime":     {"Runtime", []Kind{rsp, fn, gw, pat}},
	"skills":      {"Skills", []Kind{rsp, fn, gw}},
	"tools":       {"Tools", []Kind{rsp, fn, gw}},
	"shape":       {"Shape", []Kind{rsp, fn, gw, pat}},
	"execution":   {"Execution", []Kind{rsp, fn, gw}},
	"fixtures":    {"Fixtures", []Kind{tst}},
	"expects":     {"Expects", []Kind{tst}},
	"expects not": {"Expects Not", []Kind{tst}},
	"slots":       {"Slots", []Kind{pat}},
	"config":      {"Config", []Kind{pat}},
	"delegation":  {"Delegation", []Kind{pat}},
	"schedule":    {"Schedule", []Kind{gw}},
	"receives":    {"Receives", []Kind{gw}},
	"emits":       {"Emits", []Kind{gw}},
	"payload":     {"Payload", []Kind{gw}},
}

// retiredSections maps each retired section to what replaces it.
var retiredSections = map[string]string{
	"ensures":     "### Maintains (a responsibility's world-model) or ### Returns (a function's value)",
	"criteria":    "postconditions inside ### Maintains (write `Postcondition: …`)",
	"fulfillment": "the render itself (### Execution) or a called kind: function",
	"constraints": "### Invariants (properties that must hold) or ### Shape (capability boundaries)",
	"memory":      "the node's single world-model declared by ### Maintains (functions keep no memory)",
	"services":    "`call` in ### Execution, or a subscription in ### Requires",
	"wiring":      "### Requires needs, which Forme wires; composition inside a render is `call`",
}

// retiredKinds maps each retired kind to what replaces it.
var retiredKinds = map[string]string{
	"service": "kind: function (a called, stateless helper); read as a function",
	"system":  "responsibilities wired by ### Requires, or `call` inside one render; not a node",
}

// manualReview lists the retired forms `prose upgrade` cannot rewrite
// mechanically: the author decides how they fold.
var manualReview = map[string]bool{"system": true, "services": true, "wiring": true, "fulfillment": true, "memory": true}

// upgradeHint says what `prose upgrade` does with a retired kind or section.
func upgradeHint(key string) string {
	if manualReview[key] {
		return "`prose upgrade` lists it for review"
	}
	return "`prose upgrade` rewrites it"
}

// classifyHeading reads a ### heading: its key, the value written after a
// colon ("Continuity: external-driven"), and whether it is canonical or
// retired. Matching is case-insensitive and ignores repeated spaces.
func classifyHeading(h string) (key, value string, known, retired bool) {
	norm := strings.ToLower(strings.Join(strings.Fields(h), " "))
	norm = strings.TrimRight(norm, ": ")
	if _, ok := canonicalSections[norm]; ok {
		return norm, "", true, false
	}
	if _, ok := retiredSections[norm]; ok {
		return norm, "", false, true
	}
	if i := strings.IndexByte(norm, ':'); i > 0 {
		k := strings.TrimSpace(norm[:i])
		v := strings.TrimSpace(h[strings.IndexByte(h, ':')+1:])
		if _, ok := canonicalSections[k]; ok {
			return k, v, true, false
		}
		if _, ok := retiredSections[k]; ok {
			return k, v, false, true
		}
	}
	return norm, "", false, false
}

func sectionApplies(key string, k Kind) bool {
	spec, ok := canonicalSections[key]
	if !ok || spec.kinds == nil || k == KindUnknown {
		return true
	}
	for _, sk := range spec.kinds {
		if sk == k {
			return true
		}
	}
	return false
}
