package vault

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/zeebo/blake3"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/published"
)

var (
	viewsMu sync.RWMutex
	views   = map[string]published.View{}
)

// RegisterView makes view the reading of node's files for every
// fingerprint the vault computes: publish, WriteNode, fsck and diff. A
// package that owns a built-in node (the wiki) registers its view in an
// init function; the vault never imports it.
func RegisterView(node string, view published.View) {
	viewsMu.Lock()
	defer viewsMu.Unlock()
	views[node] = view
}

// viewOf returns the view registered for node, or nil.
func viewOf(node string) published.View {
	viewsMu.RLock()
	defer viewsMu.RUnlock()
	return views[node]
}

// dirSum is what a committed directory contributes to its node's
// fingerprints and version address.
type dirSum struct {
	version [32]byte
	digest  canon.Digest
	kept    bool
	files   uint32
}

// recCache is a cache file of fixed-size records, each a fact that never
// goes stale (content named by its hash → what it contributes), loaded
// whole and appended. Each record ends with the CRC-32C of the rest; a
// record that fails it (a torn append, a damaged block) is not used. It lives in .prose/cache/ and is a cache only: a
// missing or damaged file is rebuilt from the trees. Past its size limit
// the file is rewritten with only the entries the current write used: the
// state around the change, so the next writes miss little.
//
// The loaded records stay as the file's bytes with a table of record
// numbers by key hash: a write looks up a few dozen of a node's thousands
// of records, and a map of every record (a page fault per 4 KiB of it, and
// its growth) cost more than the lookups. A record's checksum is checked
// when it is looked up.
type recCache[K comparable, V comparable] struct {
	file  string
	id    string // what the entries depend on (algorithm, view); another id's are useless
	limit *int
	codec recCodec[K, V]
	data  []byte     // the loaded records, whole ones only
	slots []uint32   // open addressing by key hash: 1 + record number, 0 empty
	added map[K]V    // entries put by this process
	used  map[K]bool // entries read or added by this process
	size  int        // bytes of the file when loaded; -1: missing, or of another id
	torn  bool       // the file ends in part of a record
}

// recCodec lays out one record of a recCache: its key's keyLen bytes
// (written by key) first.
type recCodec[K comparable, V comparable] struct {
	size   int
	keyLen int
	key    func(b []byte, k K) []byte
	dec    func(b []byte) (K, V)
	enc    func(b []byte, k K, v V) []byte
}

// keyHash folds a record's key bytes.
func keyHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for ; len(b) >= 8; b = b[8:] {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 1099511628211
	}
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h ^ h>>29
}

func loadRecCache[K comparable, V comparable](file, id string, limit *int, codec recCodec[K, V]) *recCache[K, V] {
	c := &recCache[K, V]{file: file, id: id + "\n", limit: limit, codec: codec,
		added: map[K]V{}, used: map[K]bool{}}
	data, err := readWhole(c.file)
	c.size = len(data)
	if err != nil || !bytes.HasPrefix(data, []byte(c.id)) {
		c.size = -1 // nothing to append to: the next save writes the file anew
		return c
	}
	n := codec.size + 4
	data = data[len(c.id):]
	if len(data)%n != 0 {
		// A torn append: a record appended after it would be misaligned,
		// so the next save writes the file anew.
		c.torn = true
	}
	recs := len(data) / n
	c.data = data[:recs*n]
	if recs == 0 {
		return c
	}
	size := 4
	for size < 2*recs {
		size <<= 1
	}
	c.slots = make([]uint32, size)
	mask := uint64(size - 1)
	for i := range recs {
		j := keyHash(c.data[i*n:i*n+codec.keyLen]) & mask
		for c.slots[j] != 0 {
			j = (j + 1) & mask
		}
		c.slots[j] = uint32(i + 1)
	}
	return c
}

// record returns the loaded entry for k: of the records with its key and a
// good checksum, the last in the file (as a load of every record in order
// would keep).
func (c *recCache[K, V]) record(k K) (V, bool) {
	var zero V
	if len(c.slots) == 0 {
		return zero, false
	}
	var buf [64]byte
	kb := c.codec.key(buf[:0], k)
	n := c.codec.size + 4
	mask := uint64(len(c.slots) - 1)
	best := -1
	for j := keyHash(kb) & mask; c.slots[j] != 0; j = (j + 1) & mask {
		i := int(c.slots[j] - 1)
		rec := c.data[i*n : i*n+n]
		if i > best && bytes.Equal(rec[:c.codec.keyLen], kb) &&
			crc32.Checksum(rec[:c.codec.size], castagnoli()) == binary.LittleEndian.Uint32(rec[c.codec.size:]) {
			best = i
		}
	}
	if best < 0 {
		return zero, false
	}
	_, v := c.codec.dec(c.data[best*n : best*n+c.codec.size])
	return v, true
}

// peek returns the entry for k without noting it as used.
func (c *recCache[K, V]) peek(k K) (V, bool) {
	if v, ok := c.added[k]; ok {
		return v, true
	}
	return c.record(k)
}

// all returns every entry: the loaded records in file order (a later one
// of a key over an earlier), then the added ones.
func (c *recCache[K, V]) all() map[K]V {
	out := map[K]V{}
	n := c.codec.size + 4
	for i := 0; i+n <= len(c.data); i += n {
		rec := c.data[i : i+n]
		if crc32.Checksum(rec[:c.codec.size], castagnoli()) != binary.LittleEndian.Uint32(rec[c.codec.size:]) {
			continue
		}
		k, v := c.codec.dec(rec[:c.codec.size])
		out[k] = v
	}
	for k, v := range c.added {
		out[k] = v
	}
	return out
}

// get returns the entry for k, noting it as used.
func (c *recCache[K, V]) get(k K) (V, bool) {
	v, ok := c.peek(k)
	if ok {
		c.used[k] = true
	}
	return v, ok
}

// put records the entry for k.
func (c *recCache[K, V]) put(k K, v V) {
	c.used[k] = true
	if old, ok := c.peek(k); ok && old == v {
		return
	}
	c.added[k] = v
}

// save appends the entries added since load (or rewrites the file past
// its limit); a cache that cannot be written is not an error.
func (c *recCache[K, V]) save() {
	if len(c.added) == 0 {
		return
	}
	var buf []byte
	_ = os.MkdirAll(filepath.Dir(c.file), 0o755)
	recs := c.added
	switch {
	case c.size > *c.limit:
		buf = append(buf, c.id...)
		recs = map[K]V{}
		for k := range c.used {
			if v, ok := c.peek(k); ok {
				recs[k] = v
			}
		}
	case c.size < 0 || c.torn:
		buf = append(buf, c.id...)
		recs = c.all()
	}
	for k, v := range recs {
		start := len(buf)
		buf = c.codec.enc(buf, k, v)
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli()))
	}
	if len(buf) > len(c.id) && bytes.HasPrefix(buf, []byte(c.id)) {
		_ = durable.WriteFile(c.file, buf, 0o644)
		return
	}
	f, err := os.OpenFile(c.file, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write(buf)
	_ = f.Close()
}

// sumCache keeps dirSums by git tree id and path, so a node write
// recomputes only the directories above its changes: a tree id names a
// directory's content exactly, so an entry never goes stale.
type sumCache = recCache[sumKey, dirSum]

// sumCacheLimit is the size past which the dirsum file is rewritten.
var sumCacheLimit = 8 << 20

const sumRecLen = 28 + 32 + 32 + 1 + 4

var sumCodec = recCodec[sumKey, dirSum]{
	size:   sumRecLen,
	keyLen: sumKeyLen,
	key:    appendSumKey,
	dec: func(b []byte) (k sumKey, s dirSum) {
		k = decodeSumKey(b)
		copy(s.version[:], b[28:])
		copy(s.digest[:], b[60:])
		s.kept = b[92] == 1
		s.files = binary.LittleEndian.Uint32(b[93:])
		return k, s
	},
	enc: func(b []byte, k sumKey, s dirSum) []byte {
		b = appendSumKey(b, k)
		b = append(b, s.version[:]...)
		b = append(b, s.digest[:]...)
		b = append(b, boolByte(s.kept))
		return binary.LittleEndian.AppendUint32(b, s.files)
	},
}

// castagnoli is made on first use: making the table costs ≈ 0.15 ms at
// the start of every command, most of which read no cache.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// cacheID names what a node's sums depend on: the hash algorithm and the
// node's view.
func (v *Vault) sumCacheID(kind string, view published.View) string {
	id := kind + " " + string(v.Algorithm())
	if view != nil {
		id += " " + view.ViewName()
	}
	return id
}

func (v *Vault) loadSumCache(node string, view published.View) *sumCache {
	return loadRecCache(v.StatePath("cache", "dirsum-"+published.EscapeNode(node)), v.sumCacheID("dirsum-v3", view), &sumCacheLimit, sumCodec)
}

// fileSum is what a file contributes to its directory's sums.
type fileSum struct {
	sum    [32]byte // BLAKE3 of the content
	digest canon.Digest
	kept   bool
}

// sumKey names content at one path of a node: its git id (a tree or a
// blob) and a hash of its path. A view may read the same bytes differently
// at another path (View.Value is a function of both), so the path is part
// of what a sum is a fact about.
type sumKey struct {
	id   plumbing.Hash
	path [8]byte
}

func newSumKey(p string, id plumbing.Hash) sumKey {
	k := sumKey{id: id}
	sum := blake3.Sum256([]byte(p))
	copy(k.path[:], sum[:8])
	return k
}

// sumKeyLen is the bytes of a sumKey in a record.
const sumKeyLen = 20 + 8

func decodeSumKey(b []byte) (k sumKey) {
	copy(k.id[:], b)
	copy(k.path[:], b[20:28])
	return k
}

func appendSumKey(b []byte, k sumKey) []byte {
	b = append(b, k.id[:]...)
	return append(b, k.path[:]...)
}

// fileSumCache keeps fileSums, so a write that changes one file of a large
// directory does not read the others again to sum the directory.
type fileSumCache = recCache[sumKey, fileSum]

var fileSumCacheLimit = 4 << 20

var fileSumCodec = recCodec[sumKey, fileSum]{
	size:   28 + 32 + 32 + 1,
	keyLen: sumKeyLen,
	key:    appendSumKey,
	dec: func(b []byte) (k sumKey, s fileSum) {
		k = decodeSumKey(b)
		copy(s.sum[:], b[28:])
		copy(s.digest[:], b[60:])
		s.kept = b[92] == 1
		return k, s
	},
	enc: func(b []byte, k sumKey, s fileSum) []byte {
		b = appendSumKey(b, k)
		b = append(b, s.sum[:]...)
		b = append(b, s.digest[:]...)
		return append(b, boolByte(s.kept))
	},
}

func (v *Vault) loadFileSumCache(node string, view published.View) *fileSumCache {
	return loadRecCache(v.StatePath("cache", "filesum-"+published.EscapeNode(node)), v.sumCacheID("filesum-v2", view), &fileSumCacheLimit, fileSumCodec)
}

// nodeSummer computes dirSums of trees, reading blobs from the repository
// or from the contents a write is about to commit.
type nodeSummer struct {
	v     *Vault
	node  string
	b     *objectBatch
	alg   canon.Algorithm
	view  published.View
	cache *sumCache
	fresh map[plumbing.Hash][]byte
	// files holds what files read from a source directory contribute, by
	// node path: taken for a tree entry naming the same blob.
	files map[string]published.ChangedFile
	// source, when set, is a directory holding the node tree's files
	// (a publish's source outside its changes): a small file is read
	// there rather than from the repository, when its content is the
	// blob's.
	source string
	// fileSums is loaded on the first file a sum must read.
	fileSums *fileSumCache
	read     int // blobs read, for tests of how cost grows
}

// fileSum returns what the file at node path p with blob h contributes:
// from the files the write read, the file-sum cache, the source directory
// or the repository, in that order.
func (s *nodeSummer) fileSum(p string, h plumbing.Hash) (fileSum, error) {
	if f, ok := s.files[p]; ok && plumbing.Hash(f.GitOID) == h {
		fs := fileSum{sum: f.Sum, digest: f.Digest, kept: f.Kept}
		s.fileCache().put(newSumKey(p, h), fs)
		return fs, nil
	}
	key := newSumKey(p, h)
	if fs, ok := s.fileCache().get(key); ok {
		return fs, nil
	}
	s.v.filesSummed.Add(1)
	data, ok := s.sourceBlob(p, h)
	if !ok {
		var err error
		if data, err = s.blob(h); err != nil {
			return fileSum{}, err
		}
	}
	d, kept, err := published.FileDigest(s.alg, s.view, p, data)
	if err != nil {
		return fileSum{}, err
	}
	fs := fileSum{sum: blake3.Sum256(data), digest: d, kept: kept}
	s.fileSums.put(key, fs)
	return fs, nil
}

func (s *nodeSummer) fileCache() *fileSumCache {
	if s.fileSums == nil {
		s.fileSums = s.v.loadFileSumCache(s.node, s.view)
	}
	return s.fileSums
}

// save writes what the summer learned; call it once the objects it names
// are durable.
func (s *nodeSummer) save() {
	s.cache.save()
	if s.fileSums != nil {
		s.fileSums.save()
	}
}

// maxSourceRead bounds a file the summer reads from the source directory;
// a larger one is read from the repository.
const maxSourceRead = 1 << 20

// sourceBlob returns the content of blob h from the file at node path p of
// the source directory, when that file is a regular file holding exactly
// that blob.
func (s *nodeSummer) sourceBlob(p string, h plumbing.Hash) ([]byte, bool) {
	if s.source == "" {
		return nil, false
	}
	f, err := openFile(filepath.Join(s.source, filepath.FromSlash(p)), readFlags, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSourceRead {
		return nil, false
	}
	data := make([]byte, fi.Size())
	if n, err := io.ReadFull(f, data); err != nil || n != len(data) {
		return nil, false
	}
	if objectHash(plumbing.BlobObject, data) != h {
		return nil, false
	}
	return data, true
}

func (s *nodeSummer) blob(h plumbing.Hash) ([]byte, error) {
	if d, ok := s.fresh[h]; ok {
		return d, nil
	}
	s.read++
	return s.v.blob(h)
}

// sum returns the dirSum of tree h, whose path in the node is dir ("" for
// the node root, else with a trailing slash).
func (s *nodeSummer) sum(h plumbing.Hash, dir string) (dirSum, error) {
	if h.IsZero() {
		d, _ := published.DirDigest(s.alg, nil)
		return dirSum{version: published.DirVersion(nil), digest: d}, nil
	}
	key := newSumKey(dir, h)
	if c, ok := s.cache.get(key); ok {
		return c, nil
	}
	t, err := s.b.tree(h)
	if err != nil {
		return dirSum{}, err
	}
	var out dirSum
	vents := make([]published.VersionEntry, 0, len(t.Entries))
	var kept []canon.Child
	names := make([]string, len(t.Entries))
	isDir := make([]bool, len(t.Entries))
	for i, e := range t.Entries {
		names[i], isDir[i] = e.Name, e.Mode == filemode.Dir
	}
	// A directory a write changed is checked as a scan checks it.
	if err := published.CheckDirNames(dir, names, isDir); err != nil {
		return dirSum{}, err
	}
	for _, e := range t.Entries {
		ve := published.VersionEntry{Name: e.Name}
		switch e.Mode {
		case filemode.Dir:
			sub, err := s.sum(e.Hash, dir+e.Name+"/")
			if err != nil {
				return dirSum{}, err
			}
			ve.Dir, ve.Sum = true, sub.version
			out.files += sub.files
			if sub.kept {
				kept = append(kept, canon.Child{Key: e.Name, Digest: sub.digest})
			}
		case filemode.Regular, filemode.Executable:
			fs, err := s.fileSum(dir+e.Name, e.Hash)
			if err != nil {
				return dirSum{}, err
			}
			ve.Exec, ve.Sum = e.Mode == filemode.Executable, fs.sum
			out.files++
			if fs.kept {
				kept = append(kept, canon.Child{Key: published.FileKey(e.Name), Digest: fs.digest})
			}
		default:
			return dirSum{}, fmt.Errorf("%s%s: a %v entry has no place in a world-model", dir, e.Name, e.Mode)
		}
		vents = append(vents, ve)
	}
	out.version = published.DirVersion(vents)
	out.digest, out.kept = published.DirDigest(s.alg, kept)
	s.cache.put(key, out)
	return out, nil
}

// fingerprints returns the fingerprint map and version address of the node
// tree h, with the node's top-level directories as facets (a node written
// through WriteNode declares no spec).
func (s *nodeSummer) fingerprints(h plumbing.Hash) (map[string]string, string, int, error) {
	root, err := s.sum(h, "")
	if err != nil {
		return nil, "", 0, err
	}
	fps := map[string]string{canon.Atomic: s.alg.DigestToken(root.digest)}
	if !h.IsZero() {
		t, err := s.b.tree(h)
		if err != nil {
			return nil, "", 0, err
		}
		for _, e := range t.Entries {
			if e.Mode != filemode.Dir {
				continue
			}
			sub, err := s.sum(e.Hash, e.Name+"/")
			if err != nil {
				return nil, "", 0, err
			}
			if sub.kept {
				fps[e.Name] = s.alg.DigestToken(published.FacetDigest(s.alg, e.Name, sub.digest))
			}
		}
	}
	return fps, fmt.Sprintf("blake3:%x", root.version), int(root.files), nil
}
