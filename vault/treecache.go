package vault

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
)

// treeCache maps a directory's version hash (published.Snapshot.Dirs) to
// the git tree id of the same directory. A version names the directory's
// content exactly, so the mapping is a fact that never goes stale: a
// publish re-encodes only directories whose content it has not seen. The
// file .prose/cache/trees is a magic line then 56-byte records (version,
// tree id, CRC-32 of both), appended; a torn or foreign record ends the
// read, and the cache is only ever an optimization.
type treeCache struct {
	path  string
	m     map[[32]byte]plumbing.Hash
	added []byte
	size  int
}

const (
	treeCacheMagic  = "prose tree cache 1\n"
	treeCacheRecord = 32 + 20 + 4
	// treeCacheMax bounds the file (≈ 37,000 directories), and so what
	// every publish pays to load it; past it the file starts again from
	// the records just added.
	treeCacheMax = 2 << 20
)

func (v *Vault) loadTreeCache() *treeCache {
	c := &treeCache{path: v.StatePath("cache", "trees"), m: map[[32]byte]plumbing.Hash{}}
	data, err := os.ReadFile(c.path)
	if err != nil || !bytes.HasPrefix(data, []byte(treeCacheMagic)) {
		return c
	}
	c.size = len(data)
	for rec := data[len(treeCacheMagic):]; len(rec) >= treeCacheRecord; rec = rec[treeCacheRecord:] {
		if crc32.ChecksumIEEE(rec[:52]) != binary.BigEndian.Uint32(rec[52:56]) {
			break
		}
		var ver [32]byte
		var oid plumbing.Hash
		copy(ver[:], rec[:32])
		copy(oid[:], rec[32:52])
		c.m[ver] = oid
	}
	return c
}

func (c *treeCache) get(ver [32]byte) (plumbing.Hash, bool) {
	if c == nil {
		return plumbing.ZeroHash, false
	}
	h, ok := c.m[ver]
	return h, ok
}

func (c *treeCache) add(ver [32]byte, oid plumbing.Hash) {
	if c == nil {
		return
	}
	if old, ok := c.m[ver]; ok && old == oid {
		return
	}
	c.m[ver] = oid
	var rec [treeCacheRecord]byte
	copy(rec[:32], ver[:])
	copy(rec[32:52], oid[:])
	binary.BigEndian.PutUint32(rec[52:], crc32.ChecksumIEEE(rec[:52]))
	c.added = append(c.added, rec[:]...)
}

// save appends the new records. Failures are ignored: the next publish
// re-encodes a little more.
func (c *treeCache) save() {
	if c == nil || len(c.added) == 0 {
		return
	}
	if c.size == 0 || c.size+len(c.added) > treeCacheMax {
		_ = os.WriteFile(c.path, append([]byte(treeCacheMagic), c.added...), 0o644)
		return
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(c.added)
}
