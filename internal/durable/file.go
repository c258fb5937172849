package durable

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file this package creates.
const TempPrefix = ".tmp-"

// File is a durable write in progress: a temporary file that replaces its
// target only when Commit succeeds. A File is not safe for concurrent use.
type File struct {
	f      *os.File
	tmp    string // the temporary file's path
	target string // the final path; empty until known
	err    error  // the first failure; once set, the File is finished
	done   bool   // committed or aborted

	written, flushed int64 // bytes written, and how many of them writeback was started for
}

// writebackEvery is how many written bytes trigger early writeback (see
// startWriteback): large enough to cost nothing for small files, small
// enough to keep a large write streaming to disk.
const writebackEvery = 8 << 20

// Create starts a durable write of path. The temporary file lives in path's
// directory and is created with perm (subject to the umask), so the committed
// file has that mode.
func Create(path string, perm os.FileMode) (*File, error) {
	f, err := createTemp(filepath.Dir(path), filepath.Base(path), perm)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	f.target = path
	return f, nil
}

// CreateTemp starts a durable write whose target is chosen later, with
// CommitTo. The temporary file is created in dir, which must be on the same
// file system as the eventual target; base appears in its name to tell
// leftovers apart.
func CreateTemp(dir, base string, perm os.FileMode) (*File, error) {
	f, err := createTemp(dir, base, perm)
	if err != nil {
		return nil, fmt.Errorf("write a temporary file in %s: %w", dir, err)
	}
	return f, nil
}

func createTemp(dir, base string, perm os.FileMode) (*File, error) {
	if len(base) > 100 {
		base = base[:100]
	}
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf("%s%s-%012x", TempPrefix, base, rand.Uint64()&(1<<48-1)))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &File{f: f, tmp: name}, nil
	}
	return nil, errors.New("could not choose an unused temporary file name")
}

// Name returns the temporary file's path.
func (f *File) Name() string { return f.tmp }

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.done {
		return 0, fmt.Errorf("write %s: the write is already finished", f.display())
	}
	if err := check(StepWrite, f.faultPath()); err != nil {
		return 0, f.fail(fmt.Errorf("write %s: %w", f.display(), err))
	}
	n, err := f.f.Write(p)
	if err != nil {
		return n, f.fail(fmt.Errorf("write %s: %w", f.display(), err))
	}
	f.written += int64(n)
	if f.written-f.flushed >= writebackEvery {
		startWriteback(f.f, f.flushed, f.written-f.flushed)
		f.flushed = f.written
	}
	return n, nil
}

// Commit finishes a write started with Create: it fsyncs and closes the
// temporary file, renames it over the target and fsyncs the directory.
func (f *File) Commit() error {
	if f.target == "" {
		return f.fail(errors.New("commit a temporary file: no target path; use CommitTo"))
	}
	return f.CommitTo(f.target)
}

// CommitTo finishes the write by making the temporary file appear at path,
// replacing whatever is there. path's directory must exist and be on the same
// file system as the temporary file. On any failure before the rename the
// temporary file is removed and path is untouched.
func (f *File) CommitTo(path string) error {
	if f.err != nil {
		return f.err
	}
	if f.done {
		return fmt.Errorf("write %s: the write is already finished", path)
	}
	f.target = path
	if err := check(StepFsync, path); err != nil {
		return f.fail(fmt.Errorf("write %s: fsync: %w", path, err))
	}
	if err := f.f.Sync(); err != nil {
		return f.fail(fmt.Errorf("write %s: fsync: %w", path, err))
	}
	if err := f.f.Close(); err != nil {
		return f.fail(fmt.Errorf("write %s: close: %w", path, err))
	}
	if err := check(StepRename, path); err != nil {
		return f.fail(fmt.Errorf("write %s: rename: %w", path, err))
	}
	if err := os.Rename(f.tmp, path); err != nil {
		return f.fail(fmt.Errorf("write %s: rename: %w", path, err))
	}
	f.done = true
	dir := filepath.Dir(path)
	if err := check(StepDirSync, dir); err != nil {
		f.err = fmt.Errorf("write %s: fsync directory: %w", path, err)
		return f.err
	}
	if err := SyncDir(dir); err != nil {
		f.err = fmt.Errorf("write %s: %w", path, err)
		return f.err
	}
	return nil
}

// Abort abandons the write and removes the temporary file. It does nothing
// after Commit or a previous Abort, so it is safe to defer.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.f.Close()
	_ = os.Remove(f.tmp)
}

// fail records err, abandons the write and returns err.
func (f *File) fail(err error) error {
	f.Abort()
	if f.err == nil {
		f.err = err
	}
	return f.err
}

func (f *File) display() string {
	if f.target != "" {
		return f.target
	}
	return f.tmp
}

func (f *File) faultPath() string { return f.display() }

// WriteFile writes data to path durably: after a crash path holds either its
// old content (or nothing) or data, never a mix. The file is created with
// perm (subject to the umask).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFrom streams r to path durably, like WriteFile, and returns the
// number of bytes written. Memory use does not depend on the size of the
// stream. If reading r fails, path is untouched.
func WriteFrom(path string, r io.Reader, perm os.FileMode) (int64, error) {
	f, err := Create(path, perm)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	buf := make([]byte, 1<<20)
	n, err := io.CopyBuffer(onlyWriter{f}, r, buf)
	if err != nil {
		if f.err != nil {
			return n, f.err
		}
		return n, fmt.Errorf("write %s: read the content: %w", path, err)
	}
	return n, f.Commit()
}

// onlyWriter hides any ReaderFrom of the underlying writer so that every
// write goes through File.Write and its fault checks.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// isTemp reports whether name is the name of a temporary file of this package.
func isTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }
