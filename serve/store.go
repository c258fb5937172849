package serve

import (
	"context"
	"sync"
	"time"

	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/receipt"
)

// lockedStore serializes every Store call of the server's goroutines (the
// HTTP deliveries, the scheduler and the render worker): one writer per
// vault inside the process, as the vault's writer lock is across
// processes.
type lockedStore struct {
	mu sync.Mutex
	s  reactor.Store
}

func (l *lockedStore) Last(node string) (*receipt.Receipt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Last(node)
}

func (l *lockedStore) When(node string) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.When(node)
}

func (l *lockedStore) Files(node string) (map[string][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Files(node)
}

func (l *lockedStore) Publish(ctx context.Context, node, dir string, run reactor.Run) (*receipt.Receipt, []string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Publish(ctx, node, dir, run)
}

func (l *lockedStore) Record(ctx context.Context, node string, status receipt.Status, run reactor.Run, reason error) (*receipt.Receipt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Record(ctx, node, status, run, reason)
}
