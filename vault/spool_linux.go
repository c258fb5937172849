package vault

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames old to new, failing when new exists.
func renameNoReplace(old, new string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
		}
		return nil
	}
}
