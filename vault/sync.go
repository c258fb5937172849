package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/prose-store/prose/internal/durable"
)

// Sync goes through the git CLI, not go-git: git handles SSH agents,
// credential helpers, proxies and http(s) the way its users have set them
// up. prose only decides which refs travel and when a ref may move.

// remoteLedgerRef is where a fetch keeps a remote's ledger: beside its
// branch, never over the local ledger, which moves only with the branch.
func remoteLedgerRef(remote string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/remotes/" + remote + "/prose/ledger")
}

func remoteBranchRef(remote, branch string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/remotes/" + remote + "/" + branch)
}

// Refspecs are the lines of a remote's config that make plain git carry
// every ref prose needs: fetch keeps the remote's prose refs under its
// remote-tracking refs; push sends the branch and refs/prose/* without
// force, so git refuses a push that would drop commits the remote has.
func Refspecs(remote, branch string) (fetch, push []string) {
	fetch = []string{
		"+refs/heads/*:refs/remotes/" + remote + "/*",
		"+refs/prose/*:refs/remotes/" + remote + "/prose/*",
	}
	push = []string{
		"refs/heads/" + branch + ":refs/heads/" + branch,
		"refs/prose/*:refs/prose/*",
	}
	return fetch, push
}

// GitError is a git command that failed: what prose was doing, and git's
// own words.
type GitError struct {
	Doing  string
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("%s: git %s failed: %s", e.Doing, strings.Join(e.Args, " "), lastLines(msg, 6))
}

func (e *GitError) Unwrap() error { return e.Err }

// lastLines keeps git's last n lines of stderr, where it says what failed.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// git runs the git CLI in dir and returns its stdout. Its messages are in
// English (LC_ALL=C) so prose can recognise them; stdin is the terminal's,
// so a credential prompt works as with git itself.
func runGit(ctx context.Context, dir, doing string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s: git is not installed or not on PATH; prose syncs through the git CLI, so install git", doing)
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return out.String(), &GitError{Doing: doing, Args: args, Stderr: errb.String(), Err: err}
	}
	return out.String(), nil
}

// gitLines runs git and returns its stdout's non-empty lines.
func gitLines(ctx context.Context, dir, doing string, args ...string) ([]string, error) {
	out, err := runGit(ctx, dir, doing, args...)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, err
}

// Remotes lists the vault's git remotes.
func (v *Vault) Remotes(ctx context.Context) ([]string, error) {
	return gitLines(ctx, v.root, "list remotes", "remote")
}

// remoteConfig reads the url, fetch and push lines of remote's config
// with one git call.
func (v *Vault) remoteConfig(ctx context.Context, remote string) (url string, have map[string]bool, err error) {
	if err := checkRemoteName(remote); err != nil {
		return "", nil, err
	}
	// The repository's own config file, read in-process (every push and
	// pull asks, and a git process costs more than the answer); a remote
	// it does not define (one from an included or global file) is asked
	// of git.
	if url, have, ok := v.remoteConfigFile(remote); ok {
		return url, have, nil
	}
	lines, err := gitLines(ctx, v.root, "read remote "+remote, "config", "--get-regexp", `^remote\.`+strings.ReplaceAll(remote, ".", `\.`)+`\.(url|fetch|push)$`)
	var ge *GitError
	if err != nil && !errors.As(err, &ge) { // exit 1: no such key
		return "", nil, err
	}
	have = map[string]bool{}
	prefix := "remote." + remote + "."
	for _, l := range lines {
		key, val, _ := strings.Cut(l, " ")
		kind := strings.TrimPrefix(strings.ToLower(key), strings.ToLower(prefix))
		if kind == "url" {
			url = val
			continue
		}
		have[kind+" = "+val] = true
	}
	if url == "" {
		return "", nil, fmt.Errorf("the vault has no remote %q: add one with `prose remote add %s URL`", remote, remote)
	}
	return url, have, nil
}

// remoteConfigFile reads remote's url, fetch and push lines from
// .git/config; ok is false when that file does not define the remote's
// url or holds an include (git then answers).
func (v *Vault) remoteConfigFile(remote string) (url string, have map[string]bool, ok bool) {
	data, err := os.ReadFile(filepath.Join(v.gitDir, "config"))
	if err != nil {
		return "", nil, false
	}
	cfg := gitconfig.New()
	if gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg) != nil || cfg.HasSection("include") || cfg.HasSection("includeIf") {
		return "", nil, false
	}
	if !cfg.Section("remote").HasSubsection(remote) {
		return "", nil, false
	}
	sub := cfg.Section("remote").Subsection(remote)
	have = map[string]bool{}
	for _, o := range sub.Options {
		switch strings.ToLower(o.Key) {
		case "url":
			url = o.Value
		case "fetch", "push":
			have[strings.ToLower(o.Key)+" = "+o.Value] = true
		}
	}
	return url, have, url != ""
}

// RemoteURL is the URL of remote, or an error naming `prose remote add`.
func (v *Vault) RemoteURL(ctx context.Context, remote string) (string, error) {
	url, _, err := v.remoteConfig(ctx, remote)
	return url, err
}

// checkRemoteName refuses a remote name git would read as an option or
// that cannot be a ref path component.
func checkRemoteName(name string) error {
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \t\n:*?[\\^~") || strings.Contains(name, "..") || strings.Contains(name, "/") {
		return fmt.Errorf("remote name %q is not usable: use letters, digits, '-', '_' or '.', like `origin`", name)
	}
	return nil
}

// MissingRefspecs returns the refspec lines (`fetch = …`, `push = …`) the
// config of remote lacks.
func (v *Vault) MissingRefspecs(ctx context.Context, remote string) ([]string, error) {
	_, have, err := v.remoteConfig(ctx, remote)
	if err != nil {
		return nil, err
	}
	return v.missingRefspecs(remote, have), nil
}

func (v *Vault) missingRefspecs(remote string, have map[string]bool) []string {
	fetch, push := Refspecs(remote, v.cfg.Branch)
	var missing []string
	for _, l := range fetch {
		if !have["fetch = "+l] {
			missing = append(missing, "fetch = "+l)
		}
	}
	for _, l := range push {
		if !have["push = "+l] {
			missing = append(missing, "push = "+l)
		}
	}
	return missing
}

// ConfigureRemote writes the refspecs of remote its config lacks, so plain
// `git push` and `git fetch` carry the branch and refs/prose/*. It returns
// the lines it added.
func (v *Vault) ConfigureRemote(ctx context.Context, remote string) ([]string, error) {
	_, have, err := v.remoteConfig(ctx, remote)
	if err != nil {
		return nil, err
	}
	missing := v.missingRefspecs(remote, have)
	for _, l := range missing {
		kind, spec, _ := strings.Cut(l, " = ")
		if _, err := runGit(ctx, v.root, "configure remote "+remote, "config", "--add", "remote."+remote+"."+kind, spec); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// AddRemote adds a git remote and its prose refspecs.
func (v *Vault) AddRemote(ctx context.Context, name, url string) error {
	if err := checkRemoteName(name); err != nil {
		return err
	}
	if strings.HasPrefix(url, "-") || url == "" {
		return fmt.Errorf("remote URL %q is not usable: give a URL or path such as https://host/team/vault.git or ../vault.git", url)
	}
	if _, err := v.RemoteURL(ctx, name); err == nil {
		return fmt.Errorf("the vault already has a remote %q: remove it with `git remote remove %s` first, or pick another name", name, name)
	}
	if _, err := runGit(ctx, v.root, "add remote "+name, "remote", "add", name, url); err != nil {
		return err
	}
	if _, err := v.ConfigureRemote(ctx, name); err != nil {
		return err
	}
	// A vault that shares through a remote merges: a plain git merge
	// goes through prose's merge driver.
	_, err := v.RegisterMergeDriver(ctx)
	return err
}

// fetch brings the remote's branch and prose refs into its remote-tracking
// refs. Nothing local outside refs/remotes/<remote>/ moves.
func (v *Vault) fetch(ctx context.Context, remote string) error {
	fetch, _ := Refspecs(remote, v.cfg.Branch)
	args := append([]string{"fetch", "--quiet", "--no-tags", remote}, fetch...)
	if _, err := runGit(ctx, v.root, "fetch from "+remote, args...); err != nil {
		return remoteError(remote, err)
	}
	return nil
}

// remoteError words a failed fetch or push the way a user can act on.
func remoteError(remote string, err error) error {
	var ge *GitError
	if errors.As(err, &ge) {
		return fmt.Errorf("cannot reach remote %s (%s): check the URL (`git remote get-url %s`), the network and your credentials; nothing changed in this vault", remote, lastLines(strings.TrimSpace(ge.Stderr), 3), remote)
	}
	return err
}

// isAncestor reports whether commit a is an ancestor of b (or b itself).
func (v *Vault) isAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	if a.IsZero() || a == b {
		return true, nil
	}
	if b.IsZero() {
		return false, nil
	}
	_, err := runGit(ctx, v.root, "compare histories", "merge-base", "--is-ancestor", a.String(), b.String())
	var ge *GitError
	var ee *exec.ExitError
	if errors.As(err, &ge) && errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	return err == nil, err
}

// firstParentsTo walks from along first parents looking for to (an
// ancestor of from, or from itself). It returns whether it found it, how
// many commits before it were neither a merge nor a root (for a ledger:
// its receipts), and plain: no commit on the way had more than two
// parents (a ledger merge, whose other side the walk does not count). A
// walk that reaches a root without finding to says no: to may still be
// reachable through other parents. Commits in known (bodies keyed by the
// id they hash to, as fetchedCommits reads them) are not read again.
func (v *Vault) firstParentsTo(from, to plumbing.Hash, known map[plumbing.Hash][]byte) (found bool, n int, plain bool, err error) {
	plain = true
	cache := v.newHistoryCache()
	for h := from; ; {
		if h == to {
			return true, n, plain, nil
		}
		if h.IsZero() {
			return to.IsZero(), n, plain, nil
		}
		body, ok := known[h]
		if !ok {
			if body, err = v.gitCommit(cache, h); err != nil {
				return false, 0, false, err
			}
		}
		lc, err := parseCommitBody(h, body)
		if err != nil {
			return false, 0, false, err
		}
		switch {
		case len(lc.parents) > 2:
			plain = false
		case len(lc.parents) > 0:
			n++
		}
		if len(lc.parents) == 0 {
			return to.IsZero(), n, plain, nil
		}
		h = lc.parents[0]
	}
}

// countReceipts counts the receipts on ledger b that ledger a lacks: the
// ledger commits b reaches and a does not, less ledger merges and the
// branch commits that rendered receipts name (all reachable from branch,
// b's branch tip).
func (v *Vault) countReceipts(ctx context.Context, a, b, branch plumbing.Hash) (int, error) {
	args := []string{"rev-list", "--count", "--max-parents=2", b.String()}
	if !a.IsZero() {
		args = append(args, "^"+a.String())
	}
	if !branch.IsZero() {
		args = append(args, "^"+branch.String())
	}
	lines, err := gitLines(ctx, v.root, "count receipts", args...)
	if err != nil || len(lines) == 0 {
		return 0, err
	}
	n, err := strconv.Atoi(lines[0])
	if a.IsZero() && n > 0 {
		n-- // the ledger's root carries no receipt
	}
	return n, err
}

// PullOptions tune Pull.
type PullOptions struct {
	// Continue takes in a merge git made on the branch (git pull, git
	// merge): the ledger records it, the branch stays as git left it.
	Continue bool
}

// PullResult says what a pull did.
type PullResult struct {
	Remote       string        `json:"remote"`
	Branch       plumbing.Hash `json:"-"`
	Ledger       plumbing.Hash `json:"-"`
	From         plumbing.Hash `json:"-"`
	Receipts     int           `json:"receipts"`      // receipts that arrived
	UpToDate     bool          `json:"up_to_date"`    // the remote had nothing new
	LocalAhead   int           `json:"local_ahead"`   // receipts here the remote lacks
	Configured   []string      `json:"configured"`    // refspec lines written
	RemoteLedger bool          `json:"remote_ledger"` // the remote has a ledger
	Merged       bool          `json:"merged"`        // a merge commit joined the two histories
	Summary      string        `json:"summary"`       // the merge commit's account of what came from where
	MergeDriver  []string      `json:"merge_driver"`  // merge driver settings written
	// Pages are the files of a node merged file by file (the wiki's
	// pages both sides changed), as vault paths: their derived shell is
	// rendered again after the merge (prose wiki rebuild does it).
	Pages []string `json:"pages,omitempty"`
	// FileMerged are the nodes the merge joined by merging their files
	// one by one (the wiki), whose derived shell is rendered again.
	FileMerged []string `json:"file_merged,omitempty"`
	// Sides are the branch heads a merge joined (this vault's, the
	// remote's): the shells are rendered again against them.
	Sides [2]plumbing.Hash `json:"-"`
}

// ErrDiverged reports a push refused because the remote holds receipts
// this vault lacks.
var ErrDiverged = errors.New("diverged")

// DivergedError names both ledger heads of a refused push.
type DivergedError struct {
	Remote       string
	Ours, Theirs plumbing.Hash // ledger tips
	TheirOnly    int           // receipts the remote has and this vault lacks
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("push refused: remote %s has %s this vault lacks (its ledger %s is not in this vault's history); a push would lose them, and prose never forces: run `prose pull %s` first, then push", e.Remote, plural(e.TheirOnly, "receipt"), short(e.Theirs), e.Remote)
}

func (e *DivergedError) Unwrap() error { return ErrDiverged }

func short(h plumbing.Hash) string { return h.String()[:12] }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Pull fetches remote and takes in what it has, under the writer lock:
// when the local branch and ledger are both in the remote's history, both
// refs fast-forward to the remote's; when both sides have work the other
// lacks, one merge commit joins them if every node and file changed on one
// side only (mergeDiverged), else nothing changes (ConflictError); with
// opt.Continue, a merge git made is taken in (continueMerge). The working
// tree is brought along as every write brings it. A remote without a
// ledger changes nothing.
func (v *Vault) Pull(ctx context.Context, remote string, opt PullOptions) (*PullResult, error) {
	res := &PullResult{Remote: remote}
	var err error
	if _, err := os.Lstat(filepath.Join(v.gitDir, "MERGE_HEAD")); err == nil {
		return nil, fmt.Errorf("a git merge is in progress (.git/MERGE_HEAD): settle its conflicts (`git status` names them), `git add` and `git commit`, then run `prose pull --continue`; or abandon it with `git merge --abort`; nothing changed in this vault")
	}
	if res.Configured, err = v.ConfigureRemote(ctx, remote); err != nil {
		return nil, err
	}
	if res.MergeDriver, err = v.RegisterMergeDriver(ctx); err != nil {
		return nil, err
	}
	packsBefore := packNames(v.gitDir)
	if err := v.fetch(ctx, remote); err != nil {
		return nil, err
	}
	theirsBranch, err := v.readRef(remoteBranchRef(remote, v.cfg.Branch))
	if err != nil {
		return nil, err
	}
	theirsLedger, err := v.readRef(remoteLedgerRef(remote))
	if err != nil {
		return nil, err
	}
	if theirsBranch.IsZero() && theirsLedger.IsZero() {
		res.UpToDate = true // an empty remote
		return res, nil
	}
	if theirsLedger.IsZero() {
		return nil, fmt.Errorf("remote %s has branch %s but no prose ledger (refs/prose/ledger): it is not a prose vault, or was pushed with plain git before its refspecs were set; push it from a full vault with `prose push %s`", remote, v.cfg.Branch, remote)
	}
	if theirsBranch.IsZero() {
		return nil, fmt.Errorf("remote %s has a prose ledger but no branch %s: the vault there uses another branch or is damaged", remote, v.cfg.Branch)
	}
	res.RemoteLedger = true
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := v.lockWriter(ctx, "prose pull")
	if err != nil {
		return nil, err
	}
	defer w.release()
	oursBranch, err := v.readRef(v.Branch())
	if err != nil {
		return nil, err
	}
	oursLedger, err := v.requireLedger()
	if err != nil {
		return nil, err
	}
	res.Branch, res.Ledger, res.From = oursBranch, oursLedger, oursLedger
	// The common pull is a fast-forward along first parents: answer it
	// in-process, from the commits the fetch brought. Anything else asks
	// git, which reads every parent.
	v.reindex() // the fetch may have added a pack
	fetched := fetchedCommits(v.gitDir, packsBefore)
	branchBehind, _, _, err := v.firstParentsTo(theirsBranch, oursBranch, fetched)
	if err != nil {
		return nil, err
	}
	ledgerBehind, n, plain, err := v.firstParentsTo(theirsLedger, oursLedger, fetched)
	if err != nil {
		return nil, err
	}
	res.Receipts = n
	if !branchBehind || !ledgerBehind || !plain {
		// The three questions are independent git calls: ask them at once.
		var berr, lerr, cerr error
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); branchBehind, berr = v.isAncestor(ctx, oursBranch, theirsBranch) }()
		go func() { defer wg.Done(); ledgerBehind, lerr = v.isAncestor(ctx, oursLedger, theirsLedger) }()
		go func() {
			defer wg.Done()
			res.Receipts, cerr = v.countReceipts(ctx, oursLedger, theirsLedger, theirsBranch)
		}()
		wg.Wait()
		if err := errors.Join(berr, lerr, cerr); err != nil {
			return nil, err
		}
	}
	if branchBehind && ledgerBehind {
		if oursBranch == theirsBranch && oursLedger == theirsLedger {
			res.UpToDate = true
			return res, nil
		}
		if err := v.fastForward(ctx, oursBranch, theirsBranch, oursLedger, theirsLedger); err != nil {
			return nil, err
		}
		res.Branch, res.Ledger = theirsBranch, theirsLedger
		return res, nil
	}
	branchAhead, err := v.isAncestor(ctx, theirsBranch, oursBranch)
	if err != nil {
		return nil, err
	}
	ledgerAhead, err := v.isAncestor(ctx, theirsLedger, oursLedger)
	if err != nil {
		return nil, err
	}
	if branchAhead && ledgerAhead {
		res.UpToDate = true
		res.LocalAhead, err = v.countReceipts(ctx, theirsLedger, oursLedger, oursBranch)
		return res, err
	}
	if branchAhead && !ledgerAhead {
		// The branch holds the remote's, the ledger does not: a merge
		// git made (git pull, git merge). Take it in, never undo it.
		if !opt.Continue {
			return nil, fmt.Errorf("the branch holds remote %s's branch (a merge git made, commit %s) but the ledger lacks its receipts: run `prose pull --continue` to record that merge in the ledger (nothing is undone); nothing changed in this vault", remote, short(oursBranch))
		}
		branch, ledger, summary, err := v.continueMerge(ctx, remote, oursBranch, theirsBranch, oursLedger, theirsLedger, ledgerBehind, &res.Pages)
		if err != nil {
			return nil, err
		}
		res.Branch, res.Ledger, res.Merged, res.Summary = branch, ledger, true, summary
		// The heads git's merge joined: the shells to render again are
		// those the merge can have changed against either.
		if mc, err := v.commit(oursBranch); err == nil && len(mc.ParentHashes) == 2 {
			res.Sides = [2]plumbing.Hash{mc.ParentHashes[0], mc.ParentHashes[1]}
		}
		return res, nil
	}
	if branchBehind || branchAhead {
		// The ledger holds the remote's and the branch does not: only a
		// hand-moved ref does that. Merge nothing. (A branch diverged
		// beside a ledger one side is ahead on is ordinary: a commit
		// without a receipt, as prose wiki review resolve makes, on one
		// side; it merges.)
		return nil, fmt.Errorf("pull refused: the branch and the ledger disagree about remote %s (one is ahead of it, the other behind); a ref was moved by hand: run `prose fsck`; nothing changed in this vault", remote)
	}
	mo, err := v.mergeDiverged(ctx, remote, oursBranch, theirsBranch, oursLedger, theirsLedger, nil, nil)
	if err != nil {
		return nil, err
	}
	res.Branch, res.Ledger, res.Merged, res.Summary, res.Pages, res.FileMerged, res.Sides = mo.Branch, mo.Ledger, true, mo.Summary, mo.Pages, mo.FileMerged, mo.Sides
	return res, nil
}

// pullRecord is the file that makes a fast-forward of two refs one step:
// written durably before either ref moves, it lets the next writer's
// repair finish the moves a crash interrupted (finishPull).
const pullRecord = "pull"

// fastForward moves the branch and the ledger from old to new values the
// remote holds, then brings the working tree along. The caller holds the
// writer lock.
func (v *Vault) fastForward(ctx context.Context, oldBranch, newBranch, oldLedger, newLedger plumbing.Hash) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Every object the new tips reach arrived with the fetch, made durable
	// by git's own fsync settings; sync the object directory once more so
	// the refs never name an object a power loss can take back.
	if v.fsync {
		if err := syncObjects(v.gitDir); err != nil {
			return err
		}
	}
	rec := fmt.Sprintf("prose pull 1\n%s %s\n%s %s\n", oldBranch, newBranch, oldLedger, newLedger)
	if err := durable.WriteFile(v.StatePath(pullRecord), []byte(rec), 0o644); err != nil {
		return fmt.Errorf("record the pull: %w", err)
	}
	if err := v.finishPull(); err != nil {
		return err
	}
	tip, err := v.readRef(v.Branch())
	if err != nil {
		return err
	}
	state, ok := v.worktreeState()
	if !ok {
		state = oldBranch
	}
	edits, err := v.syncWorktree(state, tip)
	if err != nil {
		return &LandedError{Commit: tip, Step: "bring the working tree to the pulled branch", Fix: "prose fsck", Err: err}
	}
	for _, e := range edits {
		fmt.Fprintf(os.Stderr, "prose: warning: %s was left as it is (%s); see prose fsck\n", e.Path, e.Reason)
	}
	return nil
}

// syncObjects fsyncs git's object directories, where a fetch put what it
// brought.
func syncObjects(gitDir string) error {
	objects := filepath.Join(gitDir, "objects")
	if err := durable.SyncDir(filepath.Join(objects, "pack")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return durable.SyncDir(objects)
}

// finishPull completes a recorded fast-forward: each ref still at its old
// value moves to its new one, branch first (so every ledger receipt's
// branch commit is on the branch when the ledger moves). A ref that holds
// neither value was moved by someone else and is left alone. It runs in
// repair, before the ledger's roll-forward, which would otherwise record
// again, as new ledger commits, receipts the remote's ledger already has.
func (v *Vault) finishPull() error {
	path := v.StatePath(pullRecord)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) == 3 && lines[0] == "prose pull 1" {
		for i, name := range []plumbing.ReferenceName{v.Branch(), LedgerRef} {
			f := strings.Fields(lines[i+1])
			if len(f) != 2 || !plumbing.IsHash(f[0]) || !plumbing.IsHash(f[1]) {
				break
			}
			old, new := plumbing.NewHash(f[0]), plumbing.NewHash(f[1])
			cur, err := v.readRef(name)
			if err != nil {
				return err
			}
			if cur != old || cur == new {
				continue
			}
			if _, err := v.commit(new); err != nil {
				return fmt.Errorf("finish the pull recorded in %s: commit %s is missing (%v); fetch again with `prose pull`", path, new, err)
			}
			if _, err := v.moveRef(name, old, new); err != nil {
				return fmt.Errorf("finish the pull: %w", err)
			}
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// PushResult says what a push did.
type PushResult struct {
	Remote     string   `json:"remote"`
	Receipts   int      `json:"receipts"`   // receipts the remote lacked
	UpToDate   bool     `json:"up_to_date"` // the remote had everything
	DryRun     bool     `json:"dry_run"`
	Configured []string `json:"configured"`
	Branch     string   `json:"branch"`
	Ledger     string   `json:"ledger"`
}

// Push sends the branch and the ledger to remote, both or neither (git's
// atomic push), as they stood at one instant under the writer lock. It
// fetches first and refuses, before sending anything, when the remote
// holds receipts this vault lacks; git's own non-forced update refuses the
// same race after the check. With dryRun nothing is sent.
func (v *Vault) Push(ctx context.Context, remote string, dryRun bool) (*PushResult, error) {
	res := &PushResult{Remote: remote, DryRun: dryRun}
	var err error
	if res.Configured, err = v.ConfigureRemote(ctx, remote); err != nil {
		return nil, err
	}
	if err := v.fetch(ctx, remote); err != nil {
		return nil, err
	}
	// A snapshot of both refs under the lock, after repair has rolled the
	// ledger forward: never a branch whose receipt the ledger lacks.
	w, err := v.lockWriter(ctx, "prose push")
	if err != nil {
		return nil, err
	}
	branch, err := v.readRef(v.Branch())
	if err == nil {
		var ledger plumbing.Hash
		if ledger, err = v.requireLedger(); err == nil {
			res.Branch, res.Ledger = branch.String(), ledger.String()
		}
	}
	w.release()
	if err != nil {
		return nil, err
	}
	branch, ledger := plumbing.NewHash(res.Branch), plumbing.NewHash(res.Ledger)
	theirsBranch, err := v.readRef(remoteBranchRef(remote, v.cfg.Branch))
	if err != nil {
		return nil, err
	}
	theirsLedger, err := v.readRef(remoteLedgerRef(remote))
	if err != nil {
		return nil, err
	}
	ledgerOK, err := v.isAncestor(ctx, theirsLedger, ledger)
	if err != nil {
		return nil, err
	}
	branchOK, err := v.isAncestor(ctx, theirsBranch, branch)
	if err != nil {
		return nil, err
	}
	if ledgerOK && !branchOK {
		return nil, fmt.Errorf("push refused: remote %s's branch %s has commits this vault lacks (%s is not in its history); a push would lose them, and prose never forces: run `prose pull %s` first", remote, v.cfg.Branch, short(theirsBranch), remote)
	}
	if !ledgerOK {
		d := &DivergedError{Remote: remote, Ours: ledger, Theirs: theirsLedger}
		if d.TheirOnly, err = v.countReceipts(ctx, ledger, theirsLedger, theirsBranch); err != nil {
			return nil, err
		}
		return nil, d
	}
	if theirsBranch == branch && theirsLedger == ledger {
		res.UpToDate = true
		return res, nil
	}
	if res.Receipts, err = v.countReceipts(ctx, theirsLedger, ledger, branch); err != nil {
		return nil, err
	}
	args := []string{"push", "--quiet", "--atomic", "--porcelain"}
	if dryRun {
		args = append(args, "--dry-run")
	}
	args = append(args, remote, branch.String()+":refs/heads/"+v.cfg.Branch, ledger.String()+":"+string(LedgerRef))
	if out, err := runGit(ctx, v.root, "push to "+remote, args...); err != nil {
		// --porcelain reports each ref on stdout, "!" for one refused.
		var ge *GitError
		if errors.As(err, &ge) && (strings.HasPrefix(out, "!") || strings.Contains(out, "\n!")) {
			why := rejectedWhy(out, ge.Stderr)
			return nil, fmt.Errorf("push rejected by remote %s: %s; nothing changed in this vault (if the remote moved meanwhile, run `prose pull %s` and push again)", remote, why, remote)
		}
		return nil, remoteError(remote, err)
	}
	if !dryRun {
		// Record what the remote now holds, as git push does for its
		// remote-tracking refs; a failure here loses nothing (the next
		// fetch writes them).
		_, _ = runGit(ctx, v.root, "record the push", "update-ref", string(remoteBranchRef(remote, v.cfg.Branch)), branch.String())
		_, _ = runGit(ctx, v.root, "record the push", "update-ref", string(remoteLedgerRef(remote)), ledger.String())
	}
	return res, nil
}

// CloneOptions tune Clone.
type CloneOptions struct {
	Options
	Remote string // the remote's name, "origin" by default
}

// Clone makes a vault at dir from the vault at url: a git clone of its
// branch, the remote's refspecs, its ledger fetched and made the local
// ledger. dir must not exist or be empty; when the clone fails, what it
// made is removed.
func Clone(ctx context.Context, url, dir string, opt CloneOptions) (*Vault, error) {
	remote := opt.Remote
	if remote == "" {
		remote = "origin"
	}
	if err := checkRemoteName(remote); err != nil {
		return nil, err
	}
	if url == "" || strings.HasPrefix(url, "-") {
		return nil, fmt.Errorf("clone URL %q is not usable: give a URL or path such as https://host/team/vault.git or ../vault.git", url)
	}
	if strings.HasPrefix(dir, "-") {
		return nil, fmt.Errorf("clone directory %q looks like an option: write ./%s", dir, dir)
	}
	made := false
	if ents, err := os.ReadDir(dir); err == nil {
		if len(ents) > 0 {
			return nil, fmt.Errorf("cannot clone into %s: the directory is not empty; name a new directory", dir)
		}
	} else if errors.Is(err, os.ErrNotExist) {
		made = true
	} else {
		return nil, err
	}
	cleanup := func() {
		if made {
			os.RemoveAll(dir)
		} else if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(abs)
	if _, err := runGit(ctx, parent, "clone "+url, "clone", "--quiet", "--no-checkout", "--origin", remote, "--", url, abs); err != nil {
		cleanup()
		var ge *GitError
		if errors.As(err, &ge) {
			return nil, fmt.Errorf("cannot clone %s: %s; check the URL, the network and your credentials (nothing was left in %s)", url, lastLines(strings.TrimSpace(ge.Stderr), 3), dir)
		}
		return nil, err
	}
	v, err := adoptClone(ctx, abs, remote, opt.Options)
	if err != nil {
		cleanup()
		return nil, err
	}
	return v, nil
}

// adoptClone makes the fresh clone at root a vault: refspecs, the ledger,
// the branch checked out the way prose checks out.
func adoptClone(ctx context.Context, root, remote string, opt Options) (*Vault, error) {
	// The remote's HEAD names its branch; prose.yaml on it says which
	// branch the vault keeps.
	heads, err := gitLines(ctx, root, "read the clone", "for-each-ref", "--format=%(refname)", "refs/remotes/"+remote+"/")
	if err != nil {
		return nil, err
	}
	if len(heads) == 0 {
		return nil, fmt.Errorf("the remote is empty: nothing to clone; make a vault with `prose init DIR`, then `prose remote add %s URL` and `prose push`", remote)
	}
	branch := ""
	for _, cand := range []string{"main", "master"} {
		for _, h := range heads {
			if h == "refs/remotes/"+remote+"/"+cand {
				branch = cand
			}
		}
		if branch != "" {
			break
		}
	}
	if b, err := gitLines(ctx, root, "read the clone", "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && len(b) == 1 {
		if _, err := runGit(ctx, root, "read the clone", "rev-parse", "--verify", "--quiet", "refs/remotes/"+remote+"/"+b[0]); err == nil {
			branch = b[0]
		}
	}
	if branch == "" {
		return nil, fmt.Errorf("the remote has no branch main: it is not a prose vault")
	}
	yaml, err := runGit(ctx, root, "read the clone", "show", "refs/remotes/"+remote+"/"+branch+":prose.yaml")
	if err != nil {
		return nil, fmt.Errorf("the remote's branch %s has no prose.yaml: it is not a prose vault (clone it with git clone)", branch)
	}
	cfg, err := parseConfig("prose.yaml", []byte(yaml))
	if err != nil {
		return nil, fmt.Errorf("the remote's prose.yaml: %w", err)
	}
	if cfg.Branch != branch {
		branch = cfg.Branch
		if _, err := runGit(ctx, root, "read the clone", "rev-parse", "--verify", "--quiet", "refs/remotes/"+remote+"/"+branch); err != nil {
			return nil, fmt.Errorf("the remote's prose.yaml names branch %s, which the remote lacks", branch)
		}
	}
	fetch, push := Refspecs(remote, branch)
	if _, err := runGit(ctx, root, "configure the clone", "config", "--unset-all", "remote."+remote+".fetch"); err != nil {
		return nil, err
	}
	for _, l := range fetch {
		if _, err := runGit(ctx, root, "configure the clone", "config", "--add", "remote."+remote+".fetch", l); err != nil {
			return nil, err
		}
	}
	for _, l := range push {
		if _, err := runGit(ctx, root, "configure the clone", "config", "--add", "remote."+remote+".push", l); err != nil {
			return nil, err
		}
	}
	if _, err := runGit(ctx, root, "fetch the ledger", "fetch", "--quiet", "--no-tags", remote, fetch[1]); err != nil {
		return nil, remoteError(remote, err)
	}
	ledger, err := gitLines(ctx, root, "read the clone", "rev-parse", "--verify", "--quiet", string(remoteLedgerRef(remote)))
	if err != nil || len(ledger) != 1 {
		return nil, fmt.Errorf("the remote has no prose ledger (refs/prose/ledger): it is not a prose vault, or its ledger was never pushed; push it from a full vault with `prose push`")
	}
	tip, err := gitLines(ctx, root, "read the clone", "rev-parse", "--verify", "refs/remotes/"+remote+"/"+branch)
	if err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"update-ref", "refs/heads/" + branch, tip[0]},
		{"update-ref", string(LedgerRef), ledger[0]},
		{"symbolic-ref", "HEAD", "refs/heads/" + branch},
		{"branch", "--quiet", "--set-upstream-to=" + remote + "/" + branch, branch},
		{"reset", "--quiet", "--hard", "refs/heads/" + branch},
	} {
		if _, err := runGit(ctx, root, "set up the clone", args...); err != nil {
			return nil, err
		}
	}
	v, err := Open(root, opt)
	if err != nil {
		return nil, err
	}
	if _, err := v.RegisterMergeDriver(ctx); err != nil {
		v.Close()
		return nil, err
	}
	// .prose/ is new: record the checkout, as repair does for a clone.
	if err := v.Repair(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// rejectedWhy gathers why a push was refused: the remote's own messages
// (a hook's "remote: …" lines) and git's reason for each refused ref.
func rejectedWhy(porcelain, stderr string) string {
	var why []string
	for _, l := range strings.Split(stderr, "\n") {
		if m, ok := strings.CutPrefix(l, "remote: "); ok {
			if m = strings.TrimSpace(m); m != "" {
				why = append(why, m)
			}
		}
	}
	for _, l := range strings.Split(porcelain, "\n") {
		if f := strings.Split(l, "\t"); len(f) == 3 && strings.HasPrefix(f[0], "!") {
			ref, _, _ := strings.Cut(f[1], ":")
			_, to, _ := strings.Cut(f[1], ":")
			if to == "" {
				to = ref
			}
			why = append(why, to+" "+f[2])
		}
	}
	if len(why) == 0 {
		return lastLines(strings.TrimSpace(stderr), 3)
	}
	return strings.Join(why, "; ")
}
