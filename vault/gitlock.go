package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// gitLock is a git lock file (<file>.lock) that prose holds, the way git
// holds it: created exclusively, written, then renamed over <file> (commit)
// or removed (release). While prose holds it, git commands that would
// change <file> fail or wait, as they do for each other.
//
// Its holder is proven by a second name of the same file in .git/,
// prose_lock_<pid>_<random>_<lock path, escaped>: the file is created under
// that name and hard-linked to the lock path, and the name stays until the
// lock is committed or released. A lock file is removed by anyone but its
// holder only when such a name proves it is prose's (the very same file, a
// hard link that nothing but the file itself can make) and the pid it names
// is dead; any other lock file — git's, or one whose holder cannot be
// proven — is waited for, then named in the error. While the name stands
// the file cannot be freed, so its identity cannot pass to another file.
//
// Where hard links are not available the lock file is created exclusively
// and .prose/<kind>.owner records the holder after it (pid, path, device
// and inode); a lock under such a record (or one an older prose left) is
// proven by it.
type gitLock struct {
	path   string // <file>.lock
	target string // <file>
	owner  string // the record, when the lock was made without a link
	proof  string // the proof name in .git/, "" without one
	f      *os.File
}

// gitLockWait bounds how long a writer waits for a lock file git holds:
// git holds them for the length of one command.
const gitLockWait = 5 * time.Second

// takeGitLock takes target's lock file, waiting while another process
// holds it. kind names the owner record (.prose/<kind>.owner) of a lock
// made without a hard link.
func (v *Vault) takeGitLock(target, kind string) (*gitLock, error) {
	l := &gitLock{path: target + ".lock", target: target, owner: v.StatePath(kind + ".owner")}
	wait := gitLockWait
	if v.opt.LockTimeout < 0 {
		wait = 0
	} else if v.opt.LockTimeout < wait {
		wait = v.opt.LockTimeout
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		f, err := v.createGitLock(l)
		if err == nil {
			l.f = f
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if v.removeStaleGitLock(kind) {
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s exists: a git command holds it (retry when it has finished), or one was killed (then remove the file)", l.path)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// tryGitLock takes target's lock file if it is free at once, and returns
// nil otherwise: for a cache update that is fine to skip.
func (v *Vault) tryGitLock(target, kind string) *gitLock {
	l := &gitLock{path: target + ".lock", target: target, owner: v.StatePath(kind + ".owner")}
	f, err := v.createGitLock(l)
	if err != nil {
		return nil
	}
	l.f = f
	return l
}

// gitLockTempPrefix names the proof names of prose's lock files in .git/
// (see gitLock); repair removes those of dead holders.
const gitLockTempPrefix = "prose_lock_"

// heldProofs are the proof names of the locks this process holds: a proof
// naming this process's pid is stale only when it is not among them (a
// writer holds the index, branch and ledger locks at once).
var heldProofs sync.Map

// proofName is the name in .git/ that proves the lock file at lock is
// held by process pid.
func (v *Vault) proofName(lock string, pid int) string {
	rel, err := filepath.Rel(v.gitDir, lock)
	if err != nil {
		rel = filepath.Base(lock)
	}
	return filepath.Join(v.gitDir, gitLockTempPrefix+strconv.Itoa(pid)+"_"+randomName()+"_"+url.PathEscape(filepath.ToSlash(rel)))
}

// parseProofName returns the pid and the lock path a proof name names.
func (v *Vault) parseProofName(name string) (pid int, lock string, ok bool) {
	rest, ok := strings.CutPrefix(name, gitLockTempPrefix)
	if !ok {
		return 0, "", false
	}
	parts := strings.SplitN(rest, "_", 3)
	if len(parts) != 3 {
		return 0, "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil {
		return 0, "", false
	}
	rel, err := url.PathUnescape(parts[2])
	if err != nil || !strings.HasSuffix(rel, ".lock") || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return 0, "", false
	}
	return pid, filepath.Join(v.gitDir, filepath.FromSlash(rel)), true
}

// createGitLock makes l's lock file so that no moment exists at which it
// stands unproven: the file is created under its proof name and only then
// hard-linked to the lock path, which fails when the path exists, as an
// exclusive create does. A holder killed at any point leaves either no lock
// file or one its proof name proves. Where hard links are not available
// the lock file is created exclusively and the owner record written after
// (a kill between the two leaves a lock nobody can prove).
func (v *Vault) createGitLock(l *gitLock) (*os.File, error) {
	// A lock file standing there is someone's: only a writer about to
	// create the file makes a proof name.
	if _, err := os.Lstat(l.path); err == nil {
		return nil, fs.ErrExist
	}
	proof := v.proofName(l.path, os.Getpid())
	f, err := os.OpenFile(proof, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return v.createGitLockDirect(l)
	}
	lerr := os.Link(proof, l.path)
	if lerr == nil {
		// The descriptor is the lock file's: the same file under two names.
		l.proof = proof
		heldProofs.Store(proof, true)
		return f, nil
	}
	f.Close()
	os.Remove(proof)
	if errors.Is(lerr, fs.ErrExist) {
		return nil, lerr
	}
	return v.createGitLockDirect(l)
}

func (v *Vault) createGitLockDirect(l *gitLock) (*os.File, error) {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = writeOwner(l, fi)
	}
	if err != nil {
		f.Close()
		os.Remove(l.path)
		os.Remove(l.owner)
		return nil, err
	}
	return f, nil
}

// writeOwner writes l's owner record whole (a temporary file renamed over
// it), so a kill never leaves half a record.
func writeOwner(l *gitLock, fi fs.FileInfo) error {
	tmp := l.owner + ".prose-tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n%s\n%s\n", os.Getpid(), l.path, fileIdentity(fi))), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, l.owner)
}

// dropProof removes what proves l's holder: its proof name, or its owner
// record.
func (l *gitLock) dropProof() {
	if l.proof != "" {
		os.Remove(l.proof)
		heldProofs.Delete(l.proof)
		l.proof = ""
		return
	}
	os.Remove(l.owner)
}

// commit closes the lock file and makes its content the target's, by
// rename. The proof name is removed after: a kill between the two leaves
// it naming the target, which proves nothing (it is not a lock file) and
// which repair removes.
func (l *gitLock) commit() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.path, l.target); err != nil {
		l.f = nil
		os.Remove(l.path)
		l.dropProof()
		return err
	}
	l.f = nil
	l.dropProof()
	return nil
}

// release gives the lock up without changing the target; it does nothing
// after commit. The lock file goes before its proof, so it never stands
// unproven.
func (l *gitLock) release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
	os.Remove(l.path)
	l.dropProof()
}

// fileIdentity names a file by device and inode, or "" where the platform
// does not tell them.
func fileIdentity(fi fs.FileInfo) string {
	var e indexEntry
	if !fillStatSys(fi, &e) {
		return ""
	}
	return strconv.FormatUint(uint64(e.Dev), 10) + ":" + strconv.FormatUint(uint64(e.Ino), 10)
}

// removeStaleGitLock removes the lock files of prose writers that died
// holding them, and reports whether it removed one. A lock file is proven
// by a proof name in .git/ (see gitLock) that is the very same file and
// names a pid that is gone; a proof name that names a dead pid and no lock
// file (its holder was killed before the link or after the commit) is
// removed alone. Then the owner record of kind, for a lock made without a
// link: see removeRecordedGitLock.
func (v *Vault) removeStaleGitLock(kind string) bool {
	removed := false
	ents, _ := os.ReadDir(v.gitDir)
	for _, e := range ents {
		pid, lock, ok := v.parseProofName(e.Name())
		if !ok {
			continue
		}
		proof := filepath.Join(v.gitDir, e.Name())
		if _, held := heldProofs.Load(proof); held || (pid != os.Getpid() && processAlive(pid)) {
			continue
		}
		pfi, perr := os.Lstat(proof)
		lfi, lerr := os.Lstat(lock)
		if perr == nil && lerr == nil && os.SameFile(pfi, lfi) {
			if os.Remove(lock) != nil {
				continue // kept with its proof, to be tried again
			}
			removed = true
		}
		os.Remove(proof)
	}
	return v.removeRecordedGitLock(kind) || removed
}

// removeRecordedGitLock removes the lock file recorded in .prose/<kind>.owner
// when the record proves it was prose's and its holder is dead: the
// holder's pid is gone and the lock file standing there is the very file it
// created (same device and inode). It reports whether it removed one. A
// record that no longer matches the lock file (its holder was killed after
// the rename) is removed alone.
func (v *Vault) removeRecordedGitLock(kind string) bool {
	owner := v.StatePath(kind + ".owner")
	data, err := os.ReadFile(owner)
	if err != nil {
		return false
	}
	fields := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(fields) != 3 {
		os.Remove(owner) // an older record that names no identity proves nothing
		return false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || (pid != os.Getpid() && processAlive(pid)) {
		return false
	}
	lockPath, id := fields[1], fields[2]
	if !strings.HasPrefix(lockPath, v.gitDir+string(filepath.Separator)) || !strings.HasSuffix(lockPath, ".lock") {
		os.Remove(owner)
		return false
	}
	fi, err := os.Lstat(lockPath)
	if err != nil || id == "" || fileIdentity(fi) != id {
		os.Remove(owner)
		return false
	}
	if err := os.Remove(lockPath); err != nil {
		return false
	}
	os.Remove(owner)
	return true
}
