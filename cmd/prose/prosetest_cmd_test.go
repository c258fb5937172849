package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/refdata"
	"github.com/prose-store/prose/model/fakeserver"
)

// verdict is a judge's answer as the fake model sends it.
func verdict(holds bool, evidence string) fakeserver.Reply {
	b, _ := json.Marshal(map[string]any{"holds": holds, "evidence": evidence})
	return fakeserver.Text(string(b))
}

// TestProseTestThroughTheCLI runs fixtures/runtime/tests: the subject
// renders (a command render) in a scratch vault with the fixtures as its
// input, each assertion is judged by the model, Expects Not inverts the
// verdict, and the report ends in the reference's summary line. The same
// run recorded replays offline with the same results.
func TestProseTestThroughTheCLI(t *testing.T) {
	needGit(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root := refdata.RepoRoot(t)
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/tests"), proj).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	tests := filepath.Join(proj, "src", "tests")

	// No judge: every assertion is an error, never a pass.
	t.Setenv("PROSE_MODEL", "")
	out, errs, code := prose(t, "test", tests)
	if code != 1 || !strings.Contains(out, "Results: 0 passed, 0 failed, 2 errors") || !strings.Contains(errs, "no judge: the offline engine cannot judge") {
		t.Fatalf("no judge: exit %d\n%s%s", code, out, errs)
	}

	srv := fakeserver.New(t, fakeserver.Chat,
		verdict(true, "digest.json has count 2"),
		verdict(true, "items lists apples, then pears"),
		verdict(false, "digest.json holds only a count and the items"),
		verdict(false, "count is 2, not 3"),
	)
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, srv.Env()(k))
	}
	rec := filepath.Join(dir, "judge.json")
	out, errs, code = prose(t, "--model", "openai-chat:judge", "--record", rec, "test", tests)
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"# Test Report: digest-counts\n\nSubject: digest\nResult: PASS (3/3)\n",
		"✓ `digest`: says there are two items\n  Observed: digest.json has count 2\n",
		"## Negative Assertions\n\n✓ `digest`: reports an error or a missing input\n",
		"# Test Report: digest-three\n\nSubject: digest\nResult: FAIL (0/1)\n",
		"✗ `digest`: says there are three items\n  Observed: count is 2, not 3\n",
		"Results: 1 passed, 1 failed, 0 errors\n\ndigest-counts .... PASS (3/3)\ndigest-three ..... FAIL (0/1)\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the report lacks %q:\n%s", want, out)
		}
	}
	// The judge saw the subject's rendered world-model and the statement.
	bodies := srv.Bodies()
	if len(bodies) != 4 || !strings.Contains(string(bodies[0]), `{\"count\":2,\"items\":[\"apples\",\"pears\"]}`) ||
		!strings.Contains(string(bodies[3]), "says there are three items") {
		t.Fatalf("%d requests; first: %s", len(bodies), bodies[0])
	}
	// Recorded, the judge replays offline: the same verdicts.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	out2, errs, code := prose(t, "--model", "replay:"+rec, "test", tests)
	if code != 1 || out2 != out {
		t.Fatalf("replay: exit %d\n%s%s\nwant\n%s", code, out2, errs, out)
	}
	// The committed judge recording (fixtures/runtime/tests/judge.json, a
	// demo of an offline run) replays to the same report; -update re-makes
	// it from this run.
	committed := filepath.Join(root, "fixtures/runtime/tests/judge.json")
	if *updateGolden {
		data, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(committed, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out3, errs, code := prose(t, "--model", "replay:"+committed, "test", tests)
	if code != 1 || out3 != out {
		t.Fatalf("the committed judge recording: exit %d\n%s%s\nwant\n%s\n(re-make it with go test ./cmd/prose -run TestProseTestThroughTheCLI -update)", code, out3, errs, out)
	}
	// One test file; --json.
	srv2 := fakeserver.New(t, fakeserver.Chat, verdict(true, "2"), verdict(true, "in order"), verdict(false, "none"))
	t.Setenv("OPENAI_BASE_URL", srv2.Env()("OPENAI_BASE_URL"))
	out, errs, code = prose(t, "--json", "--model", "openai-chat:judge", "test", filepath.Join(tests, "digest-counts.prose.md"))
	var doc struct {
		Passed, Failed, Errors int
		Tests                  []struct{ Name, Result string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || doc.Passed != 1 || len(doc.Tests) != 1 {
		t.Fatalf("exit %d %v %+v\n%s%s", code, err, doc, out, errs)
	}
	// A judge that does not answer with a verdict is an error, not a pass.
	srv3 := fakeserver.New(t, fakeserver.Chat, fakeserver.Text("Looks fine to me!"), verdict(true, "x"), verdict(false, "y"))
	t.Setenv("OPENAI_BASE_URL", srv3.Env()("OPENAI_BASE_URL"))
	out, _, code = prose(t, "--model", "openai-chat:judge", "test", filepath.Join(tests, "digest-counts.prose.md"))
	if code != 1 || !strings.Contains(out, "Result: ERROR (2/3)") || !strings.Contains(out, "the judge did not answer with a verdict object") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Without --recursive a directory's subdirectories are not searched.
	_, errs, code = prose(t, "test", filepath.Join(proj, "src"))
	if code != 2 || !strings.Contains(errs, "add --recursive") {
		t.Fatalf("exit %d %s", code, errs)
	}
}

// TestProseTestLeavesTheVaultAlone: inside a vault, prose test renders in
// a scratch vault: the vault's refs, ledger and files do not move.
func TestProseTestLeavesTheVaultAlone(t *testing.T) {
	git := needGit(t)
	root := refdata.RepoRoot(t)
	v := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", v)
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/tests/src"), filepath.Join(root, "fixtures/runtime/tests/digest.sh"), v).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	mustProse(t, "--vault", v, "compile", "--activate")
	refs := func() string {
		out, err := exec.Command(git, "-C", v, "for-each-ref").CombinedOutput()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	before := refs()
	srv := fakeserver.New(t, fakeserver.Chat, verdict(true, "2"), verdict(true, "in order"), verdict(false, "none"), verdict(false, "2"))
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, srv.Env()(k))
	}
	out, errs, code := prose(t, "--vault", v, "--model", "openai-chat:judge", "test", filepath.Join(v, "src", "tests"))
	if code != 1 || !strings.Contains(out, "Results: 1 passed, 1 failed, 0 errors") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if after := refs(); after != before {
		t.Fatalf("the vault moved:\n%s\nwas\n%s", after, before)
	}
	if _, err := os.Stat(filepath.Join(v, "published", "digest")); err == nil {
		t.Fatal("the subject was published into the user's vault")
	}
}

// TestProseTestFunctionSubject: a function subject renders through the
// model with its fixtures as its parameters (fixtures/<name>.json), and
// what it writes is judged; --recursive finds the test in a subdirectory.
func TestProseTestFunctionSubject(t *testing.T) {
	needGit(t)
	root := refdata.RepoRoot(t)
	proj := filepath.Join(t.TempDir(), "proj")
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "fixtures/runtime/tests"), proj).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	srv := fakeserver.New(t, fakeserver.Chat,
		verdict(true, "2"), verdict(true, "in order"), verdict(false, "none"), verdict(false, "count is 2"),
		fakeserver.Calls(fakeserver.Call{ID: "r", Name: "read_input", Args: `{"path":"fixtures/text.json"}`},
			fakeserver.Call{ID: "w", Name: "write_output", Args: `{"path":"short.txt","content":"Shop sold forty loaves, closed early: oven broke."}`}),
		fakeserver.Text("wrote short"),
		verdict(true, "short.txt has eight words"),
	)
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, srv.Env()(k))
	}
	out, errs, code := prose(t, "--model", "openai-chat:m", "test", "--recursive", filepath.Join(proj, "src", "tests"))
	if code != 1 || !strings.Contains(out, "Results: 2 passed, 1 failed, 0 errors") ||
		!strings.Contains(out, "# Test Report: shorten-short\n\nSubject: shorten\nResult: PASS (1/1)\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if res, _ := srv.Result("r"); res.IsError || !strings.Contains(res.Content, "sold forty loaves of bread before noon") {
		t.Fatalf("the function did not read its fixture: %+v", res)
	}
	bodies := srv.Bodies()
	if last := string(bodies[len(bodies)-1]); !strings.Contains(last, "Shop sold forty loaves, closed early: oven broke.") || !strings.Contains(last, "has at most ten words") {
		t.Fatalf("the judge did not see the function's output: %s", last)
	}
}
