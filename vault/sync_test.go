package vault

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/durable"
)

// A pull that stops between its two ref moves (the branch moved, the
// ledger not) is finished by the next writer's repair: the ledger takes
// the remote's very commit, never a roll-forward copy of its receipt.
func TestPullStoppedBetweenRefMovesIsFinishedByRepair(t *testing.T) {
	ctx := context.Background()
	a, b, src := pushedAndCloned(t)
	// Two receipts arrive: a roll-forward, which appends only the
	// branch's newest receipt when it directly follows the ledger, could
	// not finish this pull.
	writeTree(t, src, map[string]string{"x.txt": "2\n"})
	publish(t, a, "notes", src, PublishOptions{})
	writeTree(t, src, map[string]string{"x.txt": "3\n"})
	publish(t, a, "notes", src, PublishOptions{})
	if _, err := a.Push(ctx, "origin", false); err != nil {
		t.Fatal(err)
	}
	restore := durable.SetFault(durable.FailAt(durable.StepRename, filepath.Join("refs", "prose", "ledger")))
	_, err := b.Pull(ctx, "origin", PullOptions{})
	restore()
	if err == nil {
		t.Fatal("the pull did not stop at the ledger's move")
	}
	wantBranch, _ := a.readRef(a.Branch())
	wantLedger, _ := a.readRef(LedgerRef)
	if got, _ := b.readRef(b.Branch()); got != wantBranch {
		t.Fatalf("the branch did not move before the stop")
	}
	if got, _ := b.readRef(LedgerRef); got == wantLedger {
		t.Fatalf("the ledger moved despite the fault")
	}
	if err := b.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.readRef(LedgerRef); got != wantLedger {
		t.Fatalf("repair left the ledger at %s, want the remote's %s", got, wantLedger)
	}
	rep, err := b.VerifyReceipts()
	if err != nil || len(rep.Problems) > 0 || rep.Receipts != 3 {
		t.Fatalf("verify after repair: %v %+v", err, rep)
	}
	if data := git(t, b.Root(), "status", "--porcelain"); strings.TrimSpace(data) != "" {
		t.Fatalf("git status after repair:\n%s", data)
	}
	checkGitClean(t, b)
}

// A merge pull stopped between its two ref moves is finished the same way:
// the ledger takes the ledger merge commit the pull made, and every
// receipt of both sides verifies.
func TestMergePullStoppedBetweenRefMovesIsFinishedByRepair(t *testing.T) {
	ctx := context.Background()
	a, b, src := pushedAndCloned(t)
	writeTree(t, src, map[string]string{"x.txt": "2\n"})
	publish(t, a, "notes", src, PublishOptions{})
	if _, err := a.Push(ctx, "origin", false); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"o.txt": "b\n"})
	publish(t, b, "other", src, PublishOptions{})
	before, _ := b.readRef(LedgerRef)
	restore := durable.SetFault(durable.FailAt(durable.StepRename, filepath.Join("refs", "prose", "ledger")))
	_, err := b.Pull(ctx, "origin", PullOptions{})
	restore()
	if err == nil {
		t.Fatal("the merge pull did not stop at the ledger's move")
	}
	if got, _ := b.readRef(LedgerRef); got != before {
		t.Fatal("the ledger moved despite the fault")
	}
	if err := b.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	lt, _ := b.readRef(LedgerRef)
	lc, err := b.commit(lt)
	if err != nil || !isLedgerMerge(lc.ParentHashes, []byte(lc.Message)) {
		t.Fatalf("repair did not finish the ledger merge: %v %v", err, lc)
	}
	rep, err := b.VerifyReceipts()
	if err != nil || len(rep.Problems) > 0 || rep.Receipts != 3 || rep.Nodes != 2 {
		t.Fatalf("verify after repair: %v %+v", err, rep)
	}
	frep, err := b.Fsck(ctx)
	if err != nil || !frep.OK() {
		t.Fatalf("fsck after repair: %v %+v", err, frep)
	}
	checkGitClean(t, b)
}

// pushedAndCloned is the set-up of the pull tests: vault a under a fresh
// root with node notes published once from src (x.txt), pushed to a bare
// remote, and b cloned from it.
func pushedAndCloned(t *testing.T) (a, b *Vault, src string) {
	t.Helper()
	requireGit(t)
	ctx := context.Background()
	t.Setenv("GIT_TERMINAL_PROMPT", "0")
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	git(t, root, "init", "--quiet", "--bare", remote)
	a, err := Init(filepath.Join(root, "a"), InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src = filepath.Join(root, "src")
	writeTree(t, src, map[string]string{"x.txt": "1\n"})
	publish(t, a, "notes", src, PublishOptions{})
	if err := a.AddRemote(ctx, "origin", remote); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Push(ctx, "origin", false); err != nil {
		t.Fatal(err)
	}
	b, err = Clone(ctx, remote, filepath.Join(root, "b"), CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, src
}
