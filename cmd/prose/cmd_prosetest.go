package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

func testCommand() *cli.Command {
	return &cli.Command{
		Name:      "test",
		Usage:     "run kind: test contracts: fixtures in, the subject rendered in a scratch vault, each assertion judged by the model",
		ArgsUsage: "[PATH]",
		Description: "PATH is a test file or a directory of them (default: the current directory; --recursive\n" +
			"descends). Each test's subject is rendered as its ### Runtime says, in a scratch vault in a\n" +
			"temporary directory (never the project's vault), with its ### Fixtures published as the\n" +
			"inputs it subscribes to. Each ### Expects and ### Expects Not bullet is then judged by the\n" +
			"model (--model, $PROSE_MODEL, prose.yaml), by judgment, not string matching; the offline\n" +
			"engine judges only through a recorded replay (--model replay:FILE), and with no judge every\n" +
			"assertion is an error, never a pass. Prints a report per test and\n" +
			"`Results: N passed, M failed, K errors`; exits 1 when any test failed or erred.\n" +
			"See docs/runtime.md §Tests.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "find tests in subdirectories too"},
		},
		Action: runProseTest,
	}
}

// testDoc is prose test --json.
type testDoc struct {
	Tests  []*testResult `json:"tests"`
	Passed int           `json:"passed"`
	Failed int           `json:"failed"`
	Errors int           `json:"errors"`
	Judge  string        `json:"judge"`
}

type testResult struct {
	Name       string            `json:"name"`
	Source     string            `json:"source"`
	Subject    string            `json:"subject"`
	Result     string            `json:"result"` // pass, fail, error
	Error      string            `json:"error,omitempty"`
	Render     string            `json:"render,omitempty"` // the subject's disposition and why
	Assertions []assertionResult `json:"assertions"`
}

type assertionResult struct {
	Section  string `json:"section"` // expects, expects not
	Text     string `json:"text"`
	Result   string `json:"result"` // pass, fail, error
	Evidence string `json:"evidence,omitempty"`
}

func runProseTest(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErrorf("test takes one PATH (a test file or a directory)")
	}
	path := c.Args().First()
	if path == "" {
		path = "."
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageErrorf("test: %s does not exist: give a test file or a directory of *.prose.md files", path)
		}
		return fmt.Errorf("test: %w", err)
	}
	project, projectDir, v, err := testProject(c, abs, fi.IsDir())
	if err != nil {
		return err
	}
	if v != nil {
		defer v.Close()
	}
	m, diags := forme.Compile(project)
	if forme.HasErrors(diags) {
		printDiagnostics(c.App.ErrWriter, diags, true)
		return findings("test: the contracts do not compile (the errors above); fix them first")
	}
	contracts := project.Contracts()
	var tests []forme.TestSpec
	for _, ts := range m.Tests {
		src := testSourcePath(project, ts)
		if selected(abs, fi.IsDir(), c.Bool("recursive"), src) {
			tests = append(tests, ts)
		}
	}
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].Source < tests[j].Source })
	out := newOutput(c)
	if len(tests) == 0 {
		hint := ""
		if fi.IsDir() && !c.Bool("recursive") {
			hint = " (add --recursive to search subdirectories)"
		}
		return usageErrorf("test: no kind: test contract in %s%s", path, hint)
	}
	judge, judgeSpec, judgeErr := openJudge(c, v)
	doc := testDoc{Tests: []*testResult{}, Judge: judgeSpec}
	if judgeErr != nil && !out.json {
		fmt.Fprintf(c.App.ErrWriter, "test: %v\n", judgeErr)
		judgeErr = errors.New("no judge (see above): not judged")
	}
	for _, ts := range tests {
		if err := c.Context.Err(); err != nil {
			return err
		}
		var userConfig *vault.Config
		if v != nil {
			userConfig = v.Config()
		}
		tr := runOneTest(c, m, contracts, projectDir, userConfig, ts, judge, judgeErr)
		doc.Tests = append(doc.Tests, tr)
		switch tr.Result {
		case "pass":
			doc.Passed++
		case "fail":
			doc.Failed++
		default:
			doc.Errors++
		}
		if !out.json {
			printTestReport(c.App.Writer, tr)
		}
	}
	if !out.json {
		printTestSummary(c.App.Writer, &doc)
	}
	if err := out.emit(doc); err != nil {
		return err
	}
	if doc.Failed+doc.Errors > 0 {
		return findings("test: %d failed, %d errors", doc.Failed, doc.Errors)
	}
	return nil
}

// testProject loads the contracts a test run compiles: the vault's src/
// (and PATH when it lies outside it) inside a vault, else PATH's directory
// and everything below it. projectDir is where relative render paths are
// read from.
func testProject(c *cli.Context, abs string, isDir bool) (*forme.Project, string, *vault.Vault, error) {
	dir := abs
	if !isDir {
		dir = filepath.Dir(abs)
	}
	root := c.String("vault")
	if root == "" {
		if r, err := vault.Find(dir); err == nil {
			root = r
		}
	}
	if root != "" {
		v, err := openVaultAt(c, root)
		if err != nil {
			return nil, "", nil, err
		}
		src := filepath.Join(v.Root(), "src")
		paths := []string{}
		if _, err := os.Stat(src); err == nil {
			paths = append(paths, src)
		}
		if !within(src, abs) {
			paths = append(paths, abs)
		}
		p, err := forme.LoadProject(paths, forme.Options{Root: v.Root(), Hash: v.Algorithm()})
		if err != nil {
			v.Close()
			return nil, "", nil, err
		}
		return p, v.Root(), v, nil
	}
	src := projectSrc(dir)
	paths := []string{src}
	if !within(src, abs) {
		paths = append(paths, abs)
	}
	p, err := forme.LoadProject(paths, forme.Options{})
	if err != nil {
		return nil, "", nil, err
	}
	pd := src
	if filepath.Base(pd) == "src" {
		pd = filepath.Dir(pd)
	}
	return p, pd, nil, nil
}

// projectSrc is the contract directory of the project holding dir: the
// nearest directory at or above dir named src or holding src/, else dir.
func projectSrc(dir string) string {
	for d := dir; ; {
		if filepath.Base(d) == "src" {
			return d
		}
		if fi, err := os.Stat(filepath.Join(d, "src")); err == nil && fi.IsDir() {
			return filepath.Join(d, "src")
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// openVaultAt opens the vault at root read-only in spirit: prose test
// never writes to it.
func openVaultAt(c *cli.Context, root string) (*vault.Vault, error) {
	return vault.Open(root, vault.Options{})
}

// testSourcePath is the absolute path of a test's file.
func testSourcePath(p *forme.Project, ts forme.TestSpec) string {
	for _, f := range p.Files {
		if f.Rel == ts.Source {
			if a, err := filepath.Abs(f.Path); err == nil {
				return a
			}
		}
	}
	return ts.Source
}

func selected(path string, isDir, recursive bool, src string) bool {
	if !isDir {
		return src == path
	}
	if filepath.Dir(src) == path {
		return true
	}
	rel, err := filepath.Rel(path, src)
	return recursive && err == nil && !strings.HasPrefix(rel, "..")
}

// openJudge opens the model that judges assertions. The offline engine
// cannot judge: only a recorded replay (--model replay:FILE) stands in
// for a model offline.
func openJudge(c *cli.Context, v *vault.Vault) (*reactor.Judge, string, error) {
	choice, err := resolveModel(c, func() (string, error) {
		if v == nil {
			return "", nil
		}
		return v.Config().Model, nil
	})
	if err != nil {
		return nil, "", err
	}
	if choice.Spec == model.Offline {
		return nil, choice.Spec, errors.New("no judge: the offline engine cannot judge an assertion (the specification asks for judgment, not string matching); give a model with --model PROVIDER:NAME, $PROSE_MODEL or prose.yaml, or a recorded judge with --model replay:FILE")
	}
	cfg, err := modelConfig(c)
	if err != nil {
		return nil, choice.Spec, err
	}
	m, err := model.Open(choice.Spec, cfg)
	if err != nil {
		return nil, choice.Spec, fmt.Errorf("no judge: %v", err)
	}
	return &reactor.Judge{M: m}, choice.Spec, nil
}

// runOneTest renders ts's subject in a scratch vault with its fixtures as
// inputs and judges each assertion on what it published.
func runOneTest(c *cli.Context, m *forme.Manifest, contracts []*forme.Contract, projectDir string, userConfig *vault.Config, ts forme.TestSpec, judge *reactor.Judge, judgeErr error) *testResult {
	tr := &testResult{Name: ts.Name, Source: ts.Source, Subject: ts.Subject, Assertions: []assertionResult{}}
	fail := func(format string, args ...any) *testResult {
		tr.Result, tr.Error = "error", fmt.Sprintf(format, args...)
		return tr
	}
	subj := findSubject(contracts, ts.Subject)
	if subj == nil {
		return fail("subject %q is not among the contracts", ts.Subject)
	}
	tr.Subject = subj.Name
	if subj.Kind != forme.KindResponsibility && subj.Kind != forme.KindFunction {
		return fail("subject %s is a %s: a test runs a responsibility or a function", subj.Name, subj.Kind)
	}
	ctx := c.Context
	files, render, err := renderSubject(c, m, contracts, projectDir, subj.Name, ts.Fixtures, userConfig)
	tr.Render = render
	if err != nil {
		return fail("%v", err)
	}
	var contract string
	contract = reactor.ContractText(subj)
	judgeOne := func(section string, it forme.TestItem, negate bool) {
		text := it.Text
		if it.Name != "" {
			text = "`" + it.Name + "`: " + it.Text
		}
		ar := assertionResult{Section: section, Text: text}
		switch {
		case judgeErr != nil:
			ar.Result, ar.Evidence = "error", judgeErr.Error()
		default:
			verdict, _, err := judge.Judge(ctx, subj.Name, contract, files, text)
			switch {
			case err != nil:
				ar.Result, ar.Evidence = "error", receipt.FailureReason(err)
			case verdict.Holds != negate:
				ar.Result, ar.Evidence = "pass", verdict.Evidence
			default:
				ar.Result, ar.Evidence = "fail", verdict.Evidence
			}
		}
		tr.Assertions = append(tr.Assertions, ar)
	}
	for _, it := range ts.Expects {
		judgeOne("expects", it, false)
	}
	for _, it := range ts.ExpectsNot {
		judgeOne("expects not", it, true)
	}
	tr.Result = "pass"
	for _, a := range tr.Assertions {
		if a.Result == "error" && tr.Result == "pass" {
			tr.Result = "error"
		}
		if a.Result == "fail" {
			tr.Result = "fail"
		}
	}
	if len(tr.Assertions) == 0 {
		return fail("the test asserts nothing: add ### Expects or ### Expects Not bullets")
	}
	return tr
}

func findSubject(contracts []*forme.Contract, subject string) *forme.Contract {
	for _, c := range contracts {
		if c.Kind != forme.KindTest && strings.EqualFold(c.Name, subject) {
			return c
		}
	}
	if strings.ContainsAny(subject, "/\\") || strings.HasSuffix(subject, ".md") {
		for _, c := range contracts {
			if c.Kind != forme.KindTest && !c.Inline && c.File != nil && filepath.Base(c.File.Path) == filepath.Base(subject) {
				return c
			}
		}
	}
	return nil
}

// renderSubject mounts the subject and its producers in a scratch vault,
// publishes the fixtures as the producers' world-models, renders the
// subject and returns what it published.
func renderSubject(c *cli.Context, m *forme.Manifest, contracts []*forme.Contract, projectDir, subject string, fixtures []forme.TestItem, userConfig *vault.Config) (map[string][]byte, string, error) {
	ctx := c.Context
	tmp, err := os.MkdirTemp("", "prose-test-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)
	v, err := vault.Init(filepath.Join(tmp, "vault"), vault.InitOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("scratch vault: %w", err)
	}
	defer v.Close()
	data, err := m.JSON()
	if err != nil {
		return nil, "", err
	}
	files, _, err := activationFiles(v, m, data)
	if err != nil {
		return nil, "", fmt.Errorf("scratch vault: %w", err)
	}
	if _, err := v.CommitFiles(ctx, "prose test", "Activate manifest for a test\n", files); err != nil {
		return nil, "", fmt.Errorf("scratch vault: %w", err)
	}
	full, _, err := reactor.FromManifest(m, contracts)
	if err != nil {
		return nil, "", err
	}
	var nodes []reactor.Node
	edges := []reactor.Edge{}
	var payloads map[string]map[string]any
	if subj := findSubject(contracts, subject); subj != nil && subj.Kind == forme.KindFunction {
		// A function is no node: it is mounted as one for the test, reading
		// its fixtures (its parameters) from a fixtures producer, and what
		// it writes is what it returns.
		rt, _ := forme.ReadRuntime(subj)
		if rt.Render == "" {
			rt.Render = "model"
		}
		fn := reactor.Node{ID: subj.Name, ContractFingerprint: forme.ContractFingerprint(v.Algorithm(), subj),
			Runtime: reactor.Runtime{Render: rt.Render, Command: rt.Command, Model: rt.Model, Timeout: rt.Timeout, Env: rt.Env,
				Recording: rt.Recording, Contract: reactor.ContractText(subj)}}
		nodes = []reactor.Node{fn, {ID: fixturesNode, ContractFingerprint: "fixtures:" + subj.Name, Wake: receipt.WakeExternal}}
		edges = append(edges, reactor.Edge{Subscriber: subj.Name, Producer: fixturesNode, Facet: forme.AtomicFacet})
		payloads = map[string]map[string]any{}
		for _, f := range fixtures {
			if f.Name == "" {
				return nil, "", fmt.Errorf("fixture %q has no name: write - `name`: value", cutString(f.Text, 60))
			}
			if payloads[fixturesNode] == nil {
				payloads[fixturesNode] = map[string]any{}
			}
			payloads[fixturesNode][f.Name] = fixtureValue(f.Text)
		}
	} else {
		nodes = []reactor.Node{*full.Node(subject)}
		seen := map[string]bool{}
		for _, e := range full.Inputs(subject) {
			edges = append(edges, e)
			if !seen[e.Producer] {
				seen[e.Producer] = true
				p := full.Node(e.Producer)
				nodes = append(nodes, reactor.Node{ID: p.ID, ContractFingerprint: p.ContractFingerprint, Wake: receipt.WakeExternal})
			}
		}
		if payloads, err = fixturePayloads(m, full, subject, fixtures); err != nil {
			return nil, "", err
		}
	}
	g, err := reactor.NewGraph(nodes, edges)
	if err != nil {
		return nil, "", err
	}
	rs := &runtimeSet{set: &contractSet{vault: v, dir: projectDir}, graph: g, cli: c, config: userConfig}
	r, err := rs.reconciler()
	if err != nil {
		return nil, "", err
	}
	producers := make([]string, 0, len(payloads))
	for p := range payloads {
		producers = append(producers, p)
	}
	sort.Strings(producers)
	for _, p := range producers {
		dir := filepath.Join(tmp, "fixtures", published.EscapeNode(p))
		if err := writeFixtureFiles(dir, payloads[p]); err != nil {
			return nil, "", err
		}
		if _, err := r.Ingest(ctx, p, dir, nil); err != nil {
			return nil, "", fmt.Errorf("publish the fixtures of %s: %w", p, err)
		}
	}
	if len(producers) == 0 {
		if err := r.Wake(reactor.Seed{Node: subject, Source: receipt.WakeExternal, Why: "under test"}); err != nil {
			return nil, "", err
		}
	}
	rep, err := r.Drain(ctx)
	if err != nil {
		return nil, "", err
	}
	var o *reactor.Outcome
	for i := range rep.Outcomes {
		if rep.Outcomes[i].Node == subject {
			o = &rep.Outcomes[i]
		}
	}
	if o == nil {
		return nil, "", fmt.Errorf("the subject was not rendered (no fixture reached it)")
	}
	render := fmt.Sprintf("%s: %s", o.Disposition, o.Why)
	if o.Disposition == reactor.Failed {
		return nil, render, fmt.Errorf("the subject's render failed: %s", o.Why)
	}
	out, err := reactor.NewVaultStore(v, "prose test", nil).Files(subject)
	return out, render, err
}

// fixturePayloads maps each fixture to the producer of the subject it
// feeds: a fixture named after a facet the subject reads, after one of
// its ### Requires needs, or after a producer. Its value (JSON when it
// reads as JSON, else the text) is the file <facet>.json of that
// producer (<name>.json for an @atomic edge).
func fixturePayloads(m *forme.Manifest, g *reactor.Graph, subject string, fixtures []forme.TestItem) (map[string]map[string]any, error) {
	edges := g.Inputs(subject)
	out := map[string]map[string]any{}
	put := func(producer, key string, v any) {
		if out[producer] == nil {
			out[producer] = map[string]any{}
		}
		out[producer][key] = v
	}
	for _, f := range fixtures {
		if f.Name == "" {
			return nil, fmt.Errorf("fixture %q has no name: write - `name`: value", cutString(f.Text, 60))
		}
		v := fixtureValue(f.Text)
		matched := false
		for _, e := range edges {
			if e.Facet == f.Name || e.Producer+"."+e.Facet == f.Name {
				put(e.Producer, e.Facet, v)
				matched = true
			}
		}
		if !matched {
			for _, b := range m.Wiring {
				if b.Subscriber != subject || b.Need != f.Name {
					continue
				}
				for _, p := range b.Producers {
					key := p.Facet
					if key == forme.AtomicFacet {
						key = f.Name
					}
					put(p.Producer, key, v)
					matched = true
				}
			}
		}
		if !matched {
			for _, e := range edges {
				if e.Producer == f.Name {
					put(e.Producer, f.Name, v)
					matched = true
					break
				}
			}
		}
		if !matched {
			var ins []string
			for _, e := range edges {
				ins = append(ins, e.Producer+"."+e.Facet)
			}
			if len(ins) == 0 {
				ins = []string{"none"}
			}
			return nil, fmt.Errorf("fixture `%s` feeds no input of %s (its inputs: %s): name a facet, a ### Requires need or a producer", f.Name, subject, strings.Join(ins, ", "))
		}
	}
	return out, nil
}

// fixturesNode is the producer a function subject reads its fixtures
// from.
const fixturesNode = "fixtures"

// fixtureValue is a fixture's value: JSON when it reads as JSON, else its
// text (a YAML block marker, | or >, dropped).
func fixtureValue(text string) any {
	t := strings.TrimSpace(text)
	if dv, err := canon.Decode([]byte(strings.Trim(t, "`"))); err == nil {
		return dv
	}
	for _, mark := range []string{"|", ">"} {
		if strings.HasPrefix(t, mark+" ") || t == mark {
			t = strings.TrimSpace(t[len(mark):])
		}
	}
	return t
}

func writeFixtureFiles(dir string, values map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for k, v := range values {
		data, err := canon.Marshal(v)
		if err != nil {
			return err
		}
		name := published.EscapeNode(k) + ".json"
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func printTestReport(w io.Writer, tr *testResult) {
	passed := 0
	for _, a := range tr.Assertions {
		if a.Result == "pass" {
			passed++
		}
	}
	fmt.Fprintf(w, "# Test Report: %s\n\nSubject: %s\nResult: %s (%d/%d)\n", tr.Name, tr.Subject, strings.ToUpper(tr.Result), passed, len(tr.Assertions))
	if tr.Render != "" && tr.Error == "" {
		fmt.Fprintf(w, "Render: %s\n", tr.Render)
	}
	if tr.Error != "" {
		fmt.Fprintf(w, "Error: %s\n", tr.Error)
	}
	for _, section := range []string{"expects", "expects not"} {
		head := "## Assertions"
		if section == "expects not" {
			head = "## Negative Assertions"
		}
		first := true
		for _, a := range tr.Assertions {
			if a.Section != section {
				continue
			}
			if first {
				fmt.Fprintf(w, "\n%s\n\n", head)
				first = false
			}
			mark := map[string]string{"pass": "✓", "fail": "✗", "error": "!"}[a.Result]
			fmt.Fprintf(w, "%s %s\n", mark, a.Text)
			if a.Evidence != "" {
				label := "Observed"
				if a.Result == "error" {
					label = "Error"
				}
				fmt.Fprintf(w, "  %s: %s\n", label, a.Evidence)
			}
		}
	}
	fmt.Fprintln(w)
}

func printTestSummary(w io.Writer, doc *testDoc) {
	fmt.Fprintf(w, "Results: %d passed, %d failed, %d errors\n\n", doc.Passed, doc.Failed, doc.Errors)
	width := 0
	for _, tr := range doc.Tests {
		width = max(width, len(tr.Name))
	}
	for _, tr := range doc.Tests {
		passed := 0
		for _, a := range tr.Assertions {
			if a.Result == "pass" {
				passed++
			}
		}
		fmt.Fprintf(w, "%s %s %s (%d/%d)\n", tr.Name, strings.Repeat(".", width-len(tr.Name)+4), strings.ToUpper(tr.Result), passed, len(tr.Assertions))
		if tr.Error != "" {
			fmt.Fprintf(w, "  ! %s\n", tr.Error)
		}
		for _, a := range tr.Assertions {
			if a.Result != "pass" {
				fmt.Fprintf(w, "  %s %q — %s\n", map[string]string{"fail": "✗", "error": "!"}[a.Result], a.Text, a.Evidence)
			}
		}
	}
}
