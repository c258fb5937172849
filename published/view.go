package published

import (
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/prose-store/prose/canon"
)

// View is a node's own reading of its files as structured truth. A node
// whose files are not plain data (the wiki's pages are HTML whose truth is
// their meta and slots) registers one, and every fingerprint of the node —
// publish, fsck, diff, a node write — reads the files through it.
//
// Value returns the value of the file at path p (relative to the node
// directory) with content data, or ok false to let the default rule read
// it (ReadTruth). The key stays the default one. A view must be a pure
// function of (p, data): its result is cached by content.
type View interface {
	// ViewName names the view and its version, for cache identities; a
	// change of what Value returns must change the name.
	ViewName() string
	Value(p string, data []byte) (v any, ok bool, err error)
}

// FileDigest returns the digest a file contributes to its directory's
// digest under the key FileKey(base name), and false when the file is
// wholly immaterial. It is the per-file step of Scan's fingerprints with no
// spec (everything material): callers that keep directory digests of their
// own (a node write recomputing only the directories above a change) use it
// with DirDigest and FacetDigest and get the tokens Scan gives.
func FileDigest(alg canon.Algorithm, view View, p string, data []byte) (canon.Digest, bool, error) {
	c, err := newFPConfig(Options{Algorithm: alg, View: view})
	if err != nil {
		return canon.Digest{}, false, err
	}
	v, err := fileValue(view, p, data, nil)
	if err != nil {
		return canon.Digest{}, false, err
	}
	fp, err := c.fileFP(p, v)
	return fp.digest, fp.kept, err
}

// FileKey returns the key a file named name takes in its directory's
// object in the structured truth ("a.json" → "a", "a.html" → "a.html").
func FileKey(name string) string {
	k, _ := fileKey(name)
	return k
}

// DirDigest returns the digest of a directory from its kept children (any
// order; keys must be distinct) and false when none is kept.
func DirDigest(alg canon.Algorithm, kept []canon.Child) (canon.Digest, bool) {
	slices.SortFunc(kept, func(a, b canon.Child) int { return canon.CompareKeys(a.Key, b.Key) })
	return canon.DigestObject(alg, kept), len(kept) > 0
}

// FacetDigest returns the token digest of the facet formed by the top-level
// directory name with digest d, when the node declares no facets.
func FacetDigest(alg canon.Algorithm, name string, d canon.Digest) canon.Digest {
	return canon.DigestObject(alg, []canon.Child{{Key: name, Digest: d}})
}

// VersionEntry is one entry of a directory for DirVersion: a file (Sum is
// the BLAKE3 of its content) or a directory (Sum is its DirVersion).
type VersionEntry struct {
	Name      string
	Dir, Exec bool
	Sum       [32]byte
}

// DirVersion returns the version hash of a directory from its entries in
// git tree order, the hash VersionOf computes for it (the version address
// of a node is its root's DirVersion, written "blake3:<hex>").
func DirVersion(entries []VersionEntry) [32]byte {
	var body []byte
	for _, e := range entries {
		mode := "100644"
		switch {
		case e.Dir:
			mode = "40000"
		case e.Exec:
			mode = "100755"
		}
		body = appendTreeEntry(body, mode, e.Name, e.Sum[:])
	}
	h := blake3.New()
	h.Write(strconv.AppendInt([]byte("tree "), int64(len(body)), 10))
	h.Write([]byte{0})
	h.Write(body)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// CheckDirNames reports what a scan refuses in one directory (slash path
// dir, "" for the root): two entries whose names differ only in case or
// Unicode normalization, or two files that give the same key in the truth
// ("a.json" and "a.yaml"). Entries are given by name, with isDir telling
// a directory from a file. A writer that builds a node from its committed
// tree (not by scanning it) checks each directory it changes with it.
func CheckDirNames(dir string, names []string, isDir []bool) error {
	prefix := ""
	if dir != "" {
		prefix = strings.TrimSuffix(dir, "/") + "/"
	}
	d := &dirFrame{path: strings.TrimSuffix(dir, "/")}
	for i, name := range names {
		if isDir[i] {
			d.add(name, name, prefix+name+"/", false, canon.Digest{})
			continue
		}
		key, _ := fileKey(name)
		d.add(name, key, prefix+name, false, canon.Digest{})
	}
	return d.check()
}
