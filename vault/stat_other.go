//go:build !linux && !darwin

package vault

import "io/fs"

// fillStatSys has no portable stat data to read here; fillStat falls back
// to the modification time.
func fillStatSys(fi fs.FileInfo, e *indexEntry) bool { return false }
