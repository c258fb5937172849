package reactor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

// world is a throwaway vault, a graph and scripted renders.
type world struct {
	t     *testing.T
	v     *vault.Vault
	st    *VaultStore
	g     *Graph
	now   time.Time
	mu    sync.Mutex
	order []string                                      // renders, in order
	seen  map[string][][]Input                          // inputs each render saw
	rend  map[string]func(req *Request) (Result, error) // per node; default deriveRender
	// during runs inside the next render of a node (once).
	during map[string]func()
	r      *Reconciler
	work   string
}

func newWorld(t *testing.T, nodes []Node, edges []Edge, facets map[string][]string) *world {
	t.Helper()
	v, err := vault.Init(filepath.Join(t.TempDir(), "vault"), vault.InitOptions{Options: vault.Options{NoFsync: true}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		if nodes[i].ContractFingerprint == "" {
			nodes[i].ContractFingerprint = "contract:" + nodes[i].ID + "@1"
		}
	}
	g, err := NewGraph(nodes, edges)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, v: v, g: g, now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		seen: map[string][][]Input{}, rend: map[string]func(*Request) (Result, error){}, during: map[string]func(){}}
	w.st = NewVaultStore(v, "test", w.clock)
	w.work = filepath.Join(t.TempDir(), "work")
	specs := map[string][]byte{}
	for node, fs := range facets {
		var fl []string
		for _, f := range fs {
			fl = append(fl, fmt.Sprintf(`{"facet":%q,"paths":[%q]}`, f, f))
		}
		specs["dist/canonicalizers/"+published.EscapeNode(node)+".json"] = []byte(fmt.Sprintf(`{"default_material":true,"facets":[%s],"fields":[],"node":%q}`+"\n", strings.Join(fl, ","), node))
	}
	if len(specs) > 0 {
		if _, err := v.CommitFiles(context.Background(), "test", "specs\n", specs); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) clock() time.Time { return w.now }

// reconciler returns a fresh reconciler (one per run, as prose run makes).
func (w *world) reconciler() *Reconciler {
	w.st.when = nil
	w.r = New(Options{Graph: w.g, Store: w.st, Now: w.clock, WorkDir: w.work, TempDir: w.t.TempDir(),
		Renderer: func(n *Node) (Renderer, error) {
			if n.Wake == receipt.WakeExternal && w.rend[n.ID] == nil {
				return nil, nil
			}
			return RenderFunc(w.render), nil
		}})
	return w.r
}

func (w *world) render(ctx context.Context, req *Request) (Result, error) {
	w.mu.Lock()
	w.order = append(w.order, req.Node.ID)
	w.seen[req.Node.ID] = append(w.seen[req.Node.ID], append([]Input(nil), req.Inputs...))
	f := w.during[req.Node.ID]
	delete(w.during, req.Node.ID)
	fn := w.rend[req.Node.ID]
	w.mu.Unlock()
	if f != nil {
		f()
	}
	if fn == nil {
		fn = deriveRender
	}
	return fn(req)
}

// deriveRender writes value.json holding the tokens of its inputs: its
// truth moves exactly when an input moves.
func deriveRender(req *Request) (Result, error) {
	var toks []string
	for _, in := range req.Inputs {
		toks = append(toks, in.Producer+"."+in.Facet+"="+in.Token)
	}
	data, _ := json.Marshal(map[string]any{"node": req.Node.ID, "inputs": toks})
	return Result{Provider: "test", Model: "derive", Tokens: receipt.Tokens{Fresh: 10, Reused: 2}}, os.WriteFile(filepath.Join(req.Out, "value.json"), data, 0o644)
}

// dirty runs prose run's drain: the dirty set, then the drain.
func (w *world) dirty() *Report {
	w.t.Helper()
	r := w.reconciler()
	seeds, err := r.Dirty()
	if err != nil {
		w.t.Fatal(err)
	}
	for _, s := range seeds {
		if err := r.Wake(s); err != nil {
			w.t.Fatal(err)
		}
	}
	return w.drain(r)
}

// wake wakes the named nodes and drains.
func (w *world) wake(nodes ...string) *Report {
	w.t.Helper()
	r := w.reconciler()
	for _, n := range nodes {
		if err := r.Wake(Seed{Node: n, Source: receipt.WakeExternal, Why: "named"}); err != nil {
			w.t.Fatal(err)
		}
	}
	return w.drain(r)
}

func (w *world) drain(r *Reconciler) *Report {
	w.t.Helper()
	w.mu.Lock()
	w.order = nil
	w.mu.Unlock()
	rep, err := r.Drain(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return rep
}

// ingest publishes files as gateway's outside input and drains.
func (w *world) ingest(gateway string, files map[string]string) *Report {
	w.t.Helper()
	r := w.reconciler()
	w.ingestInto(r, gateway, files)
	return w.drain(r)
}

func (w *world) ingestInto(r *Reconciler, gateway string, files map[string]string) {
	w.t.Helper()
	dir := w.t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	if _, err := r.Ingest(context.Background(), gateway, dir, nil); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) last(node string) *receipt.Receipt {
	w.t.Helper()
	r, err := w.v.LastReceipt(node)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *world) tip() string {
	w.t.Helper()
	c, _, err := w.v.NodeHead("x")
	if err != nil {
		w.t.Fatal(err)
	}
	return c.String()
}

func (w *world) files(node string) map[string]string {
	w.t.Helper()
	fs, err := w.st.Files(node)
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]string{}
	for p, d := range fs {
		out[p] = string(d)
	}
	return out
}

func (w *world) renders() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.order...)
}

// table is "node disposition" per outcome, in order.
func table(r *Report) []string {
	var out []string
	for _, o := range r.Outcomes {
		out = append(out, o.Node+" "+string(o.Disposition))
	}
	return out
}

func dispositions(r *Report) map[string][]Disposition {
	m := map[string][]Disposition{}
	for _, o := range r.Outcomes {
		m[o.Node] = append(m[o.Node], o.Disposition)
	}
	return m
}

func outcome(t *testing.T, r *Report, node string) Outcome {
	t.Helper()
	var found []Outcome
	for _, o := range r.Outcomes {
		if o.Node == node {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s has %d outcomes, want 1: %v", node, len(found), table(r))
	}
	return found[0]
}

func eq(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
