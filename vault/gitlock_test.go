package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A prose lock file never stands unproven: it is created under its proof
// name in .git/ and hard-linked into place, so a holder killed right after
// the link leaves a lock the next writer can prove and remove. Here the
// holder "dies" (its proof names a pid that is gone).
func TestGitLockIsProvableTheMomentItExists(t *testing.T) {
	v := newVault(t)
	target := filepath.Join(v.GitDir(), "refs", "heads", "main")
	l, err := v.takeGitLock(target, "ref.lock")
	if err != nil {
		t.Fatal(err)
	}
	proofs, _ := filepath.Glob(filepath.Join(v.GitDir(), gitLockTempPrefix+"*"))
	if len(proofs) != 1 {
		t.Fatalf("%d proof names while the lock is held (%v), want 1", len(proofs), proofs)
	}
	pfi, err1 := os.Lstat(proofs[0])
	lfi, err2 := os.Lstat(l.path)
	if err1 != nil || err2 != nil || !os.SameFile(pfi, lfi) {
		t.Fatalf("proof name %s is not the lock file %s", proofs[0], l.path)
	}
	if pid, lock, ok := v.parseProofName(filepath.Base(proofs[0])); !ok || pid != os.Getpid() || lock != l.path {
		t.Fatalf("proof name %s names pid %d, lock %s; want %d, %s", proofs[0], pid, lock, os.Getpid(), l.path)
	}
	if _, err := os.Lstat(l.owner); !os.IsNotExist(err) {
		t.Fatalf("an owner record was written beside the proof name: %v", err)
	}
	// The holder dies: leave the file, make the proof name a dead pid's.
	l.f.Close()
	heldProofs.Delete(proofs[0])
	_, rest, _ := strings.Cut(strings.TrimPrefix(filepath.Base(proofs[0]), gitLockTempPrefix), "_")
	dead := filepath.Join(v.GitDir(), gitLockTempPrefix+"999999999_"+rest)
	if err := os.Rename(proofs[0], dead); err != nil {
		t.Fatal(err)
	}
	l2, err := v.takeGitLock(target, "ref.lock")
	if err != nil {
		t.Fatalf("a dead holder's provable lock was not taken over: %v", err)
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Fatal("the dead holder's proof name was left")
	}
	l2.release()
	if _, err := os.Lstat(l.path); !os.IsNotExist(err) {
		t.Fatal("release left the lock file")
	}
	if ents, _ := filepath.Glob(filepath.Join(v.GitDir(), gitLockTempPrefix+"*")); len(ents) != 0 {
		t.Fatalf("proof names left after release: %v", ents)
	}
}
