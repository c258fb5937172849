//go:build unix

package vault

import (
	"os"
	"syscall"
)

// openFile opens a regular file like os.OpenFile, but as a plain blocking
// descriptor: os.OpenFile offers every file to the network poller first
// (an fcntl and a failed epoll_ctl each time), which a publish writing and
// reading tens of thousands of files pays for nothing.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// renameFile renames old to new with one rename(2): os.Rename first lstats
// new to refuse replacing a directory, which the callers have ruled out,
// and rename(2) refuses that too (EISDIR).
func renameFile(old, new string) error {
	for {
		err := syscall.Rename(old, new)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
		}
		return nil
	}
}

// readFlags open a file to read without following a final symlink and
// without waiting on a special file (a named pipe).
const readFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
