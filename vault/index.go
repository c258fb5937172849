package vault

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// indexEntry is one entry of the git index (.git/index), version 2 or 3.
type indexEntry struct {
	CtimeS, CtimeN, MtimeS, MtimeN uint32
	Dev, Ino, Mode, UID, GID, Size uint32
	OID                            plumbing.Hash
	Flags                          uint16 // stage and the assume-valid bit; the name length is recomputed
	ExtFlags                       uint16 // v3 extended flags (skip-worktree, intent-to-add)
	Name                           string
}

// gitIndex is the git index kept in its on-disk layout: a publish changes a
// handful of the tens of thousands of entries, so entries are found by
// binary search and patched in place rather than parsed and re-encoded.
// Optional extensions are dropped on write (git rebuilds its caches); a
// required extension prose cannot keep up to date makes the index
// read-only for prose.
//
// Racy entries. An entry's stat data says nothing about a change made in the
// same timestamp tick as the stat, so, as git does, an entry whose mtime is
// not older than the index file's own mtime is never trusted: its file is
// re-hashed. An index not read from a file trusts no entry.
type gitIndex struct {
	ver  uint32
	body []byte // the entries, as git lays them out
	offs []int  // where each entry starts in body

	// edits holds entries inserted (or removed: nil) since the body was
	// last laid out; merge splices them all in one pass, so a publish of n
	// new files costs O(n log n + index size), never n index rewrites.
	edits map[string]*indexEntry
	// moved counts the bytes of body copied by merges: how the cost of
	// index updates grows, for tests.
	moved int
	// lock is index.lock while this index is held for a write (openIndex).
	lock *gitLock
	// mu makes get, put and del safe for the workers of a checkout.
	mu sync.Mutex

	stamped        bool   // read from a file whose mtime is below
	mtimeS, mtimeN uint32 // the index file's mtime, as entries store it
}

// setStamp records the index file's modification time.
func (idx *gitIndex) setStamp(t time.Time) {
	idx.stamped, idx.mtimeS, idx.mtimeN = true, uint32(t.Unix()), uint32(t.Nanosecond())
}

// racy reports whether e's stat data cannot be trusted: its mtime is not
// older than the index file's (git's racy-git rule).
func (idx *gitIndex) racy(e *indexEntry) bool {
	if !idx.stamped {
		return true
	}
	return e.MtimeS > idx.mtimeS || (e.MtimeS == idx.mtimeS && e.MtimeN >= idx.mtimeN)
}

// A git index prose cannot use is either damaged (a torn write: git does not
// fsync it either), which the branch can rebuild, or in a format prose does
// not write (version 4, a split or sparse index), which holds the user's
// staged changes and must be left alone.
var (
	errIndexDamaged     = errors.New("damaged git index")
	errIndexUnsupported = errors.New("unsupported git index")
)

func (v *Vault) indexPath() string { return filepath.Join(v.gitDir, "index") }

// readIndex parses .git/index and notes its mtime; a missing index reads as
// empty.
func (v *Vault) readIndex() (*gitIndex, error) {
	f, err := os.Open(v.indexPath())
	if errors.Is(err, os.ErrNotExist) {
		return &gitIndex{ver: 2}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The mtime of the file read: git replaces the index by rename, so the
	// open file does not change under us.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// One read of the size the file has: the index is replaced by rename,
	// so the open file keeps that size.
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, damaged("is shorter than its size")
	}
	idx, err := parseIndex(data)
	if err != nil {
		return nil, err
	}
	idx.setStamp(fi.ModTime())
	return idx, nil
}

func damaged(why string) error {
	return fmt.Errorf("%w: .git/index %s; rebuild it with `git reset`", errIndexDamaged, why)
}

func unsupported(what, fix string) error {
	return fmt.Errorf("%w: .git/index %s, which prose cannot update; run `%s`, then retry (staged changes are kept)", errIndexUnsupported, what, fix)
}

func parseIndex(data []byte) (*gitIndex, error) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, damaged("is damaged")
	}
	// git 2.40 and later write a zero trailer when index.skipHash is on
	// (feature.manyFiles turns it on): the index is then not checksummed.
	trailer := data[len(data)-20:]
	if !bytes.Equal(trailer, make([]byte, 20)) {
		if sum := sha1.Sum(data[:len(data)-20]); !bytes.Equal(sum[:], trailer) {
			return nil, damaged("checksum mismatch")
		}
	}
	ver := binary.BigEndian.Uint32(data[4:])
	if ver != 2 && ver != 3 {
		return nil, unsupported(fmt.Sprintf("is version %d", ver), "git update-index --index-version 2")
	}
	n := int(binary.BigEndian.Uint32(data[8:]))
	all := data[12 : len(data)-20]
	idx := &gitIndex{ver: ver, offs: make([]int, 0, min(n, len(all)/62))}
	off := 0
	for i := 0; i < n; i++ {
		l, err := entryLen(all, off, ver)
		if err != nil {
			return nil, err
		}
		idx.offs = append(idx.offs, off)
		off += l
	}
	idx.body = all[:off]
	for off < len(all) {
		if off+8 > len(all) {
			return nil, damaged("has a truncated extension")
		}
		sig := all[off : off+4]
		size := int(binary.BigEndian.Uint32(all[off+4:]))
		if size > len(all)-off-8 {
			return nil, damaged("has a truncated extension")
		}
		// An extension whose name starts with an upper-case letter is an
		// optional cache that may be dropped; any other one is required.
		if sig[0] < 'A' || sig[0] > 'Z' {
			switch string(sig) {
			case "link":
				return nil, unsupported("is a split index", "git update-index --no-split-index")
			case "sdir":
				return nil, unsupported("is a sparse index", "git sparse-checkout disable")
			default:
				return nil, unsupported(fmt.Sprintf("uses the required extension %q", sig), "git update-index --no-split-index")
			}
		}
		off += 8 + size
	}
	return idx, nil
}

// entryLen is the length of the entry at off, padding included.
func entryLen(b []byte, off int, ver uint32) (int, error) {
	if off+62 > len(b) {
		return 0, damaged("has a truncated entry")
	}
	flags := binary.BigEndian.Uint16(b[off+60:])
	hdr := 62
	if flags&0x4000 != 0 {
		if ver < 3 {
			return 0, damaged("has an extended flag in a version 2 index")
		}
		hdr = 64
	}
	if off+hdr > len(b) {
		return 0, damaged("has a truncated entry")
	}
	nul := bytes.IndexByte(b[off+hdr:], 0)
	if nul < 0 {
		return 0, damaged("has an unterminated path")
	}
	n := (hdr + nul + 8) &^ 7
	if off+n > len(b) {
		return 0, damaged("has a truncated entry")
	}
	return n, nil
}

func (idx *gitIndex) len() int { return len(idx.offs) }

func (idx *gitIndex) hdrLen(i int) int {
	if binary.BigEndian.Uint16(idx.body[idx.offs[i]+60:])&0x4000 != 0 {
		return 64
	}
	return 62
}

// name returns entry i's path without copying.
func (idx *gitIndex) name(i int) []byte {
	o := idx.offs[i] + idx.hdrLen(i)
	nul := bytes.IndexByte(idx.body[o:], 0)
	return idx.body[o : o+nul]
}

// search returns the first entry whose path is not less than name.
func (idx *gitIndex) search(name string) int {
	return sort.Search(len(idx.offs), func(i int) bool { return string(idx.name(i)) >= name })
}

// entry decodes entry i.
func (idx *gitIndex) entry(i int) indexEntry {
	b := idx.body[idx.offs[i]:]
	u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
	e := indexEntry{
		CtimeS: u(0), CtimeN: u(1), MtimeS: u(2), MtimeN: u(3),
		Dev: u(4), Ino: u(5), Mode: u(6), UID: u(7), GID: u(8), Size: u(9),
		Name: string(idx.name(i)),
	}
	copy(e.OID[:], b[40:60])
	flags := binary.BigEndian.Uint16(b[60:])
	e.Flags = flags &^ 0x0fff &^ 0x4000
	if flags&0x4000 != 0 {
		e.ExtFlags = binary.BigEndian.Uint16(b[62:])
	}
	return e
}

// get returns the stage-0 entry for name, or nil.
func (idx *gitIndex) get(name string) *indexEntry {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if e, ok := idx.edits[name]; ok {
		if e == nil {
			return nil
		}
		c := *e
		return &c
	}
	i := idx.search(name)
	if i < idx.len() && string(idx.name(i)) == name {
		e := idx.entry(i)
		return &e
	}
	return nil
}

func appendEntry(dst []byte, e *indexEntry) []byte {
	var hdr [64]byte
	p := func(k int, x uint32) { binary.BigEndian.PutUint32(hdr[4*k:], x) }
	p(0, e.CtimeS)
	p(1, e.CtimeN)
	p(2, e.MtimeS)
	p(3, e.MtimeN)
	p(4, e.Dev)
	p(5, e.Ino)
	p(6, e.Mode)
	p(7, e.UID)
	p(8, e.GID)
	p(9, e.Size)
	copy(hdr[40:60], e.OID[:])
	nameLen := len(e.Name)
	if nameLen > 0xfff {
		nameLen = 0xfff
	}
	flags := e.Flags | uint16(nameLen)
	n := 62
	if e.ExtFlags != 0 {
		flags |= 0x4000
		binary.BigEndian.PutUint16(hdr[62:], e.ExtFlags)
		n = 64
	}
	binary.BigEndian.PutUint16(hdr[60:], flags)
	dst = append(dst, hdr[:n]...)
	dst = append(dst, e.Name...)
	pad := ((n + len(e.Name) + 8) &^ 7) - (n + len(e.Name))
	var zeros [8]byte
	return append(dst, zeros[:pad]...)
}

// put sets the stage-0 entry for e.Name. An existing entry's stat data and
// object id are patched in place; a new entry waits in edits for merge.
func (idx *gitIndex) put(e indexEntry) {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if _, pending := idx.edits[e.Name]; !pending {
		i := idx.search(e.Name)
		if i < idx.len() && string(idx.name(i)) == e.Name && idx.entry(i).Flags == e.Flags && e.ExtFlags == 0 && idx.hdrLen(i) == 62 &&
			(i+1 == idx.len() || string(idx.name(i+1)) != e.Name) {
			enc := appendEntry(nil, &e)
			copy(idx.body[idx.offs[i]:], enc[:62])
			return
		}
	}
	if idx.edits == nil {
		idx.edits = map[string]*indexEntry{}
	}
	idx.edits[e.Name] = &e
}

// del removes every entry (all stages) for name.
func (idx *gitIndex) del(name string) {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.edits == nil {
		idx.edits = map[string]*indexEntry{}
	}
	idx.edits[name] = nil
}

// merge lays the pending edits into body: one pass over the entries in
// order, each body entry copied once, each edited name replacing every
// stage of that name.
func (idx *gitIndex) merge() {
	if len(idx.edits) == 0 {
		return
	}
	names := make([]string, 0, len(idx.edits))
	extra := 0
	for n, e := range idx.edits {
		names = append(names, n)
		if e != nil {
			extra += 64 + len(n) + 8
		}
	}
	sort.Strings(names)
	body := make([]byte, 0, len(idx.body)+extra)
	offs := make([]int, 0, len(idx.offs)+len(names))
	emit := func(name string) {
		if e := idx.edits[name]; e != nil {
			offs = append(offs, len(body))
			body = appendEntry(body, e)
		}
	}
	k := 0
	for i := 0; i < len(idx.offs); {
		name := idx.name(i)
		for k < len(names) && names[k] < string(name) {
			emit(names[k])
			k++
		}
		j := i + 1
		for j < len(idx.offs) && bytes.Equal(idx.name(j), name) {
			j++
		}
		if k < len(names) && names[k] == string(name) {
			emit(names[k])
			k++
		} else {
			end := len(idx.body)
			if j < len(idx.offs) {
				end = idx.offs[j]
			}
			for m := i; m < j; m++ {
				offs = append(offs, len(body)+idx.offs[m]-idx.offs[i])
			}
			body = append(body, idx.body[idx.offs[i]:end]...)
			idx.moved += end - idx.offs[i]
		}
		i = j
	}
	for ; k < len(names); k++ {
		emit(names[k])
	}
	idx.body, idx.offs, idx.edits = body, offs, nil
}

// writeTo writes the encoded index to w without building it in memory
// first: header and entries as they are, then the SHA-1 of both.
func (idx *gitIndex) writeTo(w io.Writer) error {
	idx.merge()
	hdr := idx.header()
	sum := sha1.New()
	sum.Write(hdr)
	sum.Write(idx.body)
	for _, b := range [][]byte{hdr, idx.body, sum.Sum(nil)} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (idx *gitIndex) header() []byte {
	ver := idx.ver
	if ver == 0 {
		ver = 2
	}
	buf := make([]byte, 12)
	copy(buf, "DIRC")
	binary.BigEndian.PutUint32(buf[4:], ver)
	binary.BigEndian.PutUint32(buf[8:], uint32(len(idx.offs)))
	return buf
}

// encode serializes the index: header, entries, SHA-1 trailer.
func (idx *gitIndex) encode() []byte {
	var b bytes.Buffer
	_ = idx.writeTo(&b)
	return b.Bytes()
}

// openIndex takes .git/index.lock and reads the index under it, as git
// does: the lock is held until writeIndex renames it over the index, or
// release gives it up, so no `git add` between the read and the write is
// lost (it waits for the lock, or fails saying so).
func (v *Vault) openIndex() (*gitIndex, error) {
	l, err := v.takeGitLock(v.indexPath(), "index.lock")
	if err != nil {
		return nil, fmt.Errorf("update git index: %w", err)
	}
	idx, err := v.readIndex()
	if err != nil {
		l.release()
		return nil, err
	}
	idx.lock = l
	return idx, nil
}

// release gives up the index lock without writing; it does nothing after
// writeIndex or for an index read without the lock.
func (idx *gitIndex) release() {
	if idx != nil && idx.lock != nil {
		idx.lock.release()
		idx.lock = nil
	}
}

// writeIndex replaces .git/index the way git does: the new index is written
// to index.lock (taken by openIndex, or now) and renamed over the index.
func (v *Vault) writeIndex(idx *gitIndex) error {
	l := idx.lock
	if l == nil {
		var err error
		if l, err = v.takeGitLock(v.indexPath(), "index.lock"); err != nil {
			return fmt.Errorf("update git index: %w", err)
		}
	}
	idx.lock = nil
	defer l.release()
	// Like git, the index is not fsynced: it is a cache of the working
	// tree, and a damaged one is rebuilt from the branch (see syncWorktree).
	err := idx.writeTo(l.f)
	if err == nil {
		err = l.commit()
	}
	if err != nil {
		return fmt.Errorf("update git index: %w", err)
	}
	return nil
}

// statEntry fills the stat fields of an index entry from the file at path.
// Unlike git, prose does not smudge an entry that is racily clean (its mtime
// not older than the index file it goes into): prose wrote the file and
// knows its content, and every reader, git and prose (gitIndex.racy),
// re-hashes such an entry instead of trusting its stat data.
func statEntry(path string, e *indexEntry) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	fillStat(fi, e)
	return nil
}

func fillStat(fi fs.FileInfo, e *indexEntry) {
	if !fillStatSys(fi, e) {
		// No ctime, device or inode here: mtime and size must do.
		mt := fi.ModTime()
		e.MtimeS, e.MtimeN = uint32(mt.Unix()), uint32(mt.Nanosecond())
		e.CtimeS, e.CtimeN = e.MtimeS, e.MtimeN
	}
	e.Size = uint32(fi.Size())
	if fi.Mode()&0o111 != 0 {
		e.Mode = uint32(filemode.Executable)
	} else {
		e.Mode = uint32(filemode.Regular)
	}
}

// emptyBlob is the id of the empty blob: the one content an entry of size 0
// may be trusted to hold (git and refreshIndex smudge a racy entry's size to
// 0).
var emptyBlob = plumbing.NewHash("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")

// sameStatData reports whether a and b hold the same stat data (racy or
// not).
func sameStatData(a, b *indexEntry) bool {
	return a.CtimeS == b.CtimeS && a.CtimeN == b.CtimeN && a.MtimeS == b.MtimeS && a.MtimeN == b.MtimeN &&
		a.Dev == b.Dev && a.Ino == b.Ino && a.UID == b.UID && a.GID == b.GID && a.Size == b.Size && a.Mode == b.Mode
}

// setStatData copies the stat data of src into dst.
func setStatData(dst, src *indexEntry) {
	dst.CtimeS, dst.CtimeN, dst.MtimeS, dst.MtimeN = src.CtimeS, src.CtimeN, src.MtimeS, src.MtimeN
	dst.Dev, dst.Ino, dst.UID, dst.GID, dst.Size, dst.Mode = src.Dev, src.Ino, src.UID, src.GID, src.Size, src.Mode
}

// refreshed is an index entry whose file was hashed and found to hold the
// entry's content under other stat data: old as the index had it, new with
// the stat data taken before the hash.
type refreshed struct{ old, new indexEntry }

// refreshIndex stores the stat data of files found unchanged by hash, as
// `git update-index --refresh` does, so the next look trusts the stat data
// instead of reading every file again: a vault copied with `cp -a` or
// restored from a backup has new inodes and ctimes everywhere. It is a
// cache update, skipped whenever it cannot be done at once and safely: it
// takes index.lock only if it is free, keeps an entry only if the index
// still holds it as it was hashed, and smudges every other racy entry (as
// git does), since the newer index mtime would make its stat data trusted
// without a look.
func (v *Vault) refreshIndex(fresh []refreshed) {
	l := v.tryGitLock(v.indexPath(), "index.lock")
	if l == nil {
		return
	}
	idx, err := v.readIndex()
	if err != nil {
		l.release()
		return
	}
	idx.lock = l
	defer idx.release()
	verified := make(map[string]bool, len(fresh))
	for _, r := range fresh {
		verified[r.new.Name] = true
	}
	// The new index file's mtime makes every entry that is racy now
	// trusted; one that was not hashed is smudged first, as git does: size
	// 0 matches no non-empty file, and sameStat trusts size 0 only for the
	// empty blob, which every empty file holds.
	var smudge []indexEntry
	for i := 0; i < idx.len(); i++ {
		if !idx.racyAt(i) || verified[string(idx.name(i))] {
			continue
		}
		e := idx.entry(i)
		if e.Size == 0 {
			continue
		}
		e.Size = 0
		smudge = append(smudge, e)
	}
	n := 0
	for _, r := range fresh {
		i := idx.search(r.new.Name)
		if i >= idx.len() || string(idx.name(i)) != r.new.Name {
			continue
		}
		if e := idx.entry(i); e.OID != r.old.OID || !sameStatData(&e, &r.old) || e.Flags != r.old.Flags || e.ExtFlags != r.old.ExtFlags {
			continue
		}
		idx.put(r.new)
		n++
	}
	if n > 0 {
		for _, e := range smudge {
			idx.put(e)
		}
		_ = v.writeIndex(idx)
	}
}

// racyAt reports whether entry i is racy (see racy), without decoding it.
func (idx *gitIndex) racyAt(i int) bool {
	b := idx.body[idx.offs[i]:]
	e := indexEntry{MtimeS: binary.BigEndian.Uint32(b[8:]), MtimeN: binary.BigEndian.Uint32(b[12:])}
	return idx.racy(&e)
}

// statMatches reports whether the file's stat data equals what the index
// recorded, so its content is known without reading it. A racy entry never
// matches.
func (idx *gitIndex) statMatches(fi fs.FileInfo, e *indexEntry) bool {
	var cur indexEntry
	fillStat(fi, &cur)
	return idx.sameStat(&cur, e)
}

// sameStat reports whether cur, stat data just read, equals what the index
// recorded in e (never for a racy entry).
func (idx *gitIndex) sameStat(cur, e *indexEntry) bool {
	if idx.racy(e) || e.Size == 0 && e.OID != emptyBlob {
		return false // racy, or smudged by git or by refreshIndex
	}
	return cur.MtimeS == e.MtimeS && cur.MtimeN == e.MtimeN && cur.CtimeS == e.CtimeS &&
		cur.CtimeN == e.CtimeN && cur.Ino == e.Ino && cur.Size == e.Size && cur.Mode == e.Mode
}
