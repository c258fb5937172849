package vault

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// packNames lists the packfiles in the object directory.
func packNames(gitDir string) map[string]bool {
	names := map[string]bool{}
	ents, _ := os.ReadDir(filepath.Join(gitDir, "objects", "pack"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") {
			names[e.Name()] = true
		}
	}
	return names
}

// maxScannedCommits bounds what fetchedCommits holds in memory; past it a
// walk reads the rest through the object store.
const maxScannedCommits = 64 << 20

// fetchedCommits reads, in one sequential pass, the commits at the head
// of each pack a fetch added (git writes a pack's commits first), keyed by
// the id their content hashes to, so a walk over what arrived need not
// look each one up in the pack's index. A pack that cannot be read, and
// anything after its leading commits, is left out: the walk then reads
// those commits from the object store, so this is a shortcut, never a
// different answer.
func fetchedCommits(gitDir string, before map[string]bool) map[plumbing.Hash][]byte {
	out := map[plumbing.Hash][]byte{}
	budget := int64(maxScannedCommits)
	for name := range packNames(gitDir) {
		if before[name] {
			continue
		}
		budget = scanPackCommits(filepath.Join(gitDir, "objects", "pack", name), out, budget)
	}
	return out
}

// countingReader reads bytes through a bufio.Reader, counting them, so
// an object's pack offset is known; it is an io.ByteReader, so an
// inflater reads exactly one object's stream and checksum.
type countingReader struct {
	r   *bufio.Reader
	off int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.off += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.off++
	}
	return b, err
}

// scanPackCommits adds the leading run of commit objects of the packfile
// at path to out (a commit stored as a delta against an earlier commit of
// the run, or against one already in out, is applied), up to budget bytes
// of bodies, and returns the budget left. It stops at the first object
// that is not such a commit.
func scanPackCommits(path string, out map[plumbing.Hash][]byte, budget int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return budget
	}
	defer f.Close()
	br := &countingReader{r: bufio.NewReaderSize(f, 256<<10)}
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || string(hdr[:4]) != "PACK" {
		return budget
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return budget
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	byOff := map[int64][]byte{}
	var zr io.ReadCloser
	inflate := func(size uint64) ([]byte, bool) {
		if size > uint64(budget) {
			return nil, false
		}
		if zr == nil {
			var err error
			if zr, err = zlib.NewReader(br); err != nil {
				return nil, false
			}
		} else if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, false
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(zr, data); err != nil {
			return nil, false
		}
		var one [1]byte
		if n, err := zr.Read(one[:]); n != 0 || !errors.Is(err, io.EOF) {
			return nil, false
		}
		return data, true
	}
	for i := uint32(0); i < count; i++ {
		at := br.off
		c, err := br.ReadByte()
		if err != nil {
			return budget
		}
		typ, size, shift := plumbing.ObjectType((c>>4)&7), uint64(c&15), uint(4)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil || shift > 56 {
				return budget
			}
			size |= uint64(c&0x7f) << shift
			shift += 7
		}
		var base []byte
		switch typ {
		case plumbing.CommitObject:
		case plumbing.OFSDeltaObject:
			c, err := br.ReadByte()
			if err != nil {
				return budget
			}
			rel := int64(c & 0x7f)
			for c&0x80 != 0 {
				if c, err = br.ReadByte(); err != nil || rel > 1<<48 {
					return budget
				}
				rel = ((rel + 1) << 7) | int64(c&0x7f)
			}
			if base = byOff[at-rel]; base == nil {
				return budget
			}
		case plumbing.REFDeltaObject:
			var id plumbing.Hash
			if _, err := io.ReadFull(br, id[:]); err != nil {
				return budget
			}
			if base = out[id]; base == nil {
				return budget
			}
		default:
			return budget
		}
		data, ok := inflate(size)
		if !ok {
			return budget
		}
		if base != nil {
			if data, ok = applyDelta(base, data, budget); !ok {
				return budget
			}
		}
		h := sha1.New()
		h.Write([]byte("commit " + strconv.Itoa(len(data)) + "\x00"))
		h.Write(data)
		var id plumbing.Hash
		copy(id[:], h.Sum(nil))
		out[id] = data
		byOff[at] = data
		budget -= int64(len(data))
	}
	return budget
}

// deltaSize reads a delta header's size varint.
func deltaSize(d []byte) (uint64, []byte, bool) {
	var n uint64
	for shift := uint(0); len(d) > 0 && shift < 64; shift += 7 {
		c := d[0]
		d = d[1:]
		n |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return n, d, true
		}
	}
	return 0, nil, false
}

// applyDelta applies a git delta to base; a malformed delta, or a result
// over budget bytes, says no.
func applyDelta(base, d []byte, budget int64) ([]byte, bool) {
	src, d, ok := deltaSize(d)
	if !ok || src != uint64(len(base)) {
		return nil, false
	}
	dst, d, ok := deltaSize(d)
	if !ok || dst > uint64(budget) {
		return nil, false
	}
	out := make([]byte, 0, dst)
	for len(d) > 0 {
		op := d[0]
		d = d[1:]
		if op&0x80 == 0 {
			if op == 0 || int(op) > len(d) {
				return nil, false
			}
			out = append(out, d[:op]...)
			d = d[op:]
			continue
		}
		var off, n uint64
		for i := uint(0); i < 4; i++ {
			if op&(1<<i) != 0 {
				if len(d) == 0 {
					return nil, false
				}
				off |= uint64(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		for i := uint(0); i < 3; i++ {
			if op&(0x10<<i) != 0 {
				if len(d) == 0 {
					return nil, false
				}
				n |= uint64(d[0]) << (8 * i)
				d = d[1:]
			}
		}
		if n == 0 {
			n = 0x10000
		}
		if off+n > uint64(len(base)) || uint64(len(out))+n > dst {
			return nil, false
		}
		out = append(out, base[off:off+n]...)
	}
	if uint64(len(out)) != dst {
		return nil, false
	}
	return out, true
}
