package vault

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// packWriter streams the objects of a large batch into one git packfile
// (version 2, every object whole, no deltas) and writes its index
// (version 2) at the end. A batch of thousands of objects then costs two
// files instead of thousands, and the pack becomes visible to git and to
// go-git only when its .idx is renamed into place.
type packWriter struct {
	dir      string // .git/objects/pack
	tmp      string
	f        *os.File
	w        *bufio.Writer
	off      int64
	entries  []packEntry
	pack     string // final paths, known once finished
	idx      string
	idxTmp   string
	finished bool
}

type packEntry struct {
	hash plumbing.Hash
	off  int64
	crc  uint32
}

// packTempPrefix names the temporary files of packs being written. Git's
// own cleanup (`git prune`) removes only its tmp_* files, never these; the
// vault's repair removes ones a killed writer left.
const packTempPrefix = "prose-pack-"

func newPackWriter(gitDir string, rnd string) (*packWriter, error) {
	dir := filepath.Join(gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, packTempPrefix+rnd+".pack")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return nil, err
	}
	p := &packWriter{dir: dir, tmp: tmp, f: f, w: bufio.NewWriterSize(f, 256<<10)}
	// The object count is filled in by finish.
	if _, err := p.w.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}); err != nil {
		p.abort()
		return nil, err
	}
	p.off = 12
	return p, nil
}

// crcCounter counts and checksums what is written through it.
type crcCounter struct {
	w   io.Writer
	n   int64
	crc uint32
}

func (c *crcCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, crc32.IEEETable, p[:n])
	return n, err
}

// add appends one object of type t and size; fill writes its content, which
// is compressed on the way. A failed fill leaves the pack as it was.
func (p *packWriter) add(h plumbing.Hash, t plumbing.ObjectType, size int64, fill func(io.Writer) error) error {
	start := p.off
	cw := &crcCounter{w: p.w}
	zw := zlibPool.Get().(*zlib.Writer)
	defer zlibPool.Put(zw)
	_, err := cw.Write(packHeader(t, size))
	if err == nil {
		zw.Reset(cw)
		err = fill(zw)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return p.cutBack(start, err)
	}
	p.entries = append(p.entries, packEntry{hash: h, off: start, crc: cw.crc})
	p.off += cw.n
	return nil
}

// addDeflated appends one object of type t and size whose zlib stream z
// is (compressed by the caller, at zlibPool's level).
func (p *packWriter) addDeflated(h plumbing.Hash, t plumbing.ObjectType, size int64, z []byte) error {
	start := p.off
	cw := &crcCounter{w: p.w}
	_, err := cw.Write(packHeader(t, size))
	if err == nil {
		_, err = cw.Write(z)
	}
	if err != nil {
		return p.cutBack(start, err)
	}
	p.entries = append(p.entries, packEntry{hash: h, off: start, crc: cw.crc})
	p.off += cw.n
	return nil
}

// packHeader is a pack entry's type and size, as git encodes them.
func packHeader(t plumbing.ObjectType, size int64) []byte {
	hdr := make([]byte, 0, 10)
	c := byte(t)<<4 | byte(size&0x0f)
	for s := size >> 4; s != 0; s >>= 7 {
		hdr = append(hdr, c|0x80)
		c = byte(s & 0x7f)
	}
	return append(hdr, c)
}

// cutBack cuts the pack back to start, where a failed entry began, and
// returns err.
func (p *packWriter) cutBack(start int64, err error) error {
	if ferr := p.w.Flush(); ferr == nil {
		if terr := p.f.Truncate(start); terr == nil {
			_, _ = p.f.Seek(start, io.SeekStart)
			p.w.Reset(p.f)
			return err
		}
	}
	return fmt.Errorf("%w (and the pack could not be cut back)", err)
}

// finish completes the pack (object count and checksum) and writes its
// index beside it, both as temporary files, closed and not yet durable.
func (p *packWriter) finish() error {
	if err := p.w.Flush(); err != nil {
		return err
	}
	var count [4]byte
	binary.BigEndian.PutUint32(count[:], uint32(len(p.entries)))
	if _, err := p.f.WriteAt(count[:], 8); err != nil {
		return err
	}
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sum := sha1.New()
	if _, err := io.Copy(sum, p.f); err != nil {
		return err
	}
	packSum := sum.Sum(nil)
	if _, err := p.f.Write(packSum); err != nil {
		return err
	}
	if err := p.f.Close(); err != nil {
		return err
	}
	p.f = nil
	name := "pack-" + hex.EncodeToString(packSum)
	p.pack = filepath.Join(p.dir, name+".pack")
	p.idx = filepath.Join(p.dir, name+".idx")
	p.idxTmp = strings.TrimSuffix(p.tmp, ".pack") + ".idx"
	if err := os.WriteFile(p.idxTmp, p.index(packSum), 0o444); err != nil {
		return err
	}
	p.finished = true
	return nil
}

// index encodes the pack's version 2 index.
func (p *packWriter) index(packSum []byte) []byte {
	sort.Slice(p.entries, func(i, j int) bool { return bytes.Compare(p.entries[i].hash[:], p.entries[j].hash[:]) < 0 })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range p.entries {
		fan[e.hash[0]]++
	}
	var u [8]byte
	total := uint32(0)
	for i := range fan {
		total += fan[i]
		binary.BigEndian.PutUint32(u[:4], total)
		b.Write(u[:4])
	}
	for _, e := range p.entries {
		b.Write(e.hash[:])
	}
	for _, e := range p.entries {
		binary.BigEndian.PutUint32(u[:4], e.crc)
		b.Write(u[:4])
	}
	var large []int64
	for _, e := range p.entries {
		off := uint32(e.off)
		if e.off >= 1<<31 {
			off = 1<<31 | uint32(len(large))
			large = append(large, e.off)
		}
		binary.BigEndian.PutUint32(u[:4], off)
		b.Write(u[:4])
	}
	for _, off := range large {
		binary.BigEndian.PutUint64(u[:], uint64(off))
		b.Write(u[:])
	}
	b.Write(packSum)
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// abort removes the pack's temporary files.
func (p *packWriter) abort() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
	os.Remove(p.tmp)
	if p.idxTmp != "" {
		os.Remove(p.idxTmp)
	}
}

// packIndexes finds which pack holds an object, for refreshing its mtime.
// It reads no index whole: each index's fan-out table (1 KiB) is read once
// per batch, and a lookup reads the names of the object's bucket (about
// n/256 of them), once per bucket and batch. A publish asking about a few
// objects costs a few small reads whatever the size of the packs; one
// asking about thousands reads each bucket once. Each index is opened once
// per batch, at its first lookup, and closed by release (the batch's flush
// or abort).
type packIndexes struct {
	loaded bool
	packs  []*packIndex
}

func (pi *packIndexes) load(gitDir string) {
	pi.loaded = true
	dir := filepath.Join(gitDir, "objects", "pack")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, "pack-") && strings.HasSuffix(name, ".idx") {
			p := fileIndex(filepath.Join(dir, name))
			p.pack = filepath.Join(dir, strings.TrimSuffix(name, ".idx")+".pack")
			pi.packs = append(pi.packs, p)
		}
	}
}

// find returns the path of a pack that holds h, or "".
func (pi *packIndexes) find(gitDir string, h plumbing.Hash) string {
	if !pi.loaded {
		pi.load(gitDir)
	}
	for _, p := range pi.packs {
		if p.contains(h) {
			if _, err := os.Stat(p.pack); err == nil {
				return p.pack
			}
		}
	}
	return ""
}

// release closes the indexes' files and forgets what was read: a later
// lookup lists the packs again (the batch's own pack among them).
func (pi *packIndexes) release() {
	for _, p := range pi.packs {
		if p.close != nil {
			p.close()
		}
	}
	pi.loaded, pi.packs = false, nil
}

// packIndex looks objects up in one version-2 pack index. An index it
// cannot read, or one that is not version 2 or whose fan-out does not fit
// its size, lists nothing (the object is then written again).
type packIndex struct {
	pack string
	// readAt reads len(b) bytes of the index at off; size is its size.
	readAt  func(b []byte, off int64) error
	size    func() (int64, error)
	close   func()   // releases what readAt holds, if anything
	fan     []uint32 // the fan-out table, once read
	bad     bool
	buckets map[byte][]byte // names of the buckets read so far
}

// fileIndex is a packIndex of the index file at path. The file is opened
// at the first read and kept open until close: a write-slot looks up about
// a dozen objects, each once an open, a read and a close of the same file.
// An index is never rewritten in place (its name is its pack's hash), so
// the open file reads what the path names.
func fileIndex(path string) *packIndex {
	var f *os.File
	open := func() error {
		if f != nil {
			return nil
		}
		var err error
		f, err = os.Open(path)
		return err
	}
	return &packIndex{
		readAt: func(b []byte, off int64) error {
			if err := open(); err != nil {
				return err
			}
			_, err := f.ReadAt(b, off)
			return err
		},
		size: func() (int64, error) {
			if err := open(); err != nil {
				return 0, err
			}
			fi, err := f.Stat()
			if err != nil {
				return 0, err
			}
			return fi.Size(), nil
		},
		close: func() {
			if f != nil {
				f.Close()
				f = nil
			}
		},
	}
}

// readerIndex is a packIndex of an index held by r, of size bytes.
func readerIndex(r io.ReaderAt, size int64) *packIndex {
	return &packIndex{
		readAt: func(b []byte, off int64) error { _, err := r.ReadAt(b, off); return err },
		size:   func() (int64, error) { return size, nil },
	}
}

const idxFanEnd = 8 + 256*4 // header and fan-out

func (p *packIndex) readFan() {
	size, err := p.size()
	var hdr [idxFanEnd]byte
	if err != nil || size < idxFanEnd || p.readAt(hdr[:], 0) != nil || !bytes.Equal(hdr[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		p.bad = true
		return
	}
	fan := make([]uint32, 256)
	prev := uint32(0)
	for i := range fan {
		fan[i] = binary.BigEndian.Uint32(hdr[8+4*i:])
		if fan[i] < prev {
			p.bad = true
			return
		}
		prev = fan[i]
	}
	// The names of every object must fit in the file before any is read.
	if int64(idxFanEnd)+20*int64(fan[255]) > size {
		p.bad = true
		return
	}
	p.fan, p.buckets = fan, map[byte][]byte{}
}

func (p *packIndex) contains(h plumbing.Hash) bool {
	if p.fan == nil && !p.bad {
		p.readFan()
	}
	if p.bad {
		return false
	}
	names, ok := p.buckets[h[0]]
	if !ok {
		lo := uint32(0)
		if h[0] > 0 {
			lo = p.fan[h[0]-1]
		}
		if hi := p.fan[h[0]]; hi > lo {
			names = make([]byte, 20*int(hi-lo))
			if p.readAt(names, idxFanEnd+20*int64(lo)) != nil {
				p.bad = true
				return false
			}
		}
		p.buckets[h[0]] = names
	}
	n := len(names) / 20
	i := sort.Search(n, func(i int) bool { return bytes.Compare(names[20*i:20*i+20], h[:]) >= 0 })
	return i < n && bytes.Equal(names[20*i:20*i+20], h[:])
}

// idxContains reports whether the version-2 pack index at path lists h.
func idxContains(path string, h plumbing.Hash) bool {
	p := fileIndex(path)
	defer p.close()
	return p.contains(h)
}
