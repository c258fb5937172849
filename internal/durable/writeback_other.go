//go:build !linux

package durable

import "os"

// startWriteback is a no-op where sync_file_range(2) does not exist.
func startWriteback(f *os.File, off, n int64) {}
