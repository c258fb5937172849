//go:build unix

package vault

import "syscall"

// pidAlive reports whether a process with this pid exists.
func pidAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
