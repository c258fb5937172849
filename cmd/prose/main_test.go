package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/gctune"
	"github.com/prose-store/prose/internal/lock"
)

// The test binary never calls main: tune the collector as main
// does, before any test or child command runs.
//
// git, run by the tests and by the commands they run in-process, never
// asks for credentials: a refused push fails instead of waiting on a
// terminal. It is set once here, not with t.Setenv, so that the sync tests
// can run in parallel (syncWorld).
func init() {
	gctune.Command()
	os.Setenv("GIT_TERMINAL_PROMPT", "0")
}

// inParallel lets t run in parallel with the other tests that call it,
// after the serial tests (t.Parallel). A test may call it when neither it
// nor its helpers set an environment variable (t.Setenv panics after
// t.Parallel; newIngestVault sets PROSE_NOW), a fault hook, a test knob or
// the working directory, and it measures no memory or time: the commands
// it runs in-process then share nothing with the other tests' but the
// process. Not under the race detector: every command run in-process
// applies urfave/cli's one shared help flag, whose Apply stores the same
// two constants into it each time; that is harmless, but -race reports it,
// so under -race these tests run one after another as before.
func inParallel(t *testing.T) {
	t.Helper()
	if !raceDetector {
		t.Parallel()
	}
}

// prose runs one command line in-process and returns stdout, stderr and the
// exit code.
func prose(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"prose"}, args...), &out, &errb)
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "panic:") {
		t.Fatalf("stack trace on stderr:\n%s", errb.String())
	}
	return out.String(), errb.String(), code
}

// needGit returns the path of git. Without git the test is skipped, except
// under CI (CI=true), where it fails.
func needGit(t testing.TB) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git not installed")
	}
	return git
}

func mustProse(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := prose(t, args...)
	if code != 0 {
		t.Fatalf("prose %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	os.RemoveAll(dir)
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExitCodesAndUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"publish", "onlynode"}, 2, "publish needs NODE and DIR"},
		{[]string{"init", "a", "b"}, 2, "at most one directory"},
		{[]string{"cas", "get", "nothex"}, 2, "cas get"},
		{[]string{"diff", "--format", "yaml", "--vault", t.TempDir()}, 2, "--format"},
		{[]string{"log", "--vault", t.TempDir()}, 1, "not a prose vault"},
	}
	for _, c := range cases {
		_, errs, code := prose(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("prose %s: exit %d, stderr %q; want exit %d containing %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
	}
}

func TestHelpDescribesEveryCommand(t *testing.T) {
	out := mustProse(t, "--help")
	for _, c := range []string{"init", "publish", "log", "receipts", "diff", "fsck", "cas", "version", "--vault", "--json", "--lock-timeout"} {
		if !strings.Contains(out, c) {
			t.Errorf("prose --help lacks %q", c)
		}
	}
	out = mustProse(t, "publish", "--help")
	if !strings.Contains(out, "--spec") || !strings.Contains(out, "NODE DIR") {
		t.Errorf("publish --help: %s", out)
	}
	out = mustProse(t, "version")
	if !strings.Contains(out, "prose ") {
		t.Errorf("version: %s", out)
	}
}

func TestPublishLogDiffFsckThroughTheCLI(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"items/a.json": `{"n": 1}`, "notes.md": "hello"})
	out := mustProse(t, "--vault", vdir, "publish", "node.one", src, "--json")
	var doc struct {
		Receipt map[string]any `json:"receipt"`
		Moved   []string       `json:"moved"`
		Commit  string         `json:"commit"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("publish --json is not one JSON document: %v\n%s", err, out)
	}
	if doc.Receipt["status"] != "rendered" || doc.Commit == "" {
		t.Fatalf("publish: %s", out)
	}
	out = mustProse(t, "publish", "node.one", src, "--vault", vdir)
	if !strings.Contains(out, "skipped") {
		t.Fatalf("second publish: %s", out)
	}
	writeFiles(t, src, map[string]string{"items/a.json": `{"n": 2}`, "notes.md": "hello"})
	mustProse(t, "publish", "node.one", src, "--vault", vdir)
	out = mustProse(t, "log", "--vault", vdir)
	if strings.Count(out, "\n") != 3 || !strings.Contains(out, "skipped") {
		t.Fatalf("log: %s", out)
	}
	out = mustProse(t, "diff", "--vault", vdir)
	if !strings.Contains(out, "items.a.n") || !strings.Contains(out, "1 -> 2") {
		t.Fatalf("diff: %s", out)
	}
	out = mustProse(t, "diff", "--vault", vdir, "--format", "json")
	var dr struct {
		Changes []map[string]any `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &dr); err != nil || len(dr.Changes) != 1 {
		t.Fatalf("diff json: %v %s", err, out)
	}
	out = mustProse(t, "diff", "--vault", vdir, "--format", "markdown")
	if !strings.Contains(out, "##### `node.one` · facet `items`") || !strings.Contains(out, "| `items.a.n` | changed | `1` | `2` |") {
		t.Fatalf("diff markdown: %s", out)
	}
	mustProse(t, "receipts", "verify", "--vault", vdir)
	mustProse(t, "fsck", "--vault", vdir)

	// A hand edit under published/ is reported by fsck and refused by publish.
	edited := filepath.Join(vdir, "published", "node.one", "notes.md")
	if err := os.WriteFile(edited, []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := prose(t, "fsck", "--vault", vdir)
	if code != 1 || !strings.Contains(errs, "published/node.one/notes.md") {
		t.Fatalf("fsck with a hand edit: exit %d, %s", code, errs)
	}
	writeFiles(t, src, map[string]string{"items/a.json": `{"n": 3}`, "notes.md": "new"})
	_, errs, code = prose(t, "publish", "node.one", src, "--vault", vdir)
	if code != 1 || !strings.Contains(errs, "notes.md") {
		t.Fatalf("publish over a hand edit: exit %d, %s", code, errs)
	}
	if data, _ := os.ReadFile(edited); string(data) != "edited by hand" {
		t.Fatal("the hand edit was lost")
	}
}

func TestPathEscapesAreRefused(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"a.txt": "a"})
	secret := filepath.Join(tmp, "outside.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	if err := os.Symlink(secret, filepath.Join(src, "link.txt")); err != nil {
		t.Fatal(err)
	}
	_, errs, code := prose(t, "publish", "n", src, "--vault", vdir)
	if code != 1 || !strings.Contains(errs, "link.txt") {
		t.Fatalf("symlink out of the source: exit %d, %q", code, errs)
	}
	out := mustProse(t, "log", "--vault", vdir)
	if out != "" {
		t.Fatalf("a refused publish left a receipt: %s", out)
	}
}

func TestCasCommands(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	f := filepath.Join(tmp, "blob")
	os.WriteFile(f, []byte("some content"), 0o644)
	id := strings.TrimSpace(mustProse(t, "cas", "put", f, "--vault", vdir))
	if !strings.HasPrefix(id, "blake3:") {
		t.Fatalf("cas put: %q", id)
	}
	if got := mustProse(t, "cas", "get", id, "--vault", vdir); got != "some content" {
		t.Fatalf("cas get: %q", got)
	}
	mustProse(t, "cas", "has", id, "--vault", vdir)
	mustProse(t, "cas", "verify", "--vault", vdir)
	_, _, code := prose(t, "cas", "gc", "--vault", vdir)
	if code != 2 {
		t.Fatalf("cas gc without roots: exit %d", code)
	}
	mustProse(t, "cas", "gc", "--everything", "--vault", vdir)
	_, _, code = prose(t, "cas", "has", id, "--vault", vdir)
	if code != 1 {
		t.Fatalf("cas has after gc: exit %d", code)
	}
}

func TestGitSeesCleanState(t *testing.T) {
	needGit(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"f/x.txt": "1"})
	mustProse(t, "publish", "n", src, "--vault", vdir)
	for _, args := range [][]string{{"status", "--porcelain"}, {"fsck", "--strict", "--no-progress"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = vdir
		out, err := cmd.CombinedOutput()
		if err != nil || (args[0] == "status" && len(out) != 0) {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func TestSecondWriterWaitsThenNamesTheHolder(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	l, err := lock.Acquire(context.Background(), filepath.Join(vdir, ".prose", "lock"), time.Second, "prose test holder")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"a.txt": "a"})
	start := time.Now()
	_, errs, code := prose(t, "publish", "n", src, "--vault", vdir, "--lock-timeout", "300ms")
	if code != 1 || !strings.Contains(errs, fmt.Sprint(os.Getpid())) || !strings.Contains(errs, "prose test holder") {
		t.Fatalf("locked publish: exit %d, %q", code, errs)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("gave up after %s, before the lock timeout", waited)
	}
}

func TestNewerVaultFormatIsRefused(t *testing.T) {
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	cfg := filepath.Join(vdir, "prose.yaml")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "format: 2", "format: 99", 1)), 0o644)
	_, errs, code := prose(t, "log", "--vault", vdir)
	if code != 1 || !strings.Contains(errs, "format 99") || !strings.Contains(errs, "upgrade prose") {
		t.Fatalf("newer format: exit %d, %q", code, errs)
	}
}

func TestFsckFindsACorruptObject(t *testing.T) {
	git := needGit(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"f/x.txt": "some world-model content"})
	mustProse(t, "publish", "n", src, "--vault", vdir)
	// The blob of f/x.txt, as git names it.
	out, err := exec.Command(git, "-C", vdir, "rev-parse", "HEAD:published/n/f/x.txt").Output()
	if err != nil {
		t.Fatalf("git rev-parse of the published blob: %v", err)
	}
	oid := strings.TrimSpace(string(out))
	obj := filepath.Join(vdir, ".git", "objects", oid[:2], oid[2:])
	os.Chmod(obj, 0o644)
	if err := os.WriteFile(obj, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := prose(t, "fsck", "--vault", vdir)
	if code != 1 || !strings.Contains(errs, oid) {
		t.Fatalf("fsck over a corrupt object: exit %d, %q", code, errs)
	}
}

func TestGlobalLookingValueOfACommandFlagStays(t *testing.T) {
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	// "-q" is the value of --node here, not the global --quiet flag.
	out, errs, code := prose(t, "log", "--node", "-q", "--vault", vdir, "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("log --node -q: exit %d, %q %q", code, out, errs)
	}
}
