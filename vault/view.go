package vault

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

// sumCache keeps dirSums by git tree id, so a node write recomputes only the
// directories above its changes: a tree id names a directory's content
// exactly, so an entry never goes stale. It lives in .prose/cache/ and is a
// cache only: a missing or damaged file is rebuilt from the trees.
type sumCache struct {
	file  string
	id    string // algorithm and view; entries under another are useless
	known map[plumbing.Hash]dirSum
	added map[plumbing.Hash]dirSum
	used  map[plumbing.Hash]bool // entries read or added by this process
	size  int                    // bytes of the file when loaded
}

// sumCacheLimit is the size past which the append-only cache file is
// rewritten with only the entries the current write used: the trees of the
// current state around the change, so the next writes miss little.
var sumCacheLimit = 8 << 20

const sumRecLen = 20 + 32 + 32 + 1 + 4

func (v *Vault) loadSumCache(node string, view published.View) *sumCache {
	id := "dirsum-v1 " + string(v.Algorithm())
	if view != nil {
		id += " " + view.ViewName()
	}
	c := &sumCache{file: v.StatePath("cache", "dirsum-"+published.EscapeNode(node)), id: id + "\n",
		known: map[plumbing.Hash]dirSum{}, added: map[plumbing.Hash]dirSum{}, used: map[plumbing.Hash]bool{}}
	data, err := os.ReadFile(c.file)
	c.size = len(data)
	if err != nil || !bytes.HasPrefix(data, []byte(c.id)) {
		return c
	}
	data = data[len(c.id):]
	for len(data) >= sumRecLen {
		var h plumbing.Hash
		var s dirSum
		copy(h[:], data)
		copy(s.version[:], data[20:])
		copy(s.digest[:], data[52:])
		s.kept = data[84] == 1
		s.files = binary.LittleEndian.Uint32(data[85:])
		c.known[h] = s
		data = data[sumRecLen:]
	}
	return c
}

// put records the sum of tree h, learned elsewhere (a scan).
func (c *sumCache) put(h plumbing.Hash, s dirSum) {
	if old, ok := c.known[h]; ok && old == s {
		return
	}
	c.known[h] = s
	c.added[h] = s
	c.used[h] = true
}

// save appends the entries computed since load; a cache that cannot be
// written is not an error (the next write computes more).
func (c *sumCache) save() {
	if len(c.added) == 0 {
		return
	}
	var buf []byte
	_ = os.MkdirAll(filepath.Dir(c.file), 0o755)
	recs := c.added
	if _, err := os.Stat(c.file); err != nil || c.size > sumCacheLimit {
		buf = append(buf, c.id...)
		if c.size > sumCacheLimit {
			recs = map[plumbing.Hash]dirSum{}
			for h := range c.used {
				recs[h] = c.known[h]
			}
		}
	}
	for h, s := range recs {
		buf = append(buf, h[:]...)
		buf = append(buf, s.version[:]...)
		buf = append(buf, s.digest[:]...)
		k := byte(0)
		if s.kept {
			k = 1
		}
		buf = append(buf, k)
		buf = binary.LittleEndian.AppendUint32(buf, s.files)
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

// nodeSummer computes dirSums of trees, reading blobs from the repository
// or from the contents a write is about to commit.
type nodeSummer struct {
	v     *Vault
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
	read   int // blobs read, for tests of how cost grows
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
	if c, ok := s.cache.known[h]; ok {
		s.cache.used[h] = true
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
			ve.Exec = e.Mode == filemode.Executable
			out.files++
			if f, ok := s.files[dir+e.Name]; ok && plumbing.Hash(f.GitOID) == e.Hash {
				ve.Sum = f.Sum
				if f.Kept {
					kept = append(kept, canon.Child{Key: published.FileKey(e.Name), Digest: f.Digest})
				}
				break
			}
			data, ok := s.sourceBlob(dir+e.Name, e.Hash)
			if !ok {
				var err error
				if data, err = s.blob(e.Hash); err != nil {
					return dirSum{}, err
				}
			}
			ve.Sum = blake3.Sum256(data)
			d, ok, err := published.FileDigest(s.alg, s.view, dir+e.Name, data)
			if err != nil {
				return dirSum{}, err
			}
			if ok {
				kept = append(kept, canon.Child{Key: published.FileKey(e.Name), Digest: d})
			}
		default:
			return dirSum{}, fmt.Errorf("%s%s: a %v entry has no place in a world-model", dir, e.Name, e.Mode)
		}
		vents = append(vents, ve)
	}
	out.version = published.DirVersion(vents)
	out.digest, out.kept = published.DirDigest(s.alg, kept)
	s.cache.known[h] = out
	s.cache.added[h] = out
	s.cache.used[h] = true
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
