package published

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/prose-store/prose/canon"
)

// The stat cache lets a scan trust a file whose stat data did not change
// since the last scan: such a file is never read again. It maps each path
// to the file's stat data (size, modification and change time in
// nanoseconds, inode, mode) and to what reading it produced: the BLAKE3 and
// git blob ids of its content and the digests of its reduced value (the
// whole file, and each facet projection that reaches inside it).
//
// The file holds one scan of one directory under one fingerprint setup
// (hash algorithm, spec hash, declared facets). A cache of another
// directory, another setup, another format version, or one whose checksum
// does not match is ignored and rebuilt: it is never trusted in part.
//
// Racy entries. Timestamps have a granularity: a file modified again within
// the same tick as the stat that recorded it keeps its old mtime. As in git,
// an entry whose mtime is not older than the scan's start minus the
// granularity is flagged racy, and a racy entry is read again by the next
// full scan (an informed scan trusts the caller and carries the flag over).
// The granularity is taken as 20 ms when the files show sub-second
// timestamps (a coarse kernel clock tick, twice over), else 2 s (FAT and
// other whole-second file systems).
//
// Durability. The cache is written to a temporary file in its directory and
// renamed over the old one, without fsync: after a crash it may be stale,
// torn or empty, and then its checksum or its stat data rejects it, which
// costs one full re-read and nothing else. Syncing would cost more on every
// publish than it saves.
//
// Format (little-endian):
//
//	magic "PRSCACHE", u32 format version,
//	u32 length + bytes of the scanned directory's absolute path,
//	u32 length + bytes of the fingerprint setup's identity,
//	u32 entry count, the entries in path byte order, then
//	u32 CRC-32C of everything before it.
//
// An entry is a fixed part (u32 path length, i64 size, i64 mtime, i64
// ctime, u64 inode, u32 mode, u8 flags, u16 facet digest count, 32-byte
// BLAKE3, 20-byte git blob id, 32-byte digest of the reduced value), the
// path bytes, and per facet digest a u16 facet index, a u8 presence flag and
// the 32-byte digest.

const (
	cacheMagic   = "PRSCACHE"
	cacheVersion = 1

	cacheFixed  = 4 + 8 + 8 + 8 + 8 + 4 + 1 + 2 + 32 + 20 + 32
	cacheSubLen = 2 + 1 + 32

	// Offsets within an entry's fixed part.
	offSize  = 4
	offMtime = 12
	offCtime = 20
	offIno   = 28
	offMode  = 36
	offFlags = 40
	offNSub  = 41
	offSum   = 43
	offOID   = 75
	offDig   = 95

	flagLink = 1 << 0 // reached through a symlink
	flagRacy = 1 << 1 // stat data not trustworthy: read again next time
	flagKept = 1 << 2 // the reduced value is kept (not wholly immaterial)

	racyFine   = 20_000_000    // ns: granularity on file systems with sub-second timestamps
	racyCoarse = 2_000_000_000 // ns: granularity on whole-second file systems
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// statCache is a loaded cache. Its entries are located in data, which is
// never modified after loading; paths are strings sharing data's memory.
type statCache struct {
	data []byte
	recs []cacheRec
}

type cacheRec struct {
	path string
	off  uint32 // offset of the fixed part
}

// loadCache reads the cache at file for the directory root and the
// fingerprint setup id. It returns nil when the cache is absent, corrupt or
// belongs to another directory or setup.
func loadCache(file, root, id string) *statCache {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	c, err := parseCache(data, root, id)
	if err != nil {
		return nil
	}
	return c
}

var errBadCache = errors.New("malformed stat cache")

// parseCache checks and indexes a cache file's bytes.
func parseCache(data []byte, root, id string) (*statCache, error) {
	if len(data) < len(cacheMagic)+4+4 || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, errBadCache
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errBadCache
	}
	r := cacheReader{b: body, off: len(cacheMagic)}
	if r.u32() != cacheVersion {
		return nil, errBadCache
	}
	if r.str() != root || r.str() != id {
		return nil, errBadCache
	}
	n := int(r.u32())
	if r.bad || n < 0 || n > (len(body)-r.off)/cacheFixed {
		return nil, errBadCache
	}
	c := &statCache{data: data, recs: make([]cacheRec, n)}
	prev := ""
	for i := range n {
		if len(body)-r.off < cacheFixed {
			return nil, errBadCache
		}
		off := r.off
		plen := int(binary.LittleEndian.Uint32(body[off:]))
		nsub := int(binary.LittleEndian.Uint16(body[off+offNSub:]))
		end := off + cacheFixed + plen + nsub*cacheSubLen
		if plen == 0 || plen > len(body) || end > len(body) || end < off {
			return nil, errBadCache
		}
		pb := body[off+cacheFixed : off+cacheFixed+plen]
		// The path shares data's memory: data is never written again, so
		// the string stays immutable, and loading allocates nothing per entry.
		p := unsafe.String(&pb[0], len(pb))
		if i > 0 && p <= prev {
			return nil, errBadCache
		}
		prev = p
		c.recs[i] = cacheRec{path: p, off: uint32(off)}
		r.off = end
	}
	if r.off != len(body) {
		return nil, errBadCache
	}
	return c, nil
}

type cacheReader struct {
	b   []byte
	off int
	bad bool
}

func (r *cacheReader) u32() uint32 {
	if r.bad || len(r.b)-r.off < 4 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *cacheReader) str() string {
	n := int(r.u32())
	if r.bad || n < 0 || len(r.b)-r.off < n {
		r.bad = true
		return "\x00invalid"
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

// len returns the number of entries; a nil cache has none.
func (c *statCache) len() int {
	if c == nil {
		return 0
	}
	return len(c.recs)
}

// stat returns the stat data of entry i.
func (c *statCache) stat(i int) fileStat {
	b := c.data[c.recs[i].off:]
	return fileStat{
		size:  int64(binary.LittleEndian.Uint64(b[offSize:])),
		mtime: int64(binary.LittleEndian.Uint64(b[offMtime:])),
		ctime: int64(binary.LittleEndian.Uint64(b[offCtime:])),
		ino:   binary.LittleEndian.Uint64(b[offIno:]),
		mode:  binary.LittleEndian.Uint32(b[offMode:]),
	}
}

// flags returns the flags of entry i.
func (c *statCache) flags(i int) uint8 {
	return c.data[int(c.recs[i].off)+offFlags]
}

// fill copies what reading entry i produced into e and fp.
func (c *statCache) fill(i int, e *Entry, fp *fileFP) {
	off := int(c.recs[i].off)
	b := c.data[off:]
	copy(e.Sum[:], b[offSum:offSum+32])
	copy(e.GitOID[:], b[offOID:offOID+20])
	fp.kept = b[offFlags]&flagKept != 0
	copy(fp.digest[:], b[offDig:offDig+32])
	nsub := int(binary.LittleEndian.Uint16(b[offNSub:]))
	fp.subs = nil
	if nsub > 0 {
		fp.subs = make([]subDigest, nsub)
		s := b[cacheFixed+len(c.recs[i].path):]
		for j := range fp.subs {
			r := s[j*cacheSubLen:]
			fp.subs[j].facet = binary.LittleEndian.Uint16(r)
			fp.subs[j].present = r[2] != 0
			copy(fp.subs[j].digest[:], r[3:35])
		}
	}
}

// cacheWriter builds a cache file.
type cacheWriter struct {
	buf []byte
	n   int
	at  int // offset of the entry count
}

func newCacheWriter(root, id string, sizeHint int) *cacheWriter {
	w := &cacheWriter{buf: make([]byte, 0, sizeHint)}
	w.buf = append(w.buf, cacheMagic...)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, cacheVersion)
	w.buf = appendStr(w.buf, root)
	w.buf = appendStr(w.buf, id)
	w.at = len(w.buf)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
	return w
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// add appends one entry; entries must come in path byte order.
func (w *cacheWriter) add(e *Entry, st fileStat, flags uint8, fp *fileFP) {
	if fp.kept {
		flags |= flagKept
	}
	b := w.buf
	b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Path)))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(st.ctime))
	b = binary.LittleEndian.AppendUint64(b, st.ino)
	b = binary.LittleEndian.AppendUint32(b, st.mode)
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(fp.subs)))
	b = append(b, e.Sum[:]...)
	b = append(b, e.GitOID[:]...)
	b = append(b, fp.digest[:]...)
	b = append(b, e.Path...)
	for _, s := range fp.subs {
		b = binary.LittleEndian.AppendUint16(b, s.facet)
		if s.present {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = append(b, s.digest[:]...)
	}
	w.buf = b
	w.n++
}

// bytes finishes the cache file's content.
func (w *cacheWriter) bytes() []byte {
	binary.LittleEndian.PutUint32(w.buf[w.at:], uint32(w.n))
	return binary.LittleEndian.AppendUint32(w.buf, crc32.Checksum(w.buf, castagnoli))
}

// writeCacheFile replaces the cache at file with data: a temporary file in
// the same directory renamed over it (no fsync; see the comment at the top
// of this file).
func writeCacheFile(file string, data []byte) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write stat cache %s: %w", file, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write stat cache %s: %w", file, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write stat cache %s: %w", file, err)
	}
	return nil
}

// cacheID is the identity of a fingerprint setup for the cache: entries
// computed under another algorithm, spec or facet declaration are useless.
func cacheID(alg canon.Algorithm, spec *canon.Spec) string {
	var b strings.Builder
	b.WriteString("truth-v1\n")
	b.WriteString(alg.String())
	b.WriteByte('\n')
	b.WriteString(spec.Hash())
	for _, f := range canon.FacetNames(spec) {
		b.WriteByte('\n')
		b.WriteString(f)
	}
	return b.String()
}
