package vault

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/internal/parallel"
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
	tip, err := v.requireLedger()
	if err != nil {
		return nil, err
	}
	cache := v.newHistoryCache()
	defer cache.flush()
	return v.receiptsAt(cache, tip, false)
}

// receiptsAt returns the records of the ledger at tip, oldest first.
func (v *Vault) receiptsAt(cache *historyCache, tip plumbing.Hash, hashes bool) ([]Record, error) {
	var recs []Record
	if err := v.walkLedgerWith(cache, tip, hashes, func(r Record) error {
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
// It reads the ledger ref once and verifies that one snapshot, so a publish
// landing meanwhile is not mistaken for a damaged ledger.
func (v *Vault) VerifyReceipts() (*ReceiptReport, error) {
	tip, err := v.requireLedger()
	if err != nil {
		return nil, err
	}
	cache := v.newHistoryCache()
	defer cache.flush()
	recs, err := v.receiptsAt(cache, tip, true)
	if err != nil {
		return nil, err
	}
	if afterHistoryRead != nil {
		afterHistoryRead()
	}
	rs := make([]*receipt.Receipt, len(recs))
	hashes := make([]string, len(recs))
	hashErrs := make([]error, len(recs))
	for i, r := range recs {
		rs[i], hashes[i], hashErrs[i] = r.Receipt, r.hash, r.hashErr
	}
	rep := &ReceiptReport{Receipts: len(rs)}
	for _, p := range receipt.VerifyChainsHashed(rs, hashes, hashErrs) {
		rep.Problems = append(rep.Problems, Problem{Where: fmt.Sprintf("receipt %d (%s, %s)", p.Index, p.Node, p.ContentHash), Reason: p.Reason})
	}
	if !cache.loaded {
		cache.load()
	}
	carried := v.branchesCarry(cache, recs)
	last := map[string]*receipt.Receipt{}
	for i, rec := range recs {
		r := rec.Receipt
		last[r.Node] = r
		where := func() string { return fmt.Sprintf("receipt %d (%s, %s)", i, r.Node, r.ContentHash) }
		if err := rec.shapeErr; err != nil {
			rep.Problems = append(rep.Problems, Problem{where(), err.Error()})
		}
		if err := carried[i]; err != nil {
			rep.Problems = append(rep.Problems, Problem{where(), err.Error()})
		}
	}
	rep.Nodes = len(last)
	for node, want := range last {
		got, err := v.lastReceiptAt(tip, node)
		if err != nil || got == nil || got.ContentHash != want.ContentHash {
			rep.Problems = append(rep.Problems, Problem{"ledger table " + ledgerPath(node), "does not hold the node's last receipt " + want.ContentHash})
		}
	}
	return rep, nil
}

// afterHistoryRead, when set by a test, runs between reading the receipts
// and checking the ledger table: where a concurrent publish lands.
var afterHistoryRead func()

// branchesCarry checks that each rendered receipt's branch commit carries
// the same receipt, returning each receipt's problem (nil for one without
// any). Commits the history cache holds are checked on every core; the
// others are read from git, one by one.
func (v *Vault) branchesCarry(cache *historyCache, recs []Record) []error {
	errs := make([]error, len(recs))
	fromGit := make([]bool, len(recs))
	parallel.For(len(recs), func(i int) {
		rec := recs[i]
		if rec.Receipt.Status != receipt.Rendered {
			return
		}
		if rec.Commit.IsZero() {
			errs[i] = errors.New("rendered receipt has no branch commit")
			return
		}
		// Only reads of the cache here: what git gives is added below.
		body, ok := cache.recs[rec.Commit]
		if !ok || commitHash(body) != rec.Commit {
			fromGit[i] = true
			return
		}
		errs[i] = carries(rec, body)
	})
	for i, rec := range recs {
		if fromGit[i] {
			body, err := v.gitCommit(cache, rec.Commit)
			if err == nil {
				err = carries(rec, body)
			}
			errs[i] = err
		}
	}
	return errs
}

// carries checks that a rendered receipt's branch commit, whose raw body
// is given, carries the same receipt. The two commits are written with one
// message, so equal messages settle it without parsing.
func carries(rec Record, body []byte) error {
	bc, err := parseCommitBody(rec.Commit, body)
	if err != nil {
		return err
	}
	if bytes.Equal(bc.msg, rec.message) {
		return nil
	}
	br, ok, err := parseReceiptBytes(bc.msg)
	if err != nil || !ok || br.ContentHash != rec.Receipt.ContentHash {
		return fmt.Errorf("branch commit %s does not carry this receipt", rec.Commit)
	}
	return nil
}

// OnBranch reports whether commit h is in the branch's history. The walk
// stops at h, so a commit near the tip is found at once; ancestry is
// decided by the commit graph alone, whatever the commit dates.
func (v *Vault) OnBranch(h plumbing.Hash) (bool, error) {
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return false, err
	}
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.IsZero() || seen[c] {
			continue
		}
		if c == h {
			return true, nil
		}
		seen[c] = true
		co, err := v.commit(c)
		if err != nil {
			return false, err
		}
		stack = append(stack, co.ParentHashes...)
	}
	return false, nil
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
				Reason: fmt.Sprintf("its commit %s is not on the branch %s: the branch was rewritten by hand (git commit --amend, git reset or a rebase); the receipt is kept in the ledger. Restore the commit (find it with `git reflog`, then `git reset --hard COMMIT`) or publish the node again (`prose publish %s DIR`)", rec.Commit, v.cfg.Branch, rec.Receipt.Node),
			})
		}
		return nil
	})
	return probs, err
}
