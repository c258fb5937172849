//go:build !unix

package vault

import (
	"os/exec"
	"testing"
)

// withUmask: no umask here.
func withUmask(t *testing.T, mask int) {}

// killed reports whether the process was ended from outside.
func killed(ee *exec.ExitError) bool { return !ee.Exited() || ee.ExitCode() != 0 }
