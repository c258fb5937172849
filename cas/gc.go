package cas

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/internal/lock"
)

// GCStats summarizes a garbage collection.
type GCStats struct {
	Kept       int   // objects left in the store
	Removed    int   // objects deleted
	BytesFreed int64 // total size of the deleted objects
}

// GC deletes every object that is not reachable from roots. An object is
// reachable if it is a root or among the children of a reachable object that
// is present in the store; children may be nil, in which case only the roots
// are kept. IDs that are not in the store are ignored.
//
// GC holds the writer lock at LockPath for its whole run, waiting up to
// lockTimeout for it (see internal/lock for the meaning of zero and negative
// timeouts); if the lock stays busy the error wraps a *lock.HeldError naming
// the holder. If children fails or ctx ends during marking, nothing is
// deleted; if ctx ends during deletion, GC stops and reports what it removed.
func (s *Store) GC(ctx context.Context, roots []ID, children func(ID) ([]ID, error), lockTimeout time.Duration) (GCStats, error) {
	var stats GCStats
	l, err := lock.Acquire(ctx, s.LockPath(), lockTimeout, "prose cas gc")
	if err != nil {
		return stats, fmt.Errorf("cas gc: %w", err)
	}
	defer l.Release()
	// No Put may land between the mark and the sweep: one that did, of an
	// object a root names but the mark found absent, would be deleted
	// although acknowledged.
	release, err := s.exclusive(ctx)
	if err != nil {
		return stats, fmt.Errorf("cas gc: %w", err)
	}
	defer release()

	reachable, err := s.mark(ctx, roots, children)
	if err != nil {
		return stats, fmt.Errorf("cas gc: nothing deleted: %w", err)
	}

	touched := make(map[string]bool)
	err = s.List(func(id ID) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if reachable[id] {
			stats.Kept++
			return nil
		}
		p := s.path(id)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		stats.Removed++
		stats.BytesFreed += fi.Size()
		touched[filepath.Dir(p)] = true
		return nil
	})
	// Make the removals durable, though losing one to a crash is harmless:
	// the object would simply be collected again.
	for dir := range touched {
		if serr := durable.SyncDir(dir); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return stats, fmt.Errorf("cas gc: removed %d objects, then stopped: %w", stats.Removed, err)
	}
	return stats, nil
}

// mark returns the set of reachable objects present in the store.
func (s *Store) mark(ctx context.Context, roots []ID, children func(ID) ([]ID, error)) (map[ID]bool, error) {
	seen := make(map[ID]bool) // visited, present or not
	reachable := make(map[ID]bool)
	stack := append([]ID(nil), roots...)
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		ok, err := s.Has(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		reachable[id] = true
		if children == nil {
			continue
		}
		kids, err := children(id)
		if err != nil {
			return nil, fmt.Errorf("find the children of %s: %w", id, err)
		}
		stack = append(stack, kids...)
	}
	return reachable, nil
}
