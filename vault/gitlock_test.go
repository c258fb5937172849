package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A prose lock file never stands without an owner record naming it: the
// record is written before the file is linked into place, so a holder
// killed right after the link leaves a lock the next writer can prove and
// remove. Here the holder "dies" (its record names a pid that is gone).
func TestGitLockIsProvableTheMomentItExists(t *testing.T) {
	v := newVault(t)
	target := filepath.Join(v.GitDir(), "refs", "heads", "main")
	l, err := v.takeGitLock(target, "ref.lock")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.owner)
	if err != nil {
		t.Fatalf("no owner record while the lock is held: %v", err)
	}
	fields := strings.Split(strings.TrimSpace(string(data)), "\n")
	fi, err := os.Lstat(l.path)
	if err != nil || len(fields) != 3 || fields[1] != l.path || fields[2] != fileIdentity(fi) {
		t.Fatalf("owner record %q does not name the lock file %s", data, l.path)
	}
	if ents, _ := filepath.Glob(filepath.Join(v.GitDir(), gitLockTempPrefix+"*")); len(ents) != 0 {
		t.Fatalf("temporary names left: %v", ents)
	}
	// The holder dies: leave the file, point the record at a dead pid.
	l.f.Close()
	if err := os.WriteFile(l.owner, []byte("999999999\n"+fields[1]+"\n"+fields[2]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l2, err := v.takeGitLock(target, "ref.lock")
	if err != nil {
		t.Fatalf("a dead holder's provable lock was not taken over: %v", err)
	}
	l2.release()
	if _, err := os.Lstat(l.path); !os.IsNotExist(err) {
		t.Fatal("release left the lock file")
	}
}
