package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/durable"
)

func TestMissingLedgerIsRefusedWithTheFetchHint(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "a"})
	if err := os.Remove(filepath.Join(v.GitDir(), "refs", "prose", "ledger")); err != nil {
		t.Fatal(err)
	}
	_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	if err == nil || !strings.Contains(err.Error(), "git fetch origin refs/prose/ledger:refs/prose/ledger") {
		t.Fatalf("publish without a ledger: %v", err)
	}
}

// A writer that dies between the ledger and branch ref moves leaves a
// receipt that never took effect: readers leave it out, and the next writer
// rolls it back even after another commit landed on the branch.
func TestPhantomReceiptIsHiddenThenRolledBack(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "one"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{"a.txt": "two"})
	restore := durable.SetFault(durable.FailAt(durable.StepRename, "refs/heads"))
	_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	restore()
	if !errors.Is(err, durable.ErrInjected) {
		t.Fatalf("publish: %v", err)
	}
	recs, err := v.AllReceipts()
	if err != nil || len(recs) != 1 {
		t.Fatalf("readers see %d receipts (%v), want the 1 that took effect", len(recs), err)
	}
	// Another commit lands on the branch before any prose writer runs.
	if _, err := v.CommitFiles(context.Background(), "test", "user change\n", map[string][]byte{"src/x.md": []byte("x")}); err != nil {
		t.Fatal(err)
	}
	rep, err := v.Fsck(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
	// The content that never landed is rendered, not skipped.
	if r := publish(t, v, "n", src, PublishOptions{}); r.Receipt.Status != "rendered" {
		t.Fatalf("republish after the rollback: %s", r.Receipt.Status)
	}
	checkGitClean(t, v)
}

func TestWritesRefuseWhenHeadIsOnAnotherBranch(t *testing.T) {
	v := newVault(t)
	if err := os.WriteFile(filepath.Join(v.GitDir(), "HEAD"), []byte("ref: refs/heads/feature\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "a"})
	_, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	if err == nil || !strings.Contains(err.Error(), "git checkout main") {
		t.Fatalf("publish with HEAD elsewhere: %v", err)
	}
}

func TestNodeRemovedByHandIsReportedAndRestored(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"f/a.txt": "a"})
	publish(t, v, "n", src, PublishOptions{})
	git(t, v.Root(), "rm", "-rq", "published/n")
	git(t, v.Root(), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "remove by hand")
	rep, err := v.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(rep.Problems[0].Reason, "removed by hand") {
		t.Fatalf("fsck after git rm: %+v", rep.Problems)
	}
	r := publish(t, v, "n", src, PublishOptions{})
	if r.Receipt.Status != "rendered" || r.Receipt.SemanticDiff["restored"] != true {
		t.Fatalf("republish after git rm: %s %v", r.Receipt.Status, r.Receipt.SemanticDiff)
	}
	if rep, err := v.Fsck(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("fsck after restore: %+v %v", rep, err)
	}
	checkGitClean(t, v)
}

func TestDiffRevisionsAndFacets(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"cfg.json": `{"x": 1}`, "items/a.json": `[1]`})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{"cfg.json": `{"x": 2}`, "items/a.json": `[1, 2]`})
	publish(t, v, "n", src, PublishOptions{})
	for _, bad := range []string{"HEAD~abc", "HEAD~-3", "HEAD~1x"} {
		if _, err := v.Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) succeeded", bad)
		}
	}
	from, err := v.Resolve("HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	to, _ := v.Resolve("HEAD")
	res, err := v.Diff(from, to, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range res.Changes {
		got[c.Path] = c.Facet + " " + c.Op
	}
	if got["cfg.x"] != "@atomic changed" || got["items.a[1]"] != "items added" || len(got) != 2 {
		t.Fatalf("changes: %v", got)
	}
}

func TestTooLongNodeNameIsRefusedBeforeAnyWrite(t *testing.T) {
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "a"})
	long := strings.Repeat("é", 50)
	if _, err := v.Publish(context.Background(), long, src, PublishOptions{}); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("long node name: %v", err)
	}
	if r := publish(t, v, "short", src, PublishOptions{}); r.Receipt.Status != "rendered" {
		t.Fatal("the vault stopped accepting writes")
	}
}

func TestPublishRefusesTheVaultAsItsOwnSource(t *testing.T) {
	v := newVault(t)
	for _, dir := range []string{v.Root(), filepath.Dir(v.Root()), v.GitDir(), v.StatePath()} {
		if _, err := v.Publish(context.Background(), "n", dir, PublishOptions{}); err == nil || !strings.Contains(err.Error(), "pass the directory the render wrote") {
			t.Errorf("publish from %s: %v", dir, err)
		}
	}
}
