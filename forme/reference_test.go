package forme

import (
	"github.com/prose-store/prose/internal/refdata"

	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// hermetic is Options with an empty environment: no HOME, no PATH.
func hermetic() Options {
	return Options{Env: func(string) string { return "" }, MCPServers: []string{}}
}

// normalizeNode strips a reference id prefix ("example/node", "ns:node").
func normalizeNode(id string) string {
	if i := strings.LastIndexAny(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	if i := strings.LastIndex(id, "::"); i >= 0 {
		id = id[i+2:]
	}
	return id
}

func TestAgentObservatoryOracle(t *testing.T) {
	src := refdata.Shared(t, "reference-docs", "openprose", "examples", "packages", "reactor-cli", "examples", "agent-observatory")
	topo := refdata.Shared(t, "reference-data", "reactor", "packages", "reactor-cli", "examples", "agent-observatory", "replay", "compile", "topology.json")
	data, err := os.ReadFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Topology struct {
			Edges       []Edge   `json:"edges"`
			EntryPoints []string `json:"entry_points"`
		} `json:"topology"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range ref.Topology.Edges {
		want = append(want, normalizeNode(e.Subscriber)+" <- "+normalizeNode(e.Producer)+"."+e.Facet)
	}
	sort.Strings(want)

	p, err := LoadProject([]string{src}, hermetic())
	if err != nil {
		t.Fatal(err)
	}
	m, diags := Compile(p)
	if HasErrors(diags) {
		t.Fatalf("unexpected errors: %v", diags)
	}
	var got []string
	for _, e := range m.Topology.Edges {
		got = append(got, e.Subscriber+" <- "+e.Producer+"."+e.Facet)
	}
	sort.Strings(got)
	if len(want) != 13 {
		t.Fatalf("reference topology has %d edges, want 13", len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("edges differ\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var entries []string
	for _, e := range ref.Topology.EntryPoints {
		entries = append(entries, normalizeNode(e))
	}
	if strings.Join(m.Topology.EntryPoints, ",") != strings.Join(entries, ",") {
		t.Errorf("entry points %v, want %v", m.Topology.EntryPoints, entries)
	}
	if !m.Topology.Acyclic {
		t.Error("topology should be acyclic")
	}
}
