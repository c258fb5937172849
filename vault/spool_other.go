//go:build !linux

package vault

import "errors"

// renameNoReplace is not offered here: the staged checkout writes the
// file from the object store instead.
func renameNoReplace(old, new string) error {
	return errors.New("rename without replace is not supported here")
}
