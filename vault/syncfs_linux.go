package vault

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes every dirty page and all metadata of the filesystem that
// holds dir, with one syncfs(2). After it returns, every file written and
// every rename made before the call is durable.
func syncFS(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return true, err
	}
	defer f.Close()
	return true, unix.Syncfs(int(f.Fd()))
}
