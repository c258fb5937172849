package vault

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

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
	idx   map[string][]byte // the pack indexes read, by name (packread.go)
	// listed: packread.go listed the packs (once per vault)
	listed bool
}

func newPackFS(fs billy.Filesystem, root string) *packFS {
	return &packFS{Filesystem: fs, root: root}
}

func isPackFile(name string) bool {
	name = filepath.ToSlash(name)
	return strings.HasSuffix(name, ".pack") && path.Dir(name) == "objects/pack"
}

func isPackIndex(name string) bool {
	name = filepath.ToSlash(name)
	return strings.HasSuffix(name, ".idx") && path.Dir(name) == "objects/pack"
}

// Open opens name; a packfile through the shared file, a pack index read
// whole into memory, any other file read-only without the poller.
func (fs *packFS) Open(name string) (billy.File, error) {
	if filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return fs.Filesystem.Open(name)
	}
	if isPackIndex(name) {
		return fs.openIndex(name)
	}
	if !isPackFile(name) {
		return fs.openRead(name)
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

// openRead opens name to read. os.Open registers every file with the
// runtime's poller, which refuses a regular file after three fcntl and an
// epoll_ctl; go-git opens ≈ 40 files (refs, loose objects, config) in a
// write-slot.
func (fs *packFS) openRead(name string) (billy.File, error) {
	f, err := openFile(filepath.Join(fs.root, filepath.FromSlash(name)), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return &readFile{File: f, name: name}, nil
}

// readFile is a file opened read-only. go-git locks only files it opens to
// write, so Lock and Unlock do nothing.
type readFile struct {
	*os.File
	name string
}

func (f *readFile) Name() string  { return f.name }
func (f *readFile) Lock() error   { return nil }
func (f *readFile) Unlock() error { return nil }

// openIndex reads the pack index name whole. go-git decodes an index with
// one read(2) per field — ≈ 1,000 reads for a 32 KB index, the most
// frequent system call of a write-slot — and keeps what it decodes in
// memory anyway.
func (fs *packFS) openIndex(name string) (billy.File, error) {
	fs.mu.Lock()
	data, ok := fs.idx[filepath.ToSlash(name)]
	fs.mu.Unlock()
	if ok {
		// A pack's index is named by the pack's hash: the bytes read
		// before are the bytes the file holds.
		return &memFile{Reader: bytes.NewReader(data), name: name}, nil
	}
	data, err := readWhole(filepath.Join(fs.root, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	if fs.idx == nil {
		fs.idx = map[string][]byte{}
	}
	fs.idx[filepath.ToSlash(name)] = data
	fs.mu.Unlock()
	return &memFile{Reader: bytes.NewReader(data), name: name}, nil
}

// memFile is a read-only file held in memory.
type memFile struct {
	*bytes.Reader
	name string
}

func (f *memFile) Name() string              { return f.name }
func (f *memFile) Write([]byte) (int, error) { return 0, errPackReadOnly }
func (f *memFile) Truncate(int64) error      { return errPackReadOnly }
func (f *memFile) Lock() error               { return nil }
func (f *memFile) Unlock() error             { return nil }
func (f *memFile) Close() error              { return nil }

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

// ReadDir lists a directory. Under objects/ the entries are not stat'ed
// until asked for more than their name and kind: go-git lists objects/
// once per vault to look for incoming-object directories (git's quarantine)
// and wants only names and kinds, and billy's listing stats every one of
// the 256 fan-out directories first.
func (fs *packFS) ReadDir(name string) ([]os.FileInfo, error) {
	slash := filepath.ToSlash(name)
	if slash != "objects" && !strings.HasPrefix(slash, "objects/") {
		return fs.Filesystem.ReadDir(name)
	}
	ents, err := os.ReadDir(filepath.Join(fs.root, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, len(ents))
	for i, e := range ents {
		out[i] = &entryInfo{e: e}
	}
	return out, nil
}

// entryInfo is the FileInfo of a directory entry, stat'ed at the first
// question its entry does not answer (an entry removed since answers with
// zero values).
type entryInfo struct {
	e  os.DirEntry
	fi os.FileInfo
}

func (i *entryInfo) info() os.FileInfo {
	if i.fi == nil {
		fi, err := i.e.Info()
		if err != nil {
			fi = goneInfo{i.e}
		}
		i.fi = fi
	}
	return i.fi
}

func (i *entryInfo) Name() string       { return i.e.Name() }
func (i *entryInfo) IsDir() bool        { return i.e.IsDir() }
func (i *entryInfo) Size() int64        { return i.info().Size() }
func (i *entryInfo) Mode() os.FileMode  { return i.info().Mode() }
func (i *entryInfo) ModTime() time.Time { return i.info().ModTime() }
func (i *entryInfo) Sys() any           { return i.info().Sys() }

// goneInfo is what an entry removed before its stat answers.
type goneInfo struct{ e os.DirEntry }

func (g goneInfo) Name() string       { return g.e.Name() }
func (g goneInfo) IsDir() bool        { return g.e.IsDir() }
func (g goneInfo) Size() int64        { return 0 }
func (g goneInfo) Mode() os.FileMode  { return g.e.Type() }
func (g goneInfo) ModTime() time.Time { return time.Time{} }
func (g goneInfo) Sys() any           { return nil }
