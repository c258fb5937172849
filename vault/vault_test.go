package vault

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

func newVault(t testing.TB) *Vault {
	t.Helper()
	v, err := Init(filepath.Join(t.TempDir(), "vault"), InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// writeTree replaces dir's content with files.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	os.RemoveAll(dir)
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func requireGit(t testing.TB) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required in CI")
		}
		t.Skip("git not installed")
	}
}

// checkGitClean asserts git's own view: fsck --strict passes, status clean.
func checkGitClean(t testing.TB, v *Vault) {
	t.Helper()
	requireGit(t)
	git(t, v.Root(), "fsck", "--strict", "--no-progress")
	if st := git(t, v.Root(), "status", "--porcelain"); st != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
}

func publish(t testing.TB, v *Vault, node, dir string, opt PublishOptions) *PublishResult {
	t.Helper()
	res, err := v.Publish(context.Background(), node, dir, opt)
	if err != nil {
		t.Fatalf("publish %s: %v", node, err)
	}
	return res
}

func branchCommits(t testing.TB, v *Vault) int {
	t.Helper()
	h, err := v.readRef(v.Branch())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for !h.IsZero() {
		c, err := v.commit(h)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return n
}

func TestPublishTwiceGivesOneCommitAndOneSkip(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	writeTree(t, src, map[string]string{
		"summary.md":        "# Summary\n",
		"open-items/a.json": `{"id": 1, "title": "first"}`,
		"counts/c.yaml":     "web: 1\n",
	})
	r1 := publish(t, v, "dashboard", src, PublishOptions{})
	if r1.Receipt.Status != "rendered" || r1.Commit.IsZero() {
		t.Fatalf("first publish: %s", r1.Receipt.Status)
	}
	if got := strings.Join(r1.Moved, ","); got != "@atomic,counts,open-items" {
		t.Fatalf("moved = %s", got)
	}
	r2 := publish(t, v, "dashboard", src, PublishOptions{})
	if r2.Receipt.Status != "skipped" || !r2.Commit.IsZero() {
		t.Fatalf("second publish: %s", r2.Receipt.Status)
	}
	if r2.Receipt.Prev == nil || *r2.Receipt.Prev != r1.Receipt.ContentHash {
		t.Fatal("skipped receipt does not chain to the rendered one")
	}
	if n := branchCommits(t, v); n != 2 {
		t.Fatalf("branch has %d commits, want 2 (init + one render)", n)
	}
	recs, err := v.AllReceipts()
	if err != nil || len(recs) != 2 {
		t.Fatalf("ledger: %d receipts, %v", len(recs), err)
	}
	last, err := v.LastReceipt("dashboard")
	if err != nil || last.ContentHash != r2.Receipt.ContentHash {
		t.Fatalf("last receipt: %v %v", last, err)
	}
	data, err := os.ReadFile(filepath.Join(v.Root(), "published", "dashboard", "open-items", "a.json"))
	if err != nil || !strings.Contains(string(data), "first") {
		t.Fatalf("working tree not updated: %v", err)
	}
	rep, err := v.VerifyReceipts()
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %v", rep, err)
	}
	fr, err := v.Fsck(context.Background())
	if err != nil || !fr.OK() {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
	checkGitClean(t, v)
}

func TestImmaterialChangeIsSkippedAndFacetMovesAlone(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "render")
	spec, err := canon.ParseSpec([]byte(`{"node":"n","fields":[{"path":"meta.updated","material":false}],"facets":[{"facet":"a","paths":["a"]},{"facet":"b","paths":["b"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{
		"meta.json": `{"updated": "2026-01-01", "title": "T"}`,
		"a/x.json":  `[1, 2]`,
		"b/y.txt":   "hello",
	}
	writeTree(t, src, base)
	r1 := publish(t, v, "n", src, PublishOptions{Spec: spec})
	if r1.Receipt.Status != "rendered" {
		t.Fatal("first publish not rendered")
	}
	base["meta.json"] = `{"title": "T", "updated": "2026-02-02"}`
	writeTree(t, src, base)
	r2 := publish(t, v, "n", src, PublishOptions{})
	if r2.Receipt.Status != "skipped" {
		t.Fatalf("immaterial change: %s, moved %v", r2.Receipt.Status, r2.Moved)
	}
	base["a/x.json"] = `[1, 3]`
	writeTree(t, src, base)
	r3 := publish(t, v, "n", src, PublishOptions{})
	if r3.Receipt.Status != "rendered" || strings.Join(r3.Moved, ",") != "@atomic,a" {
		t.Fatalf("facet change: %s moved %v", r3.Receipt.Status, r3.Moved)
	}
	if r3.Receipt.Fingerprints["b"] != r1.Receipt.Fingerprints["b"] {
		t.Fatal("facet b moved")
	}
	if r3.Receipt.Fingerprints["a"] == r1.Receipt.Fingerprints["a"] || r3.Receipt.Fingerprints["@atomic"] == r1.Receipt.Fingerprints["@atomic"] {
		t.Fatal("facet a or @atomic did not move")
	}
	checkGitClean(t, v)
}

func TestCommitFilesLandsOnTheBranchAndWorktree(t *testing.T) {
	v := newVault(t)
	h, err := v.CommitFiles(context.Background(), "test", "Activate manifest\n", map[string][]byte{ManifestPath: []byte("{}\n")})
	if err != nil || h.IsZero() {
		t.Fatalf("commit: %v", err)
	}
	data, ok, err := v.ReadFile(ManifestPath)
	if err != nil || !ok || string(data) != "{}\n" {
		t.Fatalf("read back: %q %v %v", data, ok, err)
	}
	if got, _ := os.ReadFile(filepath.Join(v.Root(), ManifestPath)); string(got) != "{}\n" {
		t.Fatal("working tree not updated")
	}
	h2, err := v.CommitFiles(context.Background(), "test", "again\n", map[string][]byte{ManifestPath: []byte("{}\n")})
	if err != nil || !h2.IsZero() {
		t.Fatalf("unchanged content committed again: %v", err)
	}
	fr, err := v.Fsck(context.Background())
	if err != nil || !fr.OK() {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
	checkGitClean(t, v)
}
