package forme

import (
	"github.com/prose-store/prose/internal/lazyre"
	"strings"
)

// unit is one contract with everything compile reads from it.
type unit struct {
	c      *Contract
	facets []Facet
	truths []string
	needs  []*need
	cont   Continuity
	emits  []emit

	// computed in the parallel pass of compile
	insts []*Instance
	spec  CanonSpec
	posts []string
	fp    string
}

type emit struct {
	Target string
	Pos    Pos
}

func (u *unit) facet(name string) (string, bool) {
	if strings.EqualFold(name, AtomicFacet) {
		return AtomicFacet, true
	}
	for _, f := range u.facets {
		if strings.EqualFold(f.Name, name) {
			return f.Name, true
		}
	}
	return "", false
}

// onlyFacet is the facet a subscription that names the producer but no facet
// reads: the single declared facet, else @atomic.
func (u *unit) onlyFacet() string {
	if len(u.facets) == 1 {
		return u.facets[0].Name
	}
	return AtomicFacet
}

// exposed lists the facets a producer offers, @atomic first.
func (u *unit) exposed() []string {
	out := []string{AtomicFacet}
	for _, f := range u.facets {
		out = append(out, f.Name)
	}
	return out
}

// facetNames is ir-v0's canonicalizer facet list: @atomic then each facet.
func (u *unit) facetNames() []string {
	out := []string{AtomicFacet}
	seen := map[string]bool{AtomicFacet: true}
	for _, f := range u.facets {
		if !seen[f.Name] {
			seen[f.Name] = true
			out = append(out, f.Name)
		}
	}
	return out
}

func (u *unit) wake() WakeSource {
	if u.c.Kind == KindGateway {
		return WakeExternal
	}
	return u.cont.Mode
}

var emitTokenRe = lazyre.New(`[A-Za-z0-9@][A-Za-z0-9_.:@/-]*`)

// readEmits reads the node names a gateway's ### Emits wakes.
func readEmits(c *Contract) []emit {
	var out []emit
	for _, s := range c.sections("emits") {
		lines := make([]struct {
			text string
			pos  Pos
		}, 0)
		for _, it := range s.Items {
			lines = append(lines, struct {
				text string
				pos  Pos
			}{it.Head, it.Pos})
		}
		if len(s.Items) == 0 {
			for _, pa := range s.Paras {
				lines = append(lines, struct {
					text string
					pos  Pos
				}{pa.Text, pa.Pos})
			}
		}
		for _, l := range lines {
			t := strings.TrimSpace(l.text)
			if isNone(t) {
				continue
			}
			if strings.HasPrefix(t, "`") {
				if end := strings.IndexByte(t[1:], '`'); end > 0 {
					t = t[1 : 1+end]
				}
			}
			if m := emitTokenRe().FindString(t); m != "" {
				out = append(out, emit{Target: strings.TrimRight(m, ".:"), Pos: l.pos})
			}
		}
	}
	return out
}

// analyze reads one contract and reports the findings that need no other
// contract.
func analyze(c *Contract, report func(Diagnostic)) *unit {
	u := &unit{c: c}
	file := c.File.Path
	d := func(code string, pos Pos, format string, args ...any) {
		report(diagAt(code, file, pos, format, args...))
	}

	seen := map[string]Pos{}
	for _, s := range c.Sections {
		switch {
		case s.Retired:
			d(CodeSectionRetired, s.Pos, "%s: ### %s is retired and never executes: use %s (%s)", c.Name, s.Heading, retiredSections[s.Key], upgradeHint(s.Key))
		case !s.Known:
			d(CodeSectionUnknown, s.Pos, "%s: ### %s is not a Contract Markdown section; it is kept as documentation (rename it if it was meant as one)", c.Name, s.Heading)
		case !sectionApplies(s.Key, c.Kind) && c.Retired == "":
			d(CodeSectionNotApplicable, s.Pos, "%s: ### %s does not apply to kind: %s and is ignored: %s",
				c.Name, canonicalSections[s.Key].name, c.Kind, notApplicableHint(s.Key, c.Kind))
		}
		if first, ok := seen[s.Key]; ok && (s.Known || s.Retired) {
			d(CodeSectionRepeated, s.Pos, "%s: ### %s repeats the section at line %d; both are read, in order (merge them to silence this)",
				c.Name, s.Heading, first.Line)
		} else if !ok {
			seen[s.Key] = s.Pos
		}
		if s.Key == "facets" {
			for _, pt := range s.Parts {
				d(CodeFacetOutside, pt.Pos, "%s: #### %s sits under ### %s, so it is documentation, not a facet: move it under ### Maintains to make it subscribable",
					c.Name, pt.Name, s.Heading)
			}
		}
	}

	u.cont = readContinuity(c)
	if c.Kind.IsNode() {
		u.facets = nodeFacets(c, d)
		u.truths = truthNames(c)
		if c.Kind == KindResponsibility {
			u.needs = readNeeds(c)
		}
		if c.Kind == KindGateway {
			u.emits = readEmits(c)
		}
	}

	switch c.Kind {
	case KindResponsibility:
		if !c.Inline {
			switch {
			case c.ID == "":
				if c.File.hasFM {
					d(CodeIDMissing, c.Pos, "%s: the responsibility has no id, so its name stands in and a rename changes its identity: run `prose id --write %s`",
						c.Name, c.File.Rel)
				}
			case !IsCanonicalID(c.ID):
				pos := c.Pos
				if p, ok := c.File.fmKeys["id"]; ok {
					pos = p
				}
				d(CodeIDNoncanonical, pos, "%s: id %q is not a 26-character uppercase Crockford base32 UUIDv7; it is used as written (mint a canonical one with `prose id` if this id is not yet published)",
					c.Name, c.ID)
			}
		}
		if !c.has("maintains") && !c.has("ensures") && !c.has("criteria") {
			d(CodeMaintainsMissing, c.Pos, "%s: a responsibility must declare ### Maintains (the world-model it keeps current); add the section, or make it kind: function if it keeps no state",
				c.Name)
		}
	case KindGateway:
		if u.cont.Declared && u.cont.Mode != WakeExternal {
			d(CodeContinuityConflict, u.cont.Pos, "%s: a gateway is external-driven, but its ### Continuity says %s-driven: write `external-driven`, or make it kind: responsibility",
				c.Name, u.cont.Mode)
		}
	case KindTest:
		if c.Subject == "" {
			pos := c.Pos
			d(CodeSubjectMissing, pos, "%s: a test must name what it runs: add `subject: <responsibility or function name>` to the frontmatter", c.Name)
		}
		if !c.has("expects") && !c.has("expects not") {
			d(CodeExpectsMissing, c.Pos, "%s: the test asserts nothing: add ### Expects (and/or ### Expects Not) bullets", c.Name)
		}
	}
	if c.Kind == KindResponsibility && u.cont.Inferred {
		d(CodeContinuityInferred, u.cont.Pos, "%s: ### Continuity names no mode, read as %s-driven from its wording: start it with `input-driven`, `self-driven: <cadence>` or `external-driven`",
			c.Name, u.cont.Mode)
	}
	return u
}

// nodeFacets reads the facets and reports duplicates and the reserved name.
func nodeFacets(c *Contract, d func(string, Pos, string, ...any)) []Facet {
	var out []Facet
	seen := map[string]Pos{}
	for _, f := range maintainsFacets(c) {
		if strings.EqualFold(f.Name, AtomicFacet) {
			d(CodeFacetReserved, f.Pos, "%s: #### %s is reserved for the whole-truth facet every node has: rename this part", c.Name, f.Name)
			continue
		}
		if f.Name == "" {
			continue
		}
		if first, dup := seen[strings.ToLower(f.Name)]; dup {
			d(CodeFacetDuplicate, f.Pos, "%s: facet %q is declared twice (first at line %d): rename or merge the two parts", c.Name, f.Name, first.Line)
			continue
		}
		seen[strings.ToLower(f.Name)] = f.Pos
		out = append(out, f)
	}
	return out
}

func notApplicableHint(key string, k Kind) string {
	switch {
	case key == "requires" && k == KindGateway:
		return "a gateway's input arrives from outside the graph; subscribe a responsibility instead"
	case key == "requires" && k == KindFunction:
		return "a function takes ### Parameters from its caller; make it kind: responsibility to subscribe"
	case (key == "maintains" || key == "continuity") && k == KindFunction:
		return "a function keeps no world-model; make it kind: responsibility, or use ### Returns"
	case key == "parameters" || key == "returns":
		return "a node's inputs are ### Requires and its output is ### Maintains"
	case key == "fixtures" || key == "expects" || key == "expects not":
		return "move it to a kind: test file whose subject is this contract"
	case key == "slots" || key == "config" || key == "delegation":
		return "pattern sections belong in a kind: pattern file"
	case key == "schedule" || key == "receives" || key == "emits" || key == "payload":
		return "ingress sections belong to a kind: gateway"
	}
	return "move it to a contract of a kind it applies to, or remove it"
}
