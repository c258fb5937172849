package vault

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// A small blob is read here without go-git when it is stored whole: in a
// pack whose index go-git has already read (packFS keeps the index's
// bytes), or loose. go-git's path for one small packed blob — its scanner
// over a new buffered reader, the object copied into a memory object and
// out again through a reader — took ≈ 140 µs a blob in a write-slot, which
// reads about a dozen (the changed folder's pages for its index). Anything
// else (a delta, an object past fastBlobMax, an index go-git has not read,
// a read or inflate error, content whose hash is not h) answers !ok and
// the caller asks go-git, so this path never decides that an object is
// missing or damaged.

// fastBlobMax bounds a blob read here.
const fastBlobMax = 1 << 20

var zlibReaders sync.Pool // of io.ReadCloser implementing zlib.Resetter

// zlibReader returns a zlib reader of r from the pool (a new one is ≈ 40
// KiB of tables and window); give it back with zlibReaders.Put.
func zlibReader(r io.Reader) (io.ReadCloser, bool) {
	if z, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if z.(zlib.Resetter).Reset(r, nil) != nil {
			return nil, false
		}
		return z, true
	}
	z, err := zlib.NewReader(r)
	return z, err == nil
}

// inflate returns the size bytes zlib-compressed at the start of r.
func inflate(r io.Reader, size int64) ([]byte, bool) {
	zr, ok := zlibReader(r)
	if !ok {
		return nil, false
	}
	defer zlibReaders.Put(zr)
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, false
	}
	return data, true
}

// fastBlob reads blob h when it is stored whole; see above.
func (v *Vault) fastBlob(h plumbing.Hash) ([]byte, bool) {
	return v.fastObject(h, plumbing.BlobObject)
}

// fastObject reads object h of type t (a blob, tree or commit) when it is
// stored whole, as fastBlob does: a tree or commit read through go-git
// costs as much as a blob (the tip commit and the trees a write looks up
// are loose in a vault written since its last gc).
func (v *Vault) fastObject(h plumbing.Hash, t plumbing.ObjectType) ([]byte, bool) {
	data, ok := v.packs.packedObject(h, t)
	if !ok {
		data, ok = v.looseObject(h, t)
	}
	if !ok || objectHash(t, data) != h {
		return nil, false
	}
	return data, true
}

// looseObject reads object h of type t from its loose object file.
func (v *Vault) looseObject(h plumbing.Hash, t plumbing.ObjectType) ([]byte, bool) {
	f, err := openFile(v.objectPath(h), os.O_RDONLY, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > fastBlobMax+64 {
		return nil, false
	}
	raw := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, false
	}
	zr, ok := zlibReader(bytes.NewReader(raw))
	if !ok {
		return nil, false
	}
	defer zlibReaders.Put(zr)
	out, err := io.ReadAll(io.LimitReader(zr, fastBlobMax+32))
	if err != nil {
		return nil, false
	}
	hdr, body, ok := bytes.Cut(out, []byte{0})
	if !ok || !bytes.HasPrefix(hdr, []byte(t.String()+" ")) {
		return nil, false
	}
	return body, true
}

// packedObject reads object h of type t from a pack whose index go-git
// read.
func (fs *packFS) packedObject(h plumbing.Hash, t plumbing.ObjectType) ([]byte, bool) {
	fs.loadIndexes()
	fs.mu.Lock()
	var name string
	off := int64(-1)
	for n, idx := range fs.idx {
		if o, ok := idxOffset(idx, h); ok {
			name, off = n, o
			break
		}
	}
	fs.mu.Unlock()
	if off < 0 {
		return nil, false
	}
	pack := name[:len(name)-len(".idx")] + ".pack"
	bf, err := fs.Open(pack)
	if err != nil {
		return nil, false
	}
	c, ok := bf.(*packCursor)
	if !ok {
		return nil, false
	}
	var hdr [16]byte
	n, _ := c.f.ReadAt(hdr[:], off)
	if n < 1 {
		return nil, false
	}
	typ := (hdr[0] >> 4) & 7
	size := int64(hdr[0] & 15)
	i, shift := 0, 4
	for hdr[i]&0x80 != 0 {
		i++
		if i >= n || shift > 56 {
			return nil, false
		}
		size |= int64(hdr[i]&0x7f) << shift
		shift += 7
	}
	// A whole object of type t (the pack codes are plumbing's: 1 commit,
	// 2 tree, 3 blob); a delta (6, 7) is go-git's.
	if plumbing.ObjectType(typ) != t || size > fastBlobMax {
		return nil, false
	}
	return inflate(io.NewSectionReader(c.f, off+int64(i)+1, 1<<62), size)
}

// loadIndexes reads the indexes of the packs there are, once: a read can
// come before go-git's first, and go-git's then takes the bytes read here.
// A pack added later is read by go-git (its index is then kept too).
func (fs *packFS) loadIndexes() {
	fs.mu.Lock()
	done := fs.listed
	fs.listed = true
	fs.mu.Unlock()
	if done {
		return
	}
	ents, _ := os.ReadDir(filepath.Join(fs.root, "objects", "pack"))
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "pack-") && strings.HasSuffix(n, ".idx") {
			if f, err := fs.openIndex("objects/pack/" + n); err == nil {
				f.Close()
			}
		}
	}
}

// idxOffset looks h up in the bytes of a version-2 pack index and returns
// its offset in the pack.
func idxOffset(idx []byte, h plumbing.Hash) (int64, bool) {
	if len(idx) < idxFanEnd || !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return 0, false
	}
	fan := func(b int) uint32 { return binary.BigEndian.Uint32(idx[8+4*b:]) }
	total := int64(fan(255))
	namesEnd := idxFanEnd + 20*total
	if namesEnd+8*total > int64(len(idx)) {
		return 0, false
	}
	lo, hi := int64(0), int64(fan(int(h[0])))
	if h[0] > 0 {
		lo = int64(fan(int(h[0]) - 1))
	}
	for lo < hi {
		m := (lo + hi) / 2
		switch c := bytes.Compare(idx[idxFanEnd+20*m:idxFanEnd+20*m+20], h[:]); {
		case c == 0:
			o := int64(binary.BigEndian.Uint32(idx[namesEnd+4*total+4*m:]))
			if o&0x80000000 == 0 {
				return o, true
			}
			at := namesEnd + 8*total + 8*(o&0x7fffffff)
			if at+8 > int64(len(idx)) {
				return 0, false
			}
			return int64(binary.BigEndian.Uint64(idx[at:])), true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}
