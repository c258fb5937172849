package receipt

import (
	"fmt"

	"github.com/prose-store/prose/canon"
)

// Report is the outcome of verifying a ledger.
type Report struct {
	Receipts int       // receipts in the ledger
	Nodes    int       // distinct nodes among the readable receipts
	Problems []Problem // in ledger order; none means the ledger verifies
}

// OK reports whether the ledger verified without problems.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// VerifyReactorLedger verifies a reference reactor receipts.json: one JSON
// array of receipts in global append order. Every element is read with the
// rules of Parse (one that cannot be read is a Problem) and the readable
// ones are checked with VerifyChains. The error is for a document that is
// not a JSON array at all.
func VerifyReactorLedger(data []byte) (Report, error) {
	v, err := canon.Decode(data)
	if err != nil {
		return Report{}, fmt.Errorf("reactor ledger: %w", err)
	}
	items, ok := v.([]any)
	if !ok {
		return Report{}, fmt.Errorf("reactor ledger: want a JSON array of receipts, found %s", kind(v))
	}
	rep := Report{Receipts: len(items)}
	rs := make([]*Receipt, len(items))
	var unreadable []Problem
	nodes := make(map[string]bool)
	for i, item := range items {
		r, err := FromValue(item)
		if err != nil {
			p := Problem{Index: i, Reason: fmt.Sprintf("unreadable: %v", err)}
			if m, ok := item.(map[string]any); ok {
				p.Node, _ = m["node"].(string)
				p.ContentHash, _ = m["content_hash"].(string)
			}
			unreadable = append(unreadable, p)
			continue
		}
		rs[i] = r
		nodes[r.Node] = true
	}
	rep.Nodes = len(nodes)
	rep.Problems = mergeByIndex(unreadable, verify(rs, false))
	return rep, nil
}

// mergeByIndex merges two problem lists, each in index order, into one.
func mergeByIndex(a, b []Problem) []Problem {
	if len(a) == 0 {
		return b
	}
	out := make([]Problem, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Index <= b[0].Index {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
