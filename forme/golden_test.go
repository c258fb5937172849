package forme

import (
	"github.com/prose-store/prose/internal/refdata"

	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fixtureHost builds a controlled HOME and PATH: HOME has the `writing`
// skill, PATH holds one executable, fake-tool. The real environment never
// reaches the checks.
func fixtureHost(t *testing.T) (Options, func(string) string) {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "skills", "writing"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "fake-tool"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "PATH": bin}
	opts := Options{Env: func(k string) string { return env[k] }}
	clean := func(s string) string {
		s = strings.ReplaceAll(s, home, "$HOME")
		return strings.ReplaceAll(s, bin, "$BIN")
	}
	return opts, clean
}

func fixturesDir(t *testing.T) string {
	return filepath.Join(refdata.RepoRoot(t), "fixtures", "contracts")
}

func fixtureNames(t *testing.T) []string {
	entries, err := os.ReadDir(fixturesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// compileFixture loads fixtures/contracts/<name> as `prose check <name>`
// would from fixtures/contracts.
func compileFixture(t *testing.T, name string) (*Manifest, []Diagnostic, func(string) string) {
	t.Helper()
	dir := fixturesDir(t)
	opts, clean := fixtureHost(t)
	t.Chdir(dir)
	p, err := LoadProject([]string{name}, opts)
	if err != nil {
		t.Fatal(err)
	}
	m, diags := Compile(p)
	abs := dir + string(filepath.Separator)
	return m, diags, func(s string) string { return strings.ReplaceAll(clean(s), abs, "") }
}

func diagnosticsText(diags []Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join(refdata.RepoRoot(t), "forme", "testdata", "golden", file)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./forme -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update if the change is intended)\n--- got\n%s", file, got)
	}
}

func TestGoldenFixtures(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			m, diags, clean := compileFixture(t, name)
			golden(t, name+".diagnostics.txt", []byte(clean(diagnosticsText(diags))))
			js, err := m.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".manifest.json", []byte(clean(string(js))))
			for _, d := range diags {
				if !IsDocumentedCode(d.Code) {
					t.Errorf("undocumented code %q", d.Code)
				}
			}
		})
	}
}

func TestGoldenGraphs(t *testing.T) {
	for _, name := range []string{"wiring", "cycle", "ambiguous", "unsatisfied"} {
		t.Run(name, func(t *testing.T) {
			m, _, clean := compileFixture(t, name)
			for _, format := range GraphFormats {
				out, err := RenderGraph(m, format)
				if err != nil {
					t.Fatal(err)
				}
				ext := map[string]string{"dot": "dot", "mermaid": "mmd", "json": "graph.json"}[format]
				golden(t, name+"."+ext, []byte(clean(string(out))))
			}
		})
	}
}

// TestEveryWiringRuleDrawsItsEdges names, for each wiring rule and each
// fan-in keyword, a fixture need and the edges it must draw: dropping the
// rule (or the keyword) loses those edges and fails here by name, not only
// as a changed golden file.
func TestEveryWiringRuleDrawsItsEdges(t *testing.T) {
	cases := []struct {
		fixture, subscriber, need, rule string
		edges                           []string // producer.facet
	}{
		{"wiring", "archive", "events.raw", RuleExplicit, []string{"events.raw"}},
		{"wiring", "intake", "raw", RuleFacetNeed, []string{"events.raw"}},
		{"wiring", "digest", "the open and closed facets of the ledger", RuleFacetMention, []string{"ledger.closed", "ledger.open"}},
		{"wiring", "digest", "the current copy kept by the archive", RuleNamedProducer, []string{"archive.@atomic"}},
		{"wiring", "digest", "AcceptedItem", RuleNormalized, []string{"intake.@atomic"}},
		{"wiring", "intake", "emits from events", RuleEmits, []string{"events.@atomic"}},
		{"wiring", "board", "signal", RuleFacetNeed, []string{"intake.signal", "ledger.signal"}},
		{"fanin", "by-every", "signal", RuleFacetNeed, []string{"alpha.signal", "beta.signal"}},
		{"fanin", "by-all", "signal", RuleFacetNeed, []string{"alpha.signal", "beta.signal"}},
		{"fanin", "by-each", "signal", RuleFacetNeed, []string{"alpha.signal", "beta.signal"}},
		{"fanin", "by-fan-in", "signal", RuleFacetNeed, []string{"alpha.signal", "beta.signal"}},
	}
	manifests := map[string]*Manifest{}
	for _, c := range cases {
		m := manifests[c.fixture]
		if m == nil {
			var diags []Diagnostic
			m, diags, _ = compileFixture(t, c.fixture)
			if HasErrors(diags) {
				t.Fatalf("%s: %v", c.fixture, diags)
			}
			manifests[c.fixture] = m
		}
		var found *Binding
		for i, b := range m.Wiring {
			if b.Subscriber == c.subscriber && b.Need == c.need {
				found = &m.Wiring[i]
			}
		}
		if found == nil {
			t.Errorf("%s: %s has no need %q", c.fixture, c.subscriber, c.need)
			continue
		}
		var got []string
		for _, p := range found.Producers {
			got = append(got, p.Producer+"."+p.Facet)
		}
		sort.Strings(got)
		if found.Rule != c.rule || strings.Join(got, ",") != strings.Join(c.edges, ",") {
			t.Errorf("%s: %s needs %q: rule %s, edges %v; want %s, %v", c.fixture, c.subscriber, c.need, found.Rule, got, c.rule, c.edges)
		}
		for _, e := range c.edges {
			producer, facet, _ := strings.Cut(e, ".")
			drawn := false
			for _, te := range m.Topology.Edges {
				if te.Subscriber == c.subscriber && te.Producer == producer && te.Facet == facet {
					drawn = true
				}
			}
			if !drawn {
				t.Errorf("%s: the topology lacks the edge %s → %s", c.fixture, e, c.subscriber)
			}
		}
	}
}
