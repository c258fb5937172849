package vault

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// ManifestPath is the activated compiled manifest inside the vault.
const ManifestPath = "dist/manifest.active.json"

// PublishOptions tune one publish.
type PublishOptions struct {
	// Spec replaces the node's stored canonicalization spec; it is stored
	// at dist/canonicalizers/<node>.json with the rendered commit.
	Spec *canon.Spec
	// Changed names the only files that may have changed since the last
	// publish from the same directory (an informed publish); nil scans all.
	Changed []string
	// ContractFingerprint overrides the active manifest's value.
	ContractFingerprint string
	// Who names the command in the lock holder file.
	Who string
	// Now stamps the commits (default time.Now).
	Now func() time.Time
	// AllowEmpty publishes a source directory that holds no files. Without
	// it such a publish is refused (ErrEmptySource): a render that crashed
	// before writing leaves an empty directory, and publishing it would
	// remove every file of the node.
	AllowEmpty bool
	// Progress, when set, is called with the name of each phase as it
	// ends (the names of PublishResult.Phases), for a progress display.
	Progress func(phase string)
	// Wake, when set, is the receipt's wake (default: external, no refs);
	// cost.surprise_cause follows its source. A reconciler's render sets it.
	Wake *receipt.Wake
	// InputFingerprints, when set, is the receipt's input_fingerprints:
	// the tokens the render consumed, in edge order (the memo key's
	// second half). Default: none.
	InputFingerprints []string
	// Provider, Model and Tokens, when Provider is set, fill the receipt's
	// cost (default: prose, publish, nothing spent). A skipped publish
	// spends no fresh tokens whatever Tokens says.
	Provider, Model string
	Tokens          receipt.Tokens
	// Diff is added to the semantic_diff of a rendered receipt (the
	// runtime's postcondition report); its keys must not be moved,
	// version, files or restored.
	Diff map[string]any
}

// ErrEmptySource is returned by a publish of a source directory that holds
// no files, unless PublishOptions.AllowEmpty is set.
var ErrEmptySource = errors.New("the source directory holds no files")

// PublishResult is the outcome of a publish.
type PublishResult struct {
	Receipt *receipt.Receipt
	Moved   []string      // facets whose tokens moved, @atomic first
	Version string        // version address of the published files
	Commit  plumbing.Hash // branch commit (rendered only)
	Ledger  plumbing.Hash // ledger commit
	Stats   published.ScanStats
	// Repaired says what the publish put right besides the render: a node
	// whose committed files a commit outside prose changed or removed is
	// restored to the published truth (see HandCommitPolicy).
	Repaired []string
	// HandEdits are working-tree files edited while the publish ran: left
	// as they are (not overwritten), and reported by fsck.
	HandEdits []HandEdit
	// Phases times each step of the publish, for benchmarks and --verbose.
	Phases []Phase
}

// Phase is the wall time of one step of a publish.
type Phase struct {
	Name     string
	Duration time.Duration
}

type phaseClock struct {
	last   time.Time
	phases []Phase
	report func(string)
}

func (c *phaseClock) mark(name string) {
	now := time.Now()
	c.phases = append(c.phases, Phase{name, now.Sub(c.last)})
	c.last = now
	if c.report != nil {
		c.report(name)
	}
}

// Publish runs the publish pass for node on the world-model a render wrote
// to dir: collect, canonicalize, fingerprint, compare with the node's last
// receipt. Material change gives a rendered receipt and a branch commit;
// no material change gives a skipped receipt on the ledger only.
func (v *Vault) Publish(ctx context.Context, node, dir string, opt PublishOptions) (*PublishResult, error) {
	if err := CheckNodeName(node); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("publish %s: %s is not a directory; pass the directory the render wrote", node, dir)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	who := opt.Who
	if who == "" {
		who = "prose publish " + node
	}
	clock := &phaseClock{last: time.Now(), report: opt.Progress}
	w, err := v.lockWriterChecked(ctx, who)
	if err != nil {
		return nil, err
	}
	defer w.release()
	clock.mark("lock+repair")

	tip, err := v.readRef(v.Branch())
	if err != nil {
		return nil, err
	}
	tipCommit, err := v.commit(tip)
	if err != nil {
		return nil, err
	}
	ledgerTip, err := v.requireLedger()
	if err != nil {
		return nil, err
	}
	prev, err := v.lastReceiptAt(ledgerTip, node)
	if err != nil {
		return nil, err
	}
	esc := published.EscapeNode(node)
	specPath := "dist/canonicalizers/" + esc + ".json"
	spec := opt.Spec
	storeSpec := spec != nil
	if spec == nil {
		if spec, err = v.storedSpec(tipCommit.TreeHash, specPath); err != nil {
			return nil, err
		}
	}
	clock.mark("head+spec")
	absDir, _ := filepath.Abs(dir)
	if err := v.checkSourceDir(absDir); err != nil {
		return nil, fmt.Errorf("publish %s: %w", node, err)
	}
	var oldNode plumbing.Hash
	if e, ok, err := v.lookup(tipCommit.TreeHash, "published/"+esc); err != nil {
		return nil, err
	} else if ok && e.Mode == filemode.Dir {
		oldNode = e.Hash
	}
	h := &publishHead{node: node, esc: esc, dir: dir, absDir: absDir, opt: opt, clock: clock, now: now,
		tip: tip, tipCommit: tipCommit, ledgerTip: ledgerTip, prev: prev, oldNode: oldNode}
	if opt.Changed != nil && spec == nil && !published.NamesRoot(opt.Changed) {
		if res, done, err := v.publishChanged(ctx, h); done || err != nil {
			return res, err
		}
	}
	// The scan rewrites the directory's stat cache, and the base record
	// must not outlive it: a scan publish that stops before it lands would
	// leave a record vouching for a directory the cache no longer
	// describes. A rendered publish writes the record again (recordBase).
	v.dropBase(absDir)
	cachePath := v.scanCachePath(absDir)
	snap, err := published.ScanContext(ctx, absDir, published.Options{
		Algorithm: v.Algorithm(),
		Spec:      spec,
		CachePath: cachePath,
		Changed:   opt.Changed,
		View:      viewOf(node),
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("publish %s: %w", node, err)
		}
		// The render's own file: say so, the vault's copy is not at fault.
		return nil, fmt.Errorf("publish %s: in the render %s: %w (fix the render's file and publish again; nothing was stored)", node, dir, err)
	}
	clock.mark("scan")
	if len(snap.Entries) == 0 && !opt.AllowEmpty {
		return nil, emptySourceError(node, dir)
	}
	status, moved := published.Decide(prevFingerprints(prev), prev != nil, snap)
	if storeSpec && status == "skipped" {
		// A new spec is a material change of the node's definition even
		// when no token moves: record it.
		if old, _ := v.storedSpec(tipCommit.TreeHash, specPath); old == nil || old.Hash() != spec.Hash() {
			status = "rendered"
		}
	}
	files := make([]FileEntry, len(snap.Entries))
	for i, e := range snap.Entries {
		mode := filemode.Regular
		if e.Mode&0o111 != 0 {
			mode = filemode.Executable
		}
		files[i] = FileEntry{Path: e.Path, Mode: mode, Size: e.Size, OID: plumbing.Hash(e.GitOID)}
	}
	th := &treeHasher{versions: snapshotVersions(snap), cache: v.loadTreeCache()}
	restored := false
	var repaired []string
	if status == "skipped" && len(snap.Entries) > 0 {
		// The state did not move, but the branch lost the node's files (a
		// `git rm` by hand): publish them again.
		if _, ok, err := v.lookup(tipCommit.TreeHash, "published/"+esc); err != nil {
			return nil, err
		} else if !ok {
			status, restored = "rendered", true
			repaired = append(repaired, fmt.Sprintf("published/%s had been removed from the branch by a commit outside prose; published it again", esc))
		}
	}
	if status == "skipped" && prev != nil && v.handCommitPolicy(node) == RestoreHandCommits {
		// Checked against the newest receipt that published something: a
		// failed run since a hand commit took nothing in.
		pub, err := v.publishedReceipt(ledgerTip, node, prev)
		if err != nil {
			return nil, fmt.Errorf("publish %s: %w", node, err)
		}
		why := ""
		if pub != nil {
			why, err = v.handCommitted(ctx, th, files, tipCommit.TreeHash, node, spec, pub)
		}
		if err != nil {
			return nil, fmt.Errorf("publish %s: %w", node, err)
		}
		if why != "" {
			status, restored = "rendered", true
			repaired = append(repaired, fmt.Sprintf("published/%s had been changed by a commit outside prose (%s); restored it to the published truth", esc, why))
		}
	}
	b := v.newBatch()
	b.ctx = ctx
	b.syncWith(cachePath)
	plan := &publishPlan{
		status: status, moved: moved, fps: snap.Fingerprints, version: snap.Version, files: len(snap.Entries),
		restored: restored, repaired: repaired, stats: snap.Stats,
		build: func() (plumbing.Hash, error) { return b.buildTree(th, files, absDir, oldNode) },
	}
	if storeSpec {
		plan.spec, plan.specPath = spec, specPath
	}
	res, nodeTree, err := v.landPublish(ctx, h, b, plan)
	if res != nil && (err == nil || errors.As(err, new(*LandedError))) {
		th.remember() // the objects are durable
		if !nodeTree.IsZero() && len(snap.Fingerprints) > 0 {
			v.fingerprintMemo(node, spec, viewOf(node)).store(nodeTree, snap.Fingerprints)
		}
		v.recordBase(h, spec, snap, th, files, plan.status, nodeTree)
	}
	return res, err
}

// publishHead is what a publish reads before it looks at the source
// directory.
type publishHead struct {
	node, esc, absDir string
	dir               string // as the caller gave it, for messages
	opt               PublishOptions
	clock             *phaseClock
	now               func() time.Time
	tip               plumbing.Hash
	tipCommit         *object.Commit
	ledgerTip         plumbing.Hash
	prev              *receipt.Receipt
	oldNode           plumbing.Hash // the node's committed tree; zero when it has none
}

// publishPlan is a publish decided: its status and fingerprints, and how
// its node tree is built.
type publishPlan struct {
	status   string
	moved    []string
	fps      map[string]string
	version  string
	files    int
	restored bool
	repaired []string
	stats    published.ScanStats
	// build writes the node tree into the batch (a rendered publish).
	build func() (plumbing.Hash, error)
	// spec, when set, is stored at specPath with the rendered commit.
	spec     *canon.Spec
	specPath string
}

// landPublish writes the receipt of a decided publish, and for a rendered
// one the node tree and the branch commit, then lands them. It returns the
// node tree it committed (zero for a skipped publish). The batch is
// aborted on any return before land takes it.
func (v *Vault) landPublish(ctx context.Context, h *publishHead, b *objectBatch, p *publishPlan) (*PublishResult, plumbing.Hash, error) {
	node, esc, clock := h.node, h.esc, h.clock
	handedOver := false
	defer func() {
		if !handedOver {
			b.abort()
		}
	}()
	cfp := h.opt.ContractFingerprint
	if cfp == "" {
		cfp = v.contractFingerprint(h.tipCommit.TreeHash, node)
	}
	r := newReceipt(v.Algorithm(), node, cfp, p.status, p.fps, h.prev)
	applyRun(r, h.opt)
	if p.status == "rendered" {
		r.SemanticDiff = map[string]any{
			"moved":   stringsToAny(p.moved),
			"version": p.version,
			"files":   float64(p.files),
		}
		if p.restored {
			r.SemanticDiff["restored"] = true
		}
		for k, val := range h.opt.Diff {
			if _, taken := r.SemanticDiff[k]; !taken {
				r.SemanticDiff[k] = val
			}
		}
	}
	if err := r.Seal(); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	res := &PublishResult{Receipt: r, Moved: p.moved, Version: p.version, Stats: p.stats, Repaired: p.repaired}

	var branchCommit, nodeTree plumbing.Hash
	var changes []change
	var idx *gitIndex
	when := h.now()
	if p.status == "rendered" {
		clock.mark("prep")
		var err error
		nodeTree, err = p.build()
		clock.mark("buildTree")
		if err != nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("publish %s: %w", node, err)
		}
		top := map[string]object.TreeEntry{"published/" + esc: {Mode: filemode.Dir, Hash: nodeTree}}
		if spec := p.spec; spec != nil {
			if spec.Node == "" {
				spec.Node = node
			}
			sj, err := specJSON(spec)
			if err != nil {
				return nil, plumbing.ZeroHash, err
			}
			sh, err := b.put(plumbing.BlobObject, append(sj, '\n'))
			if err != nil {
				return nil, plumbing.ZeroHash, err
			}
			top[p.specPath] = object.TreeEntry{Mode: filemode.Regular, Hash: sh}
		}
		// One pass over the root: each directory on the way written once.
		var changed []string
		root, err := b.setPaths(h.tipCommit.TreeHash, top, "", &changed)
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		msg, err := receiptMessage(r, p.moved)
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		sig := v.signature(when)
		branchCommit, err = b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: string(msg), TreeHash: root, ParentHashes: []plumbing.Hash{h.tip}})
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		clock.mark("root+commit")
		// Refuse before anything moves if the new state would overwrite a
		// hand edit in the working tree.
		if err := diffTrees(b.tree, h.tipCommit.TreeHash, root, "", &changes); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		clock.mark("diff")
		if idx, err = v.readIndexRepaired(h.tip); err != nil {
			return nil, plumbing.ZeroHash, err
		}
		defer idx.release() // land writes it; any earlier return gives it up
		clock.mark("readIndex")
		edits, err := v.checkClean(changes, idx)
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		if len(edits) > 0 {
			return nil, plumbing.ZeroHash, v.handEditsAt(edits, h.tip)
		}
	}
	clock.mark("trees+check")
	ledgerCommit, err := b.appendLedger(h.ledgerTip, r, p.moved, branchCommit, when)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	// The last safe point: nothing references the new objects yet.
	if err := ctx.Err(); err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("publish %s: %w", node, err)
	}
	l := &landing{
		batch:   b,
		branch:  refMove{h.tip, branchCommit},
		ledger:  refMove{h.ledgerTip, ledgerCommit},
		receipt: r.ContentHash,
		changes: changes,
		idx:     idx,
		mark:    clock.mark,
	}
	res.Commit, res.Ledger = branchCommit, ledgerCommit
	handedOver = true
	done, err := v.land(l)
	if done != nil {
		res.HandEdits = done.HandEdits
	}
	res.Phases = clock.phases
	if err != nil {
		var le *LandedError
		if errors.As(err, &le) {
			return res, nodeTree, fmt.Errorf("publish %s: %w", node, err)
		}
		return nil, plumbing.ZeroHash, fmt.Errorf("publish %s: %w", node, err)
	}
	return res, nodeTree, nil
}

// emptySourceError refuses the publish of a source directory with no files.
func emptySourceError(node, dir string) error {
	return fmt.Errorf("publish %s: %s: %w; publishing it would remove every file of published/%s (a render that failed before writing leaves an empty directory): check the render, or pass --allow-empty if the world-model really is empty", node, dir, ErrEmptySource, published.EscapeNode(node))
}

// handEditsAt is the error of a write from tip that found edits: a hand
// edit, unless the branch has moved since tip — a `git commit` landed while
// the write ran, and the working tree is still the one of the commit
// before, which the next try brings along.
func (v *Vault) handEditsAt(edits []HandEdit, tip plumbing.Hash) error {
	if cur, err := v.readRef(v.Branch()); err == nil && cur != tip {
		return fmt.Errorf("%w: a commit outside prose moved it to %s while prose was writing from %s; nothing was published, run the command again", ErrRefMoved, cur, tip)
	}
	return handEditError(edits)
}

func handEditError(edits []HandEdit) error {
	var b strings.Builder
	for _, e := range edits {
		fmt.Fprintf(&b, "\n  %s", e)
	}
	return fmt.Errorf("%w:%s\nprose would overwrite them; commit or restore them (git checkout -- PATH), then publish again", ErrHandEdits, b.String())
}

// CheckNodeName refuses node names that cannot name a world-model.
func CheckNodeName(node string) error {
	if node == "" {
		return errors.New("node name is empty")
	}
	if !utf8.ValidString(node) {
		return fmt.Errorf("node name %q is not valid UTF-8", node)
	}
	for _, r := range node {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("node name %q contains a control character", node)
		}
	}
	// The node's directory and its spec file (<dir>.json) must fit in one
	// file name (255 bytes) on every common filesystem.
	if n := len(published.EscapeNode(node)); n+len(".json") > 255 {
		return fmt.Errorf("node name %q is too long: its directory name would take %d bytes (at most 250); choose a shorter name", node, n)
	}
	return nil
}

func prevFingerprints(r *receipt.Receipt) map[string]string {
	if r == nil {
		return nil
	}
	return r.Fingerprints
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// scanCachePath is the stat cache of the source directory dir (absolute).
func (v *Vault) scanCachePath(dir string) string {
	return v.StatePath("cache", "scan-"+cacheKey(dir))
}

func cacheKey(dir string) string {
	tok := canon.BLAKE3.Token([]byte(dir))
	return tok[len("blake3:"):][:24]
}

// storedSpec reads the node's canonicalization spec from the tree, if any.
func (v *Vault) storedSpec(root plumbing.Hash, path string) (*canon.Spec, error) {
	e, ok, err := v.lookup(root, path)
	if err != nil || !ok {
		return nil, err
	}
	data, err := v.blob(e.Hash)
	if err != nil {
		return nil, err
	}
	s, err := canon.ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// newReceipt builds the receipt of a hand publish: an external wake that
// costs nothing.
func newReceipt(alg canon.Algorithm, node, cfp, status string, fps map[string]string, prev *receipt.Receipt) *receipt.Receipt {
	r := &receipt.Receipt{
		Schema:              receipt.Schema,
		HashAlgorithm:       alg,
		Node:                node,
		ContractFingerprint: cfp,
		Wake:                receipt.Wake{Source: receipt.WakeExternal, Refs: []string{}},
		InputFingerprints:   []string{},
		Fingerprints:        fps,
		SemanticDiff:        map[string]any{},
		Status:              receipt.Status(status),
		Cost: receipt.Cost{
			Provider:      "prose",
			Model:         "publish",
			Tokens:        receipt.Tokens{Fresh: 0, Reused: 0},
			SurpriseCause: receipt.WakeExternal,
		},
		Sig: receipt.UnsignedSig(),
	}
	if prev != nil {
		h := prev.ContentHash
		r.Prev = &h
	}
	return r
}

// applyRun fills the wake, input fingerprints and cost a reconciler's
// render gives its publish.
func applyRun(r *receipt.Receipt, opt PublishOptions) {
	if opt.Wake != nil {
		r.Wake.Source, r.Cost.SurpriseCause = opt.Wake.Source, opt.Wake.Source
		r.Wake.Refs = append([]string{}, opt.Wake.Refs...)
	}
	if opt.InputFingerprints != nil {
		r.InputFingerprints = append([]string{}, opt.InputFingerprints...)
	}
	if opt.Provider != "" {
		r.Cost.Provider, r.Cost.Model, r.Cost.Tokens = opt.Provider, opt.Model, opt.Tokens
		if r.Status == receipt.Skipped {
			r.Cost.Tokens.Fresh = 0
		}
	}
}

// snapshotVersions is the scan's per-directory versions with the node root
// under "".
func snapshotVersions(snap *published.Snapshot) map[string][32]byte {
	m := make(map[string][32]byte, len(snap.Dirs)+1)
	for p, v := range snap.Dirs {
		m[p] = v
	}
	if _, hexRoot, ok := strings.Cut(snap.Version, ":"); ok {
		var root [32]byte
		if n, err := hex.Decode(root[:], []byte(hexRoot)); err == nil && n == 32 {
			m[""] = root
		}
	}
	return m
}

// checkSourceDir refuses a source directory that holds the vault itself or
// lies inside its .git or .prose directories: a world-model is what a render
// wrote, never the store's own bookkeeping. Both sides are compared with
// symlinks resolved, so a link to the vault's .git is refused like the
// directory itself.
func (v *Vault) checkSourceDir(dir string) error {
	within := func(path, parent string) bool {
		rel, err := filepath.Rel(parent, path)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	real := resolve(dir)
	root, gitDir, state := resolve(v.root), resolve(v.gitDir), resolve(filepath.Join(v.root, StateDir))
	switch {
	case within(root, real):
		return fmt.Errorf("%s holds the vault itself; pass the directory the render wrote (for example published/<node> or a scratch directory)", dir)
	case within(real, gitDir), within(real, state):
		return fmt.Errorf("%s is inside the vault's own bookkeeping (.git or .prose); pass the directory the render wrote", dir)
	}
	return nil
}
