package reactor

import (
	"fmt"
	"time"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/receipt"
)

// FromManifest builds the graph of a compiled manifest: its topology's
// nodes (contract fingerprints, wake sources) and edges, each node's
// ### Runtime and, for a self-driven node, its cadence, read from the
// contracts the manifest was compiled from. Notes say what could not be
// used (a cadence prose does not understand: the node then wakes on its
// inputs only).
func FromManifest(m *forme.Manifest, contracts []*forme.Contract) (*Graph, []string, error) {
	byName := map[string]*forme.Contract{}
	for _, c := range contracts {
		if c.Kind.IsNode() {
			byName[c.Name] = c
		}
	}
	var notes []string
	posts := map[string]forme.Postcondition{}
	for _, p := range m.Postconditions {
		posts[p.Node] = p
	}
	nodes := make([]Node, 0, len(m.Topology.Nodes))
	for _, tn := range m.Topology.Nodes {
		n := Node{ID: tn.Node, ContractFingerprint: tn.ContractFingerprint, Wake: receipt.WakeSource(tn.WakeSource)}
		n.Post = postconditionsOf(posts[tn.Node])
		if c := byName[tn.Node]; c != nil {
			rt, _ := forme.ReadRuntime(c)
			n.Runtime = Runtime{Render: rt.Render, Command: rt.Command, Model: rt.Model, Timeout: rt.Timeout, Env: rt.Env,
				Recording: rt.Recording, Contract: ContractText(c)}
			if cont := c.Continuity(); cont.Mode == forme.WakeSelf {
				d, err := cadenceOf(cont)
				if err != nil {
					notes = append(notes, fmt.Sprintf("%s: %v; it wakes on its inputs only", tn.Node, err))
				}
				n.Cadence = d
			}
		}
		nodes = append(nodes, n)
	}
	edges := make([]Edge, len(m.Topology.Edges))
	for i, e := range m.Topology.Edges {
		edges[i] = Edge{Subscriber: e.Subscriber, Producer: e.Producer, Facet: e.Facet}
	}
	g, err := NewGraph(nodes, edges)
	return g, notes, err
}

func cadenceOf(c forme.Continuity) (time.Duration, error) {
	if c.Cadence != "" {
		return ParseCadence(c.Cadence)
	}
	return ParseCadence(c.Text)
}
