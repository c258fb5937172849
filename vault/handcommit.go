package vault

import (
	"context"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// HandCommitPolicy says what a publish does with a node whose committed
// files a commit outside prose changed (a `git commit` under
// published/<node>/), so that the branch no longer holds what the node's
// last receipt says.
type HandCommitPolicy int

const (
	// RestoreHandCommits, the default, makes the next publish of the node
	// restore the branch to the published truth (the render's, which is
	// the receipt's when nothing moved), record a rendered receipt marked
	// restored, and say what it repaired.
	RestoreHandCommits HandCommitPolicy = iota
	// KeepHandCommits leaves such commits on the branch: for a node whose
	// owner takes them in another way. fsck still reports them.
	KeepHandCommits
)

// handCommitPolicy is the policy for node: Options.HandCommits decides,
// RestoreHandCommits by default.
func (v *Vault) handCommitPolicy(node string) HandCommitPolicy {
	if v.opt.HandCommits == nil {
		return RestoreHandCommits
	}
	return v.opt.HandCommits(node)
}

// handCommitted reports, as a short reason, whether the node's files on the
// branch (under tree root) differ materially from its last receipt prev,
// or "" when they do not. The common case costs a tree hash: the render's
// files, hashed as git would store them, are what the branch holds. Only
// when they differ (an immaterial change of the render, or a commit by
// hand) is the committed world-model read and fingerprinted.
func (v *Vault) handCommitted(ctx context.Context, th *treeHasher, files []FileEntry, root plumbing.Hash, esc string, spec *canon.Spec, prev *receipt.Receipt) (string, error) {
	e, ok, err := v.lookup(root, "published/"+esc)
	if err != nil || !ok {
		return "", err
	}
	if e.Mode == filemode.Dir && th.hashDir(files, 0, "").hash == e.Hash {
		return "", nil
	}
	if e.Mode != filemode.Dir {
		return "published/" + esc + " is a file, not a directory", nil
	}
	fps, err := v.committedFingerprints(ctx, e.Hash, spec, viewOf(esc))
	if err != nil {
		return "", err
	}
	return fingerprintDrift(fps, prev), nil
}

// committedFingerprints fingerprints the world-model in the node tree h as
// a publish of those files would, streaming each blob.
func (v *Vault) committedFingerprints(ctx context.Context, h plumbing.Hash, spec *canon.Spec, view published.View) (map[string]string, error) {
	values, err := v.readValues(ctx, h, view)
	if err != nil {
		return nil, err
	}
	return published.FingerprintValues(values, published.Options{Algorithm: v.Algorithm(), Spec: spec, View: view})
}

// fingerprintDrift names the facets whose committed fingerprint differs
// from the receipt's, or "" when none does.
func fingerprintDrift(fps map[string]string, r *receipt.Receipt) string {
	var drift []string
	for facet, tok := range r.Fingerprints {
		if fps[facet] != tok {
			drift = append(drift, facet)
		}
	}
	if len(drift) == 0 {
		return ""
	}
	sort.Strings(drift)
	return "facets " + strings.Join(drift, ", ") + " no longer match receipt " + r.ContentHash
}
