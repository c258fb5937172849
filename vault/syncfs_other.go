//go:build !linux

package vault

// syncFS is not available here; callers fsync file by file.
func syncFS(dir string) (bool, error) { return false, nil }
