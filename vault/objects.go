package vault

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prose-store/prose/internal/durable"
)

// objectBatch writes loose git objects durably, in a batch: every object is
// written to a temporary file, all temporary files are fsynced, renamed into
// place, and each touched directory is fsynced once. Only after flush returns
// may a ref point at the objects.
type objectBatch struct {
	v       *Vault
	pending []pendingObject
	seen    map[plumbing.Hash]bool
	trees   map[plumbing.Hash][]byte // trees written by this batch, readable before flush
}

type pendingObject struct {
	tmp, final string
}

func (v *Vault) newBatch() *objectBatch {
	return &objectBatch{v: v, seen: map[plumbing.Hash]bool{}, trees: map[plumbing.Hash][]byte{}}
}

func (v *Vault) objectPath(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(v.gitDir, "objects", s[:2], s[2:])
}

// has reports whether the repository already holds h (loose or packed).
func (b *objectBatch) has(h plumbing.Hash) bool {
	if b.seen[h] {
		return true
	}
	if _, err := os.Lstat(b.v.objectPath(h)); err == nil {
		return true
	}
	b.v.mu.Lock()
	defer b.v.mu.Unlock()
	return b.v.storage.HasEncodedObject(h) == nil
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
	if b.has(h) {
		return h, nil
	}
	if t == plumbing.TreeObject {
		b.trees[h] = data
	}
	err := b.write(h, func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "%s %d\x00", t, len(data)); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	})
	return h, err
}

// putFile streams the file at path as a blob that must hash to want. A file
// that changed since it was scanned is refused rather than half-published.
func (b *objectBatch) putFile(path string, size int64, want plumbing.Hash) error {
	if b.has(want) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return b.write(want, func(w io.Writer) error {
		hdr := "blob " + strconv.FormatInt(size, 10) + "\x00"
		sum := plumbing.NewHasher(plumbing.BlobObject, size)
		if _, err := io.WriteString(w, hdr); err != nil {
			return err
		}
		n, err := io.Copy(io.MultiWriter(w, sum), f)
		if err != nil {
			return err
		}
		if n != size || sum.Sum() != want {
			return fmt.Errorf("%s changed while it was being published; publish again once the render has finished writing", path)
		}
		return nil
	})
}

func (b *objectBatch) write(h plumbing.Hash, fill func(io.Writer) error) error {
	final := b.v.objectPath(h)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write git object: %w", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	// Temporary objects live in objects/ itself, so a crashed writer's
	// leftovers are found with one directory read.
	tmp := filepath.Join(b.v.gitDir, "objects", "tmp_obj_"+hex.EncodeToString(rnd[:]))
	if err := durable.Inject(durable.StepWrite, final); err != nil {
		return fmt.Errorf("write git object %s: %w", h, err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("write git object: %w", err)
	}
	var buf bytes.Buffer
	zw := zlibPool.Get().(*zlib.Writer)
	defer zlibPool.Put(zw)
	zw.Reset(&buf)
	werr := fill(flushingWriter{zw: zw, buf: &buf, f: f})
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

var zlibPool = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
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
// made durable. With several objects, one syncfs(2) before and one after
// the renames replaces an fsync per file and per directory (the batch is a
// handful of small files, and a syncfs costs about one fsync).
func (b *objectBatch) flush() error {
	defer func() { b.pending = nil }()
	objects := filepath.Join(b.v.gitDir, "objects")
	batch := b.v.fsync && len(b.pending) > 2
	var firstErr error
	for _, p := range b.pending {
		if err := durable.Inject(durable.StepFsync, p.final); err != nil {
			firstErr = err
			break
		}
		if b.v.fsync && !batch {
			if firstErr = syncFile(p.tmp); firstErr != nil {
				break
			}
		}
	}
	if firstErr == nil && batch {
		var ok bool
		if ok, firstErr = syncFS(objects); !ok {
			batch = false
			for _, p := range b.pending {
				if firstErr = syncFile(p.tmp); firstErr != nil {
					break
				}
			}
		}
	}
	if firstErr != nil {
		b.abort()
		return fmt.Errorf("sync git objects: %w", firstErr)
	}
	dirs := map[string]bool{objects: true}
	for i, p := range b.pending {
		if err := durable.Inject(durable.StepRename, p.final); err != nil {
			b.pending = b.pending[i:]
			b.abort()
			return fmt.Errorf("store git object: %w", err)
		}
		if err := os.Rename(p.tmp, p.final); err != nil {
			b.pending = b.pending[i:]
			b.abort()
			return fmt.Errorf("store git object: %w", err)
		}
		dirs[filepath.Dir(p.final)] = true
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

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (b *objectBatch) abort() {
	for _, p := range b.pending {
		os.Remove(p.tmp)
	}
	b.pending = nil
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
