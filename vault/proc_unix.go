//go:build unix

package vault

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists (signal 0 probes it; a
// process of another user answers EPERM).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
