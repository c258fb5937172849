package reactor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prose-store/prose/receipt"
)

// timedStore adds up the time spent in a Store.
type timedStore struct {
	s Store
	d atomic.Int64 // nanoseconds
}

func (t *timedStore) since(start time.Time) { t.d.Add(int64(time.Since(start))) }

func (t *timedStore) total() time.Duration { return time.Duration(t.d.Load()) }

func (t *timedStore) Last(node string) (*receipt.Receipt, error) {
	defer t.since(time.Now())
	return t.s.Last(node)
}

func (t *timedStore) When(node string) (time.Time, error) {
	defer t.since(time.Now())
	return t.s.When(node)
}

func (t *timedStore) Files(node string) (map[string][]byte, error) {
	defer t.since(time.Now())
	return t.s.Files(node)
}

func (t *timedStore) Publish(ctx context.Context, node, dir string, run Run) (*receipt.Receipt, []string, error) {
	defer t.since(time.Now())
	return t.s.Publish(ctx, node, dir, run)
}

func (t *timedStore) Record(ctx context.Context, node string, status receipt.Status, run Run, reason error) (*receipt.Receipt, error) {
	defer t.since(time.Now())
	return t.s.Record(ctx, node, status, run, reason)
}
