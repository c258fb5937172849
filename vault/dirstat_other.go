//go:build !linux

package vault

import (
	"os"
	"path/filepath"
)

// dirStat lstats files of the work tree by their full path; on Linux it
// stats relative to an open directory instead (dirstat_linux.go).
type dirStat struct{ root string }

func newDirStat(root string) *dirStat { return &dirStat{root: root} }

// entry fills e with the stat data git keeps for rel and reports whether
// rel is a regular file.
func (d *dirStat) entry(rel string, e *indexEntry) bool {
	fi, err := os.Lstat(filepath.Join(d.root, filepath.FromSlash(rel)))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	fillStat(fi, e)
	return true
}

func (d *dirStat) close() {}
