package vault

import (
	"fmt"

	"github.com/prose-store/prose/receipt"
)

// Problem is one finding of a verification: where, and what is wrong.
type Problem struct {
	Where  string `json:"where"`
	Reason string `json:"reason"`
}

func (p Problem) String() string { return p.Where + ": " + p.Reason }

// ReceiptReport summarizes a verification of every receipt chain.
type ReceiptReport struct {
	Receipts int       `json:"receipts"`
	Nodes    int       `json:"nodes"`
	Problems []Problem `json:"problems"`
}

// AllReceipts returns every ledger record in append order (oldest first).
func (v *Vault) AllReceipts() ([]Record, error) {
	var recs []Record
	if err := v.Receipts(func(r Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		return nil, err
	}
	for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
		recs[i], recs[j] = recs[j], recs[i]
	}
	return recs, nil
}

// VerifyReceipts checks every receipt end to end: each content hash, each
// prev link and node identity per chain, the shape of every receipt prose
// writes, that each rendered receipt's branch commit carries the same
// receipt, and that the ledger's last-receipt table matches the chains.
func (v *Vault) VerifyReceipts() (*ReceiptReport, error) {
	recs, err := v.AllReceipts()
	if err != nil {
		return nil, err
	}
	rs := make([]*receipt.Receipt, len(recs))
	for i, r := range recs {
		rs[i] = r.Receipt
	}
	rep := &ReceiptReport{Receipts: len(rs)}
	for _, p := range receipt.VerifyChains(rs) {
		rep.Problems = append(rep.Problems, Problem{Where: fmt.Sprintf("receipt %d (%s, %s)", p.Index, p.Node, p.ContentHash), Reason: p.Reason})
	}
	last := map[string]*receipt.Receipt{}
	for i, rec := range recs {
		r := rec.Receipt
		last[r.Node] = r
		where := fmt.Sprintf("receipt %d (%s, %s)", i, r.Node, r.ContentHash)
		if err := r.CheckShape(); err != nil {
			rep.Problems = append(rep.Problems, Problem{where, err.Error()})
		}
		if r.Status == receipt.Rendered {
			if rec.Commit.IsZero() {
				rep.Problems = append(rep.Problems, Problem{where, "rendered receipt has no branch commit"})
				continue
			}
			c, err := v.commit(rec.Commit)
			if err != nil {
				rep.Problems = append(rep.Problems, Problem{where, err.Error()})
				continue
			}
			br, ok, err := parseReceiptMessage(c.Message)
			if err != nil || !ok || br.ContentHash != r.ContentHash {
				rep.Problems = append(rep.Problems, Problem{where, fmt.Sprintf("branch commit %s does not carry this receipt", rec.Commit)})
			}
		}
	}
	rep.Nodes = len(last)
	tip, err := v.ledgerHead()
	if err != nil {
		return nil, err
	}
	for node, want := range last {
		got, err := v.lastReceiptAt(tip, node)
		if err != nil || got == nil || got.ContentHash != want.ContentHash {
			rep.Problems = append(rep.Problems, Problem{"ledger table " + ledgerPath(node), "does not hold the node's last receipt " + want.ContentHash})
		}
	}
	return rep, nil
}

// OffBranchReceipts reports every rendered receipt on the ledger whose
// branch commit is not in the branch's history. A writer moves the branch
// before the ledger, so only a rewrite of the branch by hand (git commit
// --amend, git reset, a rebase) leaves one: the receipt is kept and
// reported, never removed. Ancestry is decided by the commit graph alone,
// whatever the commit dates.
func (v *Vault) OffBranchReceipts() ([]Problem, error) {
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return nil, err
	}
	on, err := v.reachable(tip)
	if err != nil {
		return nil, err
	}
	var probs []Problem
	err = v.Receipts(func(rec Record) error {
		if !rec.Commit.IsZero() && !on[rec.Commit] {
			probs = append(probs, Problem{
				Where:  fmt.Sprintf("receipt %s (%s)", rec.Receipt.ContentHash, rec.Receipt.Node),
				Reason: fmt.Sprintf("its commit %s is not on the branch %s: the branch was rewritten by hand (git commit --amend, git reset or a rebase); the receipt is kept in the ledger. Restore the commit (git reflog) or publish the node again", rec.Commit, v.cfg.Branch),
			})
		}
		return nil
	})
	return probs, err
}
