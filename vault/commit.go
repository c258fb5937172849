package vault

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitFiles writes files (slash path → content; nil content removes the
// path) in one commit on the branch, with message, and brings the working
// tree and index along. It is how a manifest activation lands. Nothing is
// committed when the files already hold that content; the returned hash is
// then zero.
func (v *Vault) CommitFiles(ctx context.Context, who, message string, files map[string][]byte) (plumbing.Hash, error) {
	w, err := v.lockWriterChecked(ctx, who)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer w.release()
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tc, err := v.commit(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b := v.newBatch()
	entries := make(map[string]object.TreeEntry, len(paths))
	for _, p := range paths {
		e := object.TreeEntry{Mode: filemode.Regular}
		if files[p] != nil {
			if e.Hash, err = b.put(plumbing.BlobObject, files[p]); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		entries[p] = e
	}
	// Every directory on the way is rewritten once, however many files.
	var changed []string
	root, err := b.setPaths(tc.TreeHash, entries, "", &changed)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit: %w", err)
	}
	if root.IsZero() {
		if root, err = b.put(plumbing.TreeObject, nil); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if root == tc.TreeHash {
		return plumbing.ZeroHash, nil
	}
	var changes []change
	if err := diffTrees(b.tree, tc.TreeHash, root, "", &changes); err != nil {
		return plumbing.ZeroHash, err
	}
	idx, err := v.readIndexRepaired(tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer idx.release() // land writes it; any earlier return gives it up
	edits, err := v.checkClean(changes, idx)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(edits) > 0 {
		return plumbing.ZeroHash, v.handEditsAt(edits, tip)
	}
	sig := v.signature(time.Now())
	ch, err := b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: root, ParentHashes: []plumbing.Hash{tip}})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	done, err := v.land(&landing{batch: b, branch: refMove{tip, ch}, changes: changes, idx: idx})
	if err != nil {
		if done == nil {
			return plumbing.ZeroHash, err
		}
		return ch, err
	}
	for _, e := range done.HandEdits {
		fmt.Fprintf(os.Stderr, "prose: warning: %s was edited during the commit and left as it is (%s); see prose fsck\n", e.Path, e.Reason)
	}
	return ch, nil
}

// ReadFile reads a committed file at the branch tip; ok is false when the
// path does not exist.
func (v *Vault) ReadFile(path string) (data []byte, ok bool, err error) {
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return nil, false, err
	}
	c, err := v.commit(tip)
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
