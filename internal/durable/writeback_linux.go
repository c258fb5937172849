package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing the given range of f to
// disk without waiting for it. Started early, the writeback overlaps the
// rest of a large write, so the final fsync has little left to do and dirty
// pages do not pile up. It is only a hint: errors are ignored, and fsync
// remains the guarantee.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
