package vault

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// maxRangeCommits bounds the commits a range walk visits: a history longer
// than this is refused with a message rather than read without end.
const maxRangeCommits = 1_000_000

// RevisionError reports a revision the caller gave that names no commit,
// names more than one, or (for BASE...HEAD) two commits with no common
// history: a fault of the command line, not of the vault.
type RevisionError struct{ msg string }

func (e *RevisionError) Error() string { return e.msg }

// ResolveRev is Resolve that also accepts the names git gives other
// branches: refs/heads/NAME, refs/remotes/NAME (origin/main) and
// refs/tags/NAME, or a full ref name, each optionally followed by ~N.
func (v *Vault) ResolveRev(rev string) (plumbing.Hash, error) {
	h, err := v.Resolve(rev)
	if err == nil {
		return h, nil
	}
	base, back := rev, ""
	if i := strings.LastIndexByte(rev, '~'); i > 0 {
		base, back = rev[:i], rev[i:]
	}
	for _, name := range []string{base, "refs/heads/" + base, "refs/remotes/" + base, "refs/tags/" + base} {
		if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
			continue
		}
		tip, rerr := v.readRef(plumbing.ReferenceName(name))
		if rerr != nil || tip.IsZero() {
			continue
		}
		if c, cerr := v.commit(tip); cerr != nil || c == nil {
			// An annotated tag names a tag object; diff wants commits.
			continue
		}
		if back == "" {
			return tip, nil
		}
		return v.Resolve(tip.String() + back)
	}
	if strings.HasPrefix(err.Error(), "unknown revision") {
		return plumbing.ZeroHash, &RevisionError{fmt.Sprintf("unknown revision %q: give a commit, %s~N, another branch or a remote-tracking name (origin/main), or a receipt hash", rev, v.cfg.Branch)}
	}
	return plumbing.ZeroHash, err
}

// MergeBase returns the best common ancestor of two commits, as
// `git merge-base` does; an error when they share no history.
func (v *Vault) MergeBase(a, b plumbing.Hash) (plumbing.Hash, error) {
	ca, err := v.commit(a)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	cb, err := v.commit(b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var bases []plumbing.Hash
	err = v.read(func() error {
		cs, err := ca.MergeBase(cb)
		for _, c := range cs {
			bases = append(bases, c.Hash)
		}
		return err
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge base of %s and %s: %w", short12(a), short12(b), err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, &RevisionError{fmt.Sprintf("%s and %s share no history: give two revisions with A..B or A B instead", short12(a), short12(b))}
	}
	return bases[0], nil
}

// CommitsBetween returns the commits reachable from to and not from from
// (git's from..to): the commits a diff of the two spans.
func (v *Vault) CommitsBetween(from, to plumbing.Hash) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	if !from.IsZero() {
		if err := v.ancestors(from, seen, nil); err != nil {
			return nil, err
		}
	}
	out := map[plumbing.Hash]bool{}
	if err := v.ancestors(to, seen, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ancestors marks every commit reachable from h that is not yet in seen,
// adding it to out when out is not nil.
func (v *Vault) ancestors(h plumbing.Hash, seen, out map[plumbing.Hash]bool) error {
	stack := []plumbing.Hash{h}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h.IsZero() || seen[h] {
			continue
		}
		if len(seen) > maxRangeCommits {
			return fmt.Errorf("history longer than %d commits: give a nearer revision", maxRangeCommits)
		}
		seen[h] = true
		if out != nil {
			out[h] = true
		}
		c, err := v.commit(h)
		if err != nil {
			return err
		}
		stack = append(stack, c.ParentHashes...)
	}
	return nil
}

// FileAt reads a committed file at a commit; ok is false when the commit
// holds no file at that path.
func (v *Vault) FileAt(commit plumbing.Hash, path string) (data []byte, ok bool, err error) {
	c, err := v.commit(commit)
	if err != nil {
		return nil, false, err
	}
	e, ok, err := v.lookup(c.TreeHash, path)
	if err != nil || !ok || e.Mode == filemode.Dir {
		return nil, false, err
	}
	data, err = v.blob(e.Hash)
	return data, err == nil, err
}

// EntryAt is the object at path in commit's tree (a tree for a
// directory, a blob for a file); ok is false when the path is absent.
// Two commits hold the same directory exactly when their entries match.
func (v *Vault) EntryAt(commit plumbing.Hash, path string) (h plumbing.Hash, ok bool, err error) {
	c, err := v.commit(commit)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	e, ok, err := v.lookup(c.TreeHash, path)
	if err != nil || !ok {
		return plumbing.ZeroHash, false, err
	}
	return e.Hash, true, nil
}

func short12(h plumbing.Hash) string { return h.String()[:12] }
