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
	// Elements are turned into receipts as they are decoded: the decoded
	// array never sits in memory whole.
	var rep Report
	var rs []*Receipt
	var unreadable []Problem
	nodes := make(map[string]bool)
	v, err := canon.DecodeElements(data, maxReceiptValues, func(item any) error {
		i := rep.Receipts
		if rep.Receipts++; rep.Receipts > MaxReactorReceipts {
			return fmt.Errorf("the ledger holds more than %d elements, the limit for a reactor ledger (see docs/limits.md)", MaxReactorReceipts)
		}
		r, err := FromValue(item)
		rs = append(rs, r)
		if err != nil {
			p := Problem{Index: i, Reason: fmt.Sprintf("unreadable: %v", err)}
			if m, ok := item.(map[string]any); ok {
				p.Node, _ = m["node"].(string)
				p.ContentHash, _ = m["content_hash"].(string)
			}
			unreadable = append(unreadable, p)
			return nil
		}
		nodes[r.Node] = true
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("reactor ledger: %w", err)
	}
	if v != nil || rs == nil && rep.Receipts == 0 && !isEmptyArray(data) {
		return Report{}, fmt.Errorf("reactor ledger: want a JSON array of receipts, found %s", kind(v))
	}
	rep.Nodes = len(nodes)
	rep.Problems = mergeByIndex(unreadable, verify(rs, false, nil, nil))
	return rep, nil
}

// MaxReactorReceipts is the most elements a reactor ledger may hold: each
// costs memory even when it is not a receipt at all.
const MaxReactorReceipts = 100_000

// maxReceiptValues bounds the JSON values of one ledger element: a receipt
// holds a few dozen, so one element cannot hold the whole file's worth.
const maxReceiptValues = 10_000

// isEmptyArray reports whether data, already decoded without error and not
// to a non-array value, is the empty array: DecodeElements gives nil for
// both an array and the literal null.
func isEmptyArray(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '['
	}
	return false
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
