package forme_test

import (
	"fmt"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/forme"
)

func ExampleCompile() {
	srcs := []forme.Source{
		{Path: "src/feed.prose.md", Data: []byte(`---
name: feed
kind: gateway
---

### Continuity: external-driven

### Maintains

#### items

The latest delivered items.
`)},
		{Path: "src/digest.prose.md", Data: []byte(`---
name: digest
kind: responsibility
id: 01KDYAK348E48S248H248H248H
---

### Requires

- the items facet of the feed
- the weather

### Maintains

- ` + "`digest`" + `: one line per item
`)},
	}
	opts := forme.Options{Hash: canon.BLAKE3, Env: func(string) string { return "" }}
	m, diags := forme.Compile(forme.ParseSources(srcs, opts))
	for _, d := range diags {
		fmt.Println(d.Severity, d.Code, d.File, d.Line)
	}
	for _, e := range m.Topology.Edges {
		fmt.Printf("%s <- %s.%s\n", e.Subscriber, e.Producer, e.Facet)
	}
	fmt.Println("write manifest:", !forme.HasErrors(diags))
	// Output:
	// error unsatisfied src/digest.prose.md 10
	// digest <- feed.items
	// write manifest: false
}

func ExampleInsertID() {
	src := []byte("---\nname: digest\nkind: responsibility\n---\n# Digest\n")
	out, changed, err := forme.InsertID(src, "01KDYAK348E48S248H248H248H")
	fmt.Printf("%v %v\n%s", changed, err, out)
	// Output:
	// true <nil>
	// ---
	// name: digest
	// kind: responsibility
	// id: 01KDYAK348E48S248H248H248H
	// ---
	// # Digest
}
