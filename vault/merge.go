package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/published"
)

// A merge joins two diverged histories without rewriting a receipt
// (docs/vault-format.md, Merges): one branch merge commit (parents ours,
// theirs) and one ledger merge commit (parents ours' ledger, theirs'
// ledger, the branch merge commit) whose table is the union of the two.

// ledgerMergeSubject starts the message of every ledger merge commit.
const ledgerMergeSubject = "prose ledger merge"

// isLedgerMerge reports whether a ledger commit joins two ledgers.
func isLedgerMerge(parents []plumbing.Hash, msg []byte) bool {
	return len(parents) == 3 && bytes.HasPrefix(msg, []byte(ledgerMergeSubject+"\n"))
}

// ledgerParents are the parents of a ledger commit that are ledger
// commits: the first, and for a ledger merge the second too.
func ledgerParents(parents []plumbing.Hash, msg []byte) []plumbing.Hash {
	switch {
	case len(parents) == 0:
		return nil
	case isLedgerMerge(parents, msg):
		return parents[:2]
	}
	return parents[:1]
}

// walkLedgerDAG is walkLedgerWith for a ledger that holds merge commits:
// every ledger commit reachable from tip (through first parents, and the
// first two parents of a ledger merge) once, newest first, each after
// every ledger commit that descends from it.
func (v *Vault) walkLedgerDAG(cache *historyCache, tip plumbing.Hash, hashes bool, fn func(Record) error) error {
	commits := map[plumbing.Hash]*ledgerCommit{}
	children := map[plumbing.Hash]int{}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if commits[h] != nil {
			continue
		}
		body, err := v.gitCommit(cache, h)
		if err != nil {
			return err
		}
		lc, err := parseCommitBody(h, body)
		if err != nil {
			return err
		}
		commits[h] = &lc
		for _, p := range ledgerParents(lc.parents, lc.msg) {
			children[p]++
			stack = append(stack, p)
		}
	}
	ready := []plumbing.Hash{tip}
	for len(ready) > 0 {
		h := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		lc := commits[h]
		ps := ledgerParents(lc.parents, lc.msg)
		// The first parent is pushed last, so ours' history comes first.
		for i := len(ps) - 1; i >= 0; i-- {
			if children[ps[i]]--; children[ps[i]] == 0 {
				ready = append(ready, ps[i])
			}
		}
		if len(lc.parents) == 0 || isLedgerMerge(lc.parents, lc.msg) {
			continue
		}
		r, ok, err := parseReceiptBytes(lc.msg)
		if err != nil {
			return fmt.Errorf("ledger commit %s: %w", h, err)
		}
		if !ok {
			return fmt.Errorf("ledger commit %s carries no receipt; the ledger ref was moved by hand", h)
		}
		rec := Record{Receipt: r, Ledger: h, When: signatureTime(lc.committer), message: lc.msg}
		if hashes {
			rec.hash, rec.hashErr = r.ComputeContentHash()
			rec.shapeErr = r.CheckShape()
		}
		if len(lc.parents) > 1 {
			rec.Commit = lc.parents[1]
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// mergeBase is git's merge base of a and b, zero when they share none.
func (v *Vault) mergeBase(ctx context.Context, a, b plumbing.Hash) (plumbing.Hash, error) {
	lines, err := gitLines(ctx, v.root, "find the merge base", "merge-base", a.String(), b.String())
	var ge *GitError
	if err != nil && errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "" {
		return plumbing.ZeroHash, nil // no common ancestor
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(lines) == 0 || !plumbing.IsHash(lines[0]) {
		return plumbing.ZeroHash, nil
	}
	return plumbing.NewHash(lines[0]), nil
}

// mergeConflict is one path both sides changed differently.
type mergeConflict struct {
	Path         string
	Ours, Theirs plumbing.Hash // the entries' ids, zero when removed
}

// mergeTrees merges theirs into ours against base entry by entry: an
// entry one side left as the base had takes the other side's; the same
// change on both sides is taken once; directories both sides changed are
// merged inside unless stop says the path is one unit (a node's
// directory). Anything else is a conflict, and the result keeps ours.
func (b *objectBatch) mergeTrees(base, ours, theirs plumbing.Hash, prefix string, stop func(string) bool, conflicts *[]mergeConflict) (plumbing.Hash, error) {
	if ours == theirs || theirs == base {
		return ours, nil
	}
	if ours == base {
		return theirs, nil
	}
	entries := map[string][3]*object.TreeEntry{}
	for i, h := range []plumbing.Hash{base, ours, theirs} {
		t, err := b.tree(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		for k := range t.Entries {
			e := &t.Entries[k]
			s := entries[e.Name]
			s[i] = e
			entries[e.Name] = s
		}
	}
	same := func(x, y *object.TreeEntry) bool {
		if x == nil || y == nil {
			return x == y
		}
		return x.Mode == y.Mode && x.Hash == y.Hash
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []object.TreeEntry
	for _, name := range names {
		s := entries[name]
		be, oe, te := s[0], s[1], s[2]
		var take *object.TreeEntry
		switch {
		case same(oe, te), same(te, be):
			take = oe
		case same(oe, be):
			take = te
		case oe != nil && te != nil && oe.Mode == filemode.Dir && te.Mode == filemode.Dir && !stop(prefix+name):
			bh := plumbing.ZeroHash
			if be != nil && be.Mode == filemode.Dir {
				bh = be.Hash
			}
			h, err := b.mergeTrees(bh, oe.Hash, te.Hash, prefix+name+"/", stop, conflicts)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if !h.IsZero() {
				take = &object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
			}
		default:
			c := mergeConflict{Path: prefix + name}
			if oe != nil {
				c.Ours = oe.Hash
			}
			if te != nil {
				c.Theirs = te.Hash
			}
			*conflicts = append(*conflicts, c)
			take = oe
		}
		if take != nil {
			out = append(out, *take)
		}
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, nil
	}
	return b.put(plumbing.TreeObject, encodeTree(out))
}

// nodeStop makes each published/<node> directory one unit of a merge:
// a node's files are never mixed from two renders.
func nodeStop(p string) bool {
	rest, ok := strings.CutPrefix(p, "published/")
	return ok && !strings.Contains(rest, "/")
}

// shortToken shortens a receipt token "alg:hex" for a message.
func shortToken(t string) string {
	if len(t) > 20 {
		return t[:20]
	}
	return t
}

// ConflictError is a merge refused before anything landed: what both
// sides changed differently, and the two heads.
type ConflictError struct {
	Remote       string
	Ours, Theirs plumbing.Hash // branch tips
	Nodes        []string      // nodes advanced on both sides
	Heads        [][2]string   // each node's last receipt here and there (content hashes)
	Paths        []string      // other paths changed differently on both sides
	// Files are the changes both sides made differently inside files
	// merged one by one (the wiki's pages, the review queue); FileNode is
	// the node merged file by file, FileHeads its last receipt on both
	// sides.
	Files     []FileConflict
	FileNode  string
	FileHeads [2]string
}

// ResolveName is the name prose resolve takes for a file in conflict:
// a page of a node merged file by file as its path in the node, without
// .html when it is in a folder (ml/attention, but attention.html: a bare
// name is a node's), any other file as its vault path.
func ResolveName(p string) string {
	if n := nodeDirOf(p); n != "" {
		rest := strings.TrimPrefix(p, "published/"+published.EscapeNode(n)+"/")
		if strings.Contains(rest, "/") {
			return strings.TrimSuffix(rest, ".html")
		}
		return rest
	}
	return p
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pull refused: this vault (branch %s) and remote %s (branch %s) changed the same state; nothing changed in this vault", short(e.Ours), e.Remote, short(e.Theirs))
	for i, n := range e.Nodes {
		heads := [2]string{"?", "?"}
		if i < len(e.Heads) {
			heads = e.Heads[i]
		}
		fmt.Fprintf(&b, "; node %s advanced on both sides (last receipt here %s, on %s %s)", n, shortToken(heads[0]), e.Remote, shortToken(heads[1]))
	}
	if len(e.Paths) > 0 {
		fmt.Fprintf(&b, "; changed differently on both sides: %s", strings.Join(e.Paths, ", "))
	}
	if len(e.Files) > 0 {
		if e.FileNode != "" {
			fmt.Fprintf(&b, "; node %s advanced on both sides (last receipt here %s, on %s %s) and merges file by file, with %s", e.FileNode, shortToken(e.FileHeads[0]), e.Remote, shortToken(e.FileHeads[1]), plural(len(e.Files), "conflicting change"))
		} else {
			fmt.Fprintf(&b, "; %s", plural(len(e.Files), "conflicting change"))
		}
		for i, c := range e.Files {
			if i == 20 {
				fmt.Fprintf(&b, "; and %d more", len(e.Files)-20)
				break
			}
			fmt.Fprintf(&b, "; %s", c.Path)
			switch {
			case c.Slot != "":
				fmt.Fprintf(&b, " slot %s", c.Slot)
			case c.Key != "":
				fmt.Fprintf(&b, " %s %s", c.Kind, c.Key)
			}
			fmt.Fprintf(&b, ": %s", c.Detail)
		}
		c := e.Files[0]
		name := ResolveName(c.Path)
		if c.Slot != "" {
			fmt.Fprintf(&b, ". Settle a slot with `prose resolve %s --slot %s --ours` (keep this vault's) or `--theirs` (take %s's)", name, c.Slot, e.Remote)
			for _, m := range e.Files {
				if m.Kind == "meta" && m.Key != "" {
					fmt.Fprintf(&b, ", a meta key with `prose resolve %s --key %s --ours|--theirs`", ResolveName(m.Path), m.Key)
					break
				}
			}
			fmt.Fprintf(&b, ", every conflict of a page with `prose resolve PAGE --ours|--theirs`")
		} else if c.Kind == "meta" && c.Key != "" {
			fmt.Fprintf(&b, ". Settle a meta key with `prose resolve %s --key %s --ours` (keep this vault's) or `--theirs` (take %s's), every conflict of the page with `prose resolve %s --ours|--theirs`", name, c.Key, e.Remote, name)
		} else {
			fmt.Fprintf(&b, ". Settle every conflict of a page with `prose resolve %s --ours` (keep this vault's) or `--theirs` (take %s's)", name, e.Remote)
		}
		if e.FileNode != "" {
			fmt.Fprintf(&b, ", or the whole node with `prose resolve %s --ours|--theirs`", e.FileNode)
		}
		b.WriteString("; the merge lands when every conflict is settled")
	}
	if len(e.Nodes) > 0 {
		fmt.Fprintf(&b, ". Settle each node with `prose resolve NODE --ours` (keep this vault's) or `prose resolve NODE --theirs` (take %s's), e.g. `prose resolve %s --theirs`", e.Remote, e.Nodes[0])
		// A world-model node (not one merged file by file, as the wiki)
		// can also be rendered again against the merged vault.
		_, fileNodes := fileMergeOf()
		if i := slices.IndexFunc(e.Nodes, func(n string) bool { return !fileNodes[n] }); i >= 0 {
			fmt.Fprintf(&b, ", or render a world-model node again against the merged vault with `prose resolve NODE --render` (e.g. `prose resolve %s --render`, once every other conflict is settled)", e.Nodes[i])
		}
		b.WriteString("; the merge lands when every node is settled, with a merge receipt naming both heads")
	}
	if len(e.Paths) > 0 {
		b.WriteString(". prose has no merge rules for these paths: change them on one side only, or clone the remote afresh (`prose clone URL NEWDIR`) and redo the change there (docs/sync.md)")
	}
	return b.String()
}

// mergeDiverged joins theirs into ours when every node and every other
// path was changed on one side only, then lands the merge as a pull lands
// a fast-forward. The caller holds the writer lock. It returns the two
// new tips.
// mergeOutcome is what a merge landed.
type mergeOutcome struct {
	Branch, Ledger plumbing.Hash
	Summary        string
	Pages          []string // vault paths merged file by file
	FileMerged     []string // nodes joined by a merge of their files
	Sides          [2]plumbing.Hash
}

func (v *Vault) mergeDiverged(ctx context.Context, remote string, oursBranch, theirsBranch, oursLedger, theirsLedger plumbing.Hash, choices map[string]string, companions map[string][]string) (out mergeOutcome, err error) {
	return v.mergeDivergedPlan(ctx, remote, oursBranch, theirsBranch, oursLedger, theirsLedger, choices, companions, nil)
}

// mergeDivergedPlan is mergeDiverged with a resolve --render's plan (nil:
// none): a dry run reads the merged view and returns errDryMerge before
// anything is written; a landing gives the plan's node the render's files.
func (v *Vault) mergeDivergedPlan(ctx context.Context, remote string, oursBranch, theirsBranch, oursLedger, theirsLedger plumbing.Hash, choices map[string]string, companions map[string][]string, rp *renderPlan) (out mergeOutcome, err error) {
	var branch, ledger plumbing.Hash
	baseBranch, err := v.mergeBase(ctx, oursBranch, theirsBranch)
	if err != nil {
		return out, err
	}
	baseLedger, err := v.mergeBase(ctx, oursLedger, theirsLedger)
	if err != nil {
		return out, err
	}
	trees := func(hs ...plumbing.Hash) ([]plumbing.Hash, error) {
		out := make([]plumbing.Hash, len(hs))
		for i, h := range hs {
			if h.IsZero() {
				continue
			}
			c, err := v.commit(h)
			if err != nil {
				return nil, err
			}
			out[i] = c.TreeHash
		}
		return out, nil
	}
	lt, err := trees(baseLedger, oursLedger, theirsLedger)
	if err != nil {
		return out, err
	}
	bt, err := trees(baseBranch, oursBranch, theirsBranch)
	if err != nil {
		return out, err
	}
	b := v.newBatch()
	defer b.abort()
	fn, fileNodes := fileMergeOf()
	// A node merged file by file (the wiki) is opened up unless prose
	// resolve chose one side of it as a whole.
	byFile := func(n string) bool { return fn != nil && fileNodes[n] && choices[n] == "" }
	stop := func(p string) bool { return nodeStop(p) && !byFile(nodeDirOf(p)) }
	var nodeConflicts, pathConflicts []mergeConflict
	ledgerTree, err := b.mergeTrees(lt[0], lt[1], lt[2], "", func(string) bool { return false }, &nodeConflicts)
	if err != nil {
		return out, err
	}
	branchTree, err := b.mergeTrees(bt[0], bt[1], bt[2], "", stop, &pathConflicts)
	if err != nil {
		return out, err
	}
	// Paths both sides changed that the file rules know merge file by
	// file: the pages of a node merged by file, and the files beside the
	// nodes (except those that go with a node a resolve took whole).
	step := &fileMergeStep{v: v, b: b, fn: fn, trees: bt, choices: choices, used: map[string]bool{}, fresh: map[plumbing.Hash][]byte{}}
	if fn != nil {
		var rest []mergeConflict
	conflicts:
		for _, c := range pathConflicts {
			n := nodeDirOf(c.Path)
			if n != "" && !byFile(n) {
				rest = append(rest, c)
				continue
			}
			for sn, side := range choices {
				if side != "" && !strings.HasPrefix(sn, "file:") && underAny(c.Path, companions[sn]) {
					rest = append(rest, c)
					continue conflicts
				}
			}
			nt, ok, err := step.merge(branchTree, c.Path, n != "")
			if err != nil {
				return out, err
			}
			if !ok {
				rest = append(rest, c)
				continue
			}
			branchTree = nt
		}
		pathConflicts = rest
	}
	// A node advanced on both sides is joined by a merge receipt when
	// both sides left the same files, when prose resolve chose a side, or
	// when its files merged one by one without a conflict; any other is
	// a conflict.
	var joins []nodeJoin
	ce := &ConflictError{Remote: remote, Ours: oursBranch, Theirs: theirsBranch}
	nodes := map[string]bool{}
	for _, c := range nodeConflicts {
		n := nodeOfLedgerPath(c.Path)
		nodes[n] = true
		j, err := v.joinNode(n, bt[1], bt[2], oursLedger, theirsLedger, choices[n])
		if err != nil {
			return out, err
		}
		if j == nil && byFile(n) {
			if j, err = v.joinByFile(n, step, branchTree, oursLedger, theirsLedger); err != nil {
				return out, err
			}
			if j == nil && len(step.conflicts) > 0 {
				ce.FileNode = n
				ce.FileHeads = [2]string{j0(v, oursLedger, n), j0(v, theirsLedger, n)}
				continue
			}
		}
		if j != nil && rp != nil && !rp.dry && n == rp.node {
			if err := rp.apply(v, b, j); err != nil {
				return out, err
			}
		}
		if j == nil {
			ce.Nodes = append(ce.Nodes, n)
			ce.Heads = append(ce.Heads, [2]string{j0(v, oursLedger, n), j0(v, theirsLedger, n)})
			continue
		}
		joins = append(joins, *j)
	}
	ce.Files = step.conflicts
	for n, side := range choices {
		if strings.HasPrefix(n, "file:") {
			fp, _, _ := strings.Cut(strings.TrimPrefix(n, "file:"), "#")
			if nd := nodeDirOf(fp); nd != "" && choices[nd] != "" {
				continue // the node is taken whole
			}
			if side != "" && !step.used[n] {
				return out, fmt.Errorf("%s has no conflict to resolve in the merge with remote %s (this vault at %s, remote at %s); nothing changed in this vault", describeChoice(n), remote, short(oursBranch), short(theirsBranch))
			}
			continue
		}
		if !nodes[n] {
			return out, fmt.Errorf("node %s was not advanced on both sides (this vault at %s, remote %s at %s): there is nothing to resolve for it; nothing changed in this vault", n, short(oursBranch), remote, short(theirsBranch))
		}
	}
	// The files beside a settled node go with the side taken, all of
	// them: its catalog never describes the other side's pages.
	settled := map[string]bool{}
	for i := range joins {
		j := &joins[i]
		if j.taken != TakeOurs && j.taken != TakeTheirs {
			continue
		}
		settled[j.node] = true
		side := bt[1]
		if j.taken == TakeTheirs {
			side = bt[2]
		}
		for _, cp := range companions[j.node] {
			e, _, err := v.lookup(side, cp) // absent: the zero entry removes it
			if err != nil {
				return out, err
			}
			if j.extra == nil {
				j.extra = map[string]object.TreeEntry{}
			}
			j.extra[cp] = e
		}
	}
paths:
	for _, c := range pathConflicts {
		if n := nodeDirOf(c.Path); n != "" && nodes[n] {
			continue // named with its node, or joined
		}
		for n := range settled {
			if underAny(c.Path, companions[n]) {
				continue paths // the merge receipt's commit sets it
			}
		}
		ce.Paths = append(ce.Paths, c.Path)
	}
	if len(ce.Nodes) > 0 || len(ce.Paths) > 0 || len(ce.Files) > 0 {
		return out, ce
	}
	if rp != nil && rp.dry {
		if err := rp.readView(v, b, branchTree, ledgerTree, joins); err != nil {
			return out, err
		}
		return out, errDryMerge
	}
	// The merge commit holds each joined node as ours left it; its merge
	// receipt's commit holds the merged node.
	for _, j := range joins {
		p := "published/" + published.EscapeNode(j.node)
		e, ok, err := v.lookup(bt[1], p)
		if err != nil {
			return out, err
		}
		if !ok {
			e = object.TreeEntry{}
		}
		if branchTree, err = b.setPath(branchTree, p, object.TreeEntry{Mode: e.Mode, Hash: e.Hash}); err != nil {
			return out, err
		}
	}
	ours, theirs := v.advanced(lt), v.advancedOn(lt[0], lt[2])
	summary := mergeSummary(remote, ours, theirs)
	for _, j := range joins {
		summary += fmt.Sprintf("joined: node %s (taken %s)\n", j.node, j.taken)
		if len(j.pages) > 0 {
			summary += fmt.Sprintf("merged file by file: %s\n", strings.Join(j.pages, ", "))
		}
		out.Pages = append(out.Pages, j.pagePaths...)
		if j.fps != nil {
			out.FileMerged = append(out.FileMerged, j.node)
		}
	}
	out.Summary = summary
	sig := v.signature(time.Now())
	msg := fmt.Sprintf("Merge %s/%s into %s (prose)\n\n%s", remote, v.cfg.Branch, v.cfg.Branch, summary)
	branch, err = b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: branchTree, ParentHashes: []plumbing.Hash{oursBranch, theirsBranch}})
	if err != nil {
		return out, err
	}
	lmsg := fmt.Sprintf("%s\n\nours %s\ntheirs %s\nbranch %s\n", ledgerMergeSubject, oursLedger, theirsLedger, branch)
	ledger, err = b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: lmsg, TreeHash: ledgerTree, ParentHashes: []plumbing.Hash{oursLedger, theirsLedger, branch}})
	if err != nil {
		return out, err
	}
	bTree, lTree := branchTree, ledgerTree
	for _, j := range joins {
		if branch, bTree, ledger, lTree, err = b.appendMergeReceipt(branch, bTree, ledger, lTree, j); err != nil {
			return out, err
		}
	}
	if err := b.flush(); err != nil {
		return out, err
	}
	if err := v.fastForward(ctx, oursBranch, branch, oursLedger, ledger); err != nil {
		return out, err
	}
	out.Branch, out.Ledger, out.Sides = branch, ledger, [2]plumbing.Hash{oursBranch, theirsBranch}
	return out, nil
}

// advanced lists the nodes whose ledger entry ours (lt[1]) changed since
// the base (lt[0]).
func (v *Vault) advanced(lt []plumbing.Hash) []string { return v.advancedOn(lt[0], lt[1]) }

// advancedOn lists the nodes whose ledger table entry differs between the
// ledger trees base and side.
func (v *Vault) advancedOn(base, side plumbing.Hash) []string {
	entries := func(h plumbing.Hash) map[string]plumbing.Hash {
		m := map[string]plumbing.Hash{}
		t, err := v.tree(h)
		if err != nil {
			return m
		}
		for _, e := range t.Entries {
			if e.Name == "nodes" && e.Mode == filemode.Dir {
				if nt, err := v.tree(e.Hash); err == nil {
					for _, ne := range nt.Entries {
						m[ne.Name] = ne.Hash
					}
				}
			}
		}
		return m
	}
	b, s := entries(base), entries(side)
	var out []string
	for name, h := range s {
		if b[name] != h {
			out = append(out, unescapeNodeDir(strings.TrimSuffix(name, ".json")))
		}
	}
	sort.Strings(out)
	return out
}

// mergeSummary is the body of a branch merge commit: what came from where.
func mergeSummary(remote string, ours, theirs []string) string {
	line := func(nodes []string) string {
		if len(nodes) == 0 {
			return "nothing"
		}
		return "node " + strings.Join(nodes, ", node ")
	}
	return fmt.Sprintf("from %s: %s\nfrom here: %s\n", remote, line(theirs), line(ours))
}

// nodeOfLedgerPath is the node of a ledger table path nodes/<dir>.json.
func nodeOfLedgerPath(p string) string {
	return unescapeNodeDir(strings.TrimSuffix(strings.TrimPrefix(p, "nodes/"), ".json"))
}

// unescapeNodeDir is the node a directory name under published/ stands
// for, or the name itself when it is no escaped node name.
func unescapeNodeDir(dir string) string {
	if n, err := published.UnescapeNode(dir); err == nil {
		return n
	}
	return dir
}

// continueMerge takes in a merge git made: the branch at tip already
// holds theirsBranch, the ledger lacks theirs' receipts. The ledger moves
// to theirs' (when it is behind) or joins it with a ledger merge commit
// whose branch parent is tip. Each node advanced on both sides takes the
// files git's merge holds (the merge driver's page and slot merge) and a
// merge receipt on top of tip (docs/vault-format.md, Merges): the branch
// git made is never undone, only added to; a node created on both sides
// is joined the same way. Refused, with nothing changed, when a node in
// conflict lacks a receipt on one side or the merge git made holds files
// of a node advanced on one side other than that side published. The caller
// holds the writer lock.
func (v *Vault) continueMerge(ctx context.Context, remote string, tip, theirsBranch, oursLedger, theirsLedger plumbing.Hash, ledgerBehind bool, pages *[]string) (branch, ledger plumbing.Hash, summary string, err error) {
	baseLedger, err := v.mergeBase(ctx, oursLedger, theirsLedger)
	if err != nil {
		return branch, ledger, "", err
	}
	var lt [3]plumbing.Hash
	for i, h := range []plumbing.Hash{baseLedger, oursLedger, theirsLedger} {
		if !h.IsZero() {
			c, err := v.commit(h)
			if err != nil {
				return branch, ledger, "", err
			}
			lt[i] = c.TreeHash
		}
	}
	b := v.newBatch()
	defer b.abort()
	var conflicts []mergeConflict
	ledgerTree, err := b.mergeTrees(lt[0], lt[1], lt[2], "", func(string) bool { return false }, &conflicts)
	if err != nil {
		return branch, ledger, "", err
	}
	tc, err := v.commit(tip)
	if err != nil {
		return branch, ledger, "", err
	}
	thc, err := v.commit(theirsBranch)
	if err != nil {
		return branch, ledger, "", err
	}
	// A node advanced on both sides takes the files git's merge holds
	// (its merge driver merged the wiki page by page and slot by slot),
	// joined by a merge receipt; a node new on both sides has no shared
	// chain to join.
	var joins []nodeJoin
	ce := &ConflictError{Remote: remote, Ours: tip, Theirs: theirsBranch}
	// prose resolve settles prose's own pending merge, not one git already
	// committed: where a node cannot be joined, the way on is to undo
	// git's merge and let prose pull stop at the same node.
	undo := "ORIG_HEAD"
	if len(tc.ParentHashes) > 0 {
		undo = short(tc.ParentHashes[0])
	}
	for _, c := range conflicts {
		n := nodeOfLedgerPath(c.Path)
		j, err := v.joinGitMerge(ctx, n, tc.TreeHash, oursLedger, theirsLedger, undo, remote)
		if err != nil {
			return branch, ledger, "", err
		}
		if j == nil {
			ce.Nodes = append(ce.Nodes, n)
			ce.Heads = append(ce.Heads, [2]string{j0(v, oursLedger, n), j0(v, theirsLedger, n)})
			continue
		}
		joins = append(joins, *j)
	}
	if len(ce.Nodes) > 0 {
		return branch, ledger, "", fmt.Errorf("the merge git made (commit %s) joins %s without a receipt on one side to join (%s); nothing changed in this vault. Undo that merge with `git reset --hard %s` and run `prose pull %s`: it stops at the same nodes, and `prose resolve NODE --ours|--theirs` settles each", short(tip), plural(len(ce.Nodes), "node"), strings.Join(ce.Nodes, ", "), undo, remote)
	}
	joined := map[string]bool{}
	for _, j := range joins {
		joined[j.node] = true
	}
	theirs := v.advancedOn(lt[0], lt[2])
	for _, node := range theirs {
		if joined[node] {
			continue
		}
		p := "published/" + published.EscapeNode(node)
		got, _, err := v.lookup(tc.TreeHash, p)
		if err != nil {
			return branch, ledger, "", err
		}
		want, _, err := v.lookup(thc.TreeHash, p)
		if err != nil {
			return branch, ledger, "", err
		}
		if got.Hash != want.Hash {
			return branch, ledger, "", fmt.Errorf("the merge git made (commit %s) holds files of node %s other than remote %s published (its last receipt there describes %s); nothing changed in this vault. Undo that merge with `git reset --hard %s` and run `prose pull %s`, or publish the node again after `prose pull --continue` is possible", short(tip), node, remote, short(theirsBranch), undo, remote)
		}
	}
	summary = mergeSummary(remote, v.advancedOn(lt[0], lt[1]), theirs)
	for _, j := range joins {
		summary += fmt.Sprintf("joined: node %s (taken %s)\n", j.node, j.taken)
		if j.taken != TakeMerged || len(tc.ParentHashes) < 2 {
			continue
		}
		// The files git merged from both sides: their derived shell is
		// rendered again after the merge lands (PullResult.Pages).
		p := "published/" + published.EscapeNode(j.node)
		var sides [2]plumbing.Hash
		for i, ph := range []plumbing.Hash{tc.ParentHashes[0], tc.ParentHashes[1]} {
			pc, err := v.commit(ph)
			if err != nil {
				return branch, ledger, "", err
			}
			if e, ok, err := v.lookup(pc.TreeHash, p); err != nil {
				return branch, ledger, "", err
			} else if ok {
				sides[i] = e.Hash
			}
		}
		if err := v.changedFromBoth(j.entry.Hash, sides[0], sides[1], p+"/", pages); err != nil {
			return branch, ledger, "", err
		}
	}
	branch = tip
	if ledgerBehind {
		ledger = theirsLedger
	} else {
		sig := v.signature(time.Now())
		lmsg := fmt.Sprintf("%s\n\nours %s\ntheirs %s\nbranch %s\n", ledgerMergeSubject, oursLedger, theirsLedger, tip)
		if ledger, err = b.putCommit(&object.Commit{Author: sig, Committer: sig, Message: lmsg, TreeHash: ledgerTree, ParentHashes: []plumbing.Hash{oursLedger, theirsLedger, tip}}); err != nil {
			return branch, ledger, "", err
		}
		// Each merge receipt is a commit on top of git's merge, whose
		// tree it leaves as git made it.
		bTree, lTree := tc.TreeHash, ledgerTree
		for _, j := range joins {
			if branch, bTree, ledger, lTree, err = b.appendMergeReceipt(branch, bTree, ledger, lTree, j); err != nil {
				return branch, ledger, "", err
			}
		}
		if err := b.flush(); err != nil {
			return branch, ledger, "", err
		}
	}
	if err := v.fastForward(ctx, tip, branch, oursLedger, ledger); err != nil {
		return branch, ledger, "", err
	}
	return branch, ledger, summary, nil
}

// joinGitMerge is the join of node, advanced on both sides, as the merge
// git made (tree) holds it: taken both when both sides left the same
// files, else merged, with the fingerprints of git's files. Nil when the
// node has no receipt on one side (a conflict prose resolve settles
// after prose pull).
func (v *Vault) joinGitMerge(ctx context.Context, node string, tree, oursLedger, theirsLedger plumbing.Hash, undo, remote string) (*nodeJoin, error) {
	j := &nodeJoin{node: node}
	var err error
	if j.ours, err = v.lastReceiptAt(oursLedger, node); err != nil {
		return nil, err
	}
	if j.theirs, err = v.lastReceiptAt(theirsLedger, node); err != nil {
		return nil, err
	}
	if j.ours == nil || j.theirs == nil {
		return nil, nil
	}
	esc := published.EscapeNode(node)
	e, ok, err := v.lookup(tree, "published/"+esc)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("the merge git made removed node %s, which both sides advanced; nothing changed in this vault: undo that merge with `git reset --hard %s`, then run `prose pull %s` and `prose resolve %s --ours|--theirs`", node, undo, remote, node)
	}
	j.entry, j.hasEntry = e, true
	spec, err := v.storedSpec(tree, "dist/canonicalizers/"+esc+".json")
	if err != nil {
		return nil, err
	}
	if j.fps, err = v.committedFingerprints(ctx, e.Hash, spec, viewOf(node)); err != nil {
		return nil, fmt.Errorf("node %s as the merge git made holds it: %w; nothing changed in this vault: settle the files (git shows them), commit, and run `prose pull --continue` again", node, err)
	}
	j.taken = TakeMerged
	if maps.Equal(j.fps, j.ours.Fingerprints) && maps.Equal(j.fps, j.theirs.Fingerprints) {
		j.taken = TakeBoth
	}
	return j, nil
}

// changedFromBoth appends the paths of the files under tree merged (at
// prefix) that differ from both ours and theirs (trees, zero when absent):
// the files a merge made from both sides. A subtree equal to one side's
// holds none.
func (v *Vault) changedFromBoth(merged, ours, theirs plumbing.Hash, prefix string, out *[]string) error {
	if merged == ours || merged == theirs {
		return nil
	}
	entries := func(h plumbing.Hash) (map[string]object.TreeEntry, error) {
		m := map[string]object.TreeEntry{}
		if h.IsZero() {
			return m, nil
		}
		t, err := v.tree(h)
		if err != nil {
			return nil, err
		}
		for _, e := range t.Entries {
			m[e.Name] = e
		}
		return m, nil
	}
	me, err := entries(merged)
	if err != nil {
		return err
	}
	oe, err := entries(ours)
	if err != nil {
		return err
	}
	te, err := entries(theirs)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(me))
	for n := range me {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := me[n]
		o, t := oe[n], te[n]
		if e.Mode == filemode.Dir {
			sub := func(x object.TreeEntry) plumbing.Hash {
				if x.Mode == filemode.Dir {
					return x.Hash
				}
				return plumbing.ZeroHash
			}
			if err := v.changedFromBoth(e.Hash, sub(o), sub(t), prefix+n+"/", out); err != nil {
				return err
			}
			continue
		}
		if e.Hash != o.Hash && e.Hash != t.Hash {
			*out = append(*out, prefix+n)
		}
	}
	return nil
}
