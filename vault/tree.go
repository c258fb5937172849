package vault

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// FileEntry is one file of a world-model as the vault stores it.
type FileEntry struct {
	Path string // slash path relative to the node root
	Mode filemode.FileMode
	Size int64
	OID  plumbing.Hash
}

// encodeTree returns the canonical git encoding of entries, sorted the way
// git sorts them (a directory compares as its name followed by "/").
func encodeTree(entries []object.TreeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool {
		return treeKey(entries[i]) < treeKey(entries[j])
	})
	n := 0
	for _, e := range entries {
		n += len(e.Name) + 28
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b
}

func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// dirNode is one directory of a world-model being published: its encoded
// tree and hash, computed before anything is written. A node found in the
// tree cache has only its hash (and the files to encode it again from).
type dirNode struct {
	name   string
	hash   plumbing.Hash
	data   []byte
	dirs   []*dirNode
	blobs  []FileEntry // files directly in this directory, named by their last segment
	cached bool
	files  []FileEntry // every file below, for a cached node
	plen   int
}

// treeHasher computes git trees from sorted files. With versions (the
// scan's per-directory version hashes) and a tree cache, a directory whose
// version the cache knows is not encoded at all.
type treeHasher struct {
	versions map[string][32]byte
	cache    *treeCache
	learned  map[[32]byte]plumbing.Hash
}

// buildTree writes the tree for files (sorted by path bytes) and returns its
// hash; src is the directory the files are read from. Hashes are computed
// bottom-up in memory first; then only directories whose hash differs from
// the same directory in old (the node's previous tree) are visited, so a
// one-file change reads and writes one path of trees, never the whole
// world-model.
func (b *objectBatch) buildTree(th *treeHasher, files []FileEntry, src string, old plumbing.Hash) (plumbing.Hash, error) {
	if old.IsZero() && len(files) >= packThreshold {
		// Every file is new to the node: its blobs go straight into one
		// pack, without packThreshold loose files before it.
		b.packFirst = true
	}
	root := th.hashDir(files, 0, "")
	if err := b.writeDir(th, root, old, src); err != nil {
		return plumbing.ZeroHash, err
	}
	return root.hash, nil
}

// hashDir builds the directory whose entries are files (all under the same
// prefix of length plen). Byte order of full paths is git's tree order, so
// entries are encoded as they come.
func (th *treeHasher) hashDir(files []FileEntry, plen int, name string) *dirNode {
	if th != nil && th.cache != nil {
		path := ""
		if plen > 0 {
			path = files[0].Path[:plen-1]
		}
		if ver, ok := th.versions[path]; ok {
			if oid, ok := th.cache.get(ver); ok {
				return &dirNode{name: name, hash: oid, cached: true, files: files, plen: plen}
			}
			n := th.encodeDir(files, plen, name)
			if th.learned == nil {
				th.learned = map[[32]byte]plumbing.Hash{}
			}
			th.learned[ver] = n.hash
			return n
		}
	}
	return th.encodeDir(files, plen, name)
}

func (th *treeHasher) encodeDir(files []FileEntry, plen int, name string) *dirNode {
	n := &dirNode{name: name}
	// Room for a few entries; a large directory grows it. (Sizing it from
	// every file below would cost a pass over a whole cached subtree.)
	data := make([]byte, 0, 48*min(len(files), 64))
	appendEntry := func(mode filemode.FileMode, name string, h plumbing.Hash) {
		data = strconv.AppendUint(data, uint64(mode), 8)
		data = append(data, ' ')
		data = append(data, name...)
		data = append(data, 0)
		data = append(data, h[:]...)
	}
	for i := 0; i < len(files); {
		rel := files[i].Path[plen:]
		slash := strings.IndexByte(rel, '/')
		if slash < 0 {
			appendEntry(files[i].Mode, rel, files[i].OID)
			n.blobs = append(n.blobs, files[i])
			i++
			continue
		}
		seg := rel[:slash]
		sub := plen + slash + 1
		// The files under seg/ are contiguous in byte order: find their end
		// by binary search, so a directory taken whole from the tree cache
		// costs a few comparisons, not one per file below it.
		prefix := files[i].Path[:sub]
		j := i + 1 + sort.Search(len(files)-i-1, func(k int) bool {
			return !strings.HasPrefix(files[i+1+k].Path, prefix)
		})
		child := th.hashDir(files[i:j], sub, seg)
		n.dirs = append(n.dirs, child)
		appendEntry(filemode.Dir, seg, child.hash)
		i = j
	}
	n.data = data
	n.hash = objectHash(plumbing.TreeObject, data)
	return n
}

// oidOf returns the tree id of the directory whose version is ver, when
// this publish computed it or the tree cache knows it.
func (th *treeHasher) oidOf(ver [32]byte) (plumbing.Hash, bool) {
	if h, ok := th.learned[ver]; ok {
		return h, true
	}
	return th.cache.get(ver)
}

// remember records what this publish learned, once its objects are durable.
func (th *treeHasher) remember() {
	if th == nil || th.cache == nil {
		return
	}
	for ver, oid := range th.learned {
		th.cache.add(ver, oid)
	}
	th.cache.save()
}

// writeDir writes n's blobs and subtrees that old does not already hold,
// then n itself. Blobs go before the trees that name them, so a crash in
// the middle of a flush never leaves a tree whose blobs are missing.
func (b *objectBatch) writeDir(th *treeHasher, n *dirNode, old plumbing.Hash, src string) error {
	if n.hash == old {
		return nil
	}
	if n.cached {
		if b.has(n.hash) {
			return nil // a stored tree implies its blobs and subtrees
		}
		// Pruned since it was cached: encode it again.
		n = (*treeHasher)(nil).encodeDir(n.files, n.plen, n.name)
	}
	oldEntries := map[string]object.TreeEntry{}
	if !old.IsZero() {
		t, err := b.tree(old)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			oldEntries[e.Name] = e
		}
	} else if b.has(n.hash) {
		return nil
	}
	for _, f := range n.blobs {
		name := f.Path[strings.LastIndexByte(f.Path, '/')+1:]
		if e, ok := oldEntries[name]; ok && e.Hash == f.OID {
			continue
		}
		if err := b.putFile(filepath.Join(src, filepath.FromSlash(f.Path)), f.Size, f.OID); err != nil {
			return err
		}
	}
	for _, child := range n.dirs {
		var oldChild plumbing.Hash
		if e, ok := oldEntries[child.name]; ok && e.Mode == filemode.Dir {
			oldChild = e.Hash
		}
		if err := b.writeDir(th, child, oldChild, src); err != nil {
			return err
		}
	}
	_, err := b.put(plumbing.TreeObject, n.data)
	return err
}

// tree reads a tree object; the zero hash reads as an empty tree.
func (v *Vault) tree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	if t, ok := v.trees.get(h); ok {
		return t, nil
	}
	v.storeTreeReads.Add(1)
	var t *object.Tree
	var err error
	if data, ok := v.fastObject(h, plumbing.TreeObject); ok {
		t, err = object.DecodeTree(v.storage, memoryObject(plumbing.TreeObject, data))
	}
	if t == nil || err != nil {
		err = v.read(func() (err error) {
			t, err = object.GetTree(v.storage, h)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	v.trees.put(h, t)
	return t, nil
}

// commit reads a commit object.
func (v *Vault) commit(h plumbing.Hash) (*object.Commit, error) {
	if c, ok := v.commits.get(h); ok {
		return c, nil
	}
	v.storeCommitReads.Add(1)
	var c *object.Commit
	var err error
	if data, ok := v.fastObject(h, plumbing.CommitObject); ok {
		c, err = object.DecodeCommit(v.storage, memoryObject(plumbing.CommitObject, data))
	}
	if c == nil || err != nil {
		err = v.read(func() (err error) {
			c, err = object.GetCommit(v.storage, h)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	v.commits.put(h, c)
	return c, nil
}

// idCache keeps the last few objects of one kind a Vault decoded, by id.
// An object never changes under its id, and the same few are asked for
// again and again: the tip commit by every ReadFile and NodeHead (an
// ingest's commit carries its receipt, which lists every page it wrote,
// and was decoded once per file read), the trees on the way from the root
// to a node by every lookup. Callers never modify what they get.
type idCache[T any] struct {
	mu   sync.Mutex
	keys []plumbing.Hash // a ring: the oldest id is replaced first
	vals map[plumbing.Hash]T
	next int
}

func newIDCache[T any](n int) *idCache[T] {
	return &idCache[T]{keys: make([]plumbing.Hash, n), vals: make(map[plumbing.Hash]T, n)}
}

func (c *idCache[T]) get(h plumbing.Hash) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vals[h]
	return v, ok
}

func (c *idCache[T]) put(h plumbing.Hash, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.vals[h]; ok {
		return
	}
	if old := c.keys[c.next]; !old.IsZero() {
		delete(c.vals, old)
	}
	c.keys[c.next], c.vals[h] = h, v
	c.next = (c.next + 1) % len(c.keys)
}

// blobCacheMax is the largest blob the vault keeps after reading it (see
// Vault.blobs); blobCacheLen how many it keeps. A write-slot reads its page
// three times and the last receipt and folder indexes twice.
const (
	blobCacheMax = 64 << 10
	blobCacheLen = 32
)

// blob reads a whole blob.
func (v *Vault) blob(h plumbing.Hash) ([]byte, error) {
	if data, ok := v.recentBlob(h); ok {
		return data, nil
	}
	if data, ok := v.blobs.get(h); ok {
		return bytes.Clone(data), nil
	}
	data, err := v.storeBlob(h)
	if err == nil && len(data) <= blobCacheMax {
		v.blobs.put(h, bytes.Clone(data))
	}
	return data, err
}

// blobAt reads blob h, trying the working-tree file at rel (relative to
// the vault root) before the object store: the file is used only when it
// is a regular file (no final symlink, no FIFO: readFlags) whose content
// hashes to h, so a hand edit or a stale file costs one read and nothing
// else.
func (v *Vault) blobAt(rel string, h plumbing.Hash) ([]byte, error) {
	if data, ok := v.recentBlob(h); ok {
		return data, nil
	}
	if data, ok := v.blobs.get(h); ok {
		return bytes.Clone(data), nil
	}
	if data, ok := v.worktreeBlob(rel, h); ok {
		if len(data) <= blobCacheMax {
			v.blobs.put(h, bytes.Clone(data))
		}
		return data, nil
	}
	return v.blob(h)
}

// worktreeBlob reads the working-tree file at rel when its content is blob
// h.
func (v *Vault) worktreeBlob(rel string, h plumbing.Hash) ([]byte, bool) {
	f, err := openFile(filepath.Join(v.root, filepath.FromSlash(rel)), readFlags, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > fastBlobMax {
		return nil, false
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, false
	}
	if objectHash(plumbing.BlobObject, data) != h {
		return nil, false
	}
	return data, true
}

// storeBlob reads a whole blob from the object store.
func (v *Vault) storeBlob(h plumbing.Hash) ([]byte, error) {
	v.storeBlobReads.Add(1)
	if data, ok := v.fastBlob(h); ok {
		return data, nil
	}
	var data []byte
	err := v.read(func() error {
		bl, err := object.GetBlob(v.storage, h)
		if err != nil {
			return err
		}
		r, err := bl.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, nil
}

// read runs fn, which reads the object store, under v.mu. A failure is
// tried again after the list of packs is read again: a `git gc` or `git
// repack -a -d` beside prose replaces packs, and go-git keeps the list it
// read first. A list read just before the old pack was deleted still names
// it, so the read is tried up to readRetries times, each on a fresh list.
func (v *Vault) read(fn func() error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	err := fn()
	for i := 0; err != nil && i < readRetries; i++ {
		v.storage.Reindex()
		v.coStorage.Reindex()
		err = fn()
	}
	return err
}

// readRetries bounds the re-reads of the pack list after a failed read: a
// missing object costs that many listings of .git/objects/pack, and a read
// loses to a concurrent repack only if each listing falls between that
// repack's new pack and its deletion of the old.
const readRetries = 3

// reindex makes go-git read the list of packs again.
func (v *Vault) reindex() {
	v.mu.Lock()
	v.storage.Reindex()
	v.coStorage.Reindex()
	v.mu.Unlock()
}

// copyBlob streams the content of blob h to w.
func (v *Vault) copyBlob(w io.Writer, h plumbing.Hash) error {
	return v.copyBlobFrom(v.storage, w, h)
}

// checkoutBlob streams the content of blob h to w through the checkout's
// store (see Vault.coStorage): a blob written out is not kept.
func (v *Vault) checkoutBlob(w io.Writer, h plumbing.Hash) error {
	return v.copyBlobFrom(v.coStorage, w, h)
}

func (v *Vault) copyBlobFrom(st *filesystem.Storage, w io.Writer, h plumbing.Hash) error {
	var bl *object.Blob
	if err := v.read(func() (err error) {
		bl, err = object.GetBlob(st, h)
		return err
	}); err != nil {
		return fmt.Errorf("read blob %s: %w", h, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	r, err := bl.Reader()
	if err != nil {
		return fmt.Errorf("read blob %s: %w", h, err)
	}
	defer r.Close()
	if _, err := io.Copy(w, r); err != nil {
		return fmt.Errorf("read blob %s: %w", h, err)
	}
	return nil
}

// lookup finds the entry at slash path p under tree root.
func (v *Vault) lookup(root plumbing.Hash, p string) (object.TreeEntry, bool, error) {
	return lookupIn(v.tree, root, p)
}

// lookupIn finds the entry at slash path p under tree root, reading trees
// with treeOf. A zero root is an empty tree.
func lookupIn(treeOf func(plumbing.Hash) (*object.Tree, error), root plumbing.Hash, p string) (object.TreeEntry, bool, error) {
	cur := root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		if cur.IsZero() {
			return object.TreeEntry{}, false, nil
		}
		t, err := treeOf(cur)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		var found *object.TreeEntry
		for k := range t.Entries {
			if t.Entries[k].Name == name {
				found = &t.Entries[k]
				break
			}
		}
		if found == nil {
			return object.TreeEntry{}, false, nil
		}
		if i == len(parts)-1 {
			return *found, true, nil
		}
		if found.Mode != filemode.Dir {
			return object.TreeEntry{}, false, nil
		}
		cur = found.Hash
	}
	return object.TreeEntry{}, false, nil
}

// setPath returns root with the entry at slash path p replaced by e (or
// removed when e.Hash is zero), writing every tree on the way up.
func (b *objectBatch) setPath(root plumbing.Hash, p string, e object.TreeEntry) (plumbing.Hash, error) {
	parts := strings.SplitN(p, "/", 2)
	t, err := b.tree(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries := make([]object.TreeEntry, 0, len(t.Entries)+1)
	var old *object.TreeEntry
	for k := range t.Entries {
		if t.Entries[k].Name == parts[0] {
			old = &t.Entries[k]
			continue
		}
		entries = append(entries, t.Entries[k])
	}
	var ne object.TreeEntry
	if len(parts) == 1 {
		ne = e
		ne.Name = parts[0]
	} else {
		sub := plumbing.ZeroHash
		if old != nil && old.Mode == filemode.Dir {
			sub = old.Hash
		}
		h, err := b.setPath(sub, parts[1], e)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		ne = object.TreeEntry{Name: parts[0], Mode: filemode.Dir, Hash: h}
	}
	if !ne.Hash.IsZero() {
		entries = append(entries, ne)
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, nil // git has no empty subtrees
	}
	return b.put(plumbing.TreeObject, encodeTree(entries))
}

// walkFiles lists every file under tree h as slash paths with prefix.
func (v *Vault) walkFiles(h plumbing.Hash, prefix string, fn func(path string, e object.TreeEntry) error) error {
	t, err := v.tree(h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := prefix + e.Name
		if e.Mode == filemode.Dir {
			if err := v.walkFiles(e.Hash, p+"/", fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(p, e); err != nil {
			return err
		}
	}
	return nil
}

// memoryObject wraps the content of an object of type t read without
// go-git, for go-git's decoders.
func memoryObject(t plumbing.ObjectType, data []byte) *plumbing.MemoryObject {
	o := &plumbing.MemoryObject{}
	o.SetType(t)
	o.Write(data)
	return o
}
