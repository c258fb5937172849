//go:build linux

package testtmp

import "syscall"

// tmpfsMagic is the f_type statfs reports for tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994

// isRAM says whether dir is a tmpfs.
func isRAM(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}
