package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/durable"
)

// InitOptions choose the settings of a new vault.
type InitOptions struct {
	Options
	Hash   canon.Algorithm // default blake3
	Branch string          // default main
}

const gitignore = "# prose keeps local state here: objects, locks, caches\n/.prose/\n"

// Init creates a vault in dir: a git repository on branch main with
// prose.yaml, .gitignore and a first commit. dir may exist but must not
// already hold a git repository, a vault or a prose.yaml. Files already in
// dir stay, untracked; a .gitignore there is kept (and committed), with the
// rule for .prose/ appended when it lacks one.
func Init(dir string, opt InitOptions) (*Vault, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if isVault(root) {
		return nil, fmt.Errorf("%s is already a prose vault", dir)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		return nil, fmt.Errorf("%s is already a git repository: a vault is a git repository of its own, so prose init does not take one over; run `prose init DIR` with a new directory (outside it, or a subdirectory you add to its .gitignore)", dir)
	}
	if _, err := os.Lstat(filepath.Join(root, ConfigFile)); err == nil {
		return nil, fmt.Errorf("%s already has a %s (but no .git); prose init would overwrite it: move it away, or restore the vault's .git from a clone", dir, ConfigFile)
	}
	ignore, ignoreMode, writeIgnore, err := initGitignore(root)
	if err != nil {
		return nil, err
	}
	// The committed attributes route the wiki's pages, the review queue
	// and the catalog to the merge driver, in every clone. A .gitattributes
	// the directory already holds is the user's: the lines go into
	// .git/info/attributes instead.
	_, aerr := os.Lstat(filepath.Join(root, AttributesFile))
	commitAttrs := errors.Is(aerr, os.ErrNotExist)
	cfg := defaultConfig()
	if opt.Hash != "" {
		if _, err := canon.ParseAlgorithm(string(opt.Hash)); err != nil {
			return nil, fmt.Errorf("--hash %q: %v", opt.Hash, err)
		}
		cfg.Hash = string(opt.Hash)
	}
	if opt.Branch != "" {
		if !plumbing.NewBranchReferenceName(opt.Branch).IsBranch() || opt.Branch != filepath.Clean(opt.Branch) {
			return nil, fmt.Errorf("branch name %q is not valid", opt.Branch)
		}
		cfg.Branch = opt.Branch
	}
	gitDir := filepath.Join(root, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "refs/prose", "info"} {
		if err := durable.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
	}
	if err := makeFanOut(gitDir); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	gitConfig := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n" +
		// The merge driver (docs/sync.md): a plain git merge of wiki pages,
		// the review queue and the source catalog goes through prose.
		"[merge \"" + MergeDriverName + "\"]\n\tname = " + mergeDriverLabel + "\n\tdriver = " + MergeDriverCommand + "\n"
	files := map[string]string{
		"config":       gitConfig,
		"HEAD":         "ref: refs/heads/" + cfg.Branch + "\n",
		"description":  "prose vault\n",
		"info/exclude": "",
	}
	if !commitAttrs {
		files["info/attributes"] = attributesText()
	}
	for name, content := range files {
		if err := durable.WriteFile(filepath.Join(gitDir, name), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
	}
	v, err := open(root, cfg, opt.Options)
	if err != nil {
		return nil, err
	}
	// The first commit holds prose.yaml and .gitignore; the working tree
	// gets the same files.
	b := v.newBatch()
	yml := cfg.encode()
	yh, err := b.put(plumbing.BlobObject, yml)
	if err != nil {
		return nil, err
	}
	gh, err := b.put(plumbing.BlobObject, ignore)
	if err != nil {
		return nil, err
	}
	entries := []object.TreeEntry{
		{Name: ".gitignore", Mode: ignoreMode, Hash: gh},
		{Name: ConfigFile, Mode: filemode.Regular, Hash: yh},
	}
	if commitAttrs {
		ah, err := b.put(plumbing.BlobObject, []byte(attributesText()))
		if err != nil {
			return nil, err
		}
		entries = append([]object.TreeEntry{{Name: AttributesFile, Mode: filemode.Regular, Hash: ah}}, entries...)
	}
	th, err := b.put(plumbing.TreeObject, encodeTree(entries))
	if err != nil {
		return nil, err
	}
	ch, err := b.putCommit(&object.Commit{
		Author:    v.signature(time.Now()),
		Committer: v.signature(time.Now()),
		Message:   "Initialize prose vault\n",
		TreeHash:  th,
	})
	if err != nil {
		return nil, err
	}
	empty, err := b.put(plumbing.TreeObject, nil)
	if err != nil {
		return nil, err
	}
	lh, err := b.putCommit(&object.Commit{
		Author:    v.signature(time.Now()),
		Committer: v.signature(time.Now()),
		Message:   "prose ledger\n\nEvery receipt of this vault is a commit on this first-parent chain.\n",
		TreeHash:  empty,
	})
	if err != nil {
		return nil, err
	}
	if err := b.flush(); err != nil {
		return nil, err
	}
	files = map[string]string{ConfigFile: string(yml)}
	if writeIgnore {
		files[".gitignore"] = string(ignore)
	}
	if commitAttrs {
		files[AttributesFile] = attributesText()
	}
	for name, data := range files {
		if err := durable.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
	}
	if _, err := v.moveRef(v.Branch(), plumbing.ZeroHash, ch); err != nil {
		return nil, err
	}
	if _, err := v.moveRef(LedgerRef, plumbing.ZeroHash, lh); err != nil {
		return nil, err
	}
	if _, err := v.syncWorktree(plumbing.ZeroHash, ch); err != nil {
		return nil, err
	}
	return v, nil
}

// initGitignore returns the .gitignore the first commit holds and whether
// it must be written to root: a user's .gitignore is kept, with prose's rule
// appended when it does not ignore /.prose/ yet.
func initGitignore(root string) (data []byte, mode filemode.FileMode, write bool, err error) {
	path := filepath.Join(root, ".gitignore")
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return []byte(gitignore), filemode.Regular, true, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("init: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, false, fmt.Errorf("init: %s is not a regular file; prose needs to add the rule /.prose/ to it", path)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("init: %w", err)
	}
	if ignoresStateDir(old) {
		mode = filemode.Regular
		if fi.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
		return old, mode, false, nil
	}
	add := gitignore
	if len(old) > 0 {
		if old[len(old)-1] != '\n' {
			add = "\n" + add
		}
		add = "\n" + add
	}
	if bytes.Contains(old, []byte("\r\n")) {
		add = strings.ReplaceAll(add, "\n", "\r\n")
	}
	return append(old, add...), filemode.Regular, true, nil
}

// ignoresStateDir reports whether a .gitignore has a line that ignores the
// vault's .prose directory.
func ignoresStateDir(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case "/" + StateDir + "/", "/" + StateDir, StateDir + "/", StateDir:
			return true
		}
	}
	return false
}

// signature is the identity prose commits as: prose.yaml's identity, else
// the user's git identity, else prose <prose@localhost>.
func (v *Vault) signature(when time.Time) object.Signature {
	name, email := v.cfg.Identity.Name, v.cfg.Identity.Email
	if name == "" || email == "" {
		if c, err := config.LoadConfig(config.GlobalScope); err == nil {
			if name == "" {
				name = c.User.Name
			}
			if email == "" {
				email = c.User.Email
			}
		}
	}
	if name == "" {
		name = "prose"
	}
	if email == "" {
		email = "prose@localhost"
	}
	return object.Signature{Name: name, Email: email, When: when}
}

// putCommit encodes and writes a commit object.
func (b *objectBatch) putCommit(c *object.Commit) (plumbing.Hash, error) {
	// The commit's trees are written now, the trees it does not reach
	// never (see objectBatch.held).
	if err := b.writeReached(c.TreeHash); err != nil {
		return plumbing.ZeroHash, err
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	r, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.put(plumbing.CommitObject, data)
}

// makeFanOut makes the 256 loose-object directories (objects/00 … ff) of
// a new vault. A vault's first pages come in one pack, so without them
// the first hundred or so writes each make several (a write's ≈ 11 loose
// objects land in as many directories), and making a directory is the
// dearest step of a small write on ext4 (an inode allocation that skips
// every recently freed inode: 100–400 µs each on a busy machine). A vault
// makes each of them once either way; here they are made before the first
// write. Nothing depends on them: renameObject makes one that is missing
// (git gc removes the empty ones), and the first syncfs of a write makes
// one it made durable with the objects in it, so they are not flushed here.
func makeFanOut(gitDir string) error {
	objects := filepath.Join(gitDir, "objects")
	const hexDigits = "0123456789abcdef"
	for i := range 256 {
		name := string([]byte{hexDigits[i>>4], hexDigits[i&15]})
		if err := os.Mkdir(filepath.Join(objects, name), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
