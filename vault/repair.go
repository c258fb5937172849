package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/durable"
)

// repair finishes what a crashed writer left: temporary files are removed,
// a rendered receipt that reached the branch but not the ledger is appended
// to the ledger, and the working tree and index are brought to the branch.
// It runs under the writer lock, before every write.
func (v *Vault) repair() error {
	v.cleanTemps()
	v.removeStaleIndexLock()
	v.removeStaleRefLock()
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return err
	}
	if tip.IsZero() {
		return fmt.Errorf("vault branch %s does not exist; the vault is damaged (restore .git from a clone)", v.Branch())
	}
	if err := v.repairLedger(tip); err != nil {
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
func (v *Vault) readIndexRepaired(tip plumbing.Hash) (*gitIndex, error) {
	idx, err := v.readIndex()
	if errors.Is(err, errIndexDamaged) {
		if _, err = v.syncWorktree(plumbing.ZeroHash, tip); err == nil {
			idx, err = v.readIndex()
		}
	}
	return idx, err
}

// repairLedger rolls back a ledger receipt whose branch commit never
// reached the branch: the writer moved the ledger ref, then died before
// moving the branch ref. The branch is the truth, so the receipt never took
// effect.
func (v *Vault) repairLedger(tip plumbing.Hash) error {
	ledgerTip, err := v.readRef(LedgerRef)
	if err != nil || ledgerTip.IsZero() {
		return err
	}
	phantom, err := v.phantomReceipt(ledgerTip, tip)
	if err != nil || !phantom {
		return err
	}
	lc, err := v.commit(ledgerTip)
	if err != nil {
		return err
	}
	return v.moveRef(LedgerRef, ledgerTip, lc.ParentHashes[0])
}

// phantomReceipt reports whether the ledger commit at ledgerTip carries a
// rendered receipt whose branch commit is not in the branch's history.
// Only the ledger tip can be one: every writer repairs before it appends.
func (v *Vault) phantomReceipt(ledgerTip, branchTip plumbing.Hash) (bool, error) {
	lc, err := v.commit(ledgerTip)
	if err != nil {
		return false, err
	}
	if len(lc.ParentHashes) != 2 {
		return false, nil
	}
	in, err := v.isAncestor(lc.ParentHashes[1], branchTip)
	return !in, err
}

// isAncestor reports whether commit a is b or an ancestor of b. The walk
// stops at commits more than a day older than a, whose history cannot hold
// it (a day of slack absorbs clock skew between machines).
func (v *Vault) isAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	ca, err := v.commit(a)
	if err != nil {
		return false, nil // not even in the repository
	}
	horizon := ca.Committer.When.Add(-24 * time.Hour)
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{b}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := v.commit(h)
		if err != nil {
			return false, err
		}
		if c.Committer.When.Before(horizon) {
			continue
		}
		stack = append(stack, c.ParentHashes...)
	}
	return false, nil
}

// cleanTemps removes temporary files that a killed writer left behind.
// It runs under the writer lock, so no live writer is using them.
func (v *Vault) cleanTemps() {
	if ents, err := os.ReadDir(v.StatePath("tmp")); err == nil {
		for _, e := range ents {
			os.RemoveAll(v.StatePath("tmp", e.Name()))
		}
	}
	objects := filepath.Join(v.gitDir, "objects")
	ents, _ := os.ReadDir(objects)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tmp_obj_") {
			os.Remove(filepath.Join(objects, e.Name()))
		}
	}
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
