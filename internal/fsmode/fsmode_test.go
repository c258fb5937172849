package fsmode

import (
	"io/fs"
	"testing"
)

func TestDescribe(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeDir | 0o755:                "a directory",
		fs.ModeSymlink | 0o777:            "a symbolic link",
		fs.ModeNamedPipe | 0o644:          "a named pipe (FIFO)",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a block device",
		fs.ModeSocket:                     "a socket",
		fs.ModeIrregular:                  "an irregular file",
		0o644:                             "a regular file",
	} {
		if got := Describe(m); got != want {
			t.Errorf("Describe(%v) = %q, want %q", m, got, want)
		}
	}
}
