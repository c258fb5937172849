package forme

import (
	"github.com/prose-store/prose/internal/refdata"

	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

func examplesDir(t *testing.T) string {
	return refdata.Shared(t, "reference-docs", "openprose", "examples")
}

// corpusDirs lists the directories that directly hold *.prose.md files.
func corpusDirs(t *testing.T, root string) []string {
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, SourceExt) {
			seen[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// TestReferenceCorpus checks every reference directory: no crash, only
// documented codes. The errors each directory reports are logged (-v).
func TestReferenceCorpus(t *testing.T) {
	root := examplesDir(t)
	dirs := corpusDirs(t, root)
	if len(dirs) != 44 {
		t.Errorf("found %d directories with contracts, want 44", len(dirs))
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		p, err := LoadProject([]string{dir}, hermetic())
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		m, diags := Compile(p)
		errs := map[string]int{}
		for _, d := range diags {
			if !IsDocumentedCode(d.Code) {
				t.Errorf("%s: undocumented code %q", rel, d.Code)
			}
			if strings.Contains(d.Message, "the parser failed") {
				t.Errorf("%s: parser crash: %s", rel, d)
			}
			if d.Severity == SeverityError {
				errs[d.Code]++
			}
		}
		if _, err := m.JSON(); err != nil {
			t.Errorf("%s: manifest: %v", rel, err)
		}
		for _, f := range GraphFormats {
			if _, err := RenderGraph(m, f); err != nil {
				t.Errorf("%s: graph %s: %v", rel, f, err)
			}
		}
		if len(errs) == 0 {
			t.Logf("%-60s ok (%d nodes, %d edges)", rel, len(m.Topology.Nodes), len(m.Topology.Edges))
		} else {
			t.Logf("%-60s errors %v", rel, errs)
		}
	}
}

// wiringKinds are the diagnostic kinds the reference compiler fixtures
// record (their other warnings are model-written prose).
var wiringKinds = map[string]bool{CodeAmbiguous: true, CodeUnsatisfied: true, CodeCycle: true, CodeNoSources: true, CodeMaintainsMissing: true}

// expectedKind maps a reference diagnostic message to our code, or "" for
// model-written notes that have no deterministic counterpart.
func expectedKind(msg string) string {
	switch {
	case strings.Contains(msg, "multiple producers"), strings.Contains(msg, "ambiguous"):
		return CodeAmbiguous
	case strings.Contains(msg, "No OpenProse source files"):
		return CodeNoSources
	case strings.Contains(msg, "no producer"), strings.Contains(msg, "unsatisfied"):
		return CodeUnsatisfied
	case strings.Contains(msg, "cycle"):
		return CodeCycle
	}
	return ""
}

type refManifest struct {
	Topology struct {
		Nodes       []TopologyNode `json:"nodes"`
		Edges       []Edge         `json:"edges"`
		EntryPoints []string       `json:"entry_points"`
	} `json:"topology"`
	Canonicalizers []struct {
		Node   string   `json:"node"`
		Facets []string `json:"facets"`
	} `json:"canonicalizers"`
	Diagnostics []ManifestDiagnostic `json:"diagnostics"`
}

func edgeSet(es []Edge) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Subscriber+" <- "+e.Producer+"."+e.Facet)
	}
	sort.Strings(s)
	return strings.Join(s, "\n")
}

func TestCompilerFixtures(t *testing.T) {
	ex := examplesDir(t)
	cases := []struct{ dir, expected string }{
		{"tests/open-prose/compiler/fixtures/ambiguous-fulfillment", "ambiguous-fulfillment"},
		{"tests/open-prose/compiler/fixtures/multi-facet", "multi-facet"},
		{"tests/open-prose/responsibility-runtime", "stargazer"},
		{"", "empty"},
	}
	for _, c := range cases {
		t.Run(c.expected, func(t *testing.T) {
			dir := t.TempDir()
			if c.dir != "" {
				dir = filepath.Join(ex, filepath.FromSlash(c.dir))
			}
			data, err := os.ReadFile(filepath.Join(ex, "tests", "open-prose", "compiler", "expected", c.expected+".manifest.next.json"))
			if err != nil {
				t.Fatal(err)
			}
			var want refManifest
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			p, err := LoadProject([]string{dir}, hermetic())
			if err != nil {
				t.Fatal(err)
			}
			m, diags := Compile(p)
			if got, w := edgeSet(m.Topology.Edges), edgeSet(want.Topology.Edges); got != w {
				t.Errorf("edges\n got: %s\nwant: %s", got, w)
			}
			if got, w := strings.Join(m.Topology.EntryPoints, ","), strings.Join(want.Topology.EntryPoints, ","); got != w {
				t.Errorf("entry points %q, want %q", got, w)
			}
			wake := map[string]WakeSource{}
			for _, n := range m.Topology.Nodes {
				wake[n.Node] = n.WakeSource
			}
			if len(m.Topology.Nodes) != len(want.Topology.Nodes) {
				t.Errorf("%d nodes, want %d", len(m.Topology.Nodes), len(want.Topology.Nodes))
			}
			for _, n := range want.Topology.Nodes {
				if wake[n.Node] != n.WakeSource {
					t.Errorf("node %s wake_source %q, want %q", n.Node, wake[n.Node], n.WakeSource)
				}
			}
			var gotKinds, wantKinds []string
			for _, d := range diags {
				if wiringKinds[d.Code] {
					gotKinds = append(gotKinds, d.Code)
				}
			}
			for _, d := range want.Diagnostics {
				if k := expectedKind(d.Message); k != "" {
					wantKinds = append(wantKinds, k)
				}
			}
			sort.Strings(gotKinds)
			sort.Strings(wantKinds)
			if strings.Join(gotKinds, ",") != strings.Join(wantKinds, ",") {
				t.Errorf("diagnostic kinds %v, want %v\n%v", gotKinds, wantKinds, diags)
			}
			if c.expected == "multi-facet" {
				for _, cz := range m.Canonicalizers {
					if cz.Node == "competitor-monitor" && strings.Join(cz.Facets, ",") != "@atomic,funding,hiring,product-launches" {
						t.Errorf("competitor-monitor facets %v", cz.Facets)
					}
				}
			}
		})
	}
}

func TestInvalidResponsibilityFixture(t *testing.T) {
	dir := filepath.Join(examplesDir(t), "tests", "open-prose", "compiler", "fixtures", "invalid-responsibility")
	p, err := LoadProject([]string{dir}, hermetic())
	if err != nil {
		t.Fatal(err)
	}
	m, diags := Compile(p)
	if !HasErrors(diags) || !m.HasErrors() {
		t.Fatal("a responsibility without ### Maintains must be an error (no manifest is written)")
	}
	for _, d := range diags {
		if d.Severity == SeverityError && d.Code != CodeMaintainsMissing {
			t.Errorf("unexpected error %s", d)
		}
	}
}

func codesOf(diags []Diagnostic, prefix string) []string {
	var out []string
	for _, d := range diags {
		if strings.HasPrefix(d.Code, prefix) {
			out = append(out, d.Code)
		}
	}
	return out
}

func TestDeclaredSkills(t *testing.T) {
	dir := filepath.Join(examplesDir(t), "skills", "open-prose", "examples", "declared-skills")
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	opts := Options{Env: func(k string) string { return env[k] }, MCPServers: []string{}}
	p, err := LoadProject([]string{filepath.Join(dir, "src")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := codesOf(p.Diagnostics(), "skill_"); strings.Join(got, ",") != CodeSkillUnresolved {
		t.Fatalf("absent skill: got %v, want one skill_unresolved", got)
	}
	for _, layout := range []string{"pdf", filepath.Join("document-skills", "pdf")} {
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Join(home, ".agents", "skills", layout), 0o755); err != nil {
			t.Fatal(err)
		}
		env["HOME"] = home
		p, err := LoadProject([]string{filepath.Join(dir, "src")}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := codesOf(p.Diagnostics(), "skill_"); len(got) != 0 {
			t.Errorf("skill installed as %s: got %v, want none", layout, got)
		}
	}
}

func TestDeclaredTools(t *testing.T) {
	dir := filepath.Join(examplesDir(t), "skills", "open-prose", "examples", "declared-tools", "src")
	bin := t.TempDir()
	env := map[string]string{"PATH": bin}
	opts := Options{Env: func(k string) string { return env[k] }, MCPServers: []string{}}
	p, err := LoadProject([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := codesOf(p.Diagnostics(), "tool_"); strings.Join(got, ",") != CodeToolUnresolved {
		t.Fatalf("absent jq: got %v, want one tool_unresolved", got)
	}
	// a non-executable file named jq is not a tool
	if err := os.WriteFile(filepath.Join(bin, "jq"), []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ = LoadProject([]string{dir}, opts)
	if got := codesOf(p.Diagnostics(), "tool_"); len(got) != 1 {
		t.Fatalf("non-executable jq: got %v, want tool_unresolved", got)
	}
	if err := os.Chmod(filepath.Join(bin, "jq"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, _ = LoadProject([]string{dir}, opts)
	if got := codesOf(p.Diagnostics(), "tool_"); len(got) != 0 {
		t.Errorf("jq on PATH: got %v, want none", got)
	}
}

// TestSpecsParseWithCanon: every canonicalization spec forme emits, for the
// fixtures and the reference corpus, is accepted by canon.ParseSpec.
func TestSpecsParseWithCanon(t *testing.T) {
	check := func(where string, m *Manifest) {
		for _, c := range m.Canonicalizers {
			data, err := json.Marshal(c.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := canon.ParseSpec(data); err != nil {
				t.Errorf("%s: spec of %s: %v\n%s", where, c.Node, err, data)
			}
		}
	}
	for _, name := range fixtureNames(t) {
		m, _, _ := compileFixture(t, name)
		check(name, m)
	}
	m, _ := Compile(ParseSources([]Source{{Path: "x.prose.md", Data: []byte("---\nname: x\nkind: responsibility\n---\n### Maintains\n\nMaterial: `a..b`, `.c`, `d.`.\n\n#### v1.2\n\nMaterial: `e`.\n\n#### back\\slash\n")}}, hermetic()))
	check("odd names", m)
	if _, err := os.Stat(filepath.Join(refdata.RepoRoot(t), "..", "shared")); err != nil {
		return
	}
	root := examplesDir(t)
	for _, dir := range corpusDirs(t, root) {
		p, err := LoadProject([]string{dir}, hermetic())
		if err != nil {
			t.Fatal(err)
		}
		m, _ := Compile(p)
		check(dir, m)
	}
}
