package vault

import (
	"context"
	"errors"
	"os"
	"os/exec"
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

// gitAt runs git in the vault with a pinned committer date, as clock skew,
// `rebase --committer-date-is-author-date` or GIT_COMMITTER_DATE give.
func gitAt(t *testing.T, v *Vault, date string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = v.Root()
	cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date,
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func receiptCount(t *testing.T, v *Vault) int {
	t.Helper()
	recs, err := v.AllReceipts()
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// A writer that dies between the branch and ledger ref moves leaves a
// branch commit whose receipt the ledger lacks. The next writer records it,
// even after a user commit with a committer date years older landed on top:
// repair only rolls forward, and never by dates.
func TestCrashBetweenRefMovesRollsTheLedgerForward(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "one"})
	publish(t, v, "n", src, PublishOptions{})
	writeTree(t, src, map[string]string{"a.txt": "two"})
	restore := durable.SetFault(durable.FailAt(durable.StepRename, filepath.Join(v.GitDir(), "refs", "prose")))
	res, err := v.Publish(context.Background(), "n", src, PublishOptions{})
	restore()
	var le *LandedError
	if !errors.As(err, &le) || le.Receipt != res.Receipt.ContentHash {
		t.Fatalf("publish: %v, want a landed error naming %s", err, res.Receipt.ContentHash)
	}
	writeTree(t, filepath.Join(v.Root(), "src"), map[string]string{"x.md": "x"})
	gitAt(t, v, "2001-01-01T00:00:00Z", "add", "src")
	gitAt(t, v, "2001-01-01T00:00:00Z", "commit", "-qm", "user change with an old date")
	if err := v.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := receiptCount(t, v); n != 2 {
		t.Fatalf("%d receipts after repair, want 2", n)
	}
	last, _ := v.LastReceipt("n")
	if last == nil || last.ContentHash != res.Receipt.ContentHash {
		t.Fatalf("last receipt %v, want the one that landed on the branch", last)
	}
	rep, err := v.Fsck(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
	if r := publish(t, v, "n", src, PublishOptions{}); r.Receipt.Status != "skipped" {
		t.Fatalf("republish of the landed content: %s", r.Receipt.Status)
	}
	checkGitClean(t, v)
}

// User commits and rewrites never cost a receipt. A commit with an old
// committer date on top of prose's commit used to make the last receipt look
// unfinished; an amend or a reset of prose's commit takes the receipt's
// commit off the branch, which fsck reports while the ledger keeps it.
func TestUserRewritesKeepEveryReceipt(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name    string
		rewrite func(t *testing.T, v *Vault)
		off     bool // the receipt's commit leaves the branch
	}{
		{"old committer date", func(t *testing.T, v *Vault) {
			writeTree(t, filepath.Join(v.Root(), "src"), map[string]string{"x.md": "x"})
			gitAt(t, v, "1990-06-01T00:00:00Z", "add", "src")
			gitAt(t, v, "1990-06-01T00:00:00Z", "commit", "-qm", "skewed clock")
		}, false},
		{"amend", func(t *testing.T, v *Vault) {
			gitAt(t, v, "2002-01-01T00:00:00Z", "commit", "-q", "--amend", "--no-edit")
		}, true},
		{"amend with a new message", func(t *testing.T, v *Vault) {
			gitAt(t, v, "2002-01-01T00:00:00Z", "commit", "-q", "--amend", "-m", "reworded")
		}, true},
		{"reset", func(t *testing.T, v *Vault) {
			gitAt(t, v, "2002-01-01T00:00:00Z", "reset", "-q", "--hard", "HEAD~1")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVault(t)
			src := filepath.Join(t.TempDir(), "src")
			writeTree(t, src, map[string]string{"a.txt": "one"})
			publish(t, v, "n", src, PublishOptions{})
			writeTree(t, src, map[string]string{"a.txt": "two"})
			second := publish(t, v, "n", src, PublishOptions{})
			tc.rewrite(t, v)
			if err := v.Repair(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := receiptCount(t, v); n != 2 {
				t.Fatalf("%d receipts after the rewrite and a repair, want 2", n)
			}
			last, _ := v.LastReceipt("n")
			if last == nil || last.ContentHash != second.Receipt.ContentHash {
				t.Fatalf("last receipt %v, want %s", last, second.Receipt.ContentHash)
			}
			off, err := v.OffBranchReceipts()
			if err != nil {
				t.Fatal(err)
			}
			if tc.off != (len(off) == 1 && strings.Contains(off[0].Where, second.Receipt.ContentHash)) {
				t.Fatalf("off-branch receipts: %v, want the second receipt reported: %v", off, tc.off)
			}
			rep, err := v.Fsck(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				found = found || strings.Contains(p.Reason, "is not on the branch")
			}
			if found != tc.off {
				t.Fatalf("fsck problems %v: reports the off-branch receipt = %v, want %v", rep.Problems, found, tc.off)
			}
			if n := receiptCount(t, v); n != 2 {
				t.Fatalf("%d receipts after fsck, want 2", n)
			}
		})
	}
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

// A rendered publish leaves the ledger's rename unflushed (the branch
// commit carries the receipt): a power cut that loses the rename must be
// undone exactly — repair appends the very commit the ledger had, so a
// ledger someone pushed or read before the cut is the one after it. A
// ledger move alone (a skipped receipt) is the receipt's only record, and
// its directory is flushed.
func TestALostLedgerRenameIsPutBackExactly(t *testing.T) {
	requireGit(t)
	v := newVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeTree(t, src, map[string]string{"a.txt": "one"})
	publish(t, v, "n", src, PublishOptions{})
	before, err := v.readRef(LedgerRef)
	if err != nil {
		t.Fatal(err)
	}
	ledgerDir := filepath.Join(v.GitDir(), "refs", "prose")
	var synced []string
	restore := durable.SetFault(func(step durable.Step, path string) error {
		if step == durable.StepDirSync && strings.HasPrefix(path, filepath.Join(v.GitDir(), "refs")) {
			synced = append(synced, path)
		}
		return nil
	})
	writeTree(t, src, map[string]string{"a.txt": "two"})
	res := publish(t, v, "n", src, PublishOptions{})
	if res.Receipt.Status != "rendered" {
		t.Fatalf("second publish: %s", res.Receipt.Status)
	}
	for _, p := range synced {
		if p == ledgerDir {
			t.Fatalf("a rendered publish flushed the ledger's directory (synced %v)", synced)
		}
	}
	after, err := v.readRef(LedgerRef)
	if err != nil || after == before {
		t.Fatalf("the ledger did not move: %v", err)
	}
	// The cut: the ledger file is back to the value before the rename.
	if err := os.WriteFile(filepath.Join(ledgerDir, "ledger"), []byte(before.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := v.readRef(LedgerRef); err != nil || got != after {
		t.Fatalf("ledger after repair %s (%v), want the lost %s exactly", got, err, after)
	}
	synced = nil
	if r := publish(t, v, "n", src, PublishOptions{}); r.Receipt.Status != "skipped" {
		t.Fatalf("third publish: %s", r.Receipt.Status)
	}
	restore()
	if len(synced) != 1 || synced[0] != ledgerDir {
		t.Fatalf("a skipped receipt's ledger move flushed %v, want only the ledger's directory", synced)
	}
	rep, err := v.Fsck(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}
