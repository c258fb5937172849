package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every fsck finding names the command that fixes it: in its reason, or in
// the fix after it (the "fix" field of --json).
func TestEveryFsckFindingNamesItsFix(t *testing.T) {
	inParallel(t)
	requireGitCLI(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"items/a.json": `{"n": 1}`})
	mustProse(t, "--vault", vdir, "publish", "node.one", src)
	// A node committed with git, without a receipt; a file of a node
	// committed broken; a file added by hand, not committed.
	writeFiles(t, filepath.Join(vdir, "published", "stray"), map[string]string{"x.json": `{}`})
	os.WriteFile(filepath.Join(vdir, "published", "node.one", "items", "a.json"), []byte(`{"n":`), 0o644)
	gitIn(t, vdir, "add", "-A")
	gitIn(t, vdir, "-c", "user.name=A Person", "-c", "user.email=p@example.com", "commit", "-q", "-m", "by hand")
	os.WriteFile(filepath.Join(vdir, "published", "node.one", "items", "b.json"), []byte(`{}`), 0o644)

	out, errs, code := prose(t, "--vault", vdir, "fsck")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || len(lines) < 3 {
		t.Fatalf("fsck: exit %d\n%s%s", code, out, errs)
	}
	for _, l := range lines {
		if !namesCommand(l) {
			t.Errorf("fsck finding names no command to fix it: %s", l)
		}
	}
	for _, want := range []string{"`prose publish stray DIR`", "`git rm -r published/stray`", "the vault's committed copy is broken", "`prose publish node.one DIR`"} {
		if !strings.Contains(errs, want) {
			t.Errorf("fsck does not say %q:\n%s", want, errs)
		}
	}
	out, _, _ = prose(t, "--vault", vdir, "--json", "fsck")
	var doc struct {
		Problems []fsckProblem `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Problems) != len(lines) {
		t.Fatalf("fsck --json: %v, %d problems for %d lines\n%s", err, len(doc.Problems), len(lines), out)
	}
	for _, p := range doc.Problems {
		if p.Fix == "" && !namesCommand(p.Reason) {
			t.Errorf("fsck --json finding without a fix: %+v", p)
		}
	}
}

// A file committed broken by hand under published/NODE/ does not block the
// node: a publish of a valid render replaces the vault's copy and says what
// it repaired, and its summary says nothing moved rather than "moved ".
// A broken file in the render is named as the render's.
func TestPublishReplacesABrokenCommittedCopy(t *testing.T) {
	inParallel(t)
	requireGitCLI(t)
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, map[string]string{"items/a.json": `{"n": 1}`})
	mustProse(t, "--vault", vdir, "publish", "node.one", src)
	os.WriteFile(filepath.Join(vdir, "published", "node.one", "items", "a.json"), []byte(`{"n":`), 0o644)
	gitIn(t, vdir, "-c", "user.name=A Person", "-c", "user.email=p@example.com", "commit", "-q", "-am", "broken by hand")

	out, errs, code := prose(t, "--vault", vdir, "publish", "node.one", src)
	if code != 0 || !strings.Contains(errs, "the vault's committed copy is broken") || !strings.Contains(errs, "restored it to the published truth") {
		t.Fatalf("publish over a broken committed copy: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "(moved )") || !strings.Contains(out, "nothing moved; restored the published truth") {
		t.Errorf("repair publish summary: %s", out)
	}
	mustProse(t, "--vault", vdir, "fsck")

	writeFiles(t, src, map[string]string{"items/a.json": `{"n":`})
	_, errs, code = prose(t, "--vault", vdir, "publish", "node.one", src)
	if code != 1 || !strings.Contains(errs, "in the render "+src+": items/a.json: not valid JSON") {
		t.Fatalf("publish of a broken render: exit %d %s", code, errs)
	}
}
