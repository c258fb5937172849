package vault

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prose-store/prose/internal/lock"
)

// ReaderCheck is what a reader found when it compared the working tree
// with the branch (Vault.FinishCheckout).
type ReaderCheck struct {
	// Finished is set when the working tree was behind the branch (a
	// writer stopped during its checkout) and the reader brought it in
	// step under the writer lock.
	Finished bool
	// Behind is set when the working tree is behind the branch and stays
	// so: the writer lock is held (a writer is landing now, or one is
	// stuck) or the checkout could not be finished. Why says which. The
	// reader then answers from the committed tree.
	Behind bool
	Why    string
}

// Note is the line a reader prints once on stderr for c, or "" when the
// working tree was in step.
func (c ReaderCheck) Note() string {
	switch {
	case c.Behind:
		return fmt.Sprintf("prose: note: the working tree is behind the branch (a write stopped during its checkout, or one is landing now: %s); answering from the committed tree. `prose fsck` finishes the checkout", c.Why)
	case c.Finished:
		return "prose: finished the checkout a stopped write left: the working tree is in step with the branch"
	}
	return ""
}

// FinishCheckout is what a command that only reads does before it reads:
// when the working tree is behind the branch (the commit recorded in
// .prose/worktree is not the branch tip, as a writer killed during step 5
// leaves it), it takes the writer lock if that is free at once (one try,
// never a wait), repairs as every writer does (which finishes the
// checkout) and releases it. When the lock is held, or the repair fails,
// nothing changes and the result says the working tree is behind: the
// reader answers from the committed tree.
//
// The common case costs two small file reads and takes no lock.
func (v *Vault) FinishCheckout() ReaderCheck {
	if v.worktreeInStep() || v.checkHead() != nil {
		// In step, or HEAD is on another branch: prose keeps only its
		// branch's working tree, and a writer says so.
		return ReaderCheck{}
	}
	l, err := lock.TryAcquire(v.StatePath("lock"), "prose (finishing a checkout for a reader)")
	if err != nil {
		var held *lock.HeldError
		if errors.As(err, &held) {
			// "vault is locked by pid N (prose ingest, since …)", without
			// the advice to wait, which is not the reader's.
			why, _, _ := strings.Cut(held.Error(), " — ")
			return ReaderCheck{Behind: true, Why: why}
		}
		return ReaderCheck{Behind: true, Why: "the writer lock cannot be taken: " + err.Error()}
	}
	defer l.Release()
	if v.worktreeInStep() {
		return ReaderCheck{} // a writer finished it meanwhile
	}
	if err := v.repair(); err != nil {
		return ReaderCheck{Behind: true, Why: "finishing the checkout failed: " + err.Error()}
	}
	if !v.worktreeInStep() {
		return ReaderCheck{Behind: true, Why: "the checkout did not finish"}
	}
	return ReaderCheck{Finished: true}
}

// worktreeInStep reports whether the working tree was last brought to the
// branch tip. A vault with no record (a fresh clone) or no readable branch
// counts as in step: there is nothing a reader could finish.
func (v *Vault) worktreeInStep() bool {
	tip, err := v.readRef(v.Branch())
	if err != nil || tip.IsZero() {
		return true
	}
	state, ok := v.worktreeState()
	return !ok || state == tip
}
