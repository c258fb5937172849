package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// wiki meta prints the meta as YAML, as the meta block stores it, never Go
// map syntax; what it prints parses back to the meta --json gives.
func TestWikiMetaPrintsYAML(t *testing.T) {
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/a", "--template", "note", "--tag", "x", "--tag", "y", "--meta", `obj:={"a":"b"}`)
	out := mustProse(t, "--vault", vdir, "wiki", "meta", "ops/a")
	if strings.Contains(out, "map[") || strings.Contains(out, "[x y]") || !strings.Contains(out, "tags:\n  - x\n  - y\n") || !strings.Contains(out, "obj:\n  a: b\n") {
		t.Fatalf("wiki meta:\n%s", out)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("wiki meta is not YAML: %v\n%s", err, out)
	}
	want := jsonOf(t, mustProse(t, "--vault", vdir, "--json", "wiki", "meta", "ops/a"))["meta"].(map[string]any)
	if len(got) != len(want) || got["title"] != want["title"] {
		t.Fatalf("wiki meta YAML %v, --json %v", got, want)
	}
}

// A bare model name (--model gpt-4) is answered with PROVIDER:NAME and the
// providers listed, not "write gpt-4:NAME".
func TestBareModelNameSuggestsProviders(t *testing.T) {
	_, errs, code := prose(t, "--model", "gpt-4", "enrich", "--all", "--vault", t.TempDir())
	out, _, _ := prose(t, "--model", "gpt-4", "doctor")
	for _, s := range []string{errs, out} {
		if strings.Contains(s, "gpt-4:NAME") {
			t.Errorf("suggests gpt-4:NAME: %s", s)
		}
	}
	if !strings.Contains(out, "write PROVIDER:NAME, e.g. openai:gpt-4; the providers are anthropic, ") || !strings.Contains(out, "openai-chat") {
		t.Errorf("doctor --model gpt-4 (exit %d): %s %s", code, out, errs)
	}
}

// prose init with no DIR refuses in a non-empty directory and suggests
// `prose init .`, which makes a vault of it; a directory holding a git
// repository is refused with what to do.
func TestInitWithoutDirRefusesANonEmptyDirectory(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	t.Chdir(dir)
	writeFiles(t, filepath.Join(dir, "notes"), map[string]string{"a.md": "mine"})
	_, errs, code := prose(t, "init")
	if code != 2 || !strings.Contains(errs, "`prose init .`") {
		t.Fatalf("init in a non-empty directory: exit %d %q", code, errs)
	}
	if _, _, c := prose(t, "log", "--vault", dir); c == 0 {
		t.Fatal("the refused init made a vault")
	}
	mustProse(t, "init", ".")
	mustProse(t, "log", "--vault", dir)
	_, errs, code = prose(t, "init", dir)
	if code != 1 || !strings.Contains(errs, "already a prose vault") {
		t.Fatalf("init of a vault: exit %d %q", code, errs)
	}
	empty := filepath.Join(dir, "notes")
	gitIn(t, empty, "init", "-q")
	_, errs, code = prose(t, "init", empty)
	if code != 1 || !strings.Contains(errs, "already a git repository") || !strings.Contains(errs, "`prose init DIR` with a new directory") {
		t.Fatalf("init of a git repository: exit %d %q", code, errs)
	}
}

// wiki find: ** crosses folders, and a pattern without / matches the base
// name, so '*sev*' finds a page deep in the tree; help says so.
func TestWikiFindGlobs(t *testing.T) {
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	for _, p := range []string{"ops/incidents/sev1", "ops/runbooks/deploy", "ml/attention"} {
		mustProse(t, "--vault", vdir, "wiki", "new", p, "--template", "note")
	}
	for pattern, want := range map[string][]string{
		"*sev*":        {"ops/incidents/sev1.html"},
		"ops/**":       {"ops/incidents/sev1.html", "ops/runbooks/deploy.html"},
		"**/dep*":      {"ops/runbooks/deploy.html"},
		"ops/*/dep?oy": {"ops/runbooks/deploy.html"},
	} {
		doc := jsonOf(t, mustProse(t, "--vault", vdir, "--json", "wiki", "find", pattern))
		got := map[string]bool{}
		for _, p := range doc["pages"].([]any) {
			got[p.(map[string]any)["path"].(string)] = true
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("wiki find %q: %v lacks %s", pattern, got, w)
			}
		}
		if got["ml/attention.html"] {
			t.Errorf("wiki find %q matched ml/attention.html", pattern)
		}
	}
	if help := mustProse(t, "wiki", "find", "--help"); !strings.Contains(help, "** crosses folders") || !strings.Contains(help, "without / matches the page's base name") {
		t.Errorf("wiki find --help:\n%s", help)
	}
}

// The log and commit summary lines of the wiki say what happened to pages
// (created, changed, removed), not which facets moved; other nodes keep
// their moved facets.
func TestWikiSummaryLinesNamePages(t *testing.T) {
	requireGitCLI(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/a", "--template", "note")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "ops/a", "body", "--content", "<p>x</p>")
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/b", "--template", "note")
	mustProse(t, "--vault", vdir, "wiki", "rm", "ops/b")
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"x.json": `{}`})
	mustProse(t, "--vault", vdir, "publish", "node.one", src)
	log := mustProse(t, "--vault", vdir, "log")
	for _, want := range []string{"wiki  1 page created: ops/a.html", "wiki  1 page changed: ops/a.html", "wiki  1 page removed: ops/b.html", "node.one  moved @atomic"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "wiki  moved") {
		t.Errorf("log says moved for the wiki:\n%s", log)
	}
	out, err := exec.Command("git", "-C", vdir, "log", "--format=%s", "-n", "3").Output()
	if err != nil || !strings.Contains(string(out), "wiki: rendered (1 page removed: ops/b.html)") {
		t.Errorf("commit subjects: %v\n%s", err, out)
	}
}

// Search's score column lines up whatever the length of the paths.
func TestSearchScoreColumnAligns(t *testing.T) {
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	long := "operations/incidents/postmortems/a-rather-long-page-name"
	for _, p := range []string{long, "ml/short"} {
		mustProse(t, "--vault", vdir, "wiki", "new", p, "--template", "note")
		mustProse(t, "--vault", vdir, "wiki", "write-slot", p, "body", "--content", "<p>canary canary rollout</p>")
	}
	out := mustProse(t, "--vault", vdir, "wiki", "search", "canary")
	var cols []int
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "    ") || l == "" {
			continue
		}
		// The score ends where two spaces and the title start.
		i := strings.LastIndex(l, "  ")
		cols = append(cols, i)
	}
	if len(cols) != 2 || cols[0] != cols[1] {
		t.Fatalf("score columns at %v:\n%s", cols, out)
	}
}

// graph's diagnostics are said once when stdout and stderr are one
// destination (a terminal, or 2>&1 into a file): the graph carries them as
// comments.
func TestGraphDiagnosticsOnce(t *testing.T) {
	needGit(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	writeFiles(t, filepath.Join(vdir, "src"), map[string]string{"a.prose.md": "---\nname: a\nkind: responsibility\n---\n\n### Maintains\n\nthe a things\n\n### Requires\n\n- nothing-provides-this\n"})
	for _, format := range []string{"mermaid"} {
		f, err := os.Create(filepath.Join(tmp, "out-"+format))
		if err != nil {
			t.Fatal(err)
		}
		code := run([]string{"prose", "--vault", vdir, "graph", "--format", format}, f, f)
		f.Close()
		data, _ := os.ReadFile(f.Name())
		if n := strings.Count(string(data), "unsatisfied"); code != 1 || n != 1 {
			t.Errorf("graph --format %s into one file: exit %d, the diagnostic %d times:\n%s", format, code, n, data)
		}
		// The summary counts in the singular where there is one.
		if !strings.Contains(string(data), "prose graph: 1 node, 0 edges, 1 error, 1 warning, 0 infos") {
			t.Errorf("graph --format %s: the summary line does not count in the singular:\n%s", format, data)
		}
	}
	// Apart, stderr still has them (for a graph piped into dot).
	_, errs, _ := prose(t, "--vault", vdir, "graph", "--format", "mermaid")
	if !strings.Contains(errs, "unsatisfied") {
		t.Errorf("graph stderr lacks the diagnostic: %s", errs)
	}
}

// The empty-source error says what to do once.
func TestEmptySourceErrorSaysItOnce(t *testing.T) {
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	empty := filepath.Join(t.TempDir(), "empty.md")
	os.WriteFile(empty, nil, 0o644)
	_, errs, code := prose(t, "--vault", vdir, "ingest", empty)
	if code != 1 || strings.Count(errs, "leave") != 1 || !strings.Contains(errs, "the source is empty") {
		t.Fatalf("ingest of an empty source: exit %d %q", code, errs)
	}
}
