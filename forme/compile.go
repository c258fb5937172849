package forme

import (
	"sort"
	"strings"

	"github.com/prose-store/prose/published"
)

// Compile checks and wires the project and builds its manifest. The manifest
// is built even when there are errors (graph rendering shows it); write it to
// disk only when HasErrors(diags) is false. The result is computed once per
// project and shared by later calls.
func Compile(p *Project) (*Manifest, []Diagnostic) {
	p.once.Do(func() { p.manifest, p.diags = compile(p) })
	return p.manifest, p.diags
}

func compile(p *Project) (*Manifest, []Diagnostic) {
	var diags []Diagnostic
	report := func(d Diagnostic) { diags = append(diags, d) }
	opts := p.opts

	for _, f := range p.Files {
		diags = append(diags, f.Diagnostics...)
	}
	if len(p.Files) == 0 {
		report(Diagnostic{Code: CodeNoSources, Severity: SeverityInfo,
			Message: "no OpenProse source files (*.prose.md) were discovered: add contracts, or check the path"})
	}

	contracts := p.Contracts()
	h := opts.hasher()
	units := make([]*unit, len(contracts))
	found := make([][]Diagnostic, len(contracts))
	parallel(len(contracts), func(i int) {
		c := contracts[i]
		rep := func(d Diagnostic) { found[i] = append(found[i], d) }
		u := analyze(c, rep)
		u.insts = readInstances(c, rep)
		if c.has("runtime") {
			_, rd := ReadRuntime(c)
			for _, d := range rd {
				rep(d)
			}
		}
		if c.Kind.IsNode() {
			u.spec = canonSpec(c, u.facets)
			u.posts = postconditions(c)
			u.fp = ContractFingerprint(h, c)
		}
		units[i] = u
	})
	for _, ds := range found {
		diags = append(diags, ds...)
	}

	// identity: names and ids are unique
	byName := map[string]*Contract{}
	dupName := map[*Contract]bool{}
	for _, c := range contracts {
		k := strings.ToLower(c.Name)
		if first, ok := byName[k]; ok {
			dupName[c] = true
			report(diagAt(CodeNameDuplicate, c.File.Path, c.Pos,
				"name %q is already used by the %s at %s:%d: rename one; names are node identities and `call` targets",
				c.Name, first.Kind, first.File.Rel, first.Pos.Line))
			continue
		}
		byName[k] = c
	}
	byID := map[string]*Contract{}
	for _, c := range contracts {
		if c.Kind != KindResponsibility || c.ID == "" {
			continue
		}
		if first, ok := byID[c.ID]; ok {
			pos := c.Pos
			if ip, ok := c.File.fmKeys["id"]; ok {
				pos = ip
			}
			report(diagAt(CodeIDDuplicate, c.File.Path, pos,
				"%s: id %s is already the id of %s (%s:%d): ids must be unique; give this one a new id with `prose id`",
				c.Name, c.ID, first.Name, first.File.Rel, first.Pos.Line))
			continue
		}
		byID[c.ID] = c
	}

	tests := checkTests(contracts, byName, report)
	requirements := checkHost(units, opts, report)

	// patterns and their instances
	patterns := map[string]Pattern{}
	var patternList []Pattern
	callable := map[string]bool{}
	var insts []*Instance
	for _, u := range units {
		c := u.c
		if c.Kind == KindPattern {
			pt := readPattern(c)
			if _, ok := patterns[strings.ToLower(c.Name)]; !ok {
				patterns[strings.ToLower(c.Name)] = pt
				patternList = append(patternList, pt)
			}
		}
		if c.Kind != KindTest {
			callable[strings.ToLower(c.Name)] = true
		}
		insts = append(insts, u.insts...)
	}
	for _, in := range insts {
		if c, ok := byName[strings.ToLower(in.Name)]; ok {
			report(diagAt(CodeNameDuplicate, in.file, in.pos,
				"pattern instance %q has the name of the %s at %s:%d: rename the instance", in.Name, c.Kind, c.File.Rel, c.Pos.Line))
		}
	}
	instances := expandInstances(insts, patterns, callable, report)
	sort.Slice(patternList, func(i, j int) bool { return patternList[i].Name < patternList[j].Name })

	// topology nodes
	var nodes []*unit
	for _, u := range units {
		if u.c.Kind.IsNode() && !dupName[u.c] {
			nodes = append(nodes, u)
		}
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].c.Name < nodes[j].c.Name })
	w := newWiring(nodes)
	w.wire(func(u *unit) string { return u.c.File.Path })
	for _, u := range nodes {
		if u.c.Kind == KindGateway {
			w.wireEmits(u, u.c.File.Path, u.emits)
		}
	}
	diags = append(diags, w.diags...)
	edges := w.sortedEdges()

	names := make([]string, len(nodes))
	unitByName := map[string]*unit{}
	for i, u := range nodes {
		names[i] = u.c.Name
		unitByName[u.c.Name] = u
	}
	cycles := findCycles(names, edges)
	for _, cyc := range cycles {
		u := unitByName[cyc[0]]
		report(diagAt(CodeCycle, u.c.File.Path, u.c.Pos,
			"%s: these nodes subscribe to each other in a loop (each to the one before it), so none can settle; remove one of these subscriptions, or use `self-driven` continuity for feedback",
			strings.Join(append(cyc, cyc[0]), " → ")))
	}

	m := newManifest()
	for _, f := range p.Files {
		for _, c := range f.Contracts {
			kind := c.Kind
			if c.Inline {
				continue
			}
			m.Sources = append(m.Sources, ManifestSource{Path: f.Rel, Kind: string(kind), Name: c.Name})
		}
		if len(f.Contracts) == 0 {
			m.Sources = append(m.Sources, ManifestSource{Path: f.Rel, Kind: string(KindUnknown)})
		}
	}
	for _, u := range nodes {
		c := u.c
		fp := u.fp
		m.Topology.Nodes = append(m.Topology.Nodes, TopologyNode{Node: c.Name, ContractFingerprint: fp, WakeSource: u.wake()})
		m.ContractFingerprints[c.Name] = fp
		m.IDs[c.Name] = c.EffectiveID()
		if u.wake() == WakeExternal {
			m.Topology.EntryPoints = append(m.Topology.EntryPoints, c.Name)
		}
		m.Canonicalizers = append(m.Canonicalizers, Canonicalizer{
			Node: c.Name, Artifact: "dist/canonicalizers/" + published.EscapeNode(c.Name) + ".json", Facets: u.facetNames(), Spec: u.spec,
		})
		mode := "render-attested"
		if c.Kind == KindGateway {
			mode = "deterministic"
		}
		conds := u.posts
		if conds == nil {
			conds = []string{}
		}
		checks, _ := PostconditionChecks(conds)
		m.Postconditions = append(m.Postconditions, Postcondition{
			Node: c.Name, Artifact: "dist/postconditions/" + published.EscapeNode(c.Name) + ".json", Mode: mode, Conditions: conds, Checks: checks,
		})
	}
	for _, u := range nodes {
		if u.c.Kind != KindGateway {
			continue
		}
		var targets []string
		for _, b := range w.bindings {
			if b.Rule == RuleEmits && len(b.Producers) == 1 && b.Producers[0].Producer == u.c.Name {
				targets = append(targets, b.Subscriber)
			}
		}
		sort.Strings(targets)
		if targets == nil {
			targets = []string{}
		}
		m.Ingress = append(m.Ingress, readIngress(u, targets))
	}
	sort.Strings(m.Topology.EntryPoints)
	m.Topology.Edges = edges
	m.Topology.Acyclic = len(cycles) == 0
	m.Wiring = w.bindings
	sort.SliceStable(m.Wiring, func(i, j int) bool {
		a, b := m.Wiring[i], m.Wiring[j]
		if a.Subscriber != b.Subscriber {
			return a.Subscriber < b.Subscriber
		}
		return a.Line < b.Line
	})
	m.Requirements = requirements
	m.Patterns = append(m.Patterns, patternList...)
	m.Instances = instances
	m.Tests = tests

	SortDiagnostics(diags)
	diags = dedupeDiagnostics(diags)
	rel := map[string]string{}
	for _, f := range p.Files {
		rel[f.Path] = f.Rel
	}
	for _, d := range diags {
		m.Diagnostics = append(m.Diagnostics, ManifestDiagnostic{
			Severity: d.Severity, Message: d.Message, SourcePath: rel[d.File], Code: d.Code, Line: d.Line, Column: d.Column,
		})
	}
	return m, diags
}

// checkTests resolves each test's subject and collects its assertions.
func checkTests(contracts []*Contract, byName map[string]*Contract, report func(Diagnostic)) []TestSpec {
	out := []TestSpec{}
	for _, c := range contracts {
		if c.Kind != KindTest {
			continue
		}
		t := TestSpec{Name: c.Name, Source: c.File.Rel, Subject: c.Subject,
			Fixtures: testItems(c, "fixtures"), Expects: testItems(c, "expects"), ExpectsNot: testItems(c, "expects not")}
		out = append(out, t)
		if c.Subject == "" {
			continue
		}
		pos := c.Pos
		if sp, ok := c.File.fmKeys["subject"]; ok {
			pos = sp
		}
		subj := resolveSubject(c.Subject, contracts, byName)
		switch {
		case subj == nil:
			report(diagAt(CodeSubjectUnresolved, c.File.Path, pos,
				"%s: subject %q names no contract among the checked sources: check the name, or include the subject's file in the paths you check",
				c.Name, c.Subject))
		case subj.Kind != KindResponsibility && subj.Kind != KindFunction:
			report(diagAt(CodeSubjectKind, c.File.Path, pos,
				"%s: subject %q is a %s; tests run a responsibility or a function", c.Name, c.Subject, subj.Kind))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// resolveSubject finds a test subject by name, or by path for path-like
// subjects (matched against the end of the source path).
func resolveSubject(s string, contracts []*Contract, byName map[string]*Contract) *Contract {
	if c := byName[strings.ToLower(s)]; c != nil {
		return c
	}
	if !strings.ContainsAny(s, "/.") {
		return nil
	}
	want := strings.TrimPrefix(strings.TrimPrefix(s, "./"), "/")
	for _, c := range contracts {
		if c.Inline {
			continue
		}
		for _, cand := range []string{want, want + SourceExt} {
			if c.File.Rel == cand || strings.HasSuffix(c.File.Rel, "/"+cand) {
				return c
			}
		}
	}
	return nil
}

func testItems(c *Contract, key string) []TestItem {
	out := []TestItem{}
	for _, it := range c.items(key) {
		text := it.Desc
		if it.Name == "" {
			text = it.Text
		}
		out = append(out, TestItem{Name: it.Name, Text: text})
	}
	return out
}

// findCycles returns each cycle in the graph (producer → subscriber), one
// per strongly connected component, as a node path starting at its smallest
// name.
func findCycles(nodes []string, edges []Edge) [][]string {
	adj := map[string][]string{}
	for _, e := range edges {
		adj[e.Producer] = append(adj[e.Producer], e.Subscriber)
	}
	for k := range adj {
		sort.Strings(adj[k])
	}
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	var sccs [][]string
	next := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			if len(scc) > 1 {
				sccs = append(sccs, scc)
			}
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			strong(v)
		}
	}
	var out [][]string
	for _, scc := range sccs {
		in := map[string]bool{}
		for _, v := range scc {
			in[v] = true
		}
		sort.Strings(scc)
		out = append(out, cyclePath(scc[0], adj, in))
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// cyclePath finds the shortest cycle through start inside one component.
func cyclePath(start string, adj map[string][]string, in map[string]bool) []string {
	prev := map[string]string{}
	queue := []string{start}
	seen := map[string]bool{start: true}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range adj[v] {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{v}
				for path[0] != start {
					path = append([]string{prev[path[0]]}, path...)
				}
				return path
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{start}
}
