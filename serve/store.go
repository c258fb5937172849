package serve

import (
	"context"
	"sync"
	"time"

	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

// lockedStore is the server's Store. Writes (Publish, Record) are
// serialized: one writer per vault inside the process, as the vault's
// writer lock is across processes. Reads never wait for a write (the vault
// serves them from complete, durable objects), so /status answers while a
// delivery waits for the lock. It keeps the last receipt time per node
// itself, read from the ledger once and updated by each write.
type lockedStore struct {
	w   sync.Mutex // writers
	s   *reactor.VaultStore
	v   *vault.Vault
	now func() time.Time

	mu   sync.Mutex
	when map[string]time.Time
}

func newLockedStore(v *vault.Vault, who string, now func() time.Time) *lockedStore {
	return &lockedStore{s: reactor.NewVaultStore(v, who, now), v: v, now: now}
}

func (l *lockedStore) Last(node string) (*receipt.Receipt, error) { return l.s.Last(node) }

func (l *lockedStore) Files(node string) (map[string][]byte, error) { return l.s.Files(node) }

func (l *lockedStore) When(node string) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.when == nil {
		when := map[string]time.Time{}
		err := l.v.Receipts(func(rec vault.Record) error {
			if t, ok := when[rec.Receipt.Node]; !ok || rec.When.After(t) {
				when[rec.Receipt.Node] = rec.When
			}
			return nil
		})
		if err != nil {
			return time.Time{}, err
		}
		l.when = when
	}
	return l.when[node], nil
}

func (l *lockedStore) wrote(node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.when != nil {
		l.when[node] = l.now()
	}
}

func (l *lockedStore) Publish(ctx context.Context, node, dir string, run reactor.Run) (*receipt.Receipt, []string, error) {
	l.w.Lock()
	defer l.w.Unlock()
	rec, moved, err := l.s.Publish(ctx, node, dir, run)
	if rec != nil {
		l.wrote(node)
	}
	return rec, moved, err
}

func (l *lockedStore) Record(ctx context.Context, node string, status receipt.Status, run reactor.Run, reason error) (*receipt.Receipt, error) {
	l.w.Lock()
	defer l.w.Unlock()
	rec, err := l.s.Record(ctx, node, status, run, reason)
	if err == nil {
		l.wrote(node)
	}
	return rec, err
}
