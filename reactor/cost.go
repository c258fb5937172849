package reactor

import (
	"sort"
	"time"

	"github.com/prose-store/prose/receipt"
)

// Spend is what a set of receipts cost: renders, skips and failures, and
// tokens.
type Spend struct {
	Receipts int   `json:"receipts"`
	Renders  int   `json:"renders"`
	Skips    int   `json:"skips"`
	Failures int   `json:"failures"`
	Fresh    int64 `json:"fresh_tokens"`
	Reused   int64 `json:"reused_tokens"`
	// SkipRatio is skips / receipts (0 when there are none).
	SkipRatio float64 `json:"skip_ratio"`
}

func (s *Spend) add(r *receipt.Receipt) {
	s.Receipts++
	switch r.Status {
	case receipt.Rendered:
		s.Renders++
	case receipt.Skipped:
		s.Skips++
	case receipt.Failed:
		s.Failures++
	}
	s.Fresh += r.Cost.Tokens.Fresh
	s.Reused += r.Cost.Tokens.Reused
	s.SkipRatio = float64(s.Skips) / float64(s.Receipts)
}

// NodeSpend is one node's spend.
type NodeSpend struct {
	Node string `json:"node"`
	Spend
}

// RunSpend is one run's spend: an outside wake (external or self) and
// every receipt it caused through input wakes, linked by wake refs.
// Cascades that meet at a node (one receipt refers to both) are one run.
type RunSpend struct {
	// Start is the time of the run's first receipt.
	Start time.Time `json:"start"`
	// StartedBy names the nodes woken from outside, in receipt order,
	// with their wake source ("inbox (external)").
	StartedBy []string `json:"started_by"`
	Spend
	// Nodes is the run's spend per node, by node name.
	Nodes []NodeSpend `json:"nodes"`
}

// CostReport is prose receipts cost: spend per node, per run, and in all.
type CostReport struct {
	Nodes []NodeSpend `json:"nodes"`
	Runs  []RunSpend  `json:"runs"`
	Total Spend       `json:"total"`
}

// Timed is a receipt and when the ledger recorded it.
type Timed struct {
	Receipt *receipt.Receipt
	When    time.Time
}

// Cost sums receipts (oldest first) per node and per run.
func Cost(recs []Timed) *CostReport {
	rep := &CostReport{Nodes: []NodeSpend{}, Runs: []RunSpend{}}
	byNode := map[string]*NodeSpend{}
	// Runs: union receipts with the receipts their wake refers to.
	parent := make([]int, len(recs))
	index := map[string]int{}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, t := range recs {
		parent[i] = i
		index[t.Receipt.ContentHash] = i
		r := t.Receipt
		ns := byNode[r.Node]
		if ns == nil {
			ns = &NodeSpend{Node: r.Node}
			byNode[r.Node] = ns
		}
		ns.add(r)
		rep.Total.add(r)
		if r.Wake.Source != receipt.WakeInput {
			continue
		}
		for _, ref := range r.Wake.Refs {
			if j, ok := index[ref]; ok {
				a, b := find(i), find(j)
				if a != b {
					if a < b {
						parent[b] = a
					} else {
						parent[a] = b
					}
				}
			}
		}
	}
	for _, ns := range byNode {
		rep.Nodes = append(rep.Nodes, *ns)
	}
	sort.Slice(rep.Nodes, func(i, j int) bool { return rep.Nodes[i].Node < rep.Nodes[j].Node })
	runOf := map[int]int{} // root → index in rep.Runs
	perRun := []map[string]*NodeSpend{}
	for i, t := range recs {
		root := find(i)
		k, ok := runOf[root]
		if !ok {
			k = len(rep.Runs)
			runOf[root] = k
			rep.Runs = append(rep.Runs, RunSpend{Start: t.When, StartedBy: []string{}})
			perRun = append(perRun, map[string]*NodeSpend{})
		}
		run := &rep.Runs[k]
		r := t.Receipt
		run.add(r)
		if r.Wake.Source != receipt.WakeInput {
			run.StartedBy = append(run.StartedBy, r.Node+" ("+string(r.Wake.Source)+")")
		}
		ns := perRun[k][r.Node]
		if ns == nil {
			ns = &NodeSpend{Node: r.Node}
			perRun[k][r.Node] = ns
		}
		ns.add(r)
	}
	for k := range rep.Runs {
		for _, ns := range perRun[k] {
			rep.Runs[k].Nodes = append(rep.Runs[k].Nodes, *ns)
		}
		sort.Slice(rep.Runs[k].Nodes, func(i, j int) bool { return rep.Runs[k].Nodes[i].Node < rep.Runs[k].Nodes[j].Node })
	}
	return rep
}
