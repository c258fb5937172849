package vault

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// FileEntry is one file of a world-model as the vault stores it.
type FileEntry struct {
	Path   string // slash path relative to the node root
	Mode   filemode.FileMode
	Size   int64
	OID    plumbing.Hash
	Source string // file to read the content from when the blob is new
}

// encodeTree returns the canonical git encoding of entries, sorted the way
// git sorts them (a directory compares as its name followed by "/").
func encodeTree(entries []object.TreeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool {
		return treeKey(entries[i]) < treeKey(entries[j])
	})
	var b bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&b, "%o %s\x00", uint32(e.Mode), e.Name)
		b.Write(e.Hash[:])
	}
	return b.Bytes()
}

func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// buildTree writes the tree for files (sorted by path) bottom-up. A directory
// whose tree object already exists is complete, so its blobs are not
// checked; only directories that changed cost blob writes.
func (b *objectBatch) buildTree(files []FileEntry) (plumbing.Hash, error) {
	h, _, err := b.buildDir(files, "")
	return h, err
}

func (b *objectBatch) buildDir(files []FileEntry, prefix string) (plumbing.Hash, []FileEntry, error) {
	var entries []object.TreeEntry
	var blobs []FileEntry
	i := 0
	for i < len(files) {
		rel := files[i].Path[len(prefix):]
		if slash := strings.IndexByte(rel, '/'); slash >= 0 {
			name := rel[:slash]
			sub := prefix + name + "/"
			j := i
			for j < len(files) && strings.HasPrefix(files[j].Path, sub) {
				j++
			}
			h, _, err := b.buildDir(files[i:j], sub)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
			i = j
			continue
		}
		entries = append(entries, object.TreeEntry{Name: rel, Mode: files[i].Mode, Hash: files[i].OID})
		blobs = append(blobs, files[i])
		i++
	}
	data := encodeTree(entries)
	h := plumbing.ComputeHash(plumbing.TreeObject, data)
	if b.has(h) {
		return h, nil, nil
	}
	for _, f := range blobs {
		if err := b.putFile(f.Source, f.Size, f.OID); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	if _, err := b.put(plumbing.TreeObject, data); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return h, blobs, nil
}

// tree reads a tree object; the zero hash reads as an empty tree.
func (v *Vault) tree(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return &object.Tree{}, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	t, err := object.GetTree(v.storage, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	return t, nil
}

// commit reads a commit object.
func (v *Vault) commit(h plumbing.Hash) (*object.Commit, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	c, err := object.GetCommit(v.storage, h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

// blob reads a whole blob.
func (v *Vault) blob(h plumbing.Hash) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	bl, err := object.GetBlob(v.storage, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	r, err := bl.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// lookup finds the entry at slash path p under tree root.
func (v *Vault) lookup(root plumbing.Hash, p string) (object.TreeEntry, bool, error) {
	cur := root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		t, err := v.tree(cur)
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
