package forme

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func parseOne(t *testing.T, src string) *Contract {
	t.Helper()
	f := ParseFile("t.prose.md", []byte(src))
	if len(f.Contracts) == 0 {
		t.Fatal("no contract")
	}
	return f.Contracts[0]
}

func TestSectionHeadings(t *testing.T) {
	c := parseOne(t, `---
name: g
kind: gateway
---

# Title

Preamble text.

### CONTINUITY: External-Driven

### maintains

- `+"`x`"+`: the truth

#### part-one

Body one.

### Maintains

#### part-two

### Expects  Not

- nothing

### Unheard Of

text
`)
	if c.Title != "Title" || c.Preamble != "Preamble text." {
		t.Errorf("title %q preamble %q", c.Title, c.Preamble)
	}
	keys := []string{}
	for _, s := range c.Sections {
		keys = append(keys, s.Key)
	}
	if got := strings.Join(keys, ","); got != "continuity,maintains,maintains,expects not,unheard of" {
		t.Fatalf("keys %s", got)
	}
	if c.Sections[0].Value != "External-Driven" || readContinuity(c).Mode != WakeExternal {
		t.Errorf("continuity heading value %q", c.Sections[0].Value)
	}
	if fs := maintainsFacets(c); len(fs) != 2 || fs[0].Name != "part-one" || fs[1].Name != "part-two" {
		t.Errorf("facets %+v", fs)
	}
	if c.Sections[4].Known {
		t.Error("an unknown section must not be known")
	}
	if b := c.body("maintains"); !strings.Contains(b, "#### part-one") || !strings.Contains(b, "#### part-two") {
		t.Errorf("maintains body %q", b)
	}
}

func TestInlineNodes(t *testing.T) {
	f := ParseFile("t.prose.md", []byte(`---
name: main
kind: responsibility
---

### Maintains

- `+"`x`"+`: y

## helper

### Parameters

- `+"`a`"+`: b

## watcher

### Requires

- the x of main

### Maintains

- `+"`w`"+`: z

## hook

### Continuity

- external-driven
`))
	var got []string
	for _, c := range f.Contracts {
		got = append(got, c.Name+":"+string(c.Kind))
	}
	if strings.Join(got, " ") != "main:responsibility helper:function watcher:responsibility hook:gateway" {
		t.Fatalf("contracts %v", got)
	}
}

func TestContractItems(t *testing.T) {
	cases := []struct{ head, name, note, typ, desc string }{
		{"`topic`: a research question", "topic", "", "", "a research question"},
		{"`worker` (primary): drafts", "worker", "primary", "", "drafts"},
		{"`subject`: run — a completed run", "subject", "", "run", "a completed run"},
		{"`cohort`: run[] — runs to compare", "cohort", "", "run[]", "runs to compare"},
		{"`runner`: runs things", "runner", "", "", "runs things"},
		{"A current view of `customer_signal`: evidence", "customer_signal", "", "", "evidence"},
		{"system-name: the system", "system-name", "", "", "the system"},
		{"Postcondition: not a name", "", "", "", "Postcondition: not a name"},
		{"`{ a, b }` literal", "", "", "", "`{ a, b }` literal"},
	}
	for _, c := range cases {
		it := &Item{Head: c.head}
		parseItemHead(it)
		if it.Name != c.name || it.Note != c.note || it.Type != c.typ || it.Desc != c.desc {
			t.Errorf("%q → name %q note %q type %q desc %q", c.head, it.Name, it.Note, it.Type, it.Desc)
		}
	}
	it := &Item{Head: "each article has: a summary"}
	parseItemHead(it)
	if !it.Each {
		t.Error("each … has: is a postcondition item")
	}
}

func TestMaterialityFields(t *testing.T) {
	cases := []struct{ text, want string }{
		{"Material: the `departments` set and the `open_roles` count (exact).", "departments+ open_roles+"},
		{"`fetched_at` and source request-ids are immaterial everywhere.", "fetched_at- source_request_ids-"},
		{"- immaterial: assembly timestamps", "assembly_timestamps-"},
		{"The scan time and the file mtime are immaterial.", "scan_time- file_mtime-"},
		{"a ship-date slipping past today flips `shipped`, which is material.", "shipped+"},
		{"Material per session: the session id and the session fingerprint.", "session_id+ session_fingerprint+"},
		{"No materiality here.", ""},
		{"Immaterial: any `fetched_at` timestamp. Material: `a`; `b` is immaterial", "fetched_at- a+ b-"},
	}
	for _, c := range cases {
		var got []string
		for _, f := range materialityFields(c.text) {
			sign := "+"
			if !f.Material {
				sign = "-"
			}
			got = append(got, f.Path+sign)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%q → %q, want %q", c.text, strings.Join(got, " "), c.want)
		}
	}
}

func TestExplicitRefs(t *testing.T) {
	got := explicitRefs("see `a-b.c:d` and x.@atomic, not file.md. or 1.5")
	var s []string
	for _, r := range got {
		s = append(s, r[1]+r[2]+"|"+r[3]+r[4])
	}
	if strings.Join(s, " ") != "`a-b|c:d` x|@atomic file|md 1|5" {
		t.Errorf("refs %v", s)
	}
}

func TestTokens(t *testing.T) {
	if got := strings.Join(tokens("Decisions-Log's CountTrend entries, classes"), " "); got != "decision log s count trend entry class" {
		t.Errorf("tokens %q", got)
	}
	if normKey("AcceptedItems") != normKey("accepted_item") {
		t.Error("camelCase, plural and separators must normalize alike")
	}
}

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{Code: "c", Severity: SeverityWarning, Message: "m", File: "f", Line: 3, Column: 2}
	if d.String() != "f:3:2: warning: c: m" {
		t.Error(d.String())
	}
	d.Column = 0
	if d.String() != "f:3: warning: c: m" {
		t.Error(d.String())
	}
	d.Line, d.File = 0, ""
	if d.String() != "warning: c: m" {
		t.Error(d.String())
	}
}

func TestWiringRules(t *testing.T) {
	src := func(name, body string) Source {
		return Source{Path: name + ".prose.md", Data: []byte("---\nname: " + name + "\nkind: responsibility\nid: 01KDYAK348E48S248H248H248H\n---\n" + body)}
	}
	producers := []Source{
		src("sales", "### Maintains\n\n- `ledger_entries`: rows\n\n#### summary\n\nx\n\n#### totals\n\ny\n"),
		src("support", "### Maintains\n\n#### summary\n\nz\n"),
		src("crm", "### Maintains\n\n- `accounts`: all accounts\n"),
	}
	cases := []struct {
		need, rule, edges string
	}{
		{"- `sales.totals`: explicit", RuleExplicit, "sales.totals"},
		{"- `totals`: the totals", RuleFacetNeed, "sales.totals"},
		{"#### totals\n\nthe totals", RuleFacetNeed, "sales.totals"},
		{"- the summary and totals facets of sales", RuleFacetMention, "sales.summary sales.totals"},
		{"- the `totals` facet of sales, not the summary", RuleFacetMention, "sales.totals"},
		{"- whatever crm keeps", RuleNamedProducer, "crm.@atomic"},
		{"- the whole sales truth (atomic)", RuleNamedProducer, "sales.@atomic"},
		{"- `LedgerEntry`: one row each", RuleNormalized, "sales.@atomic"},
		{"- `summary`: a summary", RuleAmbiguous, ""},
		{"- `summary`: every summary (fan-in)", RuleFacetNeed, "sales.summary support.summary"},
		{"- `weather`: the forecast", RuleUnsatisfied, ""},
		{"- `x`: run — a run", RuleCallerInput, ""},
	}
	for _, c := range cases {
		t.Run(c.need, func(t *testing.T) {
			srcs := append([]Source{src("brief", "### Requires\n\n"+c.need+"\n\n### Maintains\n\n- `b`: c\n")}, producers...)
			m, _ := Compile(ParseSources(srcs, hermetic()))
			var b *Binding
			for i := range m.Wiring {
				if m.Wiring[i].Subscriber == "brief" {
					b = &m.Wiring[i]
				}
			}
			if b == nil {
				t.Fatal("no binding recorded")
			}
			var edges []string
			for _, e := range m.Topology.Edges {
				edges = append(edges, e.Producer+"."+e.Facet)
			}
			if b.Rule != c.rule || strings.Join(edges, " ") != c.edges {
				t.Errorf("rule %s edges %v; want %s %s", b.Rule, edges, c.rule, c.edges)
			}
		})
	}
}

func TestDeterministicManifest(t *testing.T) {
	srcs := genContracts(300)
	a, _ := Compile(ParseSources(srcs, hermetic()))
	rev := make([]Source, len(srcs))
	for i := range srcs {
		rev[i] = srcs[len(srcs)-1-i]
	}
	b, _ := Compile(ParseSources(rev, Options{Env: func(string) string { return "" }, Workers: 1}))
	ja, _ := a.JSON()
	jb, _ := b.JSON()
	if !bytes.Equal(ja, jb) {
		t.Fatal("manifest bytes depend on source order or scheduling")
	}
}

func TestLoadProjectPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fn := "---\nname: %s\nkind: function\n---\n### Returns\n\n- `x`: y\n"
	write("src/a.prose.md", strings.Replace(fn, "%s", "a", 1))
	write("src/sub/b.prose.md", strings.Replace(fn, "%s", "b", 1))
	write("src/.hidden/c.prose.md", strings.Replace(fn, "%s", "c", 1))
	write("src/node_modules/d.prose.md", strings.Replace(fn, "%s", "d", 1))
	write("src/notes.md", "# not a contract")
	p, err := LoadProject([]string{filepath.Join(dir, "src")}, hermetic())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := Compile(p)
	var rels []string
	for _, s := range m.Sources {
		rels = append(rels, s.Path)
	}
	if strings.Join(rels, ",") != "a.prose.md,sub/b.prose.md" {
		t.Errorf("sources %v", rels)
	}
	p, err = LoadProject([]string{filepath.Join(dir, "src", "sub", "b.prose.md"), filepath.Join(dir, "src", "a.prose.md")}, hermetic())
	if err != nil || len(p.Files) != 2 || p.Files[0].Rel != "a.prose.md" || p.Files[1].Rel != "sub/b.prose.md" {
		t.Errorf("explicit files: %v", err)
	}
	if _, err := LoadProject([]string{filepath.Join(dir, "nope")}, hermetic()); err == nil {
		t.Error("a missing path must be an error")
	}
	if _, err := LoadProject(nil, hermetic()); err == nil {
		t.Error("no path must be an error")
	}
}

func TestRenderGraphUnknownFormat(t *testing.T) {
	if _, err := RenderGraph(newManifest(), "svg"); err == nil {
		t.Error("unknown format must fail")
	}
}

// TestDotRenders feeds the dot output to Graphviz. It is skipped when dot is
// not installed, except under CI.
func TestDotRenders(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("graphviz `dot` is required under CI")
		}
		t.Skip("graphviz `dot` not installed")
	}
	for _, name := range []string{"wiring", "cycle", "ambiguous", "unsatisfied"} {
		m, _, _ := compileFixture(t, name)
		out, err := RenderGraph(m, "dot")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = bytes.NewReader(out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		svg, err := cmd.Output()
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s: dot -Tsvg failed: %v\n%s", name, err, stderr.String())
		}
	}
}

// TestCycleAndAmbiguityOneErrorEach: a cycle and an ambiguity each give
// exactly one error, naming the nodes involved.
func TestCycleAndAmbiguityOneErrorEach(t *testing.T) {
	for _, c := range []struct {
		fixture, code string
		names         []string
	}{
		{"cycle", CodeCycle, []string{"alpha", "beta", "gamma"}},
		{"ambiguous", CodeAmbiguous, []string{"brief", "sales", "support"}},
	} {
		m, diags, _ := compileFixture(t, c.fixture)
		var errs []Diagnostic
		for _, d := range diags {
			if d.Severity == SeverityError {
				errs = append(errs, d)
			}
		}
		if len(errs) != 1 || errs[0].Code != c.code {
			t.Fatalf("%s: errors %v, want one %s", c.fixture, errs, c.code)
		}
		for _, n := range c.names {
			if !strings.Contains(errs[0].Message, n) {
				t.Errorf("%s: message does not name %s: %s", c.fixture, n, errs[0].Message)
			}
		}
		if strings.Contains(errs[0].Message, "delta") {
			t.Errorf("the cycle message names delta, which is not on the cycle")
		}
		if c.code == CodeCycle && m.Topology.Acyclic {
			t.Error("acyclic must be false")
		}
	}
}

func TestArtifactsStayInDist(t *testing.T) {
	srcs := []Source{{Path: "a.prose.md", Data: []byte("---\nname: ../Evil Node\nkind: responsibility\nid: 01KDYAK348E48S248H248H248H\n---\n### Maintains\n\nMaterial: `x`. Postcondition: x is set.\n")}}
	m, _ := Compile(ParseSources(srcs, hermetic()))
	files, err := m.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	for path, data := range files {
		if strings.Contains(path, "..") || strings.Count(path, "/") != 2 || !strings.HasPrefix(path, "dist/") {
			t.Errorf("artifact path %q escapes dist/<kind>/", path)
		}
		if !bytes.Contains(data, []byte(`"node": "../Evil Node"`)) {
			t.Errorf("%s: %s", path, data)
		}
	}
}

func TestSetextHeadingsArePlainProse(t *testing.T) {
	f := ParseFile("t.prose.md", []byte("---\nname: a\nkind: function\n---\n\n### Returns\n\n- `x`: y\n\nSome closing words\n---\n\nMore\n===\n"))
	if len(f.Contracts) != 1 {
		t.Fatalf("a setext heading opened a node: %d contracts", len(f.Contracts))
	}
}

func TestProjectEncodesAsJSON(t *testing.T) {
	p := ParseSources([]Source{{Path: "a.prose.md", Data: []byte("---\nname: a\nkind: function\n---\n### Returns\n\n- `x`: y\n")}}, hermetic())
	if _, err := encodeJSON(p.Files); err != nil {
		t.Fatalf("files must encode (no pointer cycles): %v", err)
	}
}
