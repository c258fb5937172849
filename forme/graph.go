package forme

import (
	"fmt"
	"sort"
	"strings"
)

// Graph formats accepted by RenderGraph.
var GraphFormats = []string{"dot", "mermaid", "json"}

// RenderGraph renders a manifest's topology with its diagnostics, also when
// the manifest has errors: unresolved needs are drawn as dashed edges from
// a "?" placeholder (unsatisfied) or from each candidate (ambiguous), nodes
// with wiring errors and edges on a cycle are red, and every diagnostic is
// listed (as comments in dot and mermaid, and in a note node in dot).
// format is dot, mermaid or json.
func RenderGraph(m *Manifest, format string) ([]byte, error) {
	g := newGraphView(m)
	switch format {
	case "dot":
		return g.dot(), nil
	case "mermaid":
		return g.mermaid(), nil
	case "json":
		return encodeJSON(struct {
			Topology    Topology             `json:"topology"`
			Unresolved  []Binding            `json:"unresolved"`
			Diagnostics []ManifestDiagnostic `json:"diagnostics"`
		}{m.Topology, g.unresolved, m.Diagnostics})
	}
	return nil, fmt.Errorf("unknown graph format %q: use dot, mermaid or json", format)
}

type graphView struct {
	m          *Manifest
	bad        map[string]bool // nodes with wiring errors
	cycleEdge  map[Edge]bool
	unresolved []Binding
}

func newGraphView(m *Manifest) *graphView {
	g := &graphView{m: m, bad: map[string]bool{}, cycleEdge: map[Edge]bool{}, unresolved: []Binding{}}
	for _, b := range m.Wiring {
		if b.Rule == RuleUnsatisfied || b.Rule == RuleAmbiguous {
			g.bad[b.Subscriber] = true
			g.unresolved = append(g.unresolved, b)
		}
	}
	names := make([]string, len(m.Topology.Nodes))
	for i, n := range m.Topology.Nodes {
		names[i] = n.Node
	}
	for _, cyc := range findCycles(names, m.Topology.Edges) {
		in := map[string]bool{}
		for _, v := range cyc {
			in[v] = true
			g.bad[v] = true
		}
		for _, e := range m.Topology.Edges {
			if in[e.Producer] && in[e.Subscriber] {
				g.cycleEdge[e] = true
			}
		}
	}
	return g
}

func (g *graphView) summary() string {
	count := map[Severity]int{}
	for _, d := range g.m.Diagnostics {
		count[d.Severity]++
	}
	return strings.Join([]string{counted(len(g.m.Topology.Nodes), "node"), counted(len(g.m.Topology.Edges), "edge"),
		counted(count[SeverityError], "error"), counted(count[SeverityWarning], "warning"), counted(count[SeverityInfo], "info")}, ", ")
}

// counted is "1 node", "2 nodes".
func counted(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func diagLine(d ManifestDiagnostic) string {
	loc := d.SourcePath
	if loc != "" && d.Line > 0 {
		loc += fmt.Sprintf(":%d:%d", d.Line, d.Column)
	}
	if loc != "" {
		loc += ": "
	}
	return fmt.Sprintf("%s%s: %s: %s", loc, d.Severity, d.Code, d.Message)
}

func dotQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (g *graphView) dot() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// prose graph: %s\n", g.summary())
	for _, d := range g.m.Diagnostics {
		fmt.Fprintf(&b, "// %s\n", oneLine(diagLine(d)))
	}
	b.WriteString("digraph prose {\n")
	b.WriteString("  rankdir=LR;\n")
	b.WriteString("  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, n := range g.m.Topology.Nodes {
		attrs := []string{"label=" + dotQuote(n.Node+"\n"+string(n.WakeSource))}
		if n.WakeSource == WakeExternal {
			attrs = append(attrs, "shape=cds")
		}
		if g.bad[n.Node] {
			attrs = append(attrs, "color=red", "penwidth=2")
		}
		fmt.Fprintf(&b, "  %s [%s];\n", dotQuote(n.Node), strings.Join(attrs, ", "))
	}
	for _, e := range g.m.Topology.Edges {
		attrs := []string{"label=" + dotQuote(e.Facet)}
		if g.cycleEdge[e] {
			attrs = append(attrs, "color=red", "fontcolor=red")
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", dotQuote(e.Producer), dotQuote(e.Subscriber), strings.Join(attrs, ", "))
	}
	for i, u := range g.unresolved {
		if u.Rule == RuleUnsatisfied {
			// node names never start with a space, so helper ids cannot collide
			id := dotQuote(fmt.Sprintf(" unresolved %d", i))
			fmt.Fprintf(&b, "  %s [label=%s, shape=plaintext, fontcolor=red];\n", id, dotQuote("? "+oneLine(u.Need)))
			fmt.Fprintf(&b, "  %s -> %s [style=dashed, color=red];\n", id, dotQuote(u.Subscriber))
			continue
		}
		for _, p := range u.Producers {
			fmt.Fprintf(&b, "  %s -> %s [style=dashed, color=red, label=%s];\n",
				dotQuote(p.Producer), dotQuote(u.Subscriber), dotQuote(p.Facet+"?"))
		}
	}
	var notes []string
	for _, d := range g.m.Diagnostics {
		if d.Severity != SeverityInfo {
			notes = append(notes, oneLine(diagLine(d)))
		}
	}
	if len(notes) > 0 {
		const max = 20
		if len(notes) > max {
			notes = append(notes[:max], fmt.Sprintf("… and %d more", len(notes)-max))
		}
		var lab strings.Builder
		for _, n := range notes {
			n = truncate(n, 160)
			lab.WriteString(strings.ReplaceAll(strings.ReplaceAll(n, `\`, `\\`), `"`, `\"`))
			lab.WriteString(`\l`)
		}
		fmt.Fprintf(&b, "  \" diagnostics\" [shape=note, fontsize=9, label=\"%s\"];\n", lab.String())
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func mermaidText(s string) string {
	s = oneLine(s)
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;", "`", "'")
	return `"` + r.Replace(s) + `"`
}

func (g *graphView) mermaid() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%% prose graph: %s\n", g.summary())
	for _, d := range g.m.Diagnostics {
		fmt.Fprintf(&b, "%%%% %s\n", oneLine(diagLine(d)))
	}
	b.WriteString("flowchart LR\n")
	ids := map[string]string{}
	for i, n := range g.m.Topology.Nodes {
		ids[n.Node] = fmt.Sprintf("n%d", i)
	}
	var bad []string
	for _, n := range g.m.Topology.Nodes {
		label := mermaidText(n.Node + " (" + string(n.WakeSource) + ")")
		if n.WakeSource == WakeExternal {
			fmt.Fprintf(&b, "  %s>%s]\n", ids[n.Node], label)
		} else {
			fmt.Fprintf(&b, "  %s(%s)\n", ids[n.Node], label)
		}
		if g.bad[n.Node] {
			bad = append(bad, ids[n.Node])
		}
	}
	var redLinks []string
	link := 0
	for _, e := range g.m.Topology.Edges {
		fmt.Fprintf(&b, "  %s -->|%s| %s\n", ids[e.Producer], mermaidText(e.Facet), ids[e.Subscriber])
		if g.cycleEdge[e] {
			redLinks = append(redLinks, fmt.Sprint(link))
		}
		link++
	}
	for i, u := range g.unresolved {
		if u.Rule == RuleUnsatisfied {
			id := fmt.Sprintf("u%d", i)
			fmt.Fprintf(&b, "  %s[%s]\n", id, mermaidText("? "+u.Need))
			fmt.Fprintf(&b, "  %s -.-> %s\n", id, ids[u.Subscriber])
			fmt.Fprintf(&b, "  class %s unresolved\n", id)
			redLinks = append(redLinks, fmt.Sprint(link))
			link++
			continue
		}
		for _, p := range u.Producers {
			fmt.Fprintf(&b, "  %s -.->|%s| %s\n", ids[p.Producer], mermaidText(p.Facet+"?"), ids[u.Subscriber])
			redLinks = append(redLinks, fmt.Sprint(link))
			link++
		}
	}
	b.WriteString("  classDef error stroke:#d00,stroke-width:2px\n")
	b.WriteString("  classDef unresolved fill:#fff,stroke:#d00,color:#d00,stroke-dasharray:4\n")
	sort.Strings(bad)
	if len(bad) > 0 {
		fmt.Fprintf(&b, "  class %s error\n", strings.Join(bad, ","))
	}
	if len(redLinks) > 0 {
		fmt.Fprintf(&b, "  linkStyle %s stroke:#d00\n", strings.Join(redLinks, ","))
	}
	return []byte(b.String())
}
