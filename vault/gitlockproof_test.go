package vault

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A lock file is removed by another writer only when a proof name in .git/
// is that very file and names a dead pid; a proof of a live holder, or one
// beside a lock file that is another file (git's), keeps the lock, which is
// waited for and named. Proof names a killed holder left without a lock
// (before the link, or after the commit's rename) are removed alone.
func TestGitLockProofNames(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	for _, kind := range []string{"ref.lock", "index.lock"} {
		for _, tc := range []struct {
			name    string
			pid     int
			lock    string // "same": the proof's file; "other": another file; "": none
			removed bool   // the lock file goes, the publish lands
		}{
			{"dead holder", dead.Process.Pid, "same", true},
			{"git's lock beside a dead holder's proof", dead.Process.Pid, "other", false},
			{"live holder", live.Process.Pid, "same", false},
			{"proof left without a lock", dead.Process.Pid, "", true},
			{"proof left naming the committed target", dead.Process.Pid, "target", true},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				v := newVault(t)
				src := filepath.Join(t.TempDir(), "src")
				writeTree(t, src, map[string]string{"a.txt": "one"})
				publish(t, v, "n", src, PublishOptions{})
				target := v.indexPath()
				if kind == "ref.lock" {
					target = filepath.Join(v.GitDir(), "refs", "heads", "main")
				}
				lock := target + ".lock"
				proof := v.proofName(lock, tc.pid)
				switch tc.lock {
				case "same":
					os.WriteFile(lock, []byte("x"), 0o644)
					if err := os.Link(lock, proof); err != nil {
						t.Fatal(err)
					}
				case "other":
					os.WriteFile(proof, []byte("x"), 0o644)
					os.WriteFile(lock, []byte("git"), 0o644)
				case "target":
					if err := os.Link(target, proof); err != nil {
						t.Fatal(err)
					}
				default:
					os.WriteFile(proof, nil, 0o644)
				}
				v2, _ := Open(v.Root(), Options{LockTimeout: 100 * time.Millisecond})
				writeTree(t, src, map[string]string{"a.txt": "two"})
				_, err := v2.Publish(context.Background(), "n", src, PublishOptions{})
				_, statErr := os.Stat(lock)
				_, proofErr := os.Lstat(proof)
				if tc.removed {
					if err != nil || statErr == nil {
						t.Fatalf("publish %v, lock file still there: %v", err, statErr == nil)
					}
					if proofErr == nil {
						t.Fatalf("the dead holder's proof name %s was left", proof)
					}
					if receiptCount(t, v2) != 2 {
						t.Fatal("the publish did not land")
					}
					if got, _ := os.ReadFile(filepath.Join(v.Root(), "published", "n", "a.txt")); string(got) != "two" {
						t.Fatalf("a.txt = %q after the publish", got)
					}
					return
				}
				if statErr != nil {
					t.Fatalf("%s was removed although it is not provably a dead prose writer's", lock)
				}
				if err == nil || !strings.Contains(err.Error(), lock) {
					t.Fatalf("publish: %v, want a failure naming %s", err, lock)
				}
				if tc.pid == live.Process.Pid && proofErr != nil {
					t.Fatal("a live holder's proof name was removed")
				}
				if n := receiptCount(t, v2); n != 1 {
					t.Fatalf("%d receipts, want 1", n)
				}
			})
		}
	}
}

// A writer holds the index, branch and ledger locks at once: looking for a
// stale lock while it holds one never takes its own (its proof names this
// process, which is alive and holds it), and commit leaves no proof name.
func TestGitLockOwnHeldLockIsNotStale(t *testing.T) {
	v := newVault(t)
	l, err := v.takeGitLock(v.indexPath(), "index.lock")
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(v.GitDir(), "refs", "heads", "main")
	os.WriteFile(ref+".lock", []byte("git"), 0o644) // git holds the branch
	v.opt.LockTimeout = 50 * time.Millisecond
	if _, err := v.takeGitLock(ref, "ref.lock"); err == nil || !strings.Contains(err.Error(), ref+".lock") {
		t.Fatalf("took the branch lock git holds: %v", err)
	}
	if _, err := os.Lstat(l.path); err != nil {
		t.Fatalf("the index lock this writer holds was removed: %v", err)
	}
	if _, err := os.Lstat(l.proof); err != nil {
		t.Fatalf("the proof of the index lock this writer holds was removed: %v", err)
	}
	os.Remove(ref + ".lock")
	if _, err := l.f.Write([]byte("index")); err != nil {
		t.Fatal(err)
	}
	if err := l.commit(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(v.GitDir(), gitLockTempPrefix+"*")); len(ents) != 0 {
		t.Fatalf("proof names left after commit: %v", ents)
	}
	if got, _ := os.ReadFile(v.indexPath()); string(got) != "index" {
		t.Fatalf("index = %q after commit", got)
	}
}
