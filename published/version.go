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
// is never read to recompute the address, and only the directories above a
// changed file hash anything new. Paths must be normalized and distinct;
// entries may come in any order.
func VersionOf(entries []Entry) string {
	sorted := slices.IsSortedFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	if !sorted {
		entries = slices.Clone(entries)
		slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	}
	type frame struct {
		path, name string
		body       []byte
	}
	var open []*frame
	var pool []*frame
	push := func(path, name string) {
		var f *frame
		if n := len(open); n < len(pool) {
			f = pool[n]
			f.path, f.name, f.body = path, name, f.body[:0]
		} else {
			f = &frame{path: path, name: name}
			pool = append(pool, f)
		}
		open = append(open, f)
	}
	h := blake3.New()
	var sum [32]byte
	hash := func(body []byte) {
		h.Reset()
		var hdr [32]byte
		h.Write(strconv.AppendInt(append(hdr[:0], "tree "...), int64(len(body)), 10))
		h.Write([]byte{0})
		h.Write(body)
		h.Sum(sum[:0])
	}
	push("", "")
	pop := func() {
		d := open[len(open)-1]
		open = open[:len(open)-1]
		hash(d.body)
		parent := open[len(open)-1]
		parent.body = appendTreeEntry(parent.body, "40000", d.name, sum[:])
	}
	for i := range entries {
		e := &entries[i]
		dir, name := "", e.Path
		if j := strings.LastIndexByte(e.Path, '/'); j >= 0 {
			dir, name = e.Path[:j], e.Path[j+1:]
		}
		if open[len(open)-1].path != dir {
			for len(open) > 1 && !isUnder(dir, open[len(open)-1].path) {
				pop()
			}
			for cur := open[len(open)-1]; cur.path != dir; cur = open[len(open)-1] {
				rest := dir
				if cur.path != "" {
					rest = dir[len(cur.path)+1:]
				}
				seg := rest
				if k := strings.IndexByte(rest, '/'); k >= 0 {
					seg = rest[:k]
				}
				push(join(cur.path, seg), seg)
			}
		}
		d := open[len(open)-1]
		mode := "100644"
		if e.Mode&0o111 != 0 {
			mode = "100755"
		}
		d.body = appendTreeEntry(d.body, mode, name, e.Sum[:])
	}
	for len(open) > 1 {
		pop()
	}
	hash(open[0].body)
	return "blake3:" + hex.EncodeToString(sum[:])
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
