//go:build unix

package reactor

import (
	"os/exec"
	"syscall"
)

// setGroup runs cmd in its own process group and makes cancelling it kill
// the whole group, so a render's children die with it.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
