package vault

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/receipt"
)

// ReceiptOptions describe a receipt that records a run without changing
// the node: a skipped or failed wake.
type ReceiptOptions struct {
	// Who names the command in the lock holder file.
	Who string
	// Refs are the wake's refs (tokens of what caused it); Source
	// defaults to external.
	Refs   []string
	Source receipt.WakeSource
	// Provider, Model and Tokens fill the receipt's cost (default: prose,
	// the node's name, nothing spent).
	Provider, Model string
	Tokens          receipt.Tokens
	// Reason is why a failed run failed; its first line, redacted and cut
	// (receipt.FailureReason), becomes the failure_reason.
	Reason error
	// Now stamps the ledger commit (default time.Now).
	Now func() time.Time
	// InputFingerprints, when set, is the receipt's input_fingerprints
	// (the memo key the wake was decided on); ContractFingerprint, when
	// set, replaces the active manifest's.
	InputFingerprints   []string
	ContractFingerprint string
}

// RecordReceipt appends a skipped or failed receipt for node to the ledger
// and leaves the branch, the index and the working tree alone. The
// receipt carries the node's current fingerprints (those of its last
// receipt): nothing was published.
func (v *Vault) RecordReceipt(ctx context.Context, node string, status receipt.Status, opt ReceiptOptions) (*receipt.Receipt, error) {
	if status != receipt.Skipped && status != receipt.Failed {
		return nil, fmt.Errorf("record %s: a %s receipt is written by a publish or a write", node, status)
	}
	if err := CheckNodeName(node); err != nil {
		return nil, err
	}
	who := opt.Who
	if who == "" {
		who = "prose record " + node
	}
	w, err := v.lockWriterChecked(ctx, who)
	if err != nil {
		return nil, err
	}
	defer w.release()
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return nil, err
	}
	tc, ledgerTip, prev, err := v.nodeHeads(tip, node)
	if err != nil {
		return nil, err
	}
	fps := prevFingerprints(prev)
	if fps == nil {
		_, tree, err := v.NodeHead(node)
		if err != nil {
			return nil, err
		}
		if fps, _, err = v.NodeFingerprints(node, tree); err != nil {
			return nil, err
		}
	}
	cfp := opt.ContractFingerprint
	if cfp == "" {
		cfp = v.contractFingerprint(tc.TreeHash, node)
	}
	r := newReceipt(v.Algorithm(), node, cfp, string(status), fps, prev)
	if opt.InputFingerprints != nil {
		r.InputFingerprints = append([]string{}, opt.InputFingerprints...)
	}
	if opt.Source != "" {
		r.Wake.Source, r.Cost.SurpriseCause = opt.Source, opt.Source
	}
	if opt.Refs != nil {
		r.Wake.Refs = append([]string{}, opt.Refs...)
	}
	if opt.Provider != "" {
		r.Cost.Provider = opt.Provider
	}
	r.Cost.Model = node
	if opt.Model != "" {
		r.Cost.Model = opt.Model
	}
	r.Cost.Tokens = opt.Tokens
	if status == receipt.Failed {
		if reason := receipt.FailureReason(opt.Reason); reason != "" {
			r.SemanticDiff["failure_reason"] = reason
		}
	}
	if err := r.Seal(); err != nil {
		return nil, err
	}
	if err := r.CheckShape(); err != nil {
		return nil, fmt.Errorf("record %s: %w", node, err)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	b := v.newBatch()
	defer b.abort()
	lc, err := b.appendLedger(ledgerTip, r, nil, plumbing.ZeroHash, now())
	if err != nil {
		return nil, err
	}
	if err := b.flush(); err != nil {
		return nil, err
	}
	if _, err := v.moveRef(LedgerRef, ledgerTip, lc); err != nil {
		return nil, err
	}
	return r, nil
}
