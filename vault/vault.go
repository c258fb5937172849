package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/internal/lock"
)

// StateDir is the vault's local, git-ignored directory.
const StateDir = ".prose"

// LedgerRef is the ref whose first-parent chain holds every receipt.
const LedgerRef = "refs/prose/ledger"

// DefaultLockTimeout is how long a writer waits for the vault lock.
const DefaultLockTimeout = 60 * time.Second

// ErrNotVault reports a directory that is not inside a vault.
var ErrNotVault = errors.New("not a prose vault")

// Options tune how a vault is opened.
type Options struct {
	// LockTimeout bounds the wait for the writer lock (default 60 s).
	LockTimeout time.Duration
	// NoFsync skips fsync calls. Only benchmarks that measure fsync's cost
	// and tests on throwaway vaults set it.
	NoFsync bool
}

// Vault is an open vault. Its methods are safe for concurrent use inside one
// process; across processes the writer lock serializes writers.
type Vault struct {
	root    string
	gitDir  string
	cfg     *Config
	opt     Options
	fsync   bool
	mu      sync.Mutex // guards storage: all go-git access
	storage *filesystem.Storage
}

// Root is the vault's top directory (the git work tree).
func (v *Vault) Root() string { return v.root }

// GitDir is the vault's .git directory.
func (v *Vault) GitDir() string { return v.gitDir }

// Config is the vault's parsed prose.yaml.
func (v *Vault) Config() *Config { return v.cfg }

// Algorithm is the vault's hash algorithm for fingerprints and receipts.
func (v *Vault) Algorithm() canon.Algorithm { return v.cfg.Algorithm() }

// Branch is the full name of the branch that holds the state history.
func (v *Vault) Branch() plumbing.ReferenceName {
	return plumbing.NewBranchReferenceName(v.cfg.Branch)
}

// StatePath joins elem under the vault's .prose directory.
func (v *Vault) StatePath(elem ...string) string {
	return filepath.Join(append([]string{v.root, StateDir}, elem...)...)
}

// Find returns the vault root that contains start, walking up.
func Find(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if isVault(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no prose.yaml with a .git directory in %s or any parent; run `prose init DIR` or pass --vault DIR", ErrNotVault, start)
		}
		dir = parent
	}
}

func isVault(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil && fi.IsDir()
}

// Open opens the vault rooted at root.
func Open(root string, opt Options) (*Vault, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if !isVault(abs) {
		return nil, fmt.Errorf("%w: %s has no prose.yaml and .git; run `prose init %s` first", ErrNotVault, root, root)
	}
	cfg, err := loadConfig(abs)
	if err != nil {
		return nil, err
	}
	return open(abs, cfg, opt)
}

func open(root string, cfg *Config, opt Options) (*Vault, error) {
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = DefaultLockTimeout
	}
	gitDir := filepath.Join(root, ".git")
	st := filesystem.NewStorageWithOptions(osfs.New(gitDir), cache.NewObjectLRU(64<<20), filesystem.Options{})
	if err := os.MkdirAll(filepath.Join(root, StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	return &Vault{root: root, gitDir: gitDir, cfg: cfg, opt: opt, fsync: !opt.NoFsync, storage: st}, nil
}

// Close releases resources held by the vault.
func (v *Vault) Close() error { return nil }

// writer is held by every command that changes the vault.
type writer struct {
	v *Vault
	l *lock.Lock
}

// lockWriter takes the vault's writer lock, waiting up to the lock timeout,
// then repairs whatever a crashed writer left behind.
func (v *Vault) lockWriter(ctx context.Context, who string) (*writer, error) {
	l, err := lock.Acquire(ctx, v.StatePath("lock"), v.opt.LockTimeout, who)
	if err != nil {
		return nil, err
	}
	w := &writer{v: v, l: l}
	if err := v.repair(); err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

func (w *writer) release() {
	if w.l != nil {
		_ = w.l.Release()
		w.l = nil
	}
}

// readRef returns the hash a ref points at, or the zero hash when the ref
// does not exist yet.
func (v *Vault) readRef(name plumbing.ReferenceName) (plumbing.Hash, error) {
	data, err := os.ReadFile(filepath.Join(v.gitDir, filepath.FromSlash(string(name))))
	if err == nil {
		s := string(data)
		if len(s) >= 40 && plumbing.IsHash(s[:40]) {
			return plumbing.NewHash(s[:40]), nil
		}
		return plumbing.ZeroHash, fmt.Errorf("ref %s is damaged (%q); restore it from the reflog or a remote", name, s)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, err := v.storage.Reference(name) // packed refs
	if err != nil {
		return plumbing.ZeroHash, nil
	}
	return ref.Hash(), nil
}

// writeRef moves a ref atomically and durably: temp file, fsync, rename,
// directory fsync. go-git rewrites loose refs in place, which a crash can
// tear, so refs never go through it.
func (v *Vault) writeRef(name plumbing.ReferenceName, h plumbing.Hash) error {
	path := filepath.Join(v.gitDir, filepath.FromSlash(string(name)))
	if err := durable.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("move %s: %w", name, err)
	}
	if v.fsync {
		if err := durable.WriteFile(path, []byte(h.String()+"\n"), 0o644); err != nil {
			return fmt.Errorf("move %s: %w", name, err)
		}
		return nil
	}
	tmp := path + ".prose-tmp"
	if err := os.WriteFile(tmp, []byte(h.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("move %s: %w", name, err)
	}
	return os.Rename(tmp, path)
}
