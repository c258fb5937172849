package vault

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
)

// packFS is the .git directory as go-git reads it, with one change: a
// packfile is opened once per vault and shared. go-git, told not to keep
// descriptors (its own keeping is not safe for concurrent reads), opens
// and closes the pack for every object it reads from it — a write-slot on
// a 1,000-page wiki opened the same pack ≈ 100 times, each an open, a
// stat, four fcntl and an epoll registration. Here every Open of a pack
// returns a cursor of its own over one shared read-only file, read with
// pread, so cursors never share an offset and any number may read at once.
//
// A pack's name is the hash of its content, so a shared file can never
// read other bytes than the pack of that name; a pack deleted meanwhile
// (git gc) stays readable through it until the vault is closed.
type packFS struct {
	billy.Filesystem
	root string

	mu    sync.Mutex
	packs map[string]*os.File
}

func newPackFS(fs billy.Filesystem, root string) *packFS {
	return &packFS{Filesystem: fs, root: root}
}

func isPackFile(name string) bool {
	name = filepath.ToSlash(name)
	return strings.HasSuffix(name, ".pack") && path.Dir(name) == "objects/pack"
}

// Open opens name; a packfile through the shared file.
func (fs *packFS) Open(name string) (billy.File, error) {
	if !isPackFile(name) {
		return fs.Filesystem.Open(name)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.packs[name]
	if f == nil {
		var err error
		if f, err = os.Open(filepath.Join(fs.root, filepath.FromSlash(name))); err != nil {
			return nil, err
		}
		if fs.packs == nil {
			fs.packs = map[string]*os.File{}
		}
		fs.packs[name] = f
	}
	return &packCursor{f: f, name: name}, nil
}

// OpenFile opens name; a packfile read-only through the shared file.
func (fs *packFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag == os.O_RDONLY && isPackFile(name) {
		return fs.Open(name)
	}
	return fs.Filesystem.OpenFile(name, flag, perm)
}

// close closes the shared files (a later Open opens them again).
func (fs *packFS) close() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var first error
	for name, f := range fs.packs {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
		delete(fs.packs, name)
	}
	return first
}

var errPackReadOnly = errors.New("a packfile is read-only")

// packCursor reads a shared packfile from an offset of its own.
type packCursor struct {
	f    *os.File
	name string
	off  int64
}

func (c *packCursor) Name() string { return c.name }

func (c *packCursor) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := c.f.ReadAt(p, c.off)
	c.off += int64(n)
	if n > 0 && err == io.EOF {
		err = nil // the next Read says EOF
	}
	return n, err
}

func (c *packCursor) ReadAt(p []byte, off int64) (int, error) { return c.f.ReadAt(p, off) }

func (c *packCursor) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.off
	case io.SeekEnd:
		st, err := c.f.Stat()
		if err != nil {
			return 0, err
		}
		offset += st.Size()
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative position")
	}
	c.off = offset
	return offset, nil
}

func (c *packCursor) Write([]byte) (int, error) { return 0, errPackReadOnly }
func (c *packCursor) Truncate(int64) error      { return errPackReadOnly }
func (c *packCursor) Lock() error               { return nil }
func (c *packCursor) Unlock() error             { return nil }

// Close ends the cursor; the shared file stays open for the next.
func (c *packCursor) Close() error { return nil }
