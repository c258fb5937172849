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
