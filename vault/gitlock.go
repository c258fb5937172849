package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// gitLock is a git lock file (<file>.lock) that prose holds, the way git
// holds it: created exclusively, written, then renamed over <file> (commit)
// or removed (release). While prose holds it, git commands that would
// change <file> fail or wait, as they do for each other.
//
// Beside it, .prose/<kind>.owner names the holder: its pid, the lock's path
// and the lock file's identity (device and inode). A lock file is removed
// by anyone but its holder only when that record proves it is prose's and
// its holder is dead; any other lock file — git's, or one whose holder
// cannot be proven — is waited for, then named in the error.
type gitLock struct {
	path   string // <file>.lock
	target string // <file>
	owner  string
	f      *os.File
}

// gitLockWait bounds how long a writer waits for a lock file git holds:
// git holds them for the length of one command.
const gitLockWait = 5 * time.Second

// takeGitLock takes target's lock file, waiting while another process
// holds it. kind names the owner record (.prose/<kind>.owner).
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

// gitLockTempPrefix names the file a lock is made from in .git/ before it
// is linked into place; repair removes strays.
const gitLockTempPrefix = "prose_lock_"

// createGitLock makes l's lock file so that no moment exists at which it
// stands without an owner record naming it: the file is created under a
// temporary name, the record (pid, path, identity) is written whole, and
// only then is the file hard-linked to the lock path, which fails when the
// path exists, as an exclusive create does. A holder killed at any point
// leaves either no lock file or one its record proves. Where hard links
// are not available the lock file is created exclusively and the record
// written after (a kill between the two leaves a lock nobody can prove).
func (v *Vault) createGitLock(l *gitLock) (*os.File, error) {
	// A lock file standing there keeps its holder's record: only a
	// writer about to create the file writes one.
	if _, err := os.Lstat(l.path); err == nil {
		return nil, fs.ErrExist
	}
	tmp := filepath.Join(v.gitDir, gitLockTempPrefix+randomName())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return v.createGitLockDirect(l)
	}
	fi, err := f.Stat()
	if err == nil {
		err = writeOwner(l, fi)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	lerr := os.Link(tmp, l.path)
	os.Remove(tmp)
	if lerr == nil {
		// Hold it by its own name, so what is written and synced is
		// the lock file's, under the lock's path.
		f.Close()
		lf, err := os.OpenFile(l.path, os.O_RDWR, 0)
		if err != nil {
			os.Remove(l.path)
			os.Remove(l.owner)
			return nil, err
		}
		return lf, nil
	}
	f.Close()
	os.Remove(l.owner) // ours, naming a file that is not the lock (git took the path meanwhile)
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

// commit closes the lock file and makes its content the target's, by
// rename.
func (l *gitLock) commit() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	if err := os.Rename(l.path, l.target); err != nil {
		l.f = nil
		os.Remove(l.path)
		os.Remove(l.owner)
		return err
	}
	l.f = nil
	os.Remove(l.owner)
	return nil
}

// release gives the lock up without changing the target; it does nothing
// after commit.
func (l *gitLock) release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
	os.Remove(l.path)
	os.Remove(l.owner)
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

// removeStaleGitLock removes the lock file recorded in .prose/<kind>.owner
// when the record proves it was prose's and its holder is dead: the
// holder's pid is gone and the lock file standing there is the very file it
// created (same device and inode). It reports whether it removed one. A
// record that no longer matches the lock file (its holder was killed after
// the rename) is removed alone.
func (v *Vault) removeStaleGitLock(kind string) bool {
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
