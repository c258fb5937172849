//go:build !linux

package main

import "os"

// syncAll has no portable form here; runs are not separated by a sync.
func syncAll() {}

// syncFS fsyncs dir where syncfs(2) is missing (the vault then fsyncs file
// by file, so this floor is a lower bound).
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
