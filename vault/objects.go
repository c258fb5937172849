package vault

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/internal/ctxio"
	"github.com/prose-store/prose/internal/durable"
)

// objectBatch writes git objects durably, in a batch. The first objects
// are written as loose objects, each to a temporary file; past
// packThreshold the rest stream into one packfile. flush makes every
// temporary file durable, renames them into place, and makes the renames
// durable. Only after flush returns may a ref point at the objects.
type objectBatch struct {
	v       *Vault
	pending []pendingObject
	pack    *packWriter
	seen    map[plumbing.Hash]bool
	trees   map[plumbing.Hash][]byte // trees put by this batch, readable before flush
	// held are the trees put but not written yet: a tree is written only
	// when a commit of the batch reaches it (putCommit), so the trees a
	// write builds on the way to its final one (each tree of a path set
	// one change at a time) never reach the object store.
	held map[plumbing.Hash]bool
	// sources says where the working tree can be written from rather
	// than from the object store: the file a blob was read from, or the
	// bytes it was put from.
	sources blobSources
	packs   packIndexes
	now     time.Time
	// inlineBytes counts the bytes held in sources.data; fileBytes those
	// of them putFile read from files (held only for this batch).
	inlineBytes, fileBytes int
	// alsoSync are files flush makes durable with the objects (ref lock
	// files), each with the path its fault-injection step names.
	alsoSync []syncedFile
	// packFirst says the batch publishes packThreshold files or more that
	// the node did not have (its first publish): the first file blob it has to
	// write starts the pack, rather than packThreshold loose files first.
	// A batch whose files are all stored already (the node's files put
	// back after a git rm) writes no file blob and so starts no pack.
	// packNow is set by the first file blob putFile writes.
	packFirst, packNow bool
	// ctx stops a long blob write (putFile) between files and within a
	// large file; a batch that is not told its caller's context never
	// stops early.
	ctx context.Context
}

type syncedFile struct{ path, step string }

// syncWith makes the file at path (if it exists) durable with the batch's
// objects: a cache the next publish trusts (a source directory's stat
// cache) must not be older than the commit it describes after a crash.
// Where one syncfs makes everything durable this costs nothing more.
func (b *objectBatch) syncWith(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		b.alsoSync = append(b.alsoSync, syncedFile{path, path})
	}
}

// packThreshold is how many objects a batch writes loose before it starts a
// pack: git keeps fetched objects loose below 100 (transfer.unpackLimit),
// for the same reason — a few loose objects are cheaper than a pack, and
// thousands are far dearer.
const packThreshold = 100

// looseTempPrefix names the temporary files of loose objects in
// .git/objects/. Git's `git prune` removes its own tmp_* files there, never
// these; the vault's repair removes ones a killed writer left.
const looseTempPrefix = "prose_obj_"

type pendingObject struct {
	tmp, final string
}

func (v *Vault) newBatch() *objectBatch {
	return &objectBatch{v: v, seen: map[plumbing.Hash]bool{}, trees: map[plumbing.Hash][]byte{}, held: map[plumbing.Hash]bool{},
		sources: blobSources{paths: map[plumbing.Hash]string{}, data: map[plumbing.Hash][]byte{}}, now: time.Now(), ctx: context.Background()}
}

// blobSources are the places a checkout reads a blob's content from
// without inflating it from the object store: the file it was read from
// (checked against the blob id as it is copied, since the file may have
// changed), or the bytes it was put from (which the caller handed over).
type blobSources struct {
	paths map[plumbing.Hash]string
	data  map[plumbing.Hash][]byte
	// spool holds the files a staged write spooled its blobs to, which
	// the checkout renames into place (nil: none).
	spool *blobSpool
}

// maxInlineSource bounds the bytes a batch keeps for its checkout; blobs
// past it are read back from the object store.
const maxInlineSource = 256 << 20

// maxInlineFile is the largest published file a batch reads whole (see
// putFile); larger ones are streamed. maxInlineFiles bounds the bytes of
// such files a batch holds for its checkout: a publish's memory must not
// grow with the tree (docs/limits.md), so past it files are streamed and
// the checkout copies them from their paths.
const (
	maxInlineFile  = 1 << 20
	maxInlineFiles = 32 << 20
)

func (v *Vault) objectPath(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(v.gitDir, "objects", s[:2], s[2:])
}

// has reports whether the repository already holds h, loose or packed. An
// object found is refreshed as git refreshes an object it would write (the
// loose file's or the pack's mtime set to now), so that a concurrent `git
// gc` or `git prune`, which keep recent objects and everything they reach,
// never deletes an object this batch is about to reference. An object that
// cannot be refreshed counts as absent and is written again.
func (b *objectBatch) has(h plumbing.Hash) bool {
	if b.seen[h] {
		return true
	}
	found := ""
	if p := b.v.objectPath(h); fileExists(p) {
		found = p
	} else {
		found = b.packs.find(b.v.gitDir, h)
	}
	if found == "" || os.Chtimes(found, b.now, b.now) != nil {
		return false
	}
	b.seen[h] = true
	return true
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// objectHash is the git object id of content data of type t. It uses the
// hardware-accelerated SHA-1 rather than go-git's collision-detecting one:
// prose hashes objects it encodes itself, and the result is the same.
func objectHash(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(t.Bytes())
	var hdr [24]byte
	b := append(hdr[:0], ' ')
	b = strconv.AppendInt(b, int64(len(data)), 10)
	b = append(b, 0)
	h.Write(b)
	h.Write(data)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// put writes an object of type t with content data, unless present.
func (b *objectBatch) put(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := objectHash(t, data)
	if t == plumbing.BlobObject && b.inlineBytes+len(data) <= maxInlineSource {
		if _, ok := b.sources.data[h]; !ok {
			b.sources.data[h] = data
			b.inlineBytes += len(data)
		}
	}
	if b.has(h) {
		return h, nil
	}
	if t == plumbing.TreeObject {
		// Held until a commit reaches it (see held).
		b.trees[h] = data
		b.held[h] = true
		b.seen[h] = true
		return h, nil
	}
	err := b.write(h, t, int64(len(data)), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return h, err
}

// putFile streams the file at path as a blob that must hash to want. A file
// that changed since it was scanned is refused rather than half-published.
func (b *objectBatch) putFile(path string, size int64, want plumbing.Hash) error {
	b.sources.paths[want] = path
	if b.has(want) {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return err
	}
	b.packNow = b.packNow || b.packFirst
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if size <= maxInlineFile && b.fileBytes+int(size) <= maxInlineFiles && b.inlineBytes+int(size) <= maxInlineSource {
		// A small file is read once: the bytes hashed are the bytes
		// stored and the bytes the checkout writes, with no second open,
		// read and hash of the source.
		data := make([]byte, size)
		n, err := io.ReadFull(f, data)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return err // EOF: emptied since the scan, refused below
		}
		var more [1]byte
		if k, _ := f.Read(more[:]); n != int(size) || k != 0 || objectHash(plumbing.BlobObject, data) != want {
			return fmt.Errorf("%s changed while it was being published; publish again once the render has finished writing", path)
		}
		b.sources.data[want] = data
		b.inlineBytes += len(data)
		b.fileBytes += len(data)
		return b.write(want, plumbing.BlobObject, size, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		})
	}
	return b.write(want, plumbing.BlobObject, size, func(w io.Writer) error {
		sum := plumbing.NewHasher(plumbing.BlobObject, size)
		n, err := io.Copy(io.MultiWriter(w, sum), ctxio.Reader(b.ctx, f))
		if err != nil {
			return err
		}
		if n != size || sum.Sum() != want {
			return fmt.Errorf("%s changed while it was being published; publish again once the render has finished writing", path)
		}
		return nil
	})
}

// write stores one object of type t and size whose content fill writes:
// loose for the first packThreshold objects of the batch, then in the pack
// (with packFirst, in the pack from the first file blob on).
func (b *objectBatch) write(h plumbing.Hash, t plumbing.ObjectType, size int64, fill func(io.Writer) error) error {
	return b.writeZ(h, t, size, fill, nil)
}

// writeZ is write; an object that goes into the pack takes z, when
// given, as its zlib stream instead of compressing what fill writes.
func (b *objectBatch) writeZ(h plumbing.Hash, t plumbing.ObjectType, size int64, fill func(io.Writer) error, z []byte) error {
	final := b.v.objectPath(h)
	if err := durable.Inject(durable.StepWrite, final); err != nil {
		return fmt.Errorf("write git object %s: %w", h, err)
	}
	if b.pack == nil && (len(b.pending) >= packThreshold || b.packNow) {
		p, err := newPackWriter(b.v.gitDir, randomName())
		if err != nil {
			return fmt.Errorf("write git pack: %w", err)
		}
		b.pack = p
	}
	if b.pack != nil {
		add := func() error { return b.pack.add(h, t, size, fill) }
		if z != nil {
			add = func() error { return b.pack.addDeflated(h, t, size, z) }
		}
		if err := add(); err != nil {
			return fmt.Errorf("write git object %s: %w", h, err)
		}
		b.seen[h] = true
		return nil
	}
	// Temporary objects live in objects/ itself, so a crashed writer's
	// leftovers are found with one directory read; the fan-out directory
	// is created only at the rename (see renameObject).
	tmp := filepath.Join(b.v.gitDir, "objects", looseTempPrefix+randomName())
	f, err := openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("write git object: %w", err)
	}
	var buf bytes.Buffer
	pool := &zlibPool
	if size <= storeBelow {
		pool = &zlibStorePool
	}
	zw := pool.Get().(*zlib.Writer)
	defer pool.Put(zw)
	zw.Reset(&buf)
	fw := flushingWriter{zw: zw, buf: &buf, f: f}
	_, werr := fmt.Fprintf(fw, "%s %d\x00", t, size)
	if werr == nil {
		werr = fill(fw)
	}
	if werr == nil {
		werr = zw.Close()
	}
	if werr == nil {
		_, werr = f.Write(buf.Bytes())
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write git object %s: %w", h, werr)
	}
	// The file is closed at once so a large publish never runs out of file
	// descriptors; flush makes it durable by syncfs or by reopening it.
	b.pending = append(b.pending, pendingObject{tmp: tmp, final: final})
	b.seen[h] = true
	return nil
}

// writeDeflated stores the object of type t with content data, as write,
// whose zlib stream (at zlibPool's level) z is: a pack entry takes z as
// it is; a loose object is written from data (its stream holds the
// object's header).
func (b *objectBatch) writeDeflated(h plumbing.Hash, t plumbing.ObjectType, data, z []byte) error {
	return b.writeZ(h, t, int64(len(data)), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, z)
}

// deflated is data's zlib stream at zlibPool's level: a pack entry's body.
func deflated(data []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	zw := zlibPool.Get().(*zlib.Writer)
	defer zlibPool.Put(zw)
	zw.Reset(&buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Bytes()
}

func randomName() string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return hex.EncodeToString(rnd[:])
}

var zlibPool = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// storeBelow is the size up to which a loose object is stored in zlib's
// stored blocks, not compressed: its file takes one file-system block
// either way (a 4 KB block holds the object with its header and zlib's
// few bytes of framing), and a write's trees and commits are of this size.
// Compressing them cost a small write-slot ≈ 3 % of its CPU (a Huffman
// table built per object, the compressor's 128 KB hash table touched page
// by page in every process); git reads both forms alike.
const storeBelow = 3 << 10

var zlibStorePool = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
	return w
}}

// flushingWriter compresses into buf and spills to f when buf grows, so a
// large blob never sits whole in memory.
type flushingWriter struct {
	zw  *zlib.Writer
	buf *bytes.Buffer
	f   *os.File
}

func (w flushingWriter) Write(p []byte) (int, error) {
	n, err := w.zw.Write(p)
	if err != nil {
		return n, err
	}
	if w.buf.Len() >= 1<<20 {
		if _, err := w.f.Write(w.buf.Bytes()); err != nil {
			return n, err
		}
		w.buf.Reset()
	}
	return n, nil
}

// flush makes every object of the batch durable at its final path: the
// temporary files are made durable, renamed into place, and the renames are
// made durable. With several files, one syncfs(2) before and one after the
// renames replaces an fsync per file and per directory (a syncfs costs
// about one fsync).
func (b *objectBatch) flush() error {
	defer func() { b.pending, b.pack = nil, nil; b.packs.release() }()
	// Trees no commit reached are dropped, never written.
	b.v.treesDropped.Add(int64(len(b.held)))
	clear(b.held)
	objects := filepath.Join(b.v.gitDir, "objects")
	var temps []string // every temporary file, in rename order
	for _, p := range b.pending {
		temps = append(temps, p.tmp)
	}
	if b.pack != nil {
		if err := b.pack.finish(); err != nil {
			b.abort()
			return fmt.Errorf("write git pack: %w", err)
		}
		temps = append(temps, b.pack.tmp, b.pack.idxTmp)
	}
	synced := append([]string{}, temps...)
	steps := make([]string, 0, len(temps)+len(b.alsoSync))
	for i := range temps {
		steps = append(steps, b.finalPath(i))
	}
	for _, f := range b.alsoSync {
		synced, steps = append(synced, f.path), append(steps, f.step)
	}
	b.alsoSync = nil
	batch := b.v.fsync && len(synced) > 2
	var firstErr error
	for i, f := range synced {
		if err := durable.Inject(durable.StepFsync, steps[i]); err != nil {
			firstErr = err
			break
		}
		if b.v.fsync && !batch {
			if firstErr = syncFile(f); firstErr != nil {
				break
			}
		}
	}
	if firstErr == nil && batch {
		var ok bool
		if ok, firstErr = syncFS(objects); !ok {
			batch = false
			for _, f := range synced {
				if firstErr = syncFile(f); firstErr != nil {
					break
				}
			}
		}
	}
	if firstErr != nil {
		b.abort()
		return fmt.Errorf("sync git objects: %w", firstErr)
	}
	if len(temps) == 0 {
		return nil
	}
	dirs := map[string]bool{}
	for i, tmp := range temps {
		final := b.finalPath(i)
		err := durable.Inject(durable.StepRename, final)
		if err == nil {
			err = renameObject(tmp, final)
		}
		if err != nil {
			for _, t := range temps[i:] {
				os.Remove(t)
			}
			return fmt.Errorf("store git object: %w", err)
		}
		dirs[filepath.Dir(final)] = true
	}
	dirs[objects] = true // a fan-out directory may have been created
	if b.pack != nil {
		b.v.reindex()
	}
	for d := range dirs {
		if err := durable.Inject(durable.StepDirSync, d); err != nil {
			return fmt.Errorf("sync git objects: %w", err)
		}
	}
	if !b.v.fsync {
		return nil
	}
	if batch {
		if _, err := syncFS(objects); err != nil {
			return fmt.Errorf("sync git objects: %w", err)
		}
		return nil
	}
	for d := range dirs {
		if err := durable.SyncDir(d); err != nil {
			return fmt.Errorf("sync git objects: %w", err)
		}
	}
	return nil
}

// finalPath is where the i-th temporary file of flush goes: the loose
// objects, then the pack, then its index (renamed last: git and go-git find
// a pack by its index).
func (b *objectBatch) finalPath(i int) string {
	if i < len(b.pending) {
		return b.pending[i].final
	}
	if i == len(b.pending) {
		return b.pack.pack
	}
	return b.pack.idx
}

// renameObject renames a temporary object into place. `git prune-packed`
// (run by `git gc`) removes empty fan-out directories at any moment, so the
// directory is created at the rename, and the rename tried again when it
// vanished in between.
//
// A `git gc` beside the write runs prune-packed and prune one after the
// other, and each removes the directory again, so a loaded machine can lose
// the race several times: the rename is tried up to renameTries times, and
// a temporary file that is itself gone is named as such.
func renameObject(tmp, final string) error {
	for attempt := 1; ; attempt++ {
		err := os.Rename(tmp, final)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if _, serr := os.Lstat(tmp); serr != nil {
			return fmt.Errorf("the temporary object %s was removed while prose wrote it (by a command outside prose): %w", tmp, serr)
		}
		if attempt == renameTries {
			return fmt.Errorf("%w (its directory %s was removed %d times in a row while prose created it: is a `git gc` or `git prune-packed` running in a loop?)", err, filepath.Dir(final), attempt)
		}
		if err := os.Mkdir(filepath.Dir(final), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if attempt > 2 {
			time.Sleep(time.Duration(attempt) * time.Millisecond) // let the sweep pass the directory
		}
	}
}

// renameTries bounds renameObject's tries.
const renameTries = 20

func syncFile(path string) error {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (b *objectBatch) abort() {
	b.sources.spool.remove()
	b.packs.release()
	clear(b.held)
	for _, p := range b.pending {
		os.Remove(p.tmp)
	}
	if b.pack != nil {
		b.pack.abort()
	}
	b.pending, b.pack = nil, nil
}

// writeReached writes the held trees that tree h reaches, h included,
// subtrees before the trees that name them.
func (b *objectBatch) writeReached(h plumbing.Hash) error {
	if !b.held[h] {
		return nil
	}
	delete(b.held, h)
	data := b.trees[h]
	t, err := b.tree(h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			if err := b.writeReached(e.Hash); err != nil {
				return err
			}
		}
	}
	return b.write(h, plumbing.TreeObject, int64(len(data)), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// tree reads a tree, including trees this batch wrote but has not flushed.
func (b *objectBatch) tree(h plumbing.Hash) (*object.Tree, error) {
	data, ok := b.trees[h]
	if !ok {
		return b.v.tree(h)
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	obj.Write(data)
	t := &object.Tree{}
	if err := t.Decode(obj); err != nil {
		return nil, err
	}
	return t, nil
}
