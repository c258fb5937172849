//go:build !linux

package testtmp

// isRAM says whether dir is a tmpfs: only known on Linux.
func isRAM(string) bool { return false }
