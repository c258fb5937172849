package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/receipt"
)

// repair finishes what a crashed writer left: temporary files are removed,
// a rendered receipt that reached the branch but not the ledger is appended
// to the ledger (rollForwardLedger), and the working tree and index are
// brought to the branch. It never removes a receipt.
// It runs under the writer lock, before every write.
func (v *Vault) repair() error {
	v.cleanTemps()
	v.removeStaleGitLock("index.lock") // every proof name, and this kind's record
	v.removeRecordedGitLock("ref.lock")
	v.removeRecordedGitLock("ledger.lock")
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return err
	}
	if tip.IsZero() {
		return fmt.Errorf("vault branch %s does not exist; the vault is damaged (restore .git from a clone)", v.Branch())
	}
	if err := v.finishPull(); err != nil {
		return err
	}
	if tip, err = v.readRef(v.Branch()); err != nil {
		return err
	}
	if err := v.rollForwardLedger(tip); err != nil {
		return err
	}
	state, ok := v.worktreeState()
	if ok && state == tip {
		return nil
	}
	if !ok {
		// A fresh clone: git's checkout already matches the branch.
		return v.setWorktreeState(tip)
	}
	edits, err := v.syncWorktree(state, tip)
	if err != nil {
		return fmt.Errorf("repair working tree: %w", err)
	}
	for _, e := range edits {
		fmt.Fprintf(os.Stderr, "prose: warning: %s was left as it is (%s); see prose fsck\n", e.Path, e.Reason)
	}
	return nil
}

// readIndexRepaired reads the git index; a damaged one (a crash while it
// was written, since it is not fsynced) is rebuilt from the branch tip.
//
// The index comes back held (openIndex): the caller writes it or releases
// it.
func (v *Vault) readIndexRepaired(tip plumbing.Hash) (*gitIndex, error) {
	if _, err := os.Lstat(v.indexPath()); errors.Is(err, fs.ErrNotExist) && !tip.IsZero() {
		// No index while the branch holds files: it was deleted, and
		// reads as empty (every file staged for removal). Rebuild it from
		// the branch, as `git reset` would; it held no staged change.
		if _, err := v.syncWorktree(plumbing.ZeroHash, tip); err != nil {
			return nil, err
		}
	}
	idx, err := v.openIndex()
	if errors.Is(err, errIndexDamaged) {
		if _, err = v.syncWorktree(plumbing.ZeroHash, tip); err == nil {
			idx, err = v.openIndex()
		}
	}
	return idx, err
}

// rollForwardLedger finishes a write that moved the branch but died before
// moving the ledger (see land): the receipt the branch commit carries is
// appended to the ledger, as the same commit the writer would have made. It
// is the only repair of refs, and it only ever adds.
//
// The branch is walked along first parents to the newest commit that
// carries a receipt. Its receipt is missing from the ledger exactly when it
// is the next receipt of its node: its prev is the node's last ledger
// receipt (or both are absent). Any other receipt commit — an older one the
// branch was reset to, a rewritten copy of one the ledger holds — is left
// as it is; fsck reports ledger receipts whose commits left the branch.
func (v *Vault) rollForwardLedger(tip plumbing.Hash) error {
	ledgerTip, err := v.readRef(LedgerRef)
	if err != nil || ledgerTip.IsZero() {
		return err
	}
	// The common case: the ledger's newest receipt is the branch tip's.
	if lc, err := v.commit(ledgerTip); err == nil && len(lc.ParentHashes) == 2 && lc.ParentHashes[1] == tip {
		return nil
	} else if err == nil && isLedgerMerge(lc.ParentHashes, []byte(lc.Message)) && lc.ParentHashes[2] == tip {
		return nil // the ledger merge of the branch's merge commit
	}
	c, r, err := v.newestReceiptCommit(tip)
	if err != nil || c == nil {
		return err
	}
	last, err := v.lastReceiptAt(ledgerTip, r.Node)
	if err != nil {
		return err
	}
	if !nextReceipt(r, last) {
		return nil
	}
	b := v.newBatch()
	lh, err := b.appendLedgerMessage(ledgerTip, r, c.Message, c.Hash, c.Committer)
	if err != nil {
		return fmt.Errorf("record receipt %s of commit %s in the ledger: %w", r.ContentHash, c.Hash, err)
	}
	if err := b.flush(); err != nil {
		return err
	}
	if _, err := v.moveRef(LedgerRef, ledgerTip, lh); err != nil {
		return fmt.Errorf("record receipt %s of commit %s in the ledger: %w", r.ContentHash, c.Hash, err)
	}
	fmt.Fprintf(os.Stderr, "prose: recorded receipt %s of commit %s in the ledger (a writer stopped between its two ref moves)\n", r.ContentHash, c.Hash.String()[:12])
	return nil
}

// nextReceipt reports whether r directly follows last in its node's chain.
func nextReceipt(r, last *receipt.Receipt) bool {
	if last == nil {
		return r.Prev == nil
	}
	return r.Prev != nil && *r.Prev == last.ContentHash && r.ContentHash != last.ContentHash
}

// newestReceiptCommit walks the branch from tip along first parents to the
// first commit whose message carries a receipt; nil when there is none.
func (v *Vault) newestReceiptCommit(tip plumbing.Hash) (*object.Commit, *receipt.Receipt, error) {
	for h := tip; !h.IsZero(); {
		c, err := v.commit(h)
		if err != nil {
			return nil, nil, err
		}
		if r, ok, err := parseReceiptMessage(c.Message); ok && err == nil {
			return c, r, nil
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return nil, nil, nil
}

// reachable returns every commit reachable from tip, whatever the commit
// dates: ancestry is decided by the graph alone.
func (v *Vault) reachable(tip plumbing.Hash) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h.IsZero() || seen[h] {
			continue
		}
		seen[h] = true
		c, err := v.commit(h)
		if err != nil {
			return nil, err
		}
		stack = append(stack, c.ParentHashes...)
	}
	return seen, nil
}

// cleanTemps removes temporary files that a killed writer left behind.
// It runs under the writer lock, so no live writer is using them.
// staleTemp is the age past which a temporary file outside the writer lock's
// protection is a crashed write's, not one in progress.
const staleTemp = time.Minute

func (v *Vault) cleanTemps() {
	if ents, err := os.ReadDir(v.StatePath("tmp")); err == nil {
		for _, e := range ents {
			os.RemoveAll(v.StatePath("tmp", e.Name()))
		}
	}
	// Only prose's own temporary objects: tmp_* files belong to git, and
	// one may be in use by a git command running now.
	for _, d := range []struct{ dir, prefix string }{
		{filepath.Join(v.gitDir, "objects"), looseTempPrefix},
		{filepath.Join(v.gitDir, "objects", "pack"), packTempPrefix},
		{v.gitDir, gitLockTempPrefix},
	} {
		ents, _ := os.ReadDir(d.dir)
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), d.prefix) {
				continue
			}
			if _, _, proof := v.parseProofName(e.Name()); proof && d.prefix == gitLockTempPrefix {
				continue // a lock's proof name: removeStaleGitLock decides
			}
			os.Remove(filepath.Join(d.dir, e.Name()))
		}
	}
	// dist/ holds the temporary manifest of a killed compile; compile holds
	// no lock, so only temporaries old enough to be no write in progress go.
	_, _ = durable.CleanTemps(filepath.Join(v.root, "dist"), staleTemp)
	for _, d := range []string{filepath.Join(v.gitDir, "refs", "heads"), filepath.Join(v.gitDir, "refs", "prose"), v.StatePath(), v.StatePath("cache")} {
		_, _ = durable.CleanTemps(d, 0)
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".prose-tmp") {
				os.Remove(filepath.Join(d, e.Name()))
			}
		}
	}
}

// contractFingerprint looks node up in the active manifest, if any.
func (v *Vault) contractFingerprint(root plumbing.Hash, node string) string {
	e, ok, err := v.lookup(root, ManifestPath)
	if err != nil || !ok {
		return "none"
	}
	data, err := v.blob(e.Hash)
	if err != nil {
		return "none"
	}
	m, err := canon.Decode(data)
	if err != nil {
		return "none"
	}
	obj, _ := m.(map[string]any)
	topo, _ := obj["topology"].(map[string]any)
	nodes, _ := topo["nodes"].([]any)
	for _, n := range nodes {
		nm, _ := n.(map[string]any)
		if nm["node"] == node {
			if s, ok := nm["contract_fingerprint"].(string); ok && s != "" {
				return s
			}
		}
	}
	if fps, ok := obj["contract_fingerprints"].(map[string]any); ok {
		if s, ok := fps[node].(string); ok {
			return s
		}
	}
	return "none"
}

// Repair takes the writer lock and finishes whatever a crashed writer left:
// see repair. Every write does this first; fsck and tests call it directly.
func (v *Vault) Repair(ctx context.Context) error {
	w, err := v.lockWriter(ctx, "prose repair")
	if err != nil {
		return err
	}
	w.release()
	return nil
}
