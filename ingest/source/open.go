package source

import (
	"errors"
	"fmt"
	"github.com/prose-store/prose/internal/fsmode"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a source path that is not a
// regular file: a named pipe, a device such as /dev/zero, a socket. Such a
// file may never end (or never start), so it is refused before it is
// opened for reading; standard input ("-") is the way to stream one in.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a source larger than MaxSize.
var ErrTooLarge = errors.New("larger than the limit")

// limitText is MaxSize as messages say it.
func limitText() string {
	if MaxSize%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", MaxSize>>20)
	}
	return fmt.Sprintf("%d bytes", MaxSize)
}

// tooLarge is the refusal of a source of size bytes (exact: true) or of
// more than MaxSize bytes (a stream cut at the limit).
func tooLarge(name string, size int64, exact bool) error {
	what := fmt.Sprintf("%d bytes is", size)
	if !exact {
		what = "it holds more than " + fmt.Sprint(MaxSize) + " bytes,"
	}
	return fmt.Errorf("%s: %s %w of %s a source may have: split it into smaller files (by chapter or section) and ingest those", name, what, ErrTooLarge, limitText())
}

// fileType names the type of a file that is not regular, for messages.
func fileType(m fs.FileMode) string { return fsmode.Describe(m) }

// notRegular is the refusal of a named source that is not a regular file.
func notRegular(name string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s, %w: prose reads only regular files as sources, since a pipe, device or socket may never end; save what it holds into a file and name that, or pipe it to standard input (prose ingest - < %s), which is read up to the %s limit", name, fileType(m), ErrNotRegular, name, limitText())
}

// ReadFile reads the source file at path, within bounds: it refuses, before
// reading a byte, a path that is not a regular file (a FIFO, a device, a
// socket) and a file whose size is past MaxSize; it opens without blocking
// (should the path become a named pipe after the check, the open does not
// wait for a writer and the second check refuses it), and reads through a
// limit, so a file that grows while it is read costs at most MaxSize+1
// bytes. name is how errors name the file.
func ReadFile(path, name string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkFile(name, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkFile(name, fi); err != nil {
		return nil, err
	}
	return readLimited(f, name, fi.Size())
}

func checkFile(name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return notRegular(name, fi.Mode())
	}
	if fi.Size() > MaxSize {
		return tooLarge(name, fi.Size(), true)
	}
	return nil
}

// ReadLimited reads r to its end, or refuses it as soon as it has given
// more than MaxSize bytes: it never reads more than MaxSize+1 bytes of r,
// whatever r holds (standard input from /dev/zero included).
func ReadLimited(r io.Reader, name string) ([]byte, error) {
	return readLimited(r, name, 0)
}

// readLimited is ReadLimited with a size hint for the first buffer.
func readLimited(r io.Reader, name string, hint int64) ([]byte, error) {
	if hint <= 0 {
		return readChunks(r, name)
	}
	buf := make([]byte, 0, min(max(hint, 512)+1, MaxSize+1))
	lr := io.LimitReader(r, MaxSize+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(buf) > MaxSize {
		return nil, tooLarge(name, int64(len(buf)), false)
	}
	return buf, nil
}

// readChunks reads a stream of unknown size (standard input) in chunks of
// 1 MiB and joins them once at its end, so that reading up to MaxSize
// holds at most twice what was read, and refusing a stream past it (from
// /dev/zero) holds MaxSize, never a buffer grown by doubling.
func readChunks(r io.Reader, name string) ([]byte, error) {
	const chunk = 1 << 20
	lr := io.LimitReader(r, MaxSize+1)
	var chunks [][]byte
	total := 0
	for {
		buf := make([]byte, chunk)
		n, err := io.ReadFull(lr, buf)
		if n > 0 {
			chunks = append(chunks, buf[:n])
			total += n
		}
		if total > MaxSize {
			return nil, tooLarge(name, int64(total), false)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}
