package vault

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TreeFS is the committed tree h as a read-only file system: what a
// reader reads instead of the working tree when the working tree is behind
// the branch (see FinishCheckout). Directories list their entries in git's
// order; files are read whole when opened; a symbolic link reads as one
// (its target is not followed). In the zero hash nothing exists, not even
// the root: a node with no files.
func (v *Vault) TreeFS(h plumbing.Hash) fs.FS { return treeFS{v: v, root: h} }

type treeFS struct {
	v    *Vault
	root plumbing.Hash
}

func (t treeFS) entry(op, name string) (object.TreeEntry, error) {
	if !fs.ValidPath(name) {
		return object.TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if t.root.IsZero() {
		return object.TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if name == "." {
		return object.TreeEntry{Name: ".", Mode: filemode.Dir, Hash: t.root}, nil
	}
	e, ok, err := t.v.lookup(t.root, name)
	if err != nil {
		return object.TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if !ok {
		return object.TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	e.Name = path.Base(name)
	return e, nil
}

func (t treeFS) Open(name string) (fs.File, error) {
	e, err := t.entry("open", name)
	if err != nil {
		return nil, err
	}
	if e.Mode == filemode.Dir {
		ents, err := t.readDir(e.Hash)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &treeDir{info: treeInfo{e, 0, nil}, ents: ents}, nil
	}
	data, err := t.v.blob(e.Hash)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &treeFile{info: treeInfo{e, int64(len(data)), nil}, r: bytes.NewReader(data)}, nil
}

func (t treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := t.entry("readdir", name)
	if err != nil {
		return nil, err
	}
	if e.Mode != filemode.Dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return t.readDir(e.Hash)
}

func (t treeFS) ReadFile(name string) ([]byte, error) {
	e, err := t.entry("read", name)
	if err != nil {
		return nil, err
	}
	if e.Mode == filemode.Dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return t.v.blob(e.Hash)
}

func (t treeFS) Stat(name string) (fs.FileInfo, error) {
	e, err := t.entry("stat", name)
	if err != nil {
		return nil, err
	}
	return treeInfo{e, -1, t.v}, nil
}

// readDir lists tree h sorted by name, as fs.ReadDir promises.
func (t treeFS) readDir(h plumbing.Hash) ([]fs.DirEntry, error) {
	tr, err := t.v.tree(h)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, 0, len(tr.Entries))
	for _, e := range tr.Entries {
		out = append(out, fs.FileInfoToDirEntry(treeInfo{e, -1, t.v}))
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return out, nil
}

// treeInfo describes one tree entry; size is -1 where it was not read
// (Size then asks the object store, without reading the content).
type treeInfo struct {
	e    object.TreeEntry
	size int64
	v    *Vault
}

func (i treeInfo) Name() string { return i.e.Name }
func (i treeInfo) Size() int64 {
	if i.size >= 0 || i.e.Mode == filemode.Dir || i.v == nil {
		return max(i.size, 0)
	}
	i.v.mu.Lock()
	defer i.v.mu.Unlock()
	obj, err := i.v.storage.EncodedObject(plumbing.BlobObject, i.e.Hash)
	if err != nil {
		return 0
	}
	return obj.Size()
}
func (i treeInfo) Mode() fs.FileMode {
	switch i.e.Mode {
	case filemode.Dir:
		return fs.ModeDir | 0o755
	case filemode.Symlink:
		return fs.ModeSymlink | 0o777
	case filemode.Executable:
		return 0o755
	}
	return 0o644
}
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.e.Mode == filemode.Dir }
func (i treeInfo) Sys() any           { return nil }

type treeFile struct {
	info treeInfo
	r    *bytes.Reader
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *treeFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *treeFile) Close() error               { return nil }

type treeDir struct {
	info treeInfo
	ents []fs.DirEntry
	off  int
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: errors.New("is a directory")}
}
func (d *treeDir) Close() error { return nil }
func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.off:]
	if n <= 0 {
		d.off = len(d.ents)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
