package cas

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prose-store/prose/internal/durable"
)

// Errors reported by the store; test for them with errors.Is.
var (
	ErrNotFound = errors.New("object not found")
	ErrCorrupt  = errors.New("object is corrupt")
)

// staleTemp is the age after which a temporary file is taken for a crash
// leftover. An active Put writes its temporary file continuously, so only a
// writer stalled this long on its input could lose its file (and would then
// fail cleanly).
const staleTemp = 10 * time.Minute

// objectMode is the mode of every object file: objects are immutable.
const objectMode = 0o444

// Store is an object store rooted at a .prose directory. It is safe for
// concurrent use by goroutines and processes.
type Store struct {
	root    string
	objects string
	tmp     string
	shards  sync.Map // shard directories known to exist: string → struct{}
	gate    *putGate
}

// Open opens the store at root (a vault's .prose directory), creating root
// and its objects directory if needed, and removes temporary files left by
// writers that crashed more than a few minutes ago.
func Open(root string) (*Store, error) {
	s := &Store{
		root:    root,
		objects: filepath.Join(root, "objects"),
		tmp:     filepath.Join(root, "objects", "tmp"),
		gate:    newPutGate(root),
	}
	if err := durable.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("cas open %s: %w", root, err)
	}
	if _, err := durable.CleanTemps(s.tmp, staleTemp); err != nil {
		return nil, fmt.Errorf("cas open %s: %w", root, err)
	}
	return s, nil
}

// Root returns the directory the store was opened at.
func (s *Store) Root() string { return s.root }

// LockPath returns the path of the writer lock: root/lock, the same lock the
// vault takes. GC holds it; see the package documentation.
func (s *Store) LockPath() string { return filepath.Join(s.root, "lock") }

// path returns the object file of id.
func (s *Store) path(id ID) string {
	h := id.Hex()
	return filepath.Join(s.objects, h[:2], h[2:])
}

// commit moves a fully written temporary file into place as object id, or
// discards it when an intact-looking copy is already there.
func (s *Store) commit(f *durable.File, id ID, size int64) error {
	if s.present(id, size) {
		return nil // the deferred Abort discards the duplicate
	}
	dst := s.path(id)
	if err := s.ensureShard(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("cas put %s: %w", id, err)
	}
	if err := f.CommitTo(dst); err != nil {
		return fmt.Errorf("cas put %s: %w", id, err)
	}
	return nil
}

// present reports whether object id exists with the given size. An object
// of the wrong size (truncated by a faulty disk, say) is replaced by the
// new copy instead of deduplicated against.
func (s *Store) present(id ID, size int64) bool {
	fi, err := os.Stat(s.path(id))
	return err == nil && fi.Mode().IsRegular() && fi.Size() == size
}

func (s *Store) ensureShard(dir string) error {
	if _, ok := s.shards.Load(dir); ok {
		return nil
	}
	if err := durable.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.shards.Store(dir, struct{}{})
	return nil
}

// Has reports whether object id is in the store. It does not verify the
// content.
func (s *Store) Has(id ID) (bool, error) {
	_, err := os.Stat(s.path(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("cas has %s: %w", id, err)
	}
}
