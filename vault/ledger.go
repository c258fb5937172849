package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// Record is one receipt as the vault holds it.
type Record struct {
	Receipt *receipt.Receipt
	Ledger  plumbing.Hash // the ledger commit that appended it
	Commit  plumbing.Hash // the branch commit of a rendered receipt, else zero
	When    time.Time

	message []byte // the ledger commit's message
	// hash and hashErr are the receipt's recomputed content hash, and
	// shapeErr its CheckShape verdict, when the walk that read it was asked
	// for them (verify).
	hash     string
	hashErr  error
	shapeErr error
}

// ledgerPath is where the ledger tree keeps a node's last receipt.
func ledgerPath(node string) string {
	return "nodes/" + published.EscapeNode(node) + ".json"
}

// receiptMessage is the commit message that carries r: a summary line, the
// facets it moved, then the receipt as indented JSON.
func receiptMessage(r *receipt.Receipt, moved []string) ([]byte, error) {
	canonical, err := r.Canonical()
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, canonical, "", "  "); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: %s", r.Node, r.Status)
	if s := Summary(r); s != "" && len(moved) > 0 {
		fmt.Fprintf(&b, " (%s)", s)
	} else if len(moved) > 0 {
		fmt.Fprintf(&b, " (moved %s)", strings.Join(moved, ", "))
	}
	b.WriteString("\n\n")
	b.Write(pretty.Bytes())
	b.WriteString("\n")
	return b.Bytes(), nil
}

// parseReceiptMessage extracts the receipt from a commit message written by
// receiptMessage. ok is false for commits that carry no receipt.
func parseReceiptMessage(msg string) (*receipt.Receipt, bool, error) {
	return parseReceiptBytes([]byte(msg))
}

// parseReceiptBytes is parseReceiptMessage on the message's bytes, which it
// does not keep.
func parseReceiptBytes(msg []byte) (*receipt.Receipt, bool, error) {
	i := bytes.Index(msg, []byte("\n\n{"))
	if i < 0 {
		return nil, false, nil
	}
	r, err := receipt.Parse(msg[i+2:])
	if err != nil {
		return nil, true, err
	}
	return r, true, nil
}

// nodeHeads reads the commit at the branch tip, the ledger's tip and the
// node's last receipt there (nil when it has none): where a write to the
// node starts from. The ledger must exist.
func (v *Vault) nodeHeads(tip plumbing.Hash, node string) (tc *object.Commit, ledgerTip plumbing.Hash, prev *receipt.Receipt, err error) {
	if tc, err = v.commit(tip); err != nil {
		return nil, ledgerTip, nil, err
	}
	if ledgerTip, err = v.readRef(LedgerRef); err != nil {
		return nil, ledgerTip, nil, err
	}
	if ledgerTip.IsZero() {
		return nil, ledgerTip, nil, errNoLedger
	}
	if prev, err = v.lastReceiptAt(ledgerTip, node); err != nil {
		return nil, ledgerTip, nil, err
	}
	return tc, ledgerTip, prev, nil
}

// lastReceipt returns the last receipt of node from the ledger at tip, or
// nil when the node has none. It reads one tree path, never history.
func (v *Vault) lastReceiptAt(tip plumbing.Hash, node string) (*receipt.Receipt, error) {
	if tip.IsZero() {
		return nil, nil
	}
	c, err := v.commit(tip)
	if err != nil {
		return nil, err
	}
	e, ok, err := v.lookup(c.TreeHash, ledgerPath(node))
	if err != nil || !ok {
		return nil, err
	}
	data, err := v.blob(e.Hash)
	if err != nil {
		return nil, err
	}
	r, err := receipt.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("ledger entry for %s: %w", node, err)
	}
	return r, nil
}

// LastReceipt returns the newest receipt of node, or nil when there is none.
func (v *Vault) LastReceipt(node string) (*receipt.Receipt, error) {
	tip, err := v.ledgerHead()
	if err != nil {
		return nil, err
	}
	return v.lastReceiptAt(tip, node)
}

// LastPublishedReceipt returns the newest receipt of node that published
// something (rendered or skipped): what the branch must hold for the node.
// A failed run publishes nothing, so a commit by hand before it is still
// not taken in. nil when the node has no such receipt.
func (v *Vault) LastPublishedReceipt(node string) (*receipt.Receipt, error) {
	tip, err := v.ledgerHead()
	if err != nil {
		return nil, err
	}
	last, err := v.lastReceiptAt(tip, node)
	if err != nil {
		return nil, err
	}
	return v.publishedReceipt(tip, node, last)
}

// appendLedger writes a ledger commit for r on top of tip. A rendered
// receipt's branch commit becomes the second parent, so the ledger reaches
// every world-model version it describes; both commits carry the same
// message and signature, so the ledger commit can be made again from the
// branch commit alone (rollForwardLedger).
func (b *objectBatch) appendLedger(tip plumbing.Hash, r *receipt.Receipt, moved []string, branchCommit plumbing.Hash, when time.Time) (plumbing.Hash, error) {
	msg, err := receiptMessage(r, moved)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.appendLedgerMessage(tip, r, string(msg), branchCommit, b.v.signature(when))
}

func (b *objectBatch) appendLedgerMessage(tip plumbing.Hash, r *receipt.Receipt, msg string, branchCommit plumbing.Hash, sig object.Signature) (plumbing.Hash, error) {
	canonical, err := r.Canonical()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	bh, err := b.put(plumbing.BlobObject, append(canonical, '\n'))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if tip.IsZero() {
		return plumbing.ZeroHash, errNoLedger
	}
	c, err := b.v.commit(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.appendLedgerAt(tip, c.TreeHash, r, bh, msg, branchCommit, sig)
}

// appendLedgerAt is appendLedgerMessage on a tip whose tree is known (a
// commit of this batch, not yet written), with r's entry blob bh.
func (b *objectBatch) appendLedgerAt(tip, tipTree plumbing.Hash, r *receipt.Receipt, bh plumbing.Hash, msg string, branchCommit plumbing.Hash, sig object.Signature) (plumbing.Hash, error) {
	parents := []plumbing.Hash{tip}
	if !branchCommit.IsZero() {
		parents = append(parents, branchCommit)
	}
	root, err := b.setPath(tipTree, ledgerPath(r.Node), object.TreeEntry{Mode: filemode.Regular, Hash: bh})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: root, ParentHashes: parents})
}

// Receipts calls fn for every receipt in the ledger, newest first. A vault
// without its ledger ref (a plain git clone) is an error that names the
// fetch command.
func (v *Vault) Receipts(fn func(Record) error) error {
	tip, err := v.requireLedger()
	if err != nil {
		return err
	}
	return v.walkLedger(tip, fn)
}

// ledgerHead is the ledger tip as readers see it. A writer moves the branch
// before the ledger, so every receipt on the ledger has taken effect.
func (v *Vault) ledgerHead() (plumbing.Hash, error) {
	return v.readRef(LedgerRef)
}

// requireLedger returns the ledger tip, or errNoLedger when the vault has
// no ledger ref (a plain `git clone` leaves it behind). Every reader and
// writer that needs the ledger asks here, so all of them say the same.
func (v *Vault) requireLedger() (plumbing.Hash, error) {
	h, err := v.readRef(LedgerRef)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if h.IsZero() {
		return plumbing.ZeroHash, errNoLedger
	}
	return h, nil
}

// errNoLedger explains a vault whose ledger ref is missing.
var errNoLedger = fmt.Errorf("the vault has no ledger ref %s (a plain `git clone` does not fetch it): run `git fetch origin %s:%s` in the vault, then retry", LedgerRef, LedgerRef, LedgerRef)

// publishedReceipt returns the newest receipt of node at ledger tip that
// describes files the branch should hold: last itself unless it is a
// failed run, else the newest earlier receipt that is not. A failed
// receipt published nothing, so it never takes in what the branch holds
// (a hand commit before it stays a finding until a write takes it in).
// nil means every receipt of the node is a failed run (or it has none).
//
// Only a failed last receipt costs more than the lookup: the ledger is
// walked back along first parents, one tree path per commit, a receipt
// parsed only where the node's entry changed.
func (v *Vault) publishedReceipt(tip plumbing.Hash, node string, last *receipt.Receipt) (*receipt.Receipt, error) {
	if last == nil || last.Status != receipt.Failed {
		return last, nil
	}
	var seen plumbing.Hash
	for h := tip; !h.IsZero(); {
		c, err := v.commit(h)
		if err != nil {
			return nil, err
		}
		e, ok, err := v.lookup(c.TreeHash, ledgerPath(node))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, nil // before the node's first receipt
		}
		if e.Hash != seen {
			seen = e.Hash
			data, err := v.blob(e.Hash)
			if err != nil {
				return nil, err
			}
			r, err := receipt.Parse(data)
			if err != nil {
				return nil, fmt.Errorf("ledger entry for %s: %w", node, err)
			}
			if r.Status != receipt.Failed {
				return r, nil
			}
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return nil, nil
}
