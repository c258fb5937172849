package vault

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

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

// gitIndex is the parsed index. Optional extensions are dropped on write
// (git rebuilds its caches); a required extension prose cannot keep up to
// date makes the index read-only for prose.
type gitIndex struct {
	Entries []indexEntry
}

var errIndexFormat = errors.New("unsupported git index")

func (v *Vault) indexPath() string { return filepath.Join(v.gitDir, "index") }

// readIndex parses .git/index; a missing index reads as empty.
func (v *Vault) readIndex() (*gitIndex, error) {
	data, err := os.ReadFile(v.indexPath())
	if errors.Is(err, os.ErrNotExist) {
		return &gitIndex{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseIndex(data)
}

func parseIndex(data []byte) (*gitIndex, error) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, fmt.Errorf("%w: .git/index is damaged; rebuild it with `git reset`", errIndexFormat)
	}
	sum := sha1.Sum(data[:len(data)-20])
	if !bytes.Equal(sum[:], data[len(data)-20:]) {
		return nil, fmt.Errorf("%w: .git/index checksum mismatch; rebuild it with `git reset`", errIndexFormat)
	}
	ver := binary.BigEndian.Uint32(data[4:])
	if ver != 2 && ver != 3 {
		return nil, fmt.Errorf("%w: index version %d; run `git update-index --index-version 2`", errIndexFormat, ver)
	}
	n := binary.BigEndian.Uint32(data[8:])
	body := data[:len(data)-20]
	off := 12
	idx := &gitIndex{Entries: make([]indexEntry, 0, n)}
	for i := uint32(0); i < n; i++ {
		if off+62 > len(body) {
			return nil, fmt.Errorf("%w: truncated entry; rebuild it with `git reset`", errIndexFormat)
		}
		b := body[off:]
		var e indexEntry
		u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
		e.CtimeS, e.CtimeN, e.MtimeS, e.MtimeN = u(0), u(1), u(2), u(3)
		e.Dev, e.Ino, e.Mode, e.UID, e.GID, e.Size = u(4), u(5), u(6), u(7), u(8), u(9)
		copy(e.OID[:], b[40:60])
		flags := binary.BigEndian.Uint16(b[60:])
		e.Flags = flags &^ 0x0fff &^ 0x4000
		hdr := 62
		if flags&0x4000 != 0 {
			if ver < 3 {
				return nil, fmt.Errorf("%w: extended flag in a version 2 index", errIndexFormat)
			}
			e.ExtFlags = binary.BigEndian.Uint16(b[62:])
			hdr = 64
		}
		nul := bytes.IndexByte(b[hdr:], 0)
		if nul < 0 {
			return nil, fmt.Errorf("%w: unterminated path", errIndexFormat)
		}
		e.Name = string(b[hdr : hdr+nul])
		entLen := (hdr + nul + 8) &^ 7
		off += entLen
		idx.Entries = append(idx.Entries, e)
	}
	for off+8 <= len(body) {
		sig := body[off : off+4]
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, fmt.Errorf("%w: the index uses the %q extension; run `git update-index --no-split-index` or `git sparse-checkout disable`", errIndexFormat, sig)
		}
		off += 8 + size
	}
	return idx, nil
}

// encode serializes the index as version 2 (3 when an entry needs extended
// flags), entries sorted by name then stage.
func (idx *gitIndex) encode() []byte {
	less := func(i, j int) bool {
		a, b := &idx.Entries[i], &idx.Entries[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return (a.Flags>>12)&3 < (b.Flags>>12)&3
	}
	if !sort.SliceIsSorted(idx.Entries, less) {
		sort.SliceStable(idx.Entries, less)
	}
	ver := uint32(2)
	for _, e := range idx.Entries {
		if e.ExtFlags != 0 {
			ver = 3
		}
	}
	var buf bytes.Buffer
	buf.Grow(12 + len(idx.Entries)*96 + 20)
	var hdr [64]byte
	buf.WriteString("DIRC")
	binary.BigEndian.PutUint32(hdr[:], ver)
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(idx.Entries)))
	buf.Write(hdr[:8])
	for _, e := range idx.Entries {
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
		buf.Write(hdr[:n])
		buf.WriteString(e.Name)
		pad := ((n + len(e.Name) + 8) &^ 7) - (n + len(e.Name))
		buf.Write(make([]byte, pad))
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes()
}

// writeIndex replaces .git/index the way git does: index.lock created
// exclusively, written, fsynced, renamed over the index.
func (v *Vault) writeIndex(idx *gitIndex) error {
	lockPath := v.indexPath() + ".lock"
	// Record that prose owns index.lock, so that the next writer can
	// remove it if this process dies before the rename.
	owner := v.StatePath("index.lock.owner")
	if err := os.WriteFile(owner, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("update git index: %w", err)
	}
	defer os.Remove(owner)
	f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("update git index: %s exists; another git command is running, or one crashed (then remove the file)", lockPath)
	}
	if err != nil {
		return fmt.Errorf("update git index: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = w.Write(idx.encode())
	if err == nil {
		err = w.Flush()
	}
	// Like git, the index is not fsynced: it is a cache of the working
	// tree, and a damaged one is rebuilt from the branch (see syncWorktree).
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lockPath, v.indexPath())
	}
	if err != nil {
		os.Remove(lockPath)
		return fmt.Errorf("update git index: %w", err)
	}
	return nil
}

// statEntry fills the stat fields of an index entry from the file at path.
func statEntry(path string, e *indexEntry) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	fillStat(fi, e)
	return nil
}

func fillStat(fi fs.FileInfo, e *indexEntry) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok {
		e.CtimeS, e.CtimeN = uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec)
		e.MtimeS, e.MtimeN = uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec)
		e.Dev, e.Ino = uint32(st.Dev), uint32(st.Ino)
		e.UID, e.GID = st.Uid, st.Gid
	} else {
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

// statMatches reports whether the file's stat data equals what the index
// recorded, so its content is known without reading it.
func statMatches(fi fs.FileInfo, e *indexEntry) bool {
	var cur indexEntry
	fillStat(fi, &cur)
	return cur.MtimeS == e.MtimeS && cur.MtimeN == e.MtimeN && cur.CtimeS == e.CtimeS &&
		cur.CtimeN == e.CtimeN && cur.Ino == e.Ino && cur.Size == e.Size && cur.Mode == e.Mode
}

// removeStaleIndexLock removes .git/index.lock when a prose writer that has
// since died created it. A lock that git or a live process holds is kept.
func (v *Vault) removeStaleIndexLock() {
	owner := v.StatePath("index.lock.owner")
	data, err := os.ReadFile(owner)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err == nil && pid > 0 && pid != os.Getpid() && syscall.Kill(pid, 0) == nil {
		return // still running
	}
	os.Remove(v.indexPath() + ".lock")
	os.Remove(owner)
}
