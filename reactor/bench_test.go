package reactor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/receipt"
)

// memStore is a Store in memory, for measuring the reconciler without the
// vault's durable writes: @atomic is a hash of the files.
type memStore struct {
	mu     sync.Mutex
	last   map[string]*receipt.Receipt
	files  map[string]map[string][]byte
	writes int
}

func newMemStore() *memStore {
	return &memStore{last: map[string]*receipt.Receipt{}, files: map[string]map[string][]byte{}}
}

func (m *memStore) Last(node string) (*receipt.Receipt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last[node], nil
}

func (m *memStore) When(node string) (time.Time, error) { return time.Time{}, nil }

func (m *memStore) Files(node string) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.files[node], nil
}

func (m *memStore) Publish(ctx context.Context, node, dir string, run Run) (*receipt.Receipt, []string, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%d\x00%s", k, len(files[k]), files[k])
	}
	tok := "sha256:" + hex.EncodeToString(h.Sum(nil))
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.last[node]
	r := &receipt.Receipt{Node: node, ContractFingerprint: run.ContractFingerprint, InputFingerprints: slices.Clone(run.InputFingerprints),
		Fingerprints: map[string]string{receipt.AtomicFacet: tok}, Status: receipt.Skipped, ContentHash: fmt.Sprintf("r%d", m.writes)}
	m.writes++
	var moved []string
	if prev == nil || prev.Fingerprints[receipt.AtomicFacet] != tok {
		r.Status, moved = receipt.Rendered, []string{receipt.AtomicFacet}
		m.files[node] = files
	}
	m.last[node] = r
	return r, moved, nil
}

func (m *memStore) Record(ctx context.Context, node string, status receipt.Status, run Run, reason error) (*receipt.Receipt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.last[node]
	fps := map[string]string{receipt.AtomicFacet: ColdStart}
	if prev != nil {
		fps = prev.Fingerprints
	}
	r := &receipt.Receipt{Node: node, ContractFingerprint: run.ContractFingerprint, InputFingerprints: slices.Clone(run.InputFingerprints),
		Fingerprints: fps, Status: status, ContentHash: fmt.Sprintf("r%d", m.writes)}
	m.writes++
	m.last[node] = r
	return r, nil
}

// layeredDAG is n nodes in layers of width; each node past the first layer
// reads the node below it and, one time in five, a neighbour of that one
// (seeded): one leaf's change reaches a cone, not the whole graph.
func layeredDAG(n, width int) *Graph {
	rng := rand.New(rand.NewPCG(1, 2))
	var nodes []Node
	var edges []Edge
	id := func(i int) string { return fmt.Sprintf("n%04d", i) }
	for i := 0; i < n; i++ {
		nodes = append(nodes, Node{ID: id(i), ContractFingerprint: "c"})
		if i >= width {
			edges = append(edges, Edge{id(i), id(i - width), "@atomic"})
			if rng.IntN(5) == 0 {
				col := (i%width + 1 + rng.IntN(width-1)) % width
				if d := col - i%width; d >= -2 && d <= 2 {
					edges = append(edges, Edge{id(i), id(i - i%width - width + col), "@atomic"})
				} else {
					edges = append(edges, Edge{id(i), id(i - width - i%width + (i%width+1)%width), "@atomic"})
				}
			}
		}
	}
	g, err := NewGraph(nodes, edges)
	if err != nil {
		panic(err)
	}
	return g
}

// thousand returns a settled 1,000-node DAG in memory (every node's last
// receipt consumed its producers' tokens) and the leaf with the largest
// downstream; mk returns a reconciler whose Ingest of that leaf moves it.
func thousand(tb testing.TB) (g *Graph, leaf string, mk func() (*Reconciler, string), renders *int) {
	g = layeredDAG(1000, 50)
	st := newMemStore()
	ids := g.IDs()
	sort.SliceStable(ids, func(i, j int) bool { return g.Height(ids[i]) < g.Height(ids[j]) })
	best := -1
	for _, id := range ids {
		var toks []string
		for _, e := range g.Inputs(id) {
			toks = append(toks, st.last[e.Producer].Fingerprints[receipt.AtomicFacet])
		}
		st.last[id] = &receipt.Receipt{Node: id, ContractFingerprint: "c", InputFingerprints: toks, Status: receipt.Rendered,
			Fingerprints: map[string]string{receipt.AtomicFacet: "t0:" + id}, ContentHash: "r0:" + id}
		if g.Height(id) == 0 {
			if d := len(g.downstream(map[string]bool{id: true})); d > best {
				best, leaf = d, id
			}
		}
	}
	gen := 0
	n := 0
	renders = &n
	tmp := tb.TempDir()
	mk = func() (*Reconciler, string) {
		gen++
		payload := filepath.Join(tmp, fmt.Sprintf("payload%d", gen))
		os.MkdirAll(payload, 0o755)
		os.WriteFile(filepath.Join(payload, "v.json"), []byte(fmt.Sprint(gen)), 0o644)
		return New(Options{Graph: g, Store: st, TempDir: tmp, WorkDir: filepath.Join(tmp, "work"), Renderer: func(*Node) (Renderer, error) {
			return RenderFunc(func(ctx context.Context, req *Request) (Result, error) {
				n++
				return deriveRender(req)
			}), nil
		}}), payload
	}
	return g, leaf, mk, renders
}

// One leaf of a 1,000-node DAG changes: exactly its downstream renders,
// each once.
func TestThousandNodesRenderTheDirtyPathOnly(t *testing.T) {
	g, leaf, mk, renders := thousand(t)
	want := len(g.downstream(map[string]bool{leaf: true}))
	r, payload := mk()
	if _, err := r.Ingest(context.Background(), leaf, payload, nil); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Drain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if *renders != want || rep.Count(Rendered) != want+1 || rep.Count(Pruned) != 0 || rep.Count(Skipped) != 0 {
		t.Fatalf("%d renders (%d rendered outcomes, the leaf's ingest included), want exactly the dirty path: %d", *renders, rep.Count(Rendered), want)
	}
	t.Logf("leaf %s: dirty path %d of 1000 nodes", leaf, want)
}

// BenchmarkReconcileThousand drains one leaf change of a 1,000-node DAG in
// memory: the reconciler's own work (memo keys, drain, propagation, render
// directories and input copies, trivial renders) without the vault's
// durable writes.
func BenchmarkReconcileThousand(b *testing.B) {
	g, leaf, mk, renders := thousand(b)
	path := len(g.downstream(map[string]bool{leaf: true}))
	var own, rt, stt time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, payload := mk()
		start := time.Now()
		if _, err := r.Ingest(context.Background(), leaf, payload, nil); err != nil {
			b.Fatal(err)
		}
		rep, err := r.Drain(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total := time.Since(start)
		own += total - rep.RenderTime - rep.StoreTime
		rt += rep.RenderTime
		stt += rep.StoreTime
	}
	b.ReportMetric(float64(*renders)/float64(b.N), "renders/op")
	b.ReportMetric(float64(path), "dirty-path")
	b.ReportMetric(float64(own)/float64(b.N)/1e6, "reconcile-ms/op")
	b.ReportMetric(float64(rt)/float64(b.N)/1e6, "render-ms/op")
	b.ReportMetric(float64(stt)/float64(b.N)/1e6, "store-ms/op")
}

// BenchmarkMemoThousand is the decision alone: the dirty set of a settled
// 1,000-node DAG (every memo key compared, nothing woken).
func BenchmarkMemoThousand(b *testing.B) {
	_, _, mk, _ := thousand(b)
	r, _ := mk()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s, _ := r.Dirty(); len(s) != 0 {
			b.Fatal("dirty")
		}
	}
}
