package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncAll flushes every filesystem, so one run's writeback does not land in
// the next one's time.
func syncAll() { unix.Sync() }

// syncFS flushes the filesystem holding dir, as a publish's flush does.
func syncFS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
