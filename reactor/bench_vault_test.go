package reactor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

// writeTimed adds up the time of a Store's writes (Publish, Record): with
// a VaultStore, the vault's durable writes.
type writeTimed struct {
	Store
	d      atomic.Int64
	writes atomic.Int64
}

func (w *writeTimed) Publish(ctx context.Context, node, dir string, run Run) (*receipt.Receipt, []string, error) {
	defer func(t time.Time) { w.d.Add(int64(time.Since(t))); w.writes.Add(1) }(time.Now())
	return w.Store.Publish(ctx, node, dir, run)
}

func (w *writeTimed) Record(ctx context.Context, node string, status receipt.Status, run Run, reason error) (*receipt.Receipt, error) {
	defer func(t time.Time) { w.d.Add(int64(time.Since(t))); w.writes.Add(1) }(time.Now())
	return w.Store.Record(ctx, node, status, run, reason)
}

// BenchmarkReconcileThousandVault is BenchmarkReconcileThousand with the
// vault as the store: the same 1,000-node DAG, settled by a cold start
// through the vault (not timed), then one leaf's change per op. It reports
// the vault's durable writes (each rendered receipt a branch and a ledger
// commit, fsynced) apart from the store's reads, the renders and the
// reconciler's own time.
func BenchmarkReconcileThousandVault(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	g := layeredDAG(1000, 50)
	tmp := b.TempDir()
	v, err := vault.Init(filepath.Join(tmp, "v"), vault.InitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	wt := &writeTimed{Store: NewVaultStore(v, "bench", nil)}
	gen := 0
	mk := func() *Reconciler {
		return New(Options{Graph: g, Store: wt, TempDir: tmp, WorkDir: filepath.Join(tmp, "work"), Renderer: func(*Node) (Renderer, error) {
			return RenderFunc(func(ctx context.Context, req *Request) (Result, error) { return deriveRender(req) }), nil
		}})
	}
	// Cold start: every node's first render.
	leaf, best := "", -1
	for _, id := range g.IDs() {
		if g.Height(id) == 0 {
			if d := len(g.downstream(map[string]bool{id: true})); d > best {
				best, leaf = d, id
			}
		}
	}
	r := mk()
	seeds, err := r.Dirty()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range seeds {
		r.Wake(s)
	}
	if _, err := r.Drain(context.Background()); err != nil {
		b.Fatal(err)
	}
	var own, rt, reads, writes time.Duration
	var nwrites int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gen++
		payload := filepath.Join(tmp, fmt.Sprintf("payload%d", gen))
		os.MkdirAll(payload, 0o755)
		os.WriteFile(filepath.Join(payload, "v.json"), []byte(fmt.Sprint(gen)), 0o644)
		r := mk()
		w0, n0 := wt.d.Load(), wt.writes.Load()
		start := time.Now()
		if _, err := r.Ingest(context.Background(), leaf, payload, nil); err != nil {
			b.Fatal(err)
		}
		rep, err := r.Drain(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total := time.Since(start)
		if rep.Count(Rendered) != best+1 {
			b.Fatalf("%d rendered, want the dirty path %d and the leaf", rep.Count(Rendered), best)
		}
		w := time.Duration(wt.d.Load() - w0)
		own += total - rep.RenderTime - rep.StoreTime
		rt += rep.RenderTime
		writes += w
		reads += rep.StoreTime - w
		nwrites += wt.writes.Load() - n0
	}
	n := float64(b.N)
	b.ReportMetric(float64(best), "dirty-path")
	b.ReportMetric(float64(nwrites)/n, "durable-writes/op")
	b.ReportMetric(float64(own)/n/1e6, "reconcile-ms/op")
	b.ReportMetric(float64(rt)/n/1e6, "render-ms/op")
	b.ReportMetric(float64(reads)/n/1e6, "store-read-ms/op")
	b.ReportMetric(float64(writes)/n/1e6, "durable-write-ms/op")
}
