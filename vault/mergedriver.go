package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/prose-store/prose/internal/durable"
)

// The merge driver gives a plain `git merge` or `git pull` prose's merge
// of the files beside and inside the wiki (docs/sync.md, "A merge git
// made"): git runs `prose merge-driver %O %A %B %P` for every path the
// attributes give `merge=prose`.

// MergeDriverName is the driver's name in the attributes (merge=prose)
// and in the repository config (merge.prose.*).
const MergeDriverName = "prose"

// MergeDriverCommand is merge.prose.driver: git substitutes the base, ours
// (the result is written over it), theirs and the path.
const MergeDriverCommand = "prose merge-driver %O %A %B %P"

// mergeDriverLabel is merge.prose.name, what git prints for the driver.
const mergeDriverLabel = "prose: wiki pages slot by slot, review queue and source catalog by rule"

// MergeAttributes are the attribute lines that route a path to the driver:
// every wiki page, the review queue and the source catalog.
var MergeAttributes = []string{
	"/published/wiki/**/*.html merge=" + MergeDriverName,
	"/review/queue.json merge=" + MergeDriverName,
	"/sources/index.json merge=" + MergeDriverName,
	"/sources/pages/*.tsv merge=" + MergeDriverName,
}

const attributesHeader = "# prose merge-driver: wiki pages merge slot by slot, the review queue and the source catalog by rule (docs/sync.md)\n"

// AttributesFile is the committed attributes file prose init writes.
const AttributesFile = ".gitattributes"

// attributesText is the attributes file prose writes.
func attributesText() string {
	return attributesHeader + strings.Join(MergeAttributes, "\n") + "\n"
}

// hasAttributeLines reports which of MergeAttributes data lacks.
func missingAttributeLines(data []byte) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.Join(strings.Fields(l), " ")] = true
	}
	var missing []string
	for _, l := range MergeAttributes {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	return missing
}

// infoAttributes is the repository's own attributes file, which git reads
// before the committed .gitattributes and which never travels.
func (v *Vault) infoAttributes() string { return filepath.Join(v.gitDir, "info", "attributes") }

// MergeDriverMissing says what the vault lacks for git to use the merge
// driver: config keys (merge.prose.driver, merge.prose.name) and attribute
// lines that neither the committed .gitattributes nor .git/info/attributes
// holds. Empty when the driver is registered.
func (v *Vault) MergeDriverMissing(ctx context.Context) ([]string, error) {
	var missing []string
	// Read in-process (every pull asks): the repository's own config file.
	data, err := os.ReadFile(filepath.Join(v.gitDir, "config"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return nil, fmt.Errorf("read %s: %w; fix the file with `git config --edit`", filepath.Join(v.gitDir, "config"), err)
	}
	sub := cfg.Section("merge").Subsection(MergeDriverName)
	if sub.Option("driver") != MergeDriverCommand {
		missing = append(missing, "config merge.prose.driver = "+MergeDriverCommand)
	}
	if sub.Option("name") == "" {
		missing = append(missing, "config merge.prose.name")
	}
	attrs, err := v.attributesNow()
	if err != nil {
		return nil, err
	}
	for _, l := range missingAttributeLines(attrs) {
		missing = append(missing, "attribute "+l)
	}
	return missing, nil
}

// attributesNow is the committed .gitattributes (the working tree's copy)
// followed by .git/info/attributes.
func (v *Vault) attributesNow() ([]byte, error) {
	var all []byte
	for _, p := range []string{filepath.Join(v.root, AttributesFile), v.infoAttributes()} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		all = append(append(all, data...), '\n')
	}
	return all, nil
}

// RegisterMergeDriver writes what MergeDriverMissing names: the config
// keys, and the attribute lines into .git/info/attributes (the
// repository's own file, so registering changes no committed file and no
// merge of .gitattributes is ever needed). It returns what it wrote.
func (v *Vault) RegisterMergeDriver(ctx context.Context) ([]string, error) {
	missing, err := v.MergeDriverMissing(ctx)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	var attrs []string
	for _, m := range missing {
		switch {
		case strings.HasPrefix(m, "config merge.prose.driver"):
			if _, err := runGit(ctx, v.root, "register the merge driver", "config", "merge.prose.driver", MergeDriverCommand); err != nil {
				return nil, err
			}
		case strings.HasPrefix(m, "config merge.prose.name"):
			if _, err := runGit(ctx, v.root, "register the merge driver", "config", "merge.prose.name", mergeDriverLabel); err != nil {
				return nil, err
			}
		case strings.HasPrefix(m, "attribute "):
			attrs = append(attrs, strings.TrimPrefix(m, "attribute "))
		}
	}
	if len(attrs) > 0 {
		path := v.infoAttributes()
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		var b bytes.Buffer
		b.Write(old)
		if len(old) > 0 && old[len(old)-1] != '\n' {
			b.WriteByte('\n')
		}
		if !bytes.Contains(old, []byte(attributesHeader)) {
			b.WriteString(attributesHeader)
		}
		b.WriteString(strings.Join(attrs, "\n") + "\n")
		if err := durable.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := durable.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("register the merge driver in %s: %w", path, err)
		}
	}
	return missing, nil
}

// ErrGitMergePending reports a write refused because the branch holds a
// merge git made that the ledger has not taken in.
var ErrGitMergePending = errors.New("a merge git made waits for prose pull --continue")

// GitMergePendingError names the merge commit and the remote.
type GitMergePendingError struct {
	Merge  plumbing.Hash
	Remote string
}

func (e *GitMergePendingError) Error() string {
	return fmt.Sprintf("the branch holds a merge git made (commit %s) that the ledger has not taken in: run `prose pull --continue` (or `prose pull --continue %s`) first (it records the merge and its merge receipts; nothing is undone); nothing was written", short(e.Merge), e.Remote)
}

func (e *GitMergePendingError) Unwrap() error { return ErrGitMergePending }

// mergeInProgressError is a write refused while git's own merge is still
// in progress (.git/MERGE_HEAD): one sentence, the sentinel unwrapped
// rather than repeated.
type mergeInProgressError struct{}

func (mergeInProgressError) Error() string {
	return "a git merge is in progress (.git/MERGE_HEAD): settle its conflicts (`git status` names them), `git add` and `git commit`, then run `prose pull --continue`; or abandon it with `git merge --abort`; nothing was written"
}

func (mergeInProgressError) Unwrap() error { return ErrGitMergePending }

// pendingWalk bounds the first-parent walk that looks for a merge git made
// above the ledger's newest branch commit.
const pendingWalk = 64

// checkGitMerge refuses a write while the branch holds a merge git made
// (git pull, git merge) that prose pull --continue has not taken in: a
// write on top of it would record receipts against a ledger that does not
// describe the merged nodes. The common case costs two reads: the
// ledger's newest commit names the branch tip.
func (v *Vault) checkGitMerge(ctx context.Context) error {
	if _, err := os.Lstat(filepath.Join(v.gitDir, "MERGE_HEAD")); err == nil {
		return mergeInProgressError{}
	}
	tip, err := v.readRef(v.Branch())
	if err != nil || tip.IsZero() {
		return err
	}
	ledger, err := v.readRef(LedgerRef)
	if err != nil || ledger.IsZero() {
		return err
	}
	named := plumbing.ZeroHash // the branch commit the ledger's tip names
	if lc, err := v.commit(ledger); err == nil {
		switch {
		case isLedgerMerge(lc.ParentHashes, []byte(lc.Message)):
			named = lc.ParentHashes[2]
		case len(lc.ParentHashes) == 2:
			named = lc.ParentHashes[1]
		}
	}
	if named == tip {
		return nil
	}
	// Walk the branch's first parents above the newest receipt commit,
	// looking for a merge.
	var merge plumbing.Hash
	h := tip
	for i := 0; i < pendingWalk && !h.IsZero() && h != named; i++ {
		c, err := v.commit(h)
		if err != nil {
			return err
		}
		if _, ok, _ := parseReceiptMessage(c.Message); ok {
			return nil
		}
		if len(c.ParentHashes) > 1 {
			merge = h
			break
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	if merge.IsZero() {
		return nil
	}
	// Taken in when the newest receipt commit the merge brought (on its
	// second parent's first parents) is in the history of the newest
	// branch commit the ledger names: prose pull --continue's ledger merge
	// names the merge itself, and a ledger that fast-forwarded to the
	// remote's names the remote's receipts.
	mc, err := v.commit(merge)
	if err != nil {
		return err
	}
	brought, _, err := v.newestReceiptCommit(mc.ParentHashes[1])
	if err != nil || brought == nil {
		return err
	}
	known, err := v.ledgerBranchCommit(ledger)
	if err != nil {
		return err
	}
	if known == brought.Hash {
		return nil
	}
	if !known.IsZero() {
		if in, err := v.isAncestor(ctx, brought.Hash, known); err != nil || in {
			return err
		}
	}
	remote := "origin"
	if names, err := v.remoteNames(); err == nil {
		for _, r := range names {
			if tb, err := v.readRef(remoteBranchRef(r, v.cfg.Branch)); err == nil && tb == mc.ParentHashes[1] {
				remote = r
			}
		}
	}
	return &GitMergePendingError{Merge: merge, Remote: remote}
}

// ledgerBranchCommit is the newest branch commit the ledger at tip names:
// the branch commit of its newest rendered receipt, or the branch merge
// of its newest ledger merge. Zero when none is near.
func (v *Vault) ledgerBranchCommit(tip plumbing.Hash) (plumbing.Hash, error) {
	h := tip
	for i := 0; i < 4096 && !h.IsZero(); i++ {
		c, err := v.commit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case isLedgerMerge(c.ParentHashes, []byte(c.Message)):
			return c.ParentHashes[2], nil
		case len(c.ParentHashes) == 2:
			return c.ParentHashes[1], nil
		case len(c.ParentHashes) == 0:
			return plumbing.ZeroHash, nil
		}
		h = c.ParentHashes[0]
	}
	return plumbing.ZeroHash, nil
}

// remoteNames lists the remotes of the repository's config, read
// in-process.
func (v *Vault) remoteNames() ([]string, error) {
	data, err := os.ReadFile(filepath.Join(v.gitDir, "config"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return nil, fmt.Errorf("read %s: %w; fix the file with `git config --edit`", filepath.Join(v.gitDir, "config"), err)
	}
	var names []string
	for _, s := range cfg.Section("remote").Subsections {
		if checkRemoteName(s.Name) == nil {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

// CheckGitMerge is the check every writer makes under the lock, for a
// writer that wants to refuse before its own work starts (the wiki, an
// ingest): an error naming prose pull --continue while a merge git made
// waits for it.
func (v *Vault) CheckGitMerge(ctx context.Context) error { return v.checkGitMerge(ctx) }

// lockWriterChecked is lockWriter for the writers of state (publish,
// ingest's writes, wiki writes, receipts): it also refuses while a merge
// git made waits for prose pull --continue.
func (v *Vault) lockWriterChecked(ctx context.Context, who string) (*writer, error) {
	w, err := v.lockWriter(ctx, who)
	if err != nil {
		return nil, err
	}
	if err := v.checkGitMerge(ctx); err != nil {
		w.release()
		return nil, err
	}
	// A `git commit` that landed since the repair moved the branch past
	// the working tree; the write would take prose's own last files for
	// hand edits of the new tip. Bring the working tree along once more.
	for try := 0; try < 3 && !v.worktreeInStep(); try++ {
		if err := v.repair(); err != nil {
			w.release()
			return nil, err
		}
	}
	return w, nil
}
