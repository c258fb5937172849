// Package fsmode names file types for messages, one wording for every
// refusal of a path that is not a regular file.
package fsmode

import "io/fs"

// Describe names the type of a file with mode m, as "a directory", "a named
// pipe (FIFO)" and so on; a regular file is "a regular file".
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file (mode " + m.String() + ")"
}
