package published

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
// Every entry is a fact that stays true: "the file with this stat data has
// this content". A scan uses an entry only when the stat data still
// matches, so any subset of the entries, however old, is safe; losing
// entries costs re-reads, never a wrong result.
//
// The file holds one directory under one fingerprint setup (hash algorithm,
// spec hash, declared facets). A cache of another directory, another setup,
// another format version, or whose header or first block fails its
// checksum is ignored and rebuilt: it is never trusted in part.
//
// Base and deltas. Rewriting 10,000 entries after a one-file edit costs
// more than the scan itself, so the file is a base block followed by delta
// blocks: a scan that changed a few entries appends one delta (the entries
// that changed or appeared, the paths that went away) with a single
// O_APPEND write. A load applies the deltas in order. After 32 deltas, or
// when the deltas grow past half the base, or after a torn or corrupt
// block (which ends the load: what came before it is still good), the next
// scan rewrites the whole file.
//
// Racy entries. Timestamps have a granularity: a file modified again within
// the same tick as the stat that recorded it keeps its old mtime. As in git,
// an entry whose mtime — or ctime: a file copied with its old mtime (cp -p,
// rsync -t) was still written now — is not older than the scan's start
// minus the granularity is flagged racy, and a racy entry is read again by the next
// full scan (an informed scan trusts the caller and carries the flag over).
// The granularity is taken as 20 ms when the files show sub-second
// timestamps (a coarse kernel clock tick, twice over), else 2 s (FAT and
// other whole-second file systems).
//
// Durability. A rewrite goes to a temporary file in the cache's directory,
// renamed over the old one; neither it nor an append is fsynced. After a
// crash the cache may be stale, torn or empty; its checksums reject what is
// damaged, which costs re-reads and nothing else. Syncing would cost more
// on every publish than it could save. Appending processes check that the
// file is still the one they loaded; concurrent scans of one directory at
// worst lose entries.
//
// Format (little-endian):
//
//	header: magic "PRSCACHE", u32 format version,
//	        u32 length + bytes of the scanned directory's absolute path,
//	        u32 length + bytes of the fingerprint setup's identity,
//	        u32 CRC-32C of the header so far
//	block:  u32 payload length, payload, u32 CRC-32C of length and payload
//	payload: u8 kind (1 base, 2 delta),
//	        u32 file count, the file entries in path byte order,
//	        u32 directory count, the directory entries in path byte order;
//	        a delta then lists the files and the directories that went
//	        away: u32 count and the paths (u32 length + bytes), sorted, for
//	        each.
//
// An entry is a fixed part (u32 path length, i64 size, i64 mtime, i64
// ctime, u64 inode, u32 mode, u8 flags, u16 facet digest count, 32-byte
// BLAKE3, 20-byte git blob id, 32-byte digest of the reduced value), the
// path bytes, and per facet digest a u16 facet index (in declared order), a
// u8 presence flag and the 32-byte digest.
//
// A directory entry (every directory but the root) keeps what Scan computed
// for it: u32 path length, u8 flags (kept), the 32-byte digest of its
// reduced truth, its 32-byte version tree hash, then the path. A scan takes
// a directory whole from the cache when nothing below it was read or went
// away, so only the directories above a change are hashed again.

const (
	cacheMagic   = "PRSCACHE"
	cacheVersion = 3

	blockBase  = 1
	blockDelta = 2

	maxDeltas = 32 // deltas before a rewrite

	cacheFixed  = 4 + 8 + 8 + 8 + 8 + 4 + 1 + 2 + 32 + 20 + 32
	cacheSubLen = 2 + 1 + 32
	dirFixed    = 4 + 1 + 32 + 32

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

// castagnoli is made on first use: making the table costs ≈ 0.15 ms,
// which a package initializer would charge every command.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// statCache is a loaded cache: the state after the base and its deltas.
// Entries are located in data, which is never modified after loading;
// paths are strings sharing data's memory.
type statCache struct {
	data   []byte
	recs   []cacheRec  // files
	dirs   []cacheRec  // directories
	file   os.FileInfo // the file loaded, to append only to the same file
	deltas int         // delta blocks applied
	deltaB int         // their size in bytes
	baseB  int         // the base block's size in bytes
	torn   bool        // a bad block ended the load: rewrite next time
}

type cacheRec struct {
	path string
	off  uint32 // offset of the fixed part in data
}

// loadCache reads the cache at file for the directory root and the
// fingerprint setup id. It returns nil when the cache is absent, corrupt or
// belongs to another directory or setup.
func loadCache(file, root, id string) *statCache {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<31 {
		return nil
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil
	}
	c, err := parseCache(data, root, id)
	if err != nil {
		return nil
	}
	c.file = fi
	return c
}

var errBadCache = errors.New("malformed stat cache")

// cacheHeader returns the header of a cache for root and id.
func cacheHeader(root, id string) []byte {
	b := make([]byte, 0, len(cacheMagic)+16+len(root)+len(id))
	b = append(b, cacheMagic...)
	b = binary.LittleEndian.AppendUint32(b, cacheVersion)
	b = appendStr(b, root)
	b = appendStr(b, id)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// parseCache checks and indexes a cache file's bytes.
func parseCache(data []byte, root, id string) (*statCache, error) {
	hdr := cacheHeader(root, id)
	if !bytes.HasPrefix(data, hdr) {
		return nil, errBadCache
	}
	c := &statCache{data: data}
	off := len(hdr)
	var files, dirs overlay
	for off < len(data) {
		if len(data)-off < 9 {
			c.torn = true
			break
		}
		plen := int(binary.LittleEndian.Uint32(data[off:]))
		end := off + 4 + plen
		if plen < 1 || plen > len(data) || end+4 > len(data) ||
			crc32.Checksum(data[off:end], castagnoli()) != binary.LittleEndian.Uint32(data[end:]) {
			c.torn = true
			break
		}
		kind := data[off+4]
		first := off == len(hdr)
		if first != (kind == blockBase) || kind != blockBase && kind != blockDelta {
			c.torn = true
			break
		}
		b, ok := parseBlock(data, off+4, end, kind == blockDelta)
		if !ok {
			c.torn = true
			break
		}
		if first {
			c.recs, c.dirs, c.baseB = b.files, b.dirs, end+4-off
		} else {
			files.apply(b.files, b.goneFiles)
			dirs.apply(b.dirs, b.goneDirs)
			c.deltas++
			c.deltaB += end + 4 - off
		}
		off = end + 4
	}
	if c.baseB == 0 {
		return nil, errBadCache
	}
	c.recs = files.onto(c.recs)
	c.dirs = dirs.onto(c.dirs)
	return c, nil
}

// block is a parsed block payload.
type block struct {
	files, dirs         []cacheRec
	goneFiles, goneDirs []string
}

// parseBlock indexes the block payload data[start:end]; a delta also lists
// what went away.
func parseBlock(data []byte, start, end int, delta bool) (b block, ok bool) {
	r := blockReader{data: data, off: start + 1, end: end}
	b.files = r.entries(cacheFixed, func(off int) int {
		return cacheFixed + int(binary.LittleEndian.Uint16(data[off+offNSub:]))*cacheSubLen
	})
	b.dirs = r.entries(dirFixed, func(int) int { return dirFixed })
	if delta {
		b.goneFiles = r.paths()
		b.goneDirs = r.paths()
	}
	return b, !r.bad && r.off == end
}

// blockReader reads the sections of a block payload.
type blockReader struct {
	data     []byte
	off, end int
	bad      bool
}

func (r *blockReader) count(min int) int {
	if r.bad || r.end-r.off < 4 {
		r.bad = true
		return 0
	}
	n := int(binary.LittleEndian.Uint32(r.data[r.off:]))
	r.off += 4
	if n < 0 || n > (r.end-r.off)/min {
		r.bad = true
		return 0
	}
	return n
}

// entries reads a counted section of entries: each starts with the u32
// length of its path, which follows the fixed part of fixed bytes; sizeOf
// returns the entry's size without the path. Paths must ascend.
func (r *blockReader) entries(fixed int, sizeOf func(off int) int) []cacheRec {
	n := r.count(fixed)
	if r.bad {
		return nil
	}
	recs := make([]cacheRec, n)
	prev := ""
	for i := range recs {
		if r.end-r.off < fixed {
			r.bad = true
			return nil
		}
		plen := int(binary.LittleEndian.Uint32(r.data[r.off:]))
		size := sizeOf(r.off)
		next := r.off + size + plen
		if plen == 0 || plen > r.end || next > r.end {
			r.bad = true
			return nil
		}
		p := sharedString(r.data[r.off+fixed : r.off+fixed+plen])
		if i > 0 && p <= prev {
			r.bad = true
			return nil
		}
		prev = p
		recs[i] = cacheRec{path: p, off: uint32(r.off)}
		r.off = next
	}
	return recs
}

// paths reads a counted section of paths.
func (r *blockReader) paths() []string {
	n := r.count(5)
	if r.bad {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		if r.end-r.off < 4 {
			r.bad = true
			return nil
		}
		plen := int(binary.LittleEndian.Uint32(r.data[r.off:]))
		r.off += 4
		if plen == 0 || plen > r.end-r.off {
			r.bad = true
			return nil
		}
		out[i] = sharedString(r.data[r.off : r.off+plen])
		r.off += plen
	}
	return out
}

// sharedString returns b as a string without copying. The cache's data is
// never written after loading, so the string stays immutable, and loading
// allocates nothing per entry.
func sharedString(b []byte) string {
	return unsafe.String(&b[0], len(b))
}

// overlay accumulates the deltas of one kind of entry, later ones winning.
type overlay struct {
	over map[string]uint32 // path → entry offset
	gone map[string]bool
}

func (o *overlay) apply(recs []cacheRec, gone []string) {
	if o.over == nil {
		o.over, o.gone = map[string]uint32{}, map[string]bool{}
	}
	for _, p := range gone {
		delete(o.over, p)
		o.gone[p] = true
	}
	for _, r := range recs {
		o.over[r.path] = r.off
		delete(o.gone, r.path)
	}
}

// onto returns base (sorted) with the overlay's entries replacing or
// joining it and its removed paths taken out.
func (o *overlay) onto(base []cacheRec) []cacheRec {
	if len(o.over) == 0 && len(o.gone) == 0 {
		return base
	}
	added := make([]cacheRec, 0, len(o.over))
	for p, off := range o.over {
		added = append(added, cacheRec{path: p, off: off})
	}
	slices.SortFunc(added, func(a, b cacheRec) int { return strings.Compare(a.path, b.path) })
	out := make([]cacheRec, 0, len(base)+len(added))
	j := 0
	for _, r := range base {
		for j < len(added) && added[j].path < r.path {
			out = append(out, added[j])
			j++
		}
		if j < len(added) && added[j].path == r.path {
			out = append(out, added[j])
			j++
			continue
		}
		if !o.gone[r.path] {
			out = append(out, r)
		}
	}
	return append(out, added[j:]...)
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
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

// dirRecord is what the cache keeps about a directory.
type dirRecord struct {
	path   string
	kept   bool
	digest canon.Digest
	tree   [32]byte
}

// dir returns the cached record of the directory at path.
func (c *statCache) dir(path string) (dirRecord, bool) {
	if c == nil {
		return dirRecord{}, false
	}
	i, ok := slices.BinarySearchFunc(c.dirs, path, func(r cacheRec, p string) int { return strings.Compare(r.path, p) })
	if !ok {
		return dirRecord{}, false
	}
	b := c.data[c.dirs[i].off:]
	r := dirRecord{path: path, kept: b[4]&flagKept != 0}
	copy(r.digest[:], b[5:37])
	copy(r.tree[:], b[37:69])
	return r, true
}

// rewriteDue reports whether the next write should replace the whole file
// rather than append a delta of about deltaBytes.
func (c *statCache) rewriteDue(deltaBytes int) bool {
	return c == nil || c.torn || c.deltas+1 >= maxDeltas || 2*(c.deltaB+deltaBytes) > c.baseB
}

// blockWriter builds one block: file entries first, then directory
// entries, then (for a delta) the removed paths.
type blockWriter struct {
	buf     []byte
	start   int // offset of the block's length field
	n       int
	count   int // offset of the current section's count
	dirsSet bool
}

// newBlock starts a block of kind, appending to buf.
func newBlock(buf []byte, kind byte) *blockWriter {
	w := &blockWriter{buf: buf, start: len(buf)}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
	w.buf = append(w.buf, kind)
	w.section()
	return w
}

// section ends the current counted section and starts the next.
func (w *blockWriter) section() {
	if w.count > 0 {
		binary.LittleEndian.PutUint32(w.buf[w.count:], uint32(w.n))
	}
	w.count, w.n = len(w.buf), 0
	w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
}

// add appends one file entry; entries must come in path byte order.
func (w *blockWriter) add(e *Entry, st fileStat, flags uint8, fp *fileFP) {
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

// dirs appends the directory entries, in path byte order, after the files.
func (w *blockWriter) dirs(recs []dirRecord) {
	w.section()
	w.dirsSet = true
	for _, r := range recs {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(r.path)))
		var f uint8
		if r.kept {
			f = flagKept
		}
		w.buf = append(w.buf, f)
		w.buf = append(w.buf, r.digest[:]...)
		w.buf = append(w.buf, r.tree[:]...)
		w.buf = append(w.buf, r.path...)
		w.n++
	}
}

// finish ends the block, with the removed files and directories (sorted)
// for a delta, and returns the buffer.
func (w *blockWriter) finish(goneFiles, goneDirs []string) []byte {
	if !w.dirsSet {
		w.dirs(nil)
	}
	binary.LittleEndian.PutUint32(w.buf[w.count:], uint32(w.n))
	if w.buf[w.start+4] == blockDelta {
		for _, gone := range [][]string{goneFiles, goneDirs} {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(gone)))
			for _, p := range gone {
				w.buf = appendStr(w.buf, p)
			}
		}
	}
	binary.LittleEndian.PutUint32(w.buf[w.start:], uint32(len(w.buf)-w.start-4))
	return binary.LittleEndian.AppendUint32(w.buf, crc32.Checksum(w.buf[w.start:], castagnoli()))
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

// appendCacheFile appends a delta block to the cache at file, provided the
// file is still the one c was loaded from (the same file, not shorter: a
// rewrite replaces the file, so its header is the one c checked);
// otherwise it reports errStaleCache.
func appendCacheFile(file string, c *statCache, block []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	// Only onto exactly what was loaded: a delta appended by another scan
	// since then could name directories this one computed from the older
	// state, and the later delta wins. The caller then rewrites the file
	// whole from what it verified.
	fi, err := f.Stat()
	if err == nil && (!os.SameFile(fi, c.file) || fi.Size() != c.file.Size()) {
		err = errStaleCache
	}
	if err == nil {
		_, err = f.Write(block)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

var errStaleCache = errors.New("the stat cache changed since it was loaded")

// SetupID is the identity of a fingerprint setup: the algorithm, the spec,
// the declared facets and the view. Fingerprints computed under one setup
// say nothing about another, so a cache of them is keyed by it.
func SetupID(alg canon.Algorithm, spec *canon.Spec, view View) string {
	return cacheID(alg, spec, view)
}

// cacheID is the identity of a fingerprint setup for the cache: entries
// computed under another algorithm, spec or facet declaration are useless.
func cacheID(alg canon.Algorithm, spec *canon.Spec, view View) string {
	var b strings.Builder
	b.WriteString("truth-v1\n")
	if view != nil {
		b.WriteString("view " + view.ViewName() + "\n")
	}
	b.WriteString(alg.String())
	b.WriteByte('\n')
	b.WriteString(spec.Hash())
	for _, f := range canon.FacetNames(spec) {
		b.WriteByte('\n')
		b.WriteString(f)
	}
	return b.String()
}
