package cas

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// The put gate makes an acknowledged Put safe against a concurrent GC in any
// process: every Put holds a shared lock on <root>/cas.lock from before it
// looks for an existing copy until its object is in place, and GC holds the
// exclusive lock for its whole run. A Put therefore either finishes before
// GC marks (and GC sees the object), or waits until GC has swept.
//
// flock locks belong to an open file, so the Puts of one process share one
// shared lock, taken by the first and released by the last.
type putGate struct {
	mu sync.Mutex
	n  int // Puts inside
	fl *flock.Flock
}

func newPutGate(root string) *putGate {
	return &putGate{fl: flock.New(filepath.Join(root, "cas.lock"), flock.SetPermissions(0o644))}
}

// putGateWaits, when set (in tests), is called when a Put is about to wait
// for a GC to finish.
var putGateWaits func()

// enter lets a Put in, waiting while a GC runs.
func (g *putGate) enter() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == 0 {
		ok, err := g.fl.TryRLock()
		if err == nil && !ok {
			if putGateWaits != nil {
				putGateWaits()
			}
			err = g.fl.RLock()
		}
		if err != nil {
			return fmt.Errorf("cas put: take the shared lock %s: %w", g.fl.Path(), err)
		}
	}
	g.n++
	return nil
}

// leave lets a Put out.
func (g *putGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.n == 0 {
		_ = g.fl.Unlock()
	}
}

// exclusive waits until no Put of any process is inside and keeps new ones
// out until the returned release is called.
func (s *Store) exclusive(ctx context.Context) (release func(), err error) {
	fl := flock.New(filepath.Join(s.root, "cas.lock"), flock.SetPermissions(0o644))
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("take the exclusive lock %s: %w", fl.Path(), err)
	}
	if !ok {
		return nil, fmt.Errorf("take the exclusive lock %s: %w", fl.Path(), ctx.Err())
	}
	return func() { _ = fl.Unlock() }, nil
}
