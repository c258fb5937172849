package reactor

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prose-store/prose/receipt"
)

// ColdStart is the input token of an edge whose producer has no receipt.
const ColdStart = "cold-start:empty"

// Node is one mounted node.
type Node struct {
	ID                  string
	ContractFingerprint string
	// Wake is the node's continuity: input (default), self or external.
	Wake receipt.WakeSource
	// Cadence is a self-driven node's recheck interval; 0 for none.
	Cadence time.Duration
	// Runtime is what ### Runtime says about its render.
	Runtime Runtime
	// Post is the node's compiled postconditions: checked on a render's
	// output before it is published (postcheck.go).
	Post Postconditions
}

// Runtime is a node's ### Runtime keys that prose reads (docs/diagnostics.md
// §Runtime).
type Runtime struct {
	// Render is "command", "model", "replay" or "" (none declared).
	Render string
	// Command is the executable (and arguments, split on spaces) of a
	// command render, relative to the project directory unless absolute.
	Command string
	// Model is the model hint or PROVIDER:NAME of a model render.
	Model string
	// Timeout bounds a render; 0 means DefaultTimeout.
	Timeout time.Duration
	// Env names the environment variables passed through to a command
	// render beyond the minimal set.
	Env []string
	// Recording is a replay render's recording, relative to the project
	// directory unless absolute; "" means recordings/<escaped node>.json.
	Recording string
	// Contract is the node's contract as Markdown (a model render's
	// prompt).
	Contract string
}

// DefaultTimeout bounds a render whose ### Runtime gives no timeout.
const DefaultTimeout = 5 * time.Minute

// Edge is one subscription: Subscriber reads Producer's Facet.
type Edge struct {
	Subscriber, Producer, Facet string
}

// Graph is the nodes and edges a reconciler drains over.
type Graph struct {
	nodes  map[string]*Node
	ids    []string          // sorted
	ins    map[string][]Edge // by subscriber, edge order (producer, facet)
	outs   map[string][]Edge // by producer, sorted by (subscriber, facet)
	height map[string]int
}

// NewGraph checks nodes and edges (every edge names known nodes, no
// self-edge, no cycle) and computes heights.
func NewGraph(nodes []Node, edges []Edge) (*Graph, error) {
	g := &Graph{nodes: map[string]*Node{}, ins: map[string][]Edge{}, outs: map[string][]Edge{}, height: map[string]int{}}
	for i := range nodes {
		n := nodes[i]
		if n.ID == "" {
			return nil, fmt.Errorf("graph: a node has no id")
		}
		if _, dup := g.nodes[n.ID]; dup {
			return nil, fmt.Errorf("graph: node %s is listed twice", n.ID)
		}
		if n.Wake == "" {
			n.Wake = receipt.WakeInput
		}
		g.nodes[n.ID] = &n
		g.ids = append(g.ids, n.ID)
	}
	sort.Strings(g.ids)
	es := slices.Clone(edges)
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Subscriber != b.Subscriber {
			return a.Subscriber < b.Subscriber
		}
		if a.Producer != b.Producer {
			return a.Producer < b.Producer
		}
		return a.Facet < b.Facet
	})
	for _, e := range es {
		if g.nodes[e.Subscriber] == nil || g.nodes[e.Producer] == nil {
			return nil, fmt.Errorf("graph: edge %s → %s.%s names a node the graph does not hold", e.Producer, e.Subscriber, e.Facet)
		}
		if e.Subscriber == e.Producer {
			return nil, fmt.Errorf("graph: %s subscribes to itself; feedback is self-driven continuity", e.Subscriber)
		}
		if e.Facet == "" {
			e.Facet = receipt.AtomicFacet
		}
		g.ins[e.Subscriber] = append(g.ins[e.Subscriber], e)
		g.outs[e.Producer] = append(g.outs[e.Producer], e)
	}
	// Heights by a depth-first walk with cycle detection.
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(id string, path []string) error
	visit = func(id string, path []string) error {
		switch state[id] {
		case done:
			return nil
		case active:
			i := slices.Index(path, id)
			return fmt.Errorf("graph: cycle %s", strings.Join(append(path[i:], id), " → "))
		}
		state[id] = active
		h := 0
		for _, e := range g.ins[id] {
			if err := visit(e.Producer, append(path, id)); err != nil {
				return err
			}
			h = max(h, g.height[e.Producer]+1)
		}
		g.height[id] = h
		state[id] = done
		return nil
	}
	for _, id := range g.ids {
		if err := visit(id, nil); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Node returns the node with id, or nil.
func (g *Graph) Node(id string) *Node { return g.nodes[id] }

// IDs returns every node id, sorted.
func (g *Graph) IDs() []string { return slices.Clone(g.ids) }

// Height is 0 for a node without producers, else 1 + its highest producer.
func (g *Graph) Height(id string) int { return g.height[id] }

// Inputs returns the edges id subscribes through, in edge order.
func (g *Graph) Inputs(id string) []Edge { return g.ins[id] }

// Subscribers returns the edges that read id, sorted by subscriber.
func (g *Graph) Subscribers(id string) []Edge { return g.outs[id] }

// downstream returns every node reachable from the seeds, seeds excluded.
func (g *Graph) downstream(seeds map[string]bool) map[string]bool {
	out := map[string]bool{}
	stack := []string{}
	for s := range seeds {
		stack = append(stack, s)
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.outs[n] {
			if !out[e.Subscriber] && !seeds[e.Subscriber] {
				out[e.Subscriber] = true
				stack = append(stack, e.Subscriber)
			}
		}
	}
	return out
}
