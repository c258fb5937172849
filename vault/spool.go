package vault

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// blobSpool keeps a copy of each blob a staged write adds as a file of
// its own under .prose/tmp, written from the bytes in hand when the blob
// is staged: the checkout renames the file into the working tree instead
// of inflating the blob back from the pack it just went into. Only the
// file names are held, never the bytes, so a write of any number of files
// holds one file's bytes at a time.
//
// A spool file is used once (a second path with the same content is
// written from the object store) and only by this batch's checkout; what
// is left is removed with the spool's directory when the write ends. A
// killed write leaves the directory under .prose/tmp, which the next
// writer's repair removes with the other temporary files; nothing of it is
// visible in the working tree before its rename there.
type blobSpool struct {
	tmpDir string // the vault's .prose/tmp
	mu     sync.Mutex
	dir    string // made at the first put
	files  map[plumbing.Hash]string
	failed bool // a spool file could not be written: stop spooling
}

func newBlobSpool(tmpDir string) *blobSpool {
	return &blobSpool{tmpDir: tmpDir, files: map[plumbing.Hash]string{}}
}

// put writes data as the spool file of blob h. It never fails the write:
// a blob it cannot spool is read back from the object store.
func (s *blobSpool) put(h plumbing.Hash, data []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return
	}
	if _, ok := s.files[h]; ok {
		return
	}
	if s.dir == "" {
		dir := filepath.Join(s.tmpDir, "sp-"+randomName())
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(s.tmpDir, 0o755); err == nil {
				err = os.Mkdir(dir, 0o755)
			}
		}
		if err != nil {
			s.failed = true
			return
		}
		s.dir = dir
	}
	p := filepath.Join(s.dir, h.String())
	f, err := openFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		s.failed = true
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		s.failed = true
		return
	}
	s.files[h] = p
}

// take hands over the spool file of blob h, "" when there is none (or it
// was taken already). The caller renames it away or removes it.
func (s *blobSpool) take(h plumbing.Hash) string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.files[h]
	if ok {
		delete(s.files, h)
	}
	return p
}

// remove removes the spool's directory and what is left in it.
func (s *blobSpool) remove() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		os.RemoveAll(s.dir)
		s.dir = ""
	}
	clear(s.files)
}

// placeSpooled renames the spool file sp to full with permissions perm
// and reports whether it did; sp is gone either way. With noReplace the
// rename fails rather than replace a file at full (the staged checkout
// creates its files exclusively).
func placeSpooled(sp, full string, perm os.FileMode, noReplace bool) bool {
	ok := false
	defer func() {
		if !ok {
			os.Remove(sp)
		}
	}()
	if fi, err := os.Lstat(sp); err != nil || !fi.Mode().IsRegular() {
		return false
	} else if fi.Mode().Perm() != perm && os.Chmod(sp, perm) != nil {
		return false
	}
	if noReplace {
		ok = renameNoReplace(sp, full) == nil
	} else {
		ok = renameFile(sp, full) == nil
	}
	return ok
}
