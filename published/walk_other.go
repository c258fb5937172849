//go:build !linux

package published

import (
	"fmt"
	"github.com/prose-store/prose/internal/fsmode"
	"io/fs"
	"os"
	"path/filepath"
)

// Outside Linux the walk uses os.ReadDir and os.Lstat. The stat data kept
// for the cache is size, modification time and mode only (no inode or
// change time), which is what every platform reports.

// dirHandle is an open directory: here, just its absolute path.
type dirHandle struct{ path string }

// openRoot opens the directory at the absolute path dir.
func openRoot(dir string) (dirHandle, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return dirHandle{}, err
	}
	if !fi.IsDir() {
		return dirHandle{}, &fs.PathError{Op: "open", Path: dir, Err: fmt.Errorf("not a directory")}
	}
	return dirHandle{path: dir}, nil
}

// openSub opens the subdirectory name of d without following a symlink.
func (d dirHandle) openSub(name string) (dirHandle, error) {
	p := filepath.Join(d.path, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return dirHandle{}, err
	}
	if !fi.IsDir() {
		return dirHandle{}, fmt.Errorf("not a directory")
	}
	return dirHandle{path: p}, nil
}

// close releases the directory.
func (d dirHandle) close() {}

// readNames returns the names in d, each with its kind.
func (d dirHandle) readNames() ([]dirName, error) {
	es, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	names := make([]dirName, len(es))
	for i, e := range es {
		names[i] = dirName{name: e.Name(), kind: kindOfMode(uint32(e.Type()))}
	}
	return names, nil
}

// lstat returns the stat data of name in d without following a symlink.
func (d dirHandle) lstat(name string) (fileStat, error) {
	fi, err := os.Lstat(filepath.Join(d.path, name))
	if err != nil {
		return fileStat{}, err
	}
	return statOfInfo(fi), nil
}

// statPath returns the stat data of the file at the absolute path p,
// following symlinks (used for the targets of links).
func statPath(p string) (fileStat, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileStat{}, err
	}
	return statOfInfo(fi), nil
}

func statOfInfo(fi fs.FileInfo) fileStat {
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode())}
}

// kindOfMode classifies a mode (an fs.FileMode here).
func kindOfMode(mode uint32) nameKind {
	m := fs.FileMode(mode)
	switch {
	case m.IsRegular():
		return kindFile
	case m.IsDir():
		return kindDir
	case m&fs.ModeSymlink != 0:
		return kindLink
	}
	return kindOther
}

// describeMode names the type of a non-regular file for error messages.
func describeMode(mode uint32) string { return fsmode.Describe(fs.FileMode(mode)) }
