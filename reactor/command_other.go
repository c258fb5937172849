//go:build !unix

package reactor

import "os/exec"

func setGroup(cmd *exec.Cmd) {}
