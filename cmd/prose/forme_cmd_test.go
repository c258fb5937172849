package main

import (
	"github.com/prose-store/prose/internal/refdata"

	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/vault"
)

// contractHost controls what the contract checks see of the machine, as
// forme's golden tests do: HOME holds the skill `writing`, PATH holds one
// executable, fake-tool, and $PROSE_VAULT is unset. It returns a function
// that turns the temporary paths back into $HOME and $BIN, and the path of
// git (looked up before PATH changes), or "" when git is not installed.
func contractHost(t *testing.T) (clean func(string) string, git string) {
	t.Helper()
	git, _ = exec.LookPath("git")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "skills", "writing"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "fake-tool"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("PATH", bin)
	t.Setenv("PROSE_VAULT", "")
	os.Unsetenv("PROSE_VAULT")
	return func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, home, "$HOME"), bin, "$BIN")
	}, git
}

func contractFixtures(t *testing.T) string {
	return filepath.Join(refdata.RepoRoot(t), "fixtures", "contracts")
}

func goldenFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(refdata.RepoRoot(t), "forme", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCheckFixtures runs `prose check <project>` from fixtures/contracts and
// expects exactly the diagnostics of forme's golden files, with exit 1 when
// they hold an error.
func TestCheckFixtures(t *testing.T) {
	clean, _ := contractHost(t)
	dir := contractFixtures(t)
	t.Chdir(dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		name := e.Name()
		want := goldenFile(t, name+".diagnostics.txt")
		wantCode := 0
		if strings.Contains(want, ": error: ") {
			wantCode = 1
		}
		out, errs, code := prose(t, "check", name)
		// Skill searches name the project directory absolutely.
		got := strings.ReplaceAll(clean(out), dir+string(filepath.Separator), "")
		if got != want {
			t.Errorf("prose check %s: stdout differs from forme/testdata/golden/%s.diagnostics.txt\n--- got\n%s--- want\n%s", name, name, got, want)
		}
		if code != wantCode {
			t.Errorf("prose check %s: exit %d, want %d", name, code, wantCode)
		}
		if !strings.Contains(errs, "contract file") || strings.Count(errs, "\n") != 1 {
			t.Errorf("prose check %s: stderr should be one summary line, got %q", name, errs)
		}
	}
	if n < 5 {
		t.Fatalf("found %d contract fixtures", n)
	}

	// lint is check; --quiet keeps only errors and drops the summary.
	out, errs, code := prose(t, "lint", "sections", "--quiet")
	if code != 1 || errs != "" {
		t.Fatalf("lint --quiet: exit %d, stderr %q", code, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, ": error: ") {
			t.Errorf("--quiet printed a non-error: %s", l)
		}
	}
	// 4 errors plus the 7 retired sections of sections/retired.prose.md.
	if strings.Count(out, "\n") != 11 || strings.Count(out, "section_retired") != 7 {
		t.Errorf("lint --quiet sections: want the 11 errors, got\n%s", out)
	}

	// Several paths at once.
	out, _, code = prose(t, "check", "cycle", "ambiguous/brief.prose.md", "ambiguous/sales.prose.md", "ambiguous/support.prose.md")
	if code != 1 || !strings.Contains(out, "cycle/alpha.prose.md:2:1: error: cycle:") || !strings.Contains(out, "ambiguous/brief.prose.md:9:1: error: ambiguous:") {
		t.Errorf("check of several paths: exit %d\n%s", code, out)
	}
}

func TestCheckJSON(t *testing.T) {
	contractHost(t)
	t.Chdir(contractFixtures(t))
	type doc struct {
		Diagnostics []forme.Diagnostic `json:"diagnostics"`
		Errors      *int               `json:"errors"`
		Warnings    *int               `json:"warnings"`
		Infos       *int               `json:"infos"`
		Files       int                `json:"files"`
	}
	out, _, code := prose(t, "check", "cycle", "--json")
	var d doc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("check --json is not one JSON document: %v\n%s", err, out)
	}
	if code != 1 || d.Errors == nil || *d.Errors != 1 || *d.Warnings != 0 || d.Files != 4 || len(d.Diagnostics) != 1 {
		t.Fatalf("check --json cycle: exit %d\n%s", code, out)
	}
	got := d.Diagnostics[0]
	if got.Code != forme.CodeCycle || got.Severity != forme.SeverityError || got.File != "cycle/alpha.prose.md" || got.Line != 2 || got.Column != 1 {
		t.Errorf("diagnostic: %+v", got)
	}

	out, _, code = prose(t, "--json", "check", "sections")
	d = doc{}
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 || *d.Errors != 11 || *d.Warnings == 0 || *d.Infos == 0 {
		t.Fatalf("check --json sections: exit %d %v\n%s", code, err, out)
	}

	// No diagnostics at all: an empty array, not null.
	tmp := t.TempDir()
	writeFiles(t, tmp, map[string]string{"solo.prose.md": "---\nname: solo\nkind: function\n---\n\n# Solo\n\n### Returns\n\n- `text`: the answer\n"})
	out, _, code = prose(t, "check", tmp, "--json")
	if code != 0 || !strings.Contains(out, `"diagnostics": []`) || !strings.Contains(out, `"errors": 0`) {
		t.Fatalf("check --json clean: exit %d\n%s", code, out)
	}
}

func TestCheckUsage(t *testing.T) {
	contractHost(t)
	t.Chdir(t.TempDir()) // no vault here
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "no/such/dir"}, 2, "no/such/dir does not exist"},
		{[]string{"check"}, 2, "no PATH given and no vault here"},
		{[]string{"compile", "missing.prose.md"}, 2, "missing.prose.md does not exist"},
		{[]string{"compile", "a", "b"}, 2, "at most one PATH"},
		{[]string{"compile", "--activate", "--check"}, 2, "exclude each other"},
		{[]string{"graph", "--format", "svg"}, 2, "--format must be one of dot, mermaid, json"},
		{[]string{"graph", "--json", "--format", "dot"}, 2, "--json prints JSON"},
		{[]string{"id", "--count", "0"}, 2, "--count must be between"},
		{[]string{"id", "x.prose.md"}, 2, "without --write"},
		{[]string{"id", "--write"}, 2, "needs at least one FILE"},
		{[]string{"id", "--write", "gone.prose.md"}, 2, "gone.prose.md does not exist"},
		{[]string{"check", "--vault", t.TempDir()}, 1, "not a prose vault"},
	}
	for _, c := range cases {
		out, errs, code := prose(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("prose %s: exit %d, stderr %q; want exit %d containing %q (stdout %q)", strings.Join(c.args, " "), code, errs, c.code, c.want, out)
		}
	}
}

func TestContractCommandsHelp(t *testing.T) {
	for cmd, flags := range map[string][]string{
		"check":   {"[PATH…]", "docs/diagnostics.md", "Exit status"},
		"compile": {"--activate", "--check", "--out DIR", "manifest.next.json", ".git/info/exclude"},
		"graph":   {"--format FORMAT", "dot, mermaid, json", "Exit status"},
		"id":      {"--write", "--count", "Crockford"},
	} {
		out := mustProse(t, cmd, "--help")
		for _, f := range flags {
			if !strings.Contains(out, f) {
				t.Errorf("prose %s --help lacks %q:\n%s", cmd, f, out)
			}
		}
	}
	out := mustProse(t, "--help")
	for _, c := range []string{"check, lint", "compile", "graph", "id"} {
		if !strings.Contains(out, c) {
			t.Errorf("prose --help lacks %q", c)
		}
	}
}

func TestGraphFormats(t *testing.T) {
	clean, _ := contractHost(t)
	t.Chdir(contractFixtures(t))
	ext := map[string]string{"dot": "dot", "mermaid": "mmd", "json": "graph.json"}
	for _, name := range []string{"wiring", "cycle", "ambiguous", "unsatisfied"} {
		wantCode := 0
		if strings.Contains(goldenFile(t, name+".diagnostics.txt"), ": error: ") {
			wantCode = 1
		}
		for _, format := range forme.GraphFormats {
			out, errs, code := prose(t, "graph", name, "--format", format)
			if want := goldenFile(t, name+"."+ext[format]); clean(out) != want {
				t.Errorf("prose graph %s --format %s differs from forme/testdata/golden/%s.%s\n--- got\n%s", name, format, name, ext[format], clean(out))
			}
			if code != wantCode {
				t.Errorf("prose graph %s --format %s: exit %d, want %d", name, format, code, wantCode)
			}
			if wantCode == 1 && !strings.Contains(errs, ": error: ") {
				t.Errorf("prose graph %s: the errors should be on stderr: %q", name, errs)
			}
		}
	}
	// The default is dot; --json is --format json.
	if out, _, _ := prose(t, "graph", "cycle"); !strings.Contains(out, "digraph prose {") {
		t.Errorf("default graph format is not dot:\n%s", out)
	}
	out, _, code := prose(t, "graph", "cycle", "--json")
	var g struct {
		Topology struct {
			Edges []forme.Edge `json:"edges"`
		} `json:"topology"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != 1 || len(g.Topology.Edges) != 4 {
		t.Errorf("graph --json: exit %d %v\n%s", code, err, out)
	}
}

func TestIDMints(t *testing.T) {
	out := mustProse(t, "id")
	if id := strings.TrimSpace(out); !forme.IsCanonicalID(id) || len(id) != forme.IDLen || strings.Count(out, "\n") != 1 {
		t.Fatalf("prose id: %q", out)
	}
	out = mustProse(t, "id", "--count", "50")
	ids := strings.Fields(out)
	if len(ids) != 50 {
		t.Fatalf("--count 50 printed %d ids", len(ids))
	}
	for i, id := range ids {
		if !forme.IsCanonicalID(id) {
			t.Errorf("not canonical: %s", id)
		}
		if i > 0 && id <= ids[i-1] {
			t.Errorf("ids not increasing: %s then %s", ids[i-1], id)
		}
	}
	out = mustProse(t, "id", "-n", "3", "--json")
	var arr []string
	if err := json.Unmarshal([]byte(out), &arr); err != nil || len(arr) != 3 || !forme.IsCanonicalID(arr[2]) {
		t.Fatalf("id --json: %v %s", err, out)
	}
	if out := mustProse(t, "id", "--quiet"); !forme.IsCanonicalID(strings.TrimSpace(out)) {
		t.Errorf("--quiet must not hide the id: %q", out)
	}
}

func TestIDWrite(t *testing.T) {
	contractHost(t)
	dir := t.TempDir()
	noID := "---\nname: keeper\nkind: responsibility\n---\n\n# Keeper\n\n### Maintains\n\nThe kept things.\n"
	has := "---\nname: holder\nkind: responsibility\nid: 01KDYAK349E8HA48H248H248H2\n---\n\n# Holder\n\n### Maintains\n\nHeld.\n"
	fn := "---\nname: helper\nkind: function\n---\n\n# Helper\n\n### Returns\n\n- `x`: y\n"
	writeFiles(t, dir, map[string]string{
		"keeper.prose.md": noID, "holder.prose.md": has, "helper.prose.md": fn,
		"README.md": "# not a contract\n", "crlf.prose.md": strings.ReplaceAll(noID, "\n", "\r\n"),
	})
	if err := os.Chmod(filepath.Join(dir, "keeper.prose.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	out, errs, code := prose(t, "id", "--write", "keeper.prose.md", "holder.prose.md", "helper.prose.md", "crlf.prose.md")
	if code != 0 {
		t.Fatalf("id --write: exit %d\n%s%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "keeper.prose.md: added id ") ||
		lines[1] != "holder.prose.md: already has an id" ||
		!strings.HasPrefix(lines[2], "helper.prose.md: kind: function takes no id") ||
		!strings.HasPrefix(lines[3], "crlf.prose.md: added id ") {
		t.Fatalf("id --write output:\n%s", out)
	}
	id := strings.TrimPrefix(lines[0], "keeper.prose.md: added id ")
	if !forme.IsCanonicalID(id) {
		t.Fatalf("added id %q is not canonical", id)
	}
	data, _ := os.ReadFile("keeper.prose.md")
	if want := strings.Replace(noID, "kind: responsibility\n", "kind: responsibility\nid: "+id+"\n", 1); string(data) != want {
		t.Errorf("keeper.prose.md after --write:\n%s", data)
	}
	if st, _ := os.Stat("keeper.prose.md"); st.Mode().Perm() != 0o600 {
		t.Errorf("--write changed the file mode to %v", st.Mode().Perm())
	}
	data, _ = os.ReadFile("crlf.prose.md")
	if !bytes.Contains(data, []byte("\r\nid: ")) || bytes.Count(data, []byte("\n")) != bytes.Count(data, []byte("\r\n")) {
		t.Errorf("crlf.prose.md lost its line endings:\n%q", data)
	}
	for _, f := range []string{"holder.prose.md", "helper.prose.md"} {
		data, _ := os.ReadFile(f)
		if want := map[string]string{"holder.prose.md": has, "helper.prose.md": fn}[f]; string(data) != want {
			t.Errorf("%s was changed", f)
		}
	}
	// The check no longer warns about the missing id.
	out, _, _ = prose(t, "check", "keeper.prose.md")
	if strings.Contains(out, "id_missing") {
		t.Errorf("id_missing after --write:\n%s", out)
	}
	// Again: nothing left to do.
	out = mustProse(t, "id", "--write", "keeper.prose.md")
	if out != "keeper.prose.md: already has an id\n" {
		t.Errorf("second --write: %q", out)
	}
	// A file that is not a contract fails, naming it; the others still get ids.
	writeFiles(t, filepath.Join(dir, "more"), map[string]string{"new.prose.md": noID})
	out, errs, code = prose(t, "id", "--write", "README.md", "more/new.prose.md")
	if code != 1 || !strings.Contains(errs, "README.md: not a contract") || !strings.Contains(out, "more/new.prose.md: added id ") {
		t.Errorf("id --write README.md: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if data, _ := os.ReadFile("README.md"); string(data) != "# not a contract\n" {
		t.Error("README.md was changed")
	}
	out, _, code = prose(t, "id", "--write", "README.md", "--json")
	var res []map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || len(res) != 1 || res[0]["error"] == nil {
		t.Errorf("id --write --json: exit %d %v\n%s", code, err, out)
	}
}

// Two responsibilities: report reads tickets.open.
func contractSources(t *testing.T) map[string]string {
	t.Helper()
	gen := &forme.IDGenerator{}
	a, _ := gen.Next()
	b, _ := gen.Next()
	return map[string]string{
		"src/tickets.prose.md": "---\nname: tickets\nkind: responsibility\nid: " + a + "\n---\n\n# Tickets\n\n" +
			"### Maintains\n\nThe tickets. Material: `tickets` and each ticket's `status`. The `updated_at` stamp is immaterial.\n\n" +
			"#### open\n\nThe open tickets.\n\n#### closed\n\nThe closed tickets.\n\n### Continuity\n\n- self-driven: every hour\n",
		"src/report.prose.md": "---\nname: report\nkind: responsibility\nid: " + b + "\n---\n\n# Report\n\n" +
			"### Requires\n\n- `tickets.open`: the open tickets\n\n### Maintains\n\nA weekly report. Material: `summary`.\n\n" +
			"### Continuity\n\n- input-driven\n",
	}
}

// commitSources commits files into the vault as a user's edit of src/ would.
func commitSources(t *testing.T, vdir string, files map[string]string) {
	t.Helper()
	v, err := vault.Open(vdir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	m := map[string][]byte{}
	for p, c := range files {
		m[p] = []byte(c)
	}
	if _, err := v.CommitFiles(context.Background(), "test", "Edit contracts\n", m); err != nil {
		t.Fatal(err)
	}
}

func gitOut(t *testing.T, git, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command(git, append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestCompileActivateCheckInVault(t *testing.T) {
	_, git := contractHost(t)
	if git == "" {
		needGit(t) // skips, or fails under CI
	}
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	srcs := contractSources(t)
	commitSources(t, vdir, srcs)
	t.Chdir(vdir)
	clean := func(when string) {
		t.Helper()
		if st := gitOut(t, git, vdir, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Fatalf("git status after %s is not clean:\n%s", when, st)
		}
	}

	out, errs, code := prose(t, "check")
	if code != 0 || out != "" || !strings.Contains(errs, "2 contract files: 0 errors, 0 warnings, 0 infos") {
		t.Fatalf("check in the vault: exit %d\n%s%s", code, out, errs)
	}

	// compile writes dist/manifest.next.json, not committed, not in git status.
	out = mustProse(t, "compile")
	if out != "wrote dist/manifest.next.json (2 nodes, 1 edge)\n" {
		t.Fatalf("compile: %q", out)
	}
	next, err := os.ReadFile(filepath.Join(vdir, "dist", "manifest.next.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m forme.Manifest
	if err := json.Unmarshal(next, &m); err != nil || len(m.Sources) != 2 || m.Sources[0].Path != "src/report.prose.md" {
		t.Fatalf("manifest.next.json: %v\n%s", err, next)
	}
	if !strings.HasPrefix(m.Topology.Nodes[0].ContractFingerprint, "blake3:") {
		t.Errorf("contract fingerprint: %s", m.Topology.Nodes[0].ContractFingerprint)
	}
	clean("compile")
	if _, err := os.Stat(filepath.Join(vdir, "dist", "manifest.active.json")); err == nil {
		t.Fatal("compile without --activate wrote the active manifest")
	}

	_, errs, code = prose(t, "compile", "--check")
	if code != 1 || !strings.Contains(errs, "no manifest is active") || !strings.Contains(errs, "prose compile --activate") {
		t.Fatalf("compile --check before activation: exit %d %q", code, errs)
	}

	// --activate commits the manifest and its artifacts in one commit.
	out = mustProse(t, "compile", "--activate")
	if !strings.Contains(out, "activated dist/manifest.active.json in ") {
		t.Fatalf("compile --activate: %q", out)
	}
	if subj := gitOut(t, git, vdir, "log", "-1", "--format=%s"); subj != "Activate manifest (2 nodes, 1 edge)\n" {
		t.Errorf("activation commit subject %q", subj)
	}
	files := gitOut(t, git, vdir, "show", "--name-only", "--format=", "HEAD")
	for _, f := range []string{"dist/manifest.active.json", "dist/canonicalizers/report.json", "dist/canonicalizers/tickets.json", "dist/postconditions/report.json"} {
		if !strings.Contains(files, f+"\n") {
			t.Errorf("activation commit lacks %s:\n%s", f, files)
		}
	}
	if active, _ := os.ReadFile(filepath.Join(vdir, "dist", "manifest.active.json")); !bytes.Equal(active, next) {
		t.Error("the active manifest differs from manifest.next.json")
	}
	clean("compile --activate")
	mustProse(t, "compile", "--check")
	out = mustProse(t, "compile", "--activate")
	if !strings.Contains(out, "already current") {
		t.Errorf("second activation: %q", out)
	}
	if n := strings.Count(gitOut(t, git, vdir, "log", "--format=%s"), "Activate manifest"); n != 1 {
		t.Errorf("%d activation commits, want 1", n)
	}

	// A contract change makes the active manifest stale.
	srcs["src/report.prose.md"] = strings.Replace(srcs["src/report.prose.md"], "A weekly report.", "A daily report.", 1)
	commitSources(t, vdir, srcs)
	_, errs, code = prose(t, "compile", "--check")
	if code != 1 || !strings.Contains(errs, "stale") || !strings.Contains(errs, "run `prose compile --activate`") {
		t.Fatalf("compile --check after a change: exit %d %q", code, errs)
	}
	out, _, code = prose(t, "compile", "--check", "--json")
	if code != 1 || !strings.Contains(out, `"current": false`) {
		t.Errorf("compile --check --json: exit %d\n%s", code, out)
	}
	mustProse(t, "compile", "--activate", "--quiet")
	mustProse(t, "compile", "--check")
	clean("a second activation")

	// Activating uncommitted contracts says so; it never commits them.
	report := filepath.Join(vdir, "src", "report.prose.md")
	if err := os.WriteFile(report, []byte(strings.Replace(srcs["src/report.prose.md"], "daily", "hourly", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = prose(t, "compile", "--activate")
	if code != 0 || !strings.Contains(errs, "uncommitted contracts (src/report.prose.md)") {
		t.Fatalf("activation of an uncommitted contract: exit %d\n%s%s", code, out, errs)
	}
	if st := gitOut(t, git, vdir, "status", "--porcelain"); st != " M src/report.prose.md\n" {
		t.Errorf("git status after activating an uncommitted contract:\n%s", st)
	}
	if err := os.WriteFile(report, []byte(srcs["src/report.prose.md"]), 0o644); err != nil {
		t.Fatal(err)
	}
	mustProse(t, "compile", "--activate", "--quiet")
	clean("a third activation")

	// Errors: nothing written, exit 1.
	os.Remove(filepath.Join(vdir, "dist", "manifest.next.json"))
	srcs["src/tickets.prose.md"] = strings.Replace(srcs["src/tickets.prose.md"], "### Maintains", "### Requires\n\n- `report`: the report\n\n### Maintains", 1)
	commitSources(t, vdir, srcs)
	out, _, code = prose(t, "compile", "--activate")
	if code != 1 || !strings.Contains(out, ": error: cycle:") {
		t.Fatalf("compile with a cycle: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(vdir, "dist", "manifest.next.json")); err == nil {
		t.Error("compile wrote manifest.next.json despite errors")
	}
	if n := strings.Count(gitOut(t, git, vdir, "log", "--format=%s"), "Activate manifest"); n != 4 {
		t.Errorf("%d activation commits after a failed activation, want 4", n)
	}
	_, _, code = prose(t, "compile", "--check")
	if code != 1 {
		t.Errorf("compile --check with errors: exit %d", code)
	}
	clean("a failed compile")
	mustProse(t, "fsck")
	if out := gitOut(t, git, vdir, "fsck", "--strict"); strings.Contains(out, "error") {
		t.Errorf("git fsck --strict: %s", out)
	}
}

// TestActivationKeepsPublishedSpecs: a node published before its contract's
// spec is activated keeps the spec its receipts were computed with, so fsck
// still verifies it.
func TestActivationKeepsPublishedSpecs(t *testing.T) {
	_, git := contractHost(t)
	if git == "" {
		needGit(t) // skips, or fails under CI
	}
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	commitSources(t, vdir, contractSources(t))
	render := filepath.Join(tmp, "render")
	// updated_at is material without a spec and immaterial under the
	// contract's: re-fingerprinting under the new spec would not match.
	writeFiles(t, render, map[string]string{"open/a.json": `{"status": "open"}`, "updated_at.json": "7"})
	mustProse(t, "--vault", vdir, "publish", "tickets", render)

	out := mustProse(t, "--vault", vdir, "compile", "--activate", "--json")
	var doc struct {
		KeptSpecs []string `json:"kept_specs"`
		Commit    string   `json:"commit"`
		Written   string   `json:"written"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Commit == "" || strings.Join(doc.KeptSpecs, ",") != "tickets" {
		t.Fatalf("compile --activate --json: %v\n%s", err, out)
	}
	files := gitOut(t, git, vdir, "show", "--name-only", "--format=", "HEAD")
	if strings.Contains(files, "dist/canonicalizers/tickets.json") || !strings.Contains(files, "dist/canonicalizers/report.json") {
		t.Errorf("activation commit files:\n%s", files)
	}
	mustProse(t, "--vault", vdir, "fsck")
	if st := gitOut(t, git, vdir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// TestCompileOutsideVault: a PATH outside any vault compiles into the
// project's dist/ (the parent of src/), or --out.
func TestCompileOutsideVault(t *testing.T) {
	contractHost(t)
	proj := filepath.Join(t.TempDir(), "proj")
	writeFiles(t, proj, contractSources(t))
	out := mustProse(t, "compile", filepath.Join(proj, "src"))
	if !strings.Contains(out, filepath.Join(proj, "dist", "manifest.next.json")) {
		t.Errorf("compile outside a vault: %q", out)
	}
	data, err := os.ReadFile(filepath.Join(proj, "dist", "manifest.next.json"))
	if err != nil || !bytes.Contains(data, []byte(`"path": "report.prose.md"`)) {
		t.Fatalf("manifest.next.json: %v\n%s", err, data)
	}
	outDir := filepath.Join(t.TempDir(), "build")
	mustProse(t, "compile", filepath.Join(proj, "src", "tickets.prose.md"), "--out", outDir)
	if _, err := os.Stat(filepath.Join(outDir, "manifest.next.json")); err != nil {
		t.Error(err)
	}
	_, errs, code := prose(t, "compile", filepath.Join(proj, "src"), "--activate")
	if code != 2 || !strings.Contains(errs, "--activate needs a vault") {
		t.Errorf("--activate outside a vault: exit %d %q", code, errs)
	}

	// Errors write nothing.
	bad := filepath.Join(t.TempDir(), "bad")
	writeFiles(t, bad, map[string]string{"x.prose.md": "no frontmatter\n"})
	out, _, code = prose(t, "compile", bad)
	if code != 1 || !strings.Contains(out, "frontmatter_missing") {
		t.Errorf("compile with errors: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(bad, "dist")); err == nil {
		t.Error("compile with errors created dist/")
	}
}

// TestAgentObservatoryThroughTheCLI: the reference example checks clean and
// wires the reference's 13 edges.
func TestAgentObservatoryThroughTheCLI(t *testing.T) {
	shared := refdata.Shared(t)
	contractHost(t)
	dir := filepath.Join(shared, "reference-docs", "openprose", "examples", "packages", "reactor-cli", "examples", "agent-observatory")
	out, errs, code := prose(t, "check", dir)
	if code != 0 || strings.Contains(out, ": error: ") {
		t.Fatalf("check agent-observatory: exit %d\n%s%s", code, out, errs)
	}
	out = mustProse(t, "graph", dir, "--format", "json")
	var g struct {
		Topology struct {
			Edges   []forme.Edge `json:"edges"`
			Acyclic bool         `json:"acyclic"`
		} `json:"topology"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || len(g.Topology.Edges) != 13 || !g.Topology.Acyclic {
		t.Fatalf("graph --format json: %d edges, %v\n%s", len(g.Topology.Edges), err, out)
	}
}
