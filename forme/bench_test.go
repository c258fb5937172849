package forme

import (
	"fmt"
	"strings"
	"testing"
)

// genContracts writes n contracts: one gateway feeding layers of
// responsibilities, each subscribing to earlier nodes through the different
// wiring rules (facet-need, facet mention, explicit producer.facet, named
// producer), with facets and material/immaterial prose.
func genContracts(n int) []Source {
	srcs := make([]Source, 0, n)
	name := func(i int) string { return fmt.Sprintf("node-%05d", i) }
	srcs = append(srcs, Source{Path: "gen/" + name(0) + SourceExt, Data: []byte(`---
name: node-00000
kind: gateway
---

### Continuity: external-driven

### Maintains

The inbound feed. Material: the ` + "`items`" + ` set. The delivery id is immaterial.

#### feed-00000

Every delivered item.
`)})
	for i := 1; i < n; i++ {
		var req strings.Builder
		a, b := (i*7919)%i, (i*104729+13)%i
		switch i % 4 {
		case 0:
			fmt.Fprintf(&req, "- `feed-%05d`: the feed of the upstream node\n", a)
		case 1:
			fmt.Fprintf(&req, "- the feed-%05d facet of %s (the only wake source)\n", a, name(a))
		case 2:
			fmt.Fprintf(&req, "- `%s.feed-%05d`: explicit subscription\n", name(a), a)
		default:
			fmt.Fprintf(&req, "- the current truth kept by %s, read whole (atomic)\n", name(a))
		}
		if b != a {
			fmt.Fprintf(&req, "- the feed-%05d facet of %s\n", b, name(b))
		}
		id := EncodeID([16]byte{1, 2, 3, 4, 5, 6, 0x70, 0, 0x80, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)})
		src := fmt.Sprintf(`---
name: %s
kind: responsibility
id: %s
---

# Node %d

### Goal

Keep stage %d of the pipeline current.

### Requires

%s
### Maintains

A current view of the stage. Material: the `+"`entries`"+` set and each entry's `+"`status`"+`. The checked time is immaterial.

Postcondition: every entry cites its source.

#### feed-%05d

The entries this stage passes on. Material: `+"`id`"+` and `+"`score`"+`.

#### audit-%05d

The audit trail of the stage.

### Continuity

- input-driven

### Invariants

- never drop an entry silently
`, name(i), id, i, i, req.String(), i, i)
		srcs = append(srcs, Source{Path: "gen/" + name(i) + SourceExt, Data: []byte(src)})
	}
	return srcs
}

func benchCompile(b *testing.B, n int) {
	srcs := genContracts(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := ParseSources(srcs, hermetic())
		m, diags := Compile(p)
		if HasErrors(diags) {
			b.Fatalf("generated contracts have errors: %v", diags[:min(3, len(diags))])
		}
		if len(m.Topology.Nodes) != n {
			b.Fatalf("%d nodes, want %d", len(m.Topology.Nodes), n)
		}
	}
}

// BenchmarkCompile1k and BenchmarkCompile10k time parsing, checking, wiring
// and manifest building; compare them to see that compile is linear.
func BenchmarkCompile1k(b *testing.B)  { benchCompile(b, 1000) }
func BenchmarkCompile10k(b *testing.B) { benchCompile(b, 10000) }

func TestGeneratedContractsWire(t *testing.T) {
	p := ParseSources(genContracts(200), hermetic())
	m, diags := Compile(p)
	if HasErrors(diags) {
		t.Fatalf("errors: %v", diags[:min(5, len(diags))])
	}
	rules := map[string]int{}
	for _, b := range m.Wiring {
		rules[b.Rule]++
	}
	for _, r := range []string{RuleFacetNeed, RuleFacetMention, RuleExplicit, RuleNamedProducer} {
		if rules[r] == 0 {
			t.Errorf("generated set never uses rule %s (%v)", r, rules)
		}
	}
}

// TestSharedNamesStayFast: thousands of producers sharing one facet name
// must not make wiring quadratic, and the ambiguity message stays short.
func TestSharedNamesStayFast(t *testing.T) {
	var srcs []Source
	for i := 0; i < 1000; i++ {
		srcs = append(srcs, Source{Path: fmt.Sprintf("p%04d.prose.md", i), Data: []byte(fmt.Sprintf(
			"---\nname: p%04d\nkind: responsibility\nid: x%d\n---\n# Node\n\n### Requires\n\n- `summary`: a summary\n\n### Maintains\n\n- `entries`: rows\n\n#### summary\n\ns\n", i, i))})
	}
	m, diags := Compile(ParseSources(srcs, hermetic()))
	amb := 0
	for _, d := range diags {
		if d.Code == CodeAmbiguous {
			amb++
			if len(d.Message) > 600 {
				t.Fatalf("ambiguity message too long: %d bytes", len(d.Message))
			}
		}
	}
	if amb != 1000 || len(m.Topology.Edges) != 0 {
		t.Errorf("%d ambiguities, %d edges", amb, len(m.Topology.Edges))
	}
}
