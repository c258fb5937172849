package published

import (
	"encoding/hex"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
)

// VersionOf returns the version address of a world-model: "blake3:" and the
// hex of the BLAKE3 Merkle tree of its entries, built like a git tree. A
// directory hashes as
//
//	BLAKE3("tree " ‖ decimal length of body ‖ NUL ‖ body)
//
// where body holds, per child in git order (a directory sorts as its name
// followed by "/", which is the byte order of full paths), the mode in octal
// ("100644", "100755", or "40000" for a directory), a space, the name, a NUL
// and the child's 32-byte hash: the entry's Sum for a file, the directory's
// hash for a directory. The address is the root directory's hash; the empty
// world-model hashes "tree 0\x00".
//
// Content is named by its BLAKE3 (Entry.Sum), so a file that did not change
// is never read to recompute the address, and Scan re-hashes only the
// directories above a changed file (the stat cache keeps the others').
// Paths must be normalized and distinct; entries may come in any order.
func VersionOf(entries []Entry) string {
	cmp := func(a, b Entry) int { return strings.Compare(a.Path, b.Path) }
	if !slices.IsSortedFunc(entries, cmp) {
		entries = slices.Clone(entries)
		slices.SortFunc(entries, cmp)
	}
	v := newVersionTree(entries)
	_ = walkTree(entries, v) // versionTree never fails
	return v.address()
}

// versionTree computes version addresses as a treeVisitor.
type versionTree struct {
	entries []Entry
	open    []*versionFrame
	pool    []*versionFrame
	h       *blake3.Hasher
	last    [32]byte // hash of the directory left last
}

type versionFrame struct {
	name string
	body []byte
}

func newVersionTree(entries []Entry) *versionTree {
	return &versionTree{entries: entries, h: blake3.New()}
}

func (v *versionTree) enter(path, name string) (bool, error) {
	var f *versionFrame
	if n := len(v.open); n < len(v.pool) {
		f = v.pool[n]
		f.name, f.body = name, f.body[:0]
	} else {
		f = &versionFrame{name: name}
		v.pool = append(v.pool, f)
	}
	v.open = append(v.open, f)
	return false, nil
}

func (v *versionTree) file(i int, name string) error {
	e := &v.entries[i]
	mode := "100644"
	if e.Mode&0o111 != 0 {
		mode = "100755"
	}
	f := v.open[len(v.open)-1]
	f.body = appendTreeEntry(f.body, mode, name, e.Sum[:])
	return nil
}

func (v *versionTree) leave() error {
	f := v.open[len(v.open)-1]
	v.open = v.open[:len(v.open)-1]
	v.h.Reset()
	var hdr [32]byte
	v.h.Write(strconv.AppendInt(append(hdr[:0], "tree "...), int64(len(f.body)), 10))
	v.h.Write([]byte{0})
	v.h.Write(f.body)
	v.h.Sum(v.last[:0])
	if len(v.open) > 0 {
		v.addDir(f.name, v.last)
	}
	return nil
}

// addDir adds a directory whose hash is known to the innermost open one.
func (v *versionTree) addDir(name string, sum [32]byte) {
	f := v.open[len(v.open)-1]
	f.body = appendTreeEntry(f.body, "40000", name, sum[:])
}

// address returns the version address once the root was left.
func (v *versionTree) address() string {
	return "blake3:" + hex.EncodeToString(v.last[:])
}

func appendTreeEntry(b []byte, mode, name string, sum []byte) []byte {
	b = append(b, mode...)
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, 0)
	return append(b, sum...)
}

// gitMode returns the git mode of a file: 0755 when any execute bit is set,
// else 0644.
func gitMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}
