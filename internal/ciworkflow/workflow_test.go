package ciworkflow

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rhysd/actionlint"
)

const (
	workflowFile = "../../docs/examples/prose-review.yml"
	ciDoc        = "../../docs/ci.md"
	repoRoot     = "../.."
	module       = "github.com/prose-store/prose"
	commentMax   = 65536 // GitHub's limit for a comment body
)

// TestWorkflowLints: the example workflow passes actionlint — the
// workflow's schema, its expressions and contexts, the actions' inputs,
// and (with shellcheck installed, as under CI) the shell of every run:
// step.
func TestWorkflowLints(t *testing.T) {
	content, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	opts := &actionlint.LinterOptions{}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	} else if os.Getenv("CI") == "true" {
		t.Fatal("shellcheck is required under CI (apt-get install shellcheck)")
	} else {
		t.Log("shellcheck not installed: the run: scripts are not shell-checked")
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(filepath.Base(workflowFile), content, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", filepath.Base(workflowFile), e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestDocShowsTheWorkflow: docs/ci.md shows the workflow file as it is,
// so what a reader copies is what the tests check.
func TestDocShowsTheWorkflow(t *testing.T) {
	content, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(ciDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```yaml\n"+string(content)+"```\n")) {
		t.Errorf("docs/ci.md does not show %s as it is, in a ```yaml block: copy the file into the document again", workflowFile)
	}
}

// TestWorkflowOnAPullRequest runs the workflow's steps as a runner would
// — the checkout emulated, every run: script through bash -eo pipefail
// with the workflow's env and the GitHub contexts it reads, `gh` replaced
// by a recorder — against a fixture pull request: a vault whose base
// branch holds contracts, an activated manifest and an ingest, and a pull
// request branch that ingests two more sources and edits a slot. Prose is
// installed by the workflow's own `go install`, from a module proxy on
// disk serving this working tree. Every step passes and the comment posted
// is the markdown diff of what the pull request changed. A second pull
// request that commits a hand edit of a page with plain git fails at
// `prose fsck` (exit 1), skips the steps after it, and still posts its
// diff.
func TestWorkflowOnAPullRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("installs prose through go install and runs the workflow")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git not installed")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	wf := parseWorkflow(t)
	tmp := t.TempDir()
	prose := filepath.Join(tmp, "fixture-bin", "prose")
	if out, err := exec.Command("go", "build", "-o", prose, filepath.Join(repoRoot, "cmd", "prose")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fx := fixtureRepo(t, git, prose, tmp)
	modcache := goEnv(t, "GOMODCACHE")
	proxy := moduleProxy(t, git, tmp, modcache)

	home := filepath.Join(tmp, "home")
	gopath := filepath.Join(tmp, "gopath")
	ghLog := filepath.Join(tmp, "gh")
	for _, d := range []string{home, gopath, ghLog} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shim := fakeGH(t, tmp)
	r := &runner{t: t, bash: bash, git: git, origin: fx.origin, shim: shim, env: []string{
		"HOME=" + home,
		"CI=true",
		"GITHUB_ACTIONS=true",
		"GH_LOG=" + ghLog,
		"GOPATH=" + gopath,
		// The module cache and build cache this test was built with, so
		// only prose's own packages compile again: the proxy serves prose
		// alone, at a version no one else uses, removed afterwards.
		"GOMODCACHE=" + modcache,
		"GOCACHE=" + goEnv(t, "GOCACHE"),
		"GOPROXY=file://" + proxy + ",off",
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
		"GOFLAGS=-modcacherw",
	}}

	t.Run("clean", func(t *testing.T) {
		r.t = t
		res := r.run(wf, filepath.Join(tmp, "ws-clean"), fx.context("feature", fx.feature, 1))
		for _, s := range res.steps {
			if !s.ran || s.code != 0 {
				t.Errorf("step %q: ran %v, exit %d\n%s", s.name, s.ran, s.code, s.out)
			}
		}
		for _, s := range res.steps {
			if s.name == "prose receipts verify" && !strings.Contains(s.out, "4 receipts, 1 node, 0 problems") {
				t.Errorf("receipts verify did not verify the base's receipt and the pull request's three:\n%s", s.out)
			}
		}
		comment := readFile(t, filepath.Join(ghLog, "comment.md"))
		for _, want := range []string{"pages created", "glossary/sev1", "Pages changed", "notes/deploy-guide", "reviewed text of each step", "3 receipts"} {
			if !strings.Contains(comment, want) {
				t.Errorf("the comment lacks %q:\n%s", want, comment)
			}
		}
		if len(comment) > commentMax {
			t.Errorf("the comment has %d characters, more than GitHub's %d", len(comment), commentMax)
		}
		if summary := readFile(t, res.summary); !strings.Contains(summary, comment) {
			t.Errorf("the job summary does not hold the diff:\n%s", summary)
		}
		calls := readFile(t, filepath.Join(ghLog, "calls"))
		if strings.Count(calls, "pr comment 1 ") != 2 || !strings.Contains(calls, "--edit-last") {
			t.Errorf("gh calls: want an --edit-last attempt, then a new comment on pull request 1:\n%s", calls)
		}
	})

	t.Run("hand edit", func(t *testing.T) {
		r.t = t
		os.Remove(filepath.Join(ghLog, "comment.md"))
		res := r.run(wf, filepath.Join(tmp, "ws-broken"), fx.context("broken", fx.broken, 2))
		want := map[string]int{"prose check": 0, "prose compile --check": 0, "prose fsck": 1}
		for _, s := range res.steps {
			code, listed := want[s.name]
			switch {
			case listed && (!s.ran || s.code != code):
				t.Errorf("step %q: ran %v, exit %d; want exit %d\n%s", s.name, s.ran, s.code, code, s.out)
			case s.name == "Prepare the vault" && !strings.Contains(s.out, "::warning::no ledger refs/prose/pr/broken"):
				t.Errorf("the missing ledger is not named:\n%s", s.out)
			case s.name == "prose fsck" && !strings.Contains(s.out, "prose wiki commit"):
				t.Errorf("fsck does not name the fix:\n%s", s.out)
			case s.name == "prose receipts verify" && s.ran:
				t.Errorf("a step after the failed one ran")
			case (s.name == "prose diff" || s.name == "Comment on the pull request") && (!s.ran || s.code != 0):
				t.Errorf("step %q: ran %v, exit %d; the diff is posted whatever the checks found\n%s", s.name, s.ran, s.code, s.out)
			}
		}
		if comment := readFile(t, filepath.Join(ghLog, "comment.md")); !strings.Contains(comment, "notes/deploy-guide") {
			t.Errorf("the comment of the hand-edited pull request:\n%s", comment)
		}
	})
}

// fixture is a bare repository standing for the vault's GitHub
// repository, with a base branch and two pull request branches.
type fixture struct {
	origin          string
	base            string // the base branch's tip
	feature, broken string // the pull requests' heads
}

func (fx fixture) context(branch, head string, number int) map[string]string {
	return map[string]string{
		"github.event.pull_request.head.sha":            head,
		"github.event.pull_request.number":              fmt.Sprint(number),
		"github.event.pull_request.head.repo.full_name": "example/vault",
		"github.repository":                             "example/vault",
		"github.base_ref":                               "main",
		"github.head_ref":                               branch,
		"github.event.pull_request.head.repo.clone_url": fx.origin,
		"github.token":                                  "test-token",
	}
}

func fixtureRepo(t *testing.T, git, prose, tmp string) fixture {
	t.Helper()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "PROSE_NOW=2026-01-31")
	sh := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	fixtures, err := filepath.Abs(filepath.Join(repoRoot, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	origin := filepath.Join(tmp, "origin.git")
	base := filepath.Join(tmp, "base")
	sh(tmp, git, "init", "-q", "--bare", "--initial-branch=main", origin)
	sh(tmp, prose, "init", base)
	contracts, _ := filepath.Glob(filepath.Join(fixtures, "contracts", "wiring", "*.prose.md"))
	if err := os.MkdirAll(filepath.Join(base, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range contracts {
		if err := os.WriteFile(filepath.Join(base, "src", filepath.Base(f)), []byte(readFile(t, f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(base, git, "add", "src")
	sh(base, git, "commit", "-q", "-m", "contracts")
	sh(base, prose, "compile", "--activate")
	sh(base, prose, "ingest", filepath.Join(fixtures, "sources", "deploy-guide.md"))
	sh(base, git, "remote", "add", "origin", origin)
	sh(base, git, "push", "-q", "origin", "main", "refs/prose/*:refs/prose/*")

	// A contributor's clone: two ingests and a slot edit, pushed as a
	// branch with its ledger beside it (docs/ci.md).
	clone := func(name string) string {
		dir := filepath.Join(tmp, name)
		sh(tmp, git, "clone", "-q", origin, dir)
		sh(dir, git, "fetch", "-q", "origin", "+refs/prose/*:refs/prose/*")
		return dir
	}
	pr := clone("contributor")
	sh(pr, prose, "ingest", filepath.Join(fixtures, "sources", "incident-glossary.html"))
	sh(pr, prose, "ingest", filepath.Join(fixtures, "sources", "canary-debugging.json"))
	sh(pr, prose, "wiki", "write-slot", "notes/deploy-guide", "abstract", "--content", "<p>How the billing service is deployed, with the reviewed text of each step.</p>")
	sh(pr, git, "push", "-q", "origin", "main:refs/heads/feature", "refs/prose/ledger:refs/prose/pr/feature")

	bad := clone("hand-editor")
	page := filepath.Join(bad, "published", "wiki", "notes", "deploy-guide.html")
	html := readFile(t, page)
	const said = "turns usage records into invoices"
	if !strings.Contains(html, said) {
		t.Fatalf("%s does not say %q", page, said)
	}
	if err := os.WriteFile(page, []byte(strings.Replace(html, said, "turns usage records into invoices, edited by hand,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	sh(bad, git, "commit", "-q", "-am", "edit a page by hand")
	sh(bad, git, "push", "-q", "origin", "main:refs/heads/broken")

	return fixture{
		origin:  origin,
		base:    sh(base, git, "rev-parse", "main"),
		feature: sh(pr, git, "rev-parse", "HEAD"),
		broken:  sh(bad, git, "rev-parse", "HEAD"),
	}
}

// moduleProxy writes a GOPROXY directory serving this working tree (its
// tracked and untracked, not ignored, files) as module@testVersion.
func moduleProxy(t *testing.T, git, tmp, modcache string) string {
	t.Helper()
	t.Cleanup(func() {
		// What go install took into the module cache from the proxy.
		os.RemoveAll(filepath.Join(modcache, filepath.FromSlash(module)+"@"+testVersion))
		downloads, _ := filepath.Glob(filepath.Join(modcache, "cache", "download", filepath.FromSlash(module), "@v", testVersion+".*"))
		for _, f := range downloads {
			os.Remove(f)
		}
		// go notes the versions it listed; with no other version of
		// prose in the cache, that note and the empty folders go too.
		at := filepath.Join(modcache, "cache", "download", filepath.FromSlash(module), "@v")
		if left, _ := os.ReadDir(at); len(left) == 1 && left[0].Name() == "list" {
			os.Remove(filepath.Join(at, "list"))
		}
		for _, d := range []string{at, filepath.Dir(at), filepath.Dir(filepath.Dir(at)), filepath.Join(modcache, "github.com", "prose-store")} {
			os.Remove(d) // only when empty
		}
	})
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(git, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := filepath.Join(tmp, "proxy", filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		info, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !info.Mode().IsRegular() {
			continue // removed in the working tree, or a symlink a module zip cannot hold
		}
		w, err := zw.Create(module + "@" + testVersion + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(readFile(t, filepath.Join(root, name)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"list":                testVersion + "\n",
		testVersion + ".info": `{"Version":"` + testVersion + `","Time":"2026-01-31T00:00:00Z"}`,
		testVersion + ".mod":  readFile(t, filepath.Join(root, "go.mod")),
		testVersion + ".zip":  buf.String(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(tmp, "proxy")
}

// fakeGH writes a `gh` that records its calls and the comment body, and
// fails `--edit-last` while it has no comment yet, as gh does.
func fakeGH(t *testing.T, tmp string) string {
	t.Helper()
	dir := filepath.Join(tmp, "shim")
	script := `#!/bin/sh
[ -n "$GH_TOKEN" ] || { echo "gh: no GH_TOKEN" >&2; exit 4; }
printf '%s\n' "$*" >> "$GH_LOG/calls"
case " $* " in *" --edit-last "*) [ -f "$GH_LOG/comment.md" ] || { echo "no comments found for current user" >&2; exit 1; } ;; esac
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cp "$2" "$GH_LOG/comment.md" || exit 1; fi
  shift
done
`
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func parseWorkflow(t *testing.T) *actionlint.Workflow {
	t.Helper()
	wf, errs := actionlint.Parse([]byte(readFile(t, workflowFile)))
	for _, e := range errs {
		t.Errorf("parse %s: %s", workflowFile, e)
	}
	if wf == nil || len(wf.Jobs) != 1 {
		t.Fatalf("%s: want one job", workflowFile)
	}
	if wf.Env == nil || wf.Env.Vars["prose_version"] == nil {
		t.Fatalf("%s: the workflow env sets no PROSE_VERSION for the install step", workflowFile)
	}
	return wf
}

type runner struct {
	t                 *testing.T
	bash, git, origin string
	shim              string
	env               []string
}

type stepResult struct {
	name string
	ran  bool
	code int
	out  string
}

type runResult struct {
	steps   []stepResult
	summary string
}

// run runs the workflow's one job in workspace ws for a pull request
// whose contexts are ctx.
func (r *runner) run(wf *actionlint.Workflow, ws string, ctx map[string]string) runResult {
	t := r.t
	t.Helper()
	temp := filepath.Join(ws+"-runner", "temp")
	if err := os.MkdirAll(temp, 0o755); err != nil {
		t.Fatal(err)
	}
	githubPath := filepath.Join(ws+"-runner", "path")
	summary := filepath.Join(ws+"-runner", "summary.md")
	for _, f := range []string{githubPath, summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var job *actionlint.Job
	for _, j := range wf.Jobs {
		job = j
	}
	res := runResult{summary: summary}
	failed := false
	for i, step := range job.Steps {
		name := fmt.Sprintf("step %d", i+1)
		if step.Name != nil {
			name = step.Name.Value
		}
		s := stepResult{name: name}
		cond := "success()"
		if step.If != nil {
			cond = step.If.Value
		}
		if !r.condition(cond, ctx, failed) {
			res.steps = append(res.steps, s)
			continue
		}
		s.ran = true
		switch ex := step.Exec.(type) {
		case *actionlint.ExecAction:
			s.name = ex.Uses.Value
			r.action(ex, ws, ctx)
		case *actionlint.ExecRun:
			if step.Name == nil {
				t.Errorf("a run: step has no name")
			}
			env := append([]string{}, r.env...)
			env = append(env, "GITHUB_PATH="+githubPath, "GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+temp, "GITHUB_WORKSPACE="+ws)
			env = append(env, r.vars(wf.Env, ctx)...)
			if wf.Env.Vars["prose_version"] != nil {
				env = append(env, "PROSE_VERSION="+testVersion)
			}
			env = append(env, r.vars(step.Env, ctx)...)
			path := []string{r.shim}
			lines := strings.Fields(readFile(t, githubPath))
			for j := len(lines) - 1; j >= 0; j-- {
				path = append(path, lines[j]) // later entries come first, as on a runner
			}
			env = append(env, "PATH="+strings.Join(append(path, os.Getenv("PATH")), string(os.PathListSeparator)))
			script := filepath.Join(temp, fmt.Sprintf("step%d.sh", i+1))
			if err := os.WriteFile(script, []byte(r.expand(ex.Run.Value, ctx)), 0o644); err != nil {
				t.Fatal(err)
			}
			// A run: step under `shell: bash`, as GitHub runs it.
			cmd := exec.Command(r.bash, "--noprofile", "--norc", "-eo", "pipefail", script)
			cmd.Dir, cmd.Env = ws, env
			out, err := cmd.CombinedOutput()
			s.out = string(out)
			if err != nil {
				s.code = -1
				if ee, ok := err.(*exec.ExitError); ok {
					s.code = ee.ExitCode()
				}
				failed = true
			}
		default:
			t.Fatalf("step %q: neither run: nor uses:", name)
		}
		res.steps = append(res.steps, s)
	}
	return res
}

// action stands in for the actions the workflow uses.
func (r *runner) action(ex *actionlint.ExecAction, ws string, ctx map[string]string) {
	t := r.t
	t.Helper()
	input := func(name string) string {
		if in := ex.Inputs[name]; in != nil {
			return r.expand(in.Value.Value, ctx)
		}
		return ""
	}
	uses := ex.Uses.Value
	switch {
	case strings.HasPrefix(uses, "actions/checkout@"):
		// actions/checkout with fetch-depth 0 fetches every branch as
		// origin/NAME, then checks out ref, detached.
		if input("fetch-depth") != "0" {
			t.Errorf("%s: fetch-depth is %q; prose diff BASE...HEAD needs the whole history (0)", uses, input("fetch-depth"))
		}
		ref := input("ref")
		if ref != ctx["github.event.pull_request.head.sha"] {
			t.Errorf("%s: ref %q; check out the pull request's head, not the merge commit GitHub makes", uses, ref)
		}
		for _, args := range [][]string{{"clone", "-q", r.origin, ws}, {"-C", ws, "checkout", "-q", "--detach", ref}} {
			if out, err := exec.Command(r.git, args...).CombinedOutput(); err != nil {
				t.Fatalf("checkout: git %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	case strings.HasPrefix(uses, "actions/setup-go@"):
		if input("go-version") == "" {
			t.Errorf("%s: no go-version", uses)
		}
		// The test runs on the Go it was built with.
	default:
		t.Fatalf("the test does not know action %s", uses)
	}
}

// testVersion is the version the workflow installs in the test, from a
// module proxy on disk that serves this working tree under it: one of its
// own for each run, so no module cache holds another tree under it.
var testVersion = fmt.Sprintf("v0.0.0-ci.%d", time.Now().UnixNano())

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand replaces each ${{ context.path }} with its value; an expression
// the test does not know fails it.
func (r *runner) expand(s string, ctx map[string]string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		key := expression.FindStringSubmatch(m)[1]
		v, ok := ctx[key]
		if !ok {
			r.t.Fatalf("the test has no value for ${{ %s }}", key)
		}
		return v
	})
}

// condition evaluates an if: of the forms the workflow uses: success(),
// !cancelled(), and `A == B` of two contexts, joined by &&.
func (r *runner) condition(cond string, ctx map[string]string, failed bool) bool {
	cond = strings.TrimSpace(cond)
	if m := expression.FindStringSubmatch(cond); m != nil && m[0] == cond {
		cond = m[1]
	}
	ok := true
	for _, term := range strings.Split(cond, "&&") {
		term = strings.TrimSpace(term)
		switch {
		case term == "success()":
			ok = ok && !failed
		case term == "!cancelled()" || term == "always()":
		case strings.Contains(term, "=="):
			a, b, _ := strings.Cut(term, "==")
			va, oka := ctx[strings.TrimSpace(a)]
			vb, okb := ctx[strings.TrimSpace(b)]
			if !oka || !okb {
				r.t.Fatalf("the test has no value for a side of %q", term)
			}
			ok = ok && va == vb
		default:
			r.t.Fatalf("the test cannot evaluate if: %q", term)
		}
	}
	if !strings.Contains(cond, "()") {
		ok = ok && !failed // a condition without a status function implies success()
	}
	return ok
}

func (r *runner) vars(env *actionlint.Env, ctx map[string]string) []string {
	if env == nil {
		return nil
	}
	var out []string
	for _, v := range env.Vars {
		out = append(out, v.Name.Value+"="+r.expand(v.Value.Value, ctx))
	}
	return out
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
