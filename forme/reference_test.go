package forme

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// sharedDir returns ../shared beside the repository, skipping the test when
// it is absent (and failing under CI, where it must be present).
func sharedDir(t testing.TB, sub ...string) string {
	t.Helper()
	dir := filepath.Join(append([]string{repoRoot(t), "..", "shared"}, sub...)...)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data missing under CI: %v", err)
		}
		t.Skipf("reference data absent: %v", err)
	}
	return dir
}

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
	src := sharedDir(t, "reference-docs", "openprose", "examples", "packages", "reactor-cli", "examples", "agent-observatory")
	topo := sharedDir(t, "reference-data", "reactor", "packages", "reactor-cli", "examples", "agent-observatory", "replay", "compile", "topology.json")
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
