package vault

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// landing is one prepared write, ready to take effect: the objects it adds
// (written to the batch, not yet durable), the moves of the branch ref and
// the ledger ref, and the working-tree changes the branch move brings.
// Every writer of the vault — a publish, a manifest activation, any later
// API that commits files — prepares one and hands it to land, so the write
// order and its crash repair live in one place.
type landing struct {
	batch *objectBatch
	// branch moves the branch ref from Old to New; a zero New leaves the
	// branch alone (a skipped or failed receipt).
	branch refMove
	// ledger moves the ledger ref from Old to New; a zero New writes no
	// receipt (a commit of files only).
	ledger refMove
	// receipt is the content hash of the receipt the ledger commit
	// appends, for messages.
	receipt string
	// changes brings the working tree from branch.Old's tree to
	// branch.New's; idx is the git index they are recorded in.
	changes []change
	idx     *gitIndex
	// mark, when set, is told as each step ends (publish's phase timings).
	mark func(step string)
}

// refMove is a ref's value before and after a write.
type refMove struct{ Old, New plumbing.Hash }

// landed is what land leaves behind for the caller to report.
type landed struct {
	// HandEdits are working-tree files edited while the write ran: left as
	// they are, and reported.
	HandEdits []HandEdit
}

// land makes a prepared write take effect, in the one order the vault's
// crash repair relies on:
//
//  1. every new object is made durable (objectBatch.flush);
//  2. the branch ref moves (its commit carries the receipt);
//  3. the ledger ref moves (its commit appends the same receipt);
//  4. the working tree and the git index are brought to the new commit.
//
// A crash before 2 leaves only unreferenced objects. A crash between 2 and
// 3 leaves a branch commit whose receipt the ledger lacks: the next writer's
// repair appends it (rollForwardLedger), so repair only ever rolls forward.
// A crash during 4 is finished by the next writer's repair of the working
// tree. Once the branch has moved, a failure is returned as a *LandedError:
// the receipt is published, and the error names what did not finish.
//
// The caller holds the writer lock and has checked, with the index it
// passes, that the changes overwrite no hand edit.
func (v *Vault) land(l *landing) (*landed, error) {
	// The refs' lock files are taken and written first, so one flush makes
	// them durable together with the objects: three flushes in all (objects
	// and lock files; the objects' renames; the branch's directory), the
	// fewest the order above allows; a ledger move with no branch move
	// flushes the ledger's directory instead.
	var branch, ledger *refUpdate
	var err error
	if !l.branch.New.IsZero() {
		if branch, err = v.prepareRef(v.Branch(), l.branch.Old, l.branch.New); err != nil {
			l.batch.abort()
			return nil, err
		}
		defer branch.release()
		l.batch.alsoSync = append(l.batch.alsoSync, syncedFile{branch.lock.path, branch.path})
	}
	if !l.ledger.New.IsZero() {
		if ledger, err = v.prepareRef(LedgerRef, l.ledger.Old, l.ledger.New); err != nil {
			l.batch.abort()
			return nil, err
		}
		defer ledger.release()
		l.batch.alsoSync = append(l.batch.alsoSync, syncedFile{ledger.lock.path, ledger.path})
	}
	mark := l.mark
	if mark == nil {
		mark = func(string) {}
	}
	if err := l.batch.flush(); err != nil {
		return nil, err
	}
	v.keepRecent(l.batch.sources.data)
	mark("land:objects")
	out := &landed{}
	// Once the branch has moved, the working tree is brought along whatever
	// else fails: an index left behind the branch would make the user's next
	// `git commit` undo the publish.
	var unfinished error
	if branch != nil {
		moved, err := v.commitRef(branch)
		if err != nil && !moved {
			return nil, err
		}
		if err != nil {
			// Its durability is in doubt: the ledger must not get ahead of
			// it, so it waits for the next writer's repair.
			unfinished = l.failed("the branch ref moved but could not be made durable; the ledger was not updated", "prose fsck", err)
		}
	}
	mark("land:branch")
	if ledger != nil && unfinished == nil {
		// After a branch move the ledger's directory is not flushed: a
		// power cut that loses its rename leaves the case of a crash
		// between the two moves, and repair appends the very same commit
		// (same tree, parents, message and dates), so nothing anyone saw
		// changes. A ledger move alone (a skipped or failed receipt) is
		// the receipt's only record and is flushed.
		moved, err := v.commitRefSync(ledger, branch == nil)
		switch {
		case err != nil && !moved && branch == nil:
			return nil, err // nothing took effect
		case err != nil && !moved:
			unfinished = l.failed("the ledger was not updated (the next prose command records the receipt)", "prose fsck", err)
		case err != nil:
			unfinished = l.failed("the ledger ref moved but could not be made durable", "prose fsck", err)
		}
	}
	if l.branch.New.IsZero() {
		return out, unfinished
	}
	mark("land:ledger")
	edits, err := v.applyChangesFrom(l.changes, l.idx, l.batch.sources)
	out.HandEdits = edits
	mark("land:worktree")
	if err == nil {
		err = v.writeIndex(l.idx)
	}
	mark("land:index")
	if err == nil && unfinished == nil {
		// Recorded last: a repair after any failure above starts over.
		err = v.setWorktreeState(l.branch.New)
	}
	if unfinished != nil {
		return out, unfinished
	}
	if err != nil {
		return out, l.failed("working tree not updated", "prose fsck", err)
	}
	return out, nil
}

func (l *landing) failed(step, fix string, err error) error {
	return &LandedError{Receipt: l.receipt, Commit: l.branch.New, Step: step, Fix: fix, Err: err}
}

// LandedError reports a write that took effect but did not finish: the
// receipt (or the commit) is stored and will not be lost; Step says what is
// left undone, and Fix names the command that finishes it.
type LandedError struct {
	Receipt string        // the receipt's content hash; "" for a commit of files
	Commit  plumbing.Hash // the branch commit; zero for a skipped receipt
	Step    string
	Fix     string
	Err     error
}

func (e *LandedError) Error() string {
	what := "published"
	switch {
	case e.Receipt != "" && !e.Commit.IsZero():
		what = fmt.Sprintf("published receipt %s as commit %s", e.Receipt, e.Commit)
	case e.Receipt != "":
		what = fmt.Sprintf("published receipt %s", e.Receipt)
	case !e.Commit.IsZero():
		what = fmt.Sprintf("committed %s", e.Commit)
	}
	return fmt.Sprintf("%s; %s: %v; run `%s`", what, e.Step, e.Err, e.Fix)
}

func (e *LandedError) Unwrap() error { return e.Err }
