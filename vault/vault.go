package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
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
	// LockTimeout bounds the wait for the writer lock: 0 means the default
	// (60 s), a negative value means one try without waiting.
	LockTimeout time.Duration
	// NoFsync skips fsync calls. Only benchmarks that measure fsync's cost
	// and tests on throwaway vaults set it.
	NoFsync bool
	// HandCommits decides, per node, what a publish does with commits made
	// outside prose under published/<node>/; nil restores every node
	// (RestoreHandCommits).
	HandCommits func(node string) HandCommitPolicy
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
	packs   *packFS // the packfiles storage reads, opened once
	// coStorage reads the blobs a checkout writes out (copyBlob), guarded
	// by mu as storage is.
	coStorage *filesystem.Storage

	// recent holds the content of the blobs the last write of this Vault
	// put from bytes it held (a node write's pages, a publish's small
	// files), once they are durable: what a caller reads back right after
	// its write (the wiki's search index, its catalog) is served without
	// inflating it from a pack.
	recentMu sync.Mutex
	recent   map[plumbing.Hash][]byte
	// storeBlobReads, storeCommitReads and storeTreeReads count the
	// objects read from the object store (tests); commits and trees keep
	// the last ones decoded.
	storeBlobReads, storeCommitReads, storeTreeReads atomic.Int64
	// informedFast counts informed publishes decided without a scan
	// (landed or refused).
	informedFast atomic.Int64
	// filesSummed counts files whose contribution to a node's sums was
	// computed from their content (not taken from a cache).
	filesSummed atomic.Int64
	// stagedDirs and filesOneByOne count working-tree updates: directories
	// staged whole (see stage.go) and files written by temp file and
	// rename one at a time.
	stagedDirs, filesOneByOne atomic.Int64
	// filesSpooled counts working-tree files renamed in from a staged
	// write's spool (see blobSpool) rather than written from the store.
	filesSpooled atomic.Int64
	// treesDropped counts trees a write built but no commit of it
	// reached: dropped at the flush, never written (tests check that a
	// write builds only the trees it commits).
	treesDropped atomic.Int64
	commits      *idCache[*object.Commit]
	trees        *idCache[*object.Tree]
	blobs        *idCache[[]byte] // small blobs read last (see blobCacheMax)
}

// keepRecent replaces the blobs held for reading back (see Vault.recent).
func (v *Vault) keepRecent(data map[plumbing.Hash][]byte) {
	v.recentMu.Lock()
	v.recent = data
	v.recentMu.Unlock()
}

// recentBlob returns a copy of the content of blob h if the last write
// held it.
func (v *Vault) recentBlob(h plumbing.Hash) ([]byte, bool) {
	v.recentMu.Lock()
	defer v.recentMu.Unlock()
	data, ok := v.recent[h]
	if !ok {
		return nil, false
	}
	return bytes.Clone(data), true
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

// largeObject is the size above which go-git streams an object from disk
// instead of loading it whole, so a large file never sits in memory.
const largeObject = 1 << 20

// checkoutCache bounds what the checkout's store keeps of the objects it
// read (see open).
const checkoutCache = 4 << 20

func open(root string, cfg *Config, opt Options) (*Vault, error) {
	if opt.LockTimeout == 0 {
		opt.LockTimeout = DefaultLockTimeout
	}
	gitDir := filepath.Join(root, ".git")
	packs := newPackFS(osfs.New(gitDir), gitDir)
	st := filesystem.NewStorageWithOptions(packs, cache.NewObjectLRU(64<<20), filesystem.Options{LargeObjectThreshold: largeObject})
	// A checkout reads each blob it writes out once: through a store of
	// its own with a small cache (the bases of deltas), so writing
	// thousands of files neither fills the vault's cache with them nor
	// holds more of them than that.
	co := filesystem.NewStorageWithOptions(packs, cache.NewObjectLRU(checkoutCache), filesystem.Options{LargeObjectThreshold: largeObject})
	if err := os.MkdirAll(filepath.Join(root, StateDir), 0o755); err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	return &Vault{root: root, gitDir: gitDir, cfg: cfg, opt: opt, fsync: !opt.NoFsync, storage: st, coStorage: co, packs: packs,
		commits: newIDCache[*object.Commit](8), trees: newIDCache[*object.Tree](64), blobs: newIDCache[[]byte](blobCacheLen)}, nil
}

// Close releases resources held by the vault (the packfiles it keeps
// open); the vault stays usable and opens them again when it reads.
func (v *Vault) Close() error { return v.packs.close() }

// writer is held by every command that changes the vault.
type writer struct {
	v *Vault
	l *lock.Lock
}

// lockWriter takes the vault's writer lock, waiting up to the lock timeout,
// then repairs whatever a crashed writer left behind.
func (v *Vault) lockWriter(ctx context.Context, who string) (*writer, error) {
	w, err := v.lockOnly(ctx, who)
	if err != nil {
		return nil, err
	}
	if err := v.repair(); err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

// lockOnly takes the writer lock without repairing: for fsck, which must
// check a vault even when repair cannot write.
func (v *Vault) lockOnly(ctx context.Context, who string) (*writer, error) {
	timeout := v.opt.LockTimeout
	if timeout < 0 {
		timeout = 0 // one try
	}
	l, err := lock.Acquire(ctx, v.StatePath("lock"), timeout, who)
	if err != nil {
		return nil, err
	}
	w := &writer{v: v, l: l}
	if err := v.checkHead(); err != nil {
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
	data, err := readWhole(filepath.Join(v.gitDir, filepath.FromSlash(string(name))))
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
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read ref %s: %w", name, err)
	}
	return ref.Hash(), nil
}

// ErrRefMoved reports a ref that another command moved while prose was
// writing: nothing was published.
var ErrRefMoved = errors.New("ref moved by another command")

// moveRef moves ref name from old to new the way git does, so prose and git
// commands never both write a ref: <ref>.lock is taken (takeGitLock), the
// new value is written and fsynced, the ref is checked to still hold old,
// the lock is renamed over the ref, and the directory is fsynced. go-git
// rewrites loose refs in place, which a crash can tear, so refs never go
// through it. moved reports whether the rename happened: an error with
// moved true means the ref holds new but its durability is in doubt.
func (v *Vault) moveRef(name plumbing.ReferenceName, old, new plumbing.Hash) (moved bool, err error) {
	u, err := v.prepareRef(name, old, new)
	if err != nil {
		return false, err
	}
	defer u.release()
	err = durable.Inject(durable.StepFsync, u.path)
	if err == nil && v.fsync {
		err = u.lock.f.Sync()
	}
	if err != nil {
		return false, u.fail(err)
	}
	return v.commitRef(u)
}

// refUpdate is a ref move in two steps, so a writer can make the new value
// durable together with its objects: prepareRef takes <ref>.lock and
// writes the new value into it; once the caller has made the lock file
// durable, commitRef renames it over the ref.
type refUpdate struct {
	name     plumbing.ReferenceName
	path     string
	old, new plumbing.Hash
	lock     *gitLock
}

func (u *refUpdate) fail(e error) error { return fmt.Errorf("move %s: %w", u.name, e) }

// release gives the lock up unless commitRef renamed it.
func (u *refUpdate) release() {
	if u != nil {
		u.lock.release()
	}
}

func (v *Vault) prepareRef(name plumbing.ReferenceName, old, new plumbing.Hash) (*refUpdate, error) {
	u := &refUpdate{name: name, path: filepath.Join(v.gitDir, filepath.FromSlash(string(name))), old: old, new: new}
	if err := durable.MkdirAll(filepath.Dir(u.path), 0o755); err != nil {
		return nil, u.fail(err)
	}
	if err := durable.Inject(durable.StepWrite, u.path); err != nil {
		return nil, u.fail(err)
	}
	l, err := v.takeGitLock(u.path, refLockKind(name))
	if err != nil {
		return nil, u.fail(err)
	}
	u.lock = l
	if _, err := l.f.WriteString(new.String() + "\n"); err != nil {
		l.release()
		return nil, u.fail(err)
	}
	return u, nil
}

// refLockKind names the owner record of a ref's lock file: one per ref, as
// a writer may hold the branch's and the ledger's at once.
func refLockKind(name plumbing.ReferenceName) string {
	if name == LedgerRef {
		return "ledger.lock"
	}
	return "ref.lock"
}

// commitRef checks that the ref still holds the old value, renames the
// durable lock file over it and fsyncs the directory.
func (v *Vault) commitRef(u *refUpdate) (moved bool, err error) {
	return v.commitRefSync(u, true)
}

// commitRefSync is commitRef; with dirSync false the rename is left for
// the file system to make durable (with the next flush of anything), for a
// ref whose loss after a power cut repair puts back exactly: the ledger
// ref after a branch commit carrying the same receipt (see land).
func (v *Vault) commitRefSync(u *refUpdate, dirSync bool) (moved bool, err error) {
	cur, err := v.readRef(u.name)
	if err != nil {
		return false, u.fail(err)
	}
	if cur != u.old {
		return false, u.fail(fmt.Errorf("%w: it now points at %s, not %s; nothing was published, run the command again", ErrRefMoved, cur, u.old))
	}
	if err := durable.Inject(durable.StepRename, u.path); err != nil {
		return false, u.fail(err)
	}
	if err := u.lock.commit(); err != nil {
		return false, u.fail(err)
	}
	if !dirSync {
		return true, nil
	}
	if err := durable.Inject(durable.StepDirSync, filepath.Dir(u.path)); err != nil {
		return true, u.fail(err)
	}
	if v.fsync {
		if err := durable.SyncDir(filepath.Dir(u.path)); err != nil {
			return true, u.fail(err)
		}
	}
	return true, nil
}

// checkHead refuses to write when HEAD is not on the vault's branch: prose
// brings the working tree and index of the branch along, and would
// otherwise change another branch's checkout.
func (v *Vault) checkHead() error {
	data, err := os.ReadFile(filepath.Join(v.gitDir, "HEAD"))
	if err != nil {
		return fmt.Errorf("read HEAD: %w", err)
	}
	want := "ref: " + string(v.Branch())
	if got := strings.TrimSpace(string(data)); got != want {
		return fmt.Errorf("HEAD is %q, not the vault branch %s: prose keeps the working tree of %s in step, so run `git checkout %s` (or `git switch %s`) first", got, v.cfg.Branch, v.cfg.Branch, v.cfg.Branch, v.cfg.Branch)
	}
	return nil
}
