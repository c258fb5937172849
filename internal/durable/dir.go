package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// SyncDir fsyncs the directory dir, making the creation, renaming and
// removal of its entries durable. File systems that cannot fsync a directory
// are tolerated.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	err = d.Sync()
	cerr := d.Close()
	if err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	if cerr != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, cerr)
	}
	return nil
}

// MkdirAll creates dir and any missing parents with perm (subject to the
// umask), like os.MkdirAll, and fsyncs the parent of each directory it
// creates so the new directories survive a crash. It succeeds if dir already
// exists, including when another process creates it concurrently.
func MkdirAll(dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("create directory %s: a file is in the way", dir)
		}
		return nil
	}
	// Collect the missing directories, deepest first.
	var missing []string
	for d := dir; ; {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
		missing = append(missing, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, perm); err != nil {
			if fi, serr := os.Stat(d); serr == nil && fi.IsDir() {
				continue // created concurrently; its creator syncs the parent
			}
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
		parent := filepath.Dir(d)
		if err := check(StepDirSync, parent); err != nil {
			return fmt.Errorf("create directory %s: fsync directory %s: %w", dir, parent, err)
		}
		if err := SyncDir(parent); err != nil {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
	}
	return nil
}

// CleanTemps removes the temporary files this package left in dir (not in
// its subdirectories) when a process crashed mid-write, if they were last
// modified more than olderThan ago, and returns how many it removed. Choose
// olderThan well above the duration of any write in progress: a write whose
// temporary file is removed fails cleanly at its rename, but it fails.
func CleanTemps(dir string, olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("clean temporary files in %s: %w", dir, err)
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	for _, e := range entries {
		if !isTemp(e.Name()) || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().After(cutoff) {
			continue // vanished meanwhile, or possibly still being written
		}
		err = os.Remove(filepath.Join(dir, e.Name()))
		switch {
		case err == nil:
			removed++
		case errors.Is(err, os.ErrNotExist):
		default:
			return removed, fmt.Errorf("clean temporary files in %s: %w", dir, err)
		}
	}
	return removed, nil
}
