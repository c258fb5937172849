//go:build !unix

package vault

import "os"

// openFile is os.OpenFile here.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

// renameFile is os.Rename.
func renameFile(old, new string) error { return os.Rename(old, new) }

// readFlags open a file to read.
const readFlags = os.O_RDONLY
