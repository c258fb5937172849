//go:build unix

package vault

import (
	"os/exec"
	"syscall"
	"testing"
)

// withUmask sets the process's umask for the rest of the test.
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// killed reports whether the process ended by SIGKILL.
func killed(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signal() == syscall.SIGKILL
}
