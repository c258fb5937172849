package vault

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/zeebo/blake3"

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
func (v *Vault) handCommitted(ctx context.Context, th *treeHasher, files []FileEntry, root plumbing.Hash, node string, spec *canon.Spec, prev *receipt.Receipt) (string, error) {
	esc := published.EscapeNode(node)
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
	if spec == nil {
		// Without a spec the node's tree sums give its fingerprints,
		// reading only the directories they do not know.
		if fps, _, err := v.NodeFingerprints(node, e.Hash); err == nil {
			return fingerprintDrift(fps, prev), nil
		}
	}
	view := viewOf(node)
	memo := v.fingerprintMemo(node, spec, view)
	fps, ok := memo.recall(e.Hash)
	if !ok {
		if fps, err = v.committedFingerprints(ctx, e.Hash, spec, view); err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			// The vault's committed copy does not parse (broken JSON
			// committed by hand): the render, which did, replaces it.
			return "the vault's committed copy is broken: " + err.Error(), nil
		}
		memo.store(e.Hash, fps)
	}
	return fingerprintDrift(fps, prev), nil
}

// fpMemo remembers the fingerprints of one committed tree of a node under
// one fingerprint setup (algorithm, spec, declared facets, view). A tree id
// names its files' content exactly, so the record is a fact that never goes
// stale: a publish whose render differs from the branch only immaterially
// (a rewritten timestamp the spec ignores) then costs a lookup, not a read
// of every committed file. Each node keeps one record, the tree its last
// publish committed or checked, in .prose/cache/fps-<node>: the setup's
// hash, the tree id, the fingerprints as JSON and a BLAKE3 checksum of
// what precedes it, one per line. A record that is torn, foreign or fails
// its checksum is ignored; it is only ever an optimization, written without
// a flush. fsck never trusts it: it reads and fingerprints the tree.
type fpMemo struct {
	path  string
	setup string
}

const fpMemoMagic = "prose fingerprint memo 1"

func (v *Vault) fingerprintMemo(node string, spec *canon.Spec, view published.View) *fpMemo {
	sum := blake3.Sum256([]byte(published.SetupID(v.Algorithm(), spec, view)))
	return &fpMemo{path: v.StatePath("cache", "fps-"+published.EscapeNode(node)), setup: hex.EncodeToString(sum[:])}
}

// recall returns the fingerprints recorded for tree, if any.
func (m *fpMemo) recall(tree plumbing.Hash) (map[string]string, bool) {
	data, err := os.ReadFile(m.path)
	if err != nil || len(data) > 1<<20 {
		return nil, false
	}
	body, check, ok := bytes.Cut(bytes.TrimSuffix(data, []byte("\n")), []byte("\n#"))
	if !ok {
		return nil, false
	}
	sum := blake3.Sum256(body)
	if string(check) != hex.EncodeToString(sum[:]) {
		return nil, false
	}
	lines := strings.SplitN(string(body), "\n", 4)
	if len(lines) != 4 || lines[0] != fpMemoMagic || lines[1] != m.setup || lines[2] != tree.String() {
		return nil, false
	}
	var fps map[string]string
	if json.Unmarshal([]byte(lines[3]), &fps) != nil || len(fps) == 0 {
		return nil, false
	}
	return fps, true
}

// store records the fingerprints of tree, replacing the node's record. A
// failure costs the next publish a read, nothing else.
func (m *fpMemo) store(tree plumbing.Hash, fps map[string]string) {
	js, err := json.Marshal(fps)
	if err != nil || len(fps) == 0 {
		return
	}
	body := []byte(fpMemoMagic + "\n" + m.setup + "\n" + tree.String() + "\n" + string(js))
	sum := blake3.Sum256(body)
	data := append(body, "\n#"+hex.EncodeToString(sum[:])+"\n"...)
	tmp := m.path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return
	}
	if os.WriteFile(tmp, data, 0o644) != nil || os.Rename(tmp, m.path) != nil {
		os.Remove(tmp)
	}
}

// committedFingerprints fingerprints the world-model in the node tree h as
// a publish of those files would, streaming each blob.
func (v *Vault) committedFingerprints(ctx context.Context, h plumbing.Hash, spec *canon.Spec, view published.View) (map[string]string, error) {
	committedReads.Add(1)
	values, err := v.readValues(ctx, h, view)
	if err != nil {
		return nil, err
	}
	return published.FingerprintValues(values, published.Options{Algorithm: v.Algorithm(), Spec: spec, View: view})
}

// committedReads counts the committed trees read whole to fingerprint them
// (tests check that the memo spares them).
var committedReads atomic.Int64

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
