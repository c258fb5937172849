package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyVault is a vault whose committed src/ holds the legacy fixtures.
func legacyVault(t *testing.T) (vdir, git string) {
	t.Helper()
	_, git = contractHost(t)
	if git == "" {
		needGit(t) // skips, or fails under CI
	}
	vdir = filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	legacy := filepath.Join(contractFixtures(t), "legacy")
	entries, err := os.ReadDir(legacy)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(vdir, "src"), 0o755)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(legacy, e.Name()))
		os.WriteFile(filepath.Join(vdir, "src", e.Name()), data, 0o644)
	}
	gitOut(t, git, vdir, "add", "src")
	gitOut(t, git, vdir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "legacy contracts")
	return vdir, git
}

// TestUpgradeInVault: check refuses every retired form; --dry-run prints the
// plan and writes nothing; a real run is one commit after which check
// reports only the review items.
func TestUpgradeInVault(t *testing.T) {
	vdir, git := legacyVault(t)
	t.Chdir(vdir)
	out, _, code := prose(t, "check")
	if code != 1 || strings.Count(out, "_retired:") != 12 {
		t.Fatalf("check before the upgrade: exit %d, want 12 retired forms\n%s", code, out)
	}
	head := strings.TrimSpace(gitOut(t, git, vdir, "rev-parse", "HEAD"))

	out, errs, code := prose(t, "upgrade", "--dry-run")
	if code != 1 || !strings.Contains(out, "--- a/src/report.prose.md\n+++ b/src/report.prose.md\n") ||
		!strings.Contains(out, "-### Ensures\n+### Maintains\n") || !strings.Contains(out, "+++ b/src/signals.prose.md") ||
		!strings.Contains(errs, "upgrade_review") || !strings.Contains(errs, "6 files to upgrade, 5 items for review") {
		t.Fatalf("upgrade --dry-run: exit %d\n%s%s", code, out, errs)
	}
	if now := strings.TrimSpace(gitOut(t, git, vdir, "rev-parse", "HEAD")); now != head {
		t.Fatal("--dry-run committed")
	}
	if st := gitOut(t, git, vdir, "status", "--porcelain"); st != "" {
		t.Fatalf("--dry-run wrote files:\n%s", st)
	}

	out, errs, code = prose(t, "upgrade", "--json")
	var doc struct {
		Files  []upgradeFile    `json:"files"`
		Review []map[string]any `json:"review"`
		Commit string           `json:"commit"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || len(doc.Files) != 6 || len(doc.Review) != 5 || doc.Commit == "" {
		t.Fatalf("upgrade: exit %d %v\n%s%s", code, err, out, errs)
	}
	// One commit, on top of the one before, and a clean tree.
	if parent := strings.TrimSpace(gitOut(t, git, vdir, "rev-parse", doc.Commit+"^")); parent != head {
		t.Errorf("the upgrade commit's parent is %s, want %s", parent, head)
	}
	if n := gitOut(t, git, vdir, "rev-list", "--count", head+".."+doc.Commit); strings.TrimSpace(n) != "1" {
		t.Errorf("the upgrade made %s commits", n)
	}
	if st := gitOut(t, git, vdir, "status", "--porcelain"); st != "" {
		t.Errorf("after the upgrade: %s", st)
	}
	if _, err := os.Stat(filepath.Join(vdir, "src", "signals.md")); err == nil {
		t.Error("signals.md is still there")
	}
	if files := gitOut(t, git, vdir, "ls-files", "src"); !strings.Contains(files, "src/signals.prose.md") || strings.Contains(files, "src/signals.md\n") {
		t.Errorf("committed sources:\n%s", files)
	}
	out, _, code = prose(t, "check")
	if code != 1 || strings.Count(out, "_retired:") != 5 || strings.Contains(out, "Ensures") || strings.Contains(out, "Criteria") || strings.Contains(out, "Constraints") || strings.Contains(out, "kind: service") {
		t.Errorf("check after the upgrade: exit %d, want only the 5 review items\n%s", code, out)
	}
	// Nothing left to rewrite.
	out, errs, _ = prose(t, "upgrade")
	if out != "" || !strings.Contains(errs, "0 files upgraded") {
		t.Errorf("a second upgrade: %q %q", out, errs)
	}
}

func TestUpgradeUsage(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"upgrade"}, "no PATH given and no vault here"},
		{[]string{"upgrade", "nosuch"}, "nosuch does not exist"},
		{[]string{"upgrade", "a", "b"}, "at most one PATH"},
	} {
		_, errs, code := prose(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("prose %s: exit %d %q", strings.Join(c.args, " "), code, errs)
		}
	}
}

// TestUpgradeInVaultLeavesUncommittedWork: sources the branch does not hold
// are rewritten in place and left uncommitted; a committed source with
// uncommitted edits stops the upgrade before anything changes.
func TestUpgradeInVaultLeavesUncommittedWork(t *testing.T) {
	vdir, git := legacyVault(t)
	t.Chdir(vdir)
	head := strings.TrimSpace(gitOut(t, git, vdir, "rev-parse", "HEAD"))
	report := filepath.Join(vdir, "src", "report.prose.md")
	data, _ := os.ReadFile(report)
	os.WriteFile(report, append(data, []byte("\nAn edit not committed.\n")...), 0o644)
	_, errs, code := prose(t, "upgrade")
	if code != 1 || !strings.Contains(errs, "src/report.prose.md differ from the branch") || !strings.Contains(errs, "nothing was changed") {
		t.Fatalf("upgrade over an uncommitted edit: exit %d %q", code, errs)
	}
	if now := strings.TrimSpace(gitOut(t, git, vdir, "rev-parse", "HEAD")); now != head {
		t.Fatal("the refused upgrade committed")
	}
	if st := gitOut(t, git, vdir, "status", "--porcelain"); st != " M src/report.prose.md\n" {
		t.Fatalf("the refused upgrade changed files:\n%s", st)
	}
	gitOut(t, git, vdir, "checkout", "--", "src/report.prose.md")

	// A new, uncommitted legacy source beside the committed ones.
	extra := filepath.Join(vdir, "src", "extra.prose.md")
	os.WriteFile(extra, []byte("---\nname: extra\nkind: service\n---\n\n### Ensures\n\n- `x`: a value\n"), 0o644)
	out, errs, _ := prose(t, "upgrade", "--json")
	var doc struct {
		Commit string `json:"commit"`
	}
	json.Unmarshal([]byte(out), &doc)
	if doc.Commit == "" {
		t.Fatalf("upgrade: %s %s", out, errs)
	}
	if files := gitOut(t, git, vdir, "show", "--name-only", "--format=", doc.Commit); strings.Contains(files, "extra") {
		t.Errorf("the uncommitted source was committed:\n%s", files)
	}
	if got, _ := os.ReadFile(extra); !strings.Contains(string(got), "kind: function") || !strings.Contains(string(got), "### Returns") {
		t.Errorf("the uncommitted source was not rewritten:\n%s", got)
	}
	if st := gitOut(t, git, vdir, "status", "--porcelain"); st != "?? src/extra.prose.md\n" {
		t.Errorf("after the upgrade:\n%s", st)
	}
}
