package vault

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/zeebo/blake3"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/published"
)

// Staged gathers the files of a WriteNode outside memory: each file's blob
// goes into the write's object batch as it is put (loose, then streamed
// into one pack), and the write keeps only its id and, for a node file,
// what it contributes to its directory's fingerprint, so a write of
// thousands of files holds one file's bytes at a time. A WriteNode whose
// WriteOptions.Stage puts files into it commits them with its changes.
//
// The blobs are temporary files of the write until its commit makes them
// durable; a write that fails or is killed leaves them as temporary files
// the next writer removes, or (killed between the objects' flush and the
// ref move) as objects no ref reaches: garbage that `prose fsck` tolerates
// and `git gc` removes, as git treats any unreachable object.
type Staged struct {
	v         *Vault
	node      string
	view      published.View
	b         *objectBatch
	nodeFiles map[string]published.ChangedFile
	removed   map[string]bool
	files     map[string]plumbing.Hash
	// The puts are made in two steps. prep runs on every core: a node
	// file's digest, sums, git id and compressed bytes (what costs CPU);
	// order hands the puts, in the order they were made, to one worker
	// that writes each into the batch (the pack, the spool) and records it,
	// while the caller renders the next file: a large commit keeps every
	// core busy. At most stageQueue puts wait for the worker and
	// stagePrep are prepared at once, so the bytes held stay a few
	// files'. err is the first error; once set, the puts after it are not
	// made.
	prep    chan *stagedPut
	order   chan *stagedPut
	done    sync.WaitGroup
	preps   sync.WaitGroup
	errMu   sync.Mutex
	err     error
	stopped bool
}

// stagedPut is one put: prepare (nil for a put with nothing to prepare)
// runs on a prep worker, then put on the ordering worker, once ready is
// closed.
type stagedPut struct {
	prepare func()
	put     func() error
	ready   chan struct{}
}

// stageQueue is how many puts wait for the ordering worker at most.
const stageQueue = 8

// stagePrep is how many prep workers a staged write runs: one per core,
// at most four (the ordering worker's writes bound the rest).
var stagePrep = min(max(runtime.GOMAXPROCS(0), 1), 4)

func (v *Vault) newStaged(node string, b *objectBatch) *Staged {
	if b.sources.spool == nil {
		b.sources.spool = newBlobSpool(v.StatePath("tmp"))
	}
	return &Staged{v: v, node: node, view: viewOf(node), b: b,
		nodeFiles: map[string]published.ChangedFile{}, removed: map[string]bool{}, files: map[string]plumbing.Hash{}}
}

// PutNode stages data as the node file at path p (relative to the node
// directory, in normal form), checked as a write checks a change. The
// bytes are held until the worker has written them (the caller must not
// change them), never to the commit. A path put again takes the last
// content. An error of an earlier put may be returned by a later call;
// the write returns it in any case.
func (s *Staged) PutNode(p string, data []byte) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	if err := published.CheckSize(p, data); err != nil {
		return fmt.Errorf("write %s: %w", s.node, err)
	}
	// What costs CPU is done on a prep worker: the digest, the sums, the
	// git id and the compressed blob; the ordering worker writes it.
	var (
		d    canon.Digest
		kept bool
		derr error
		h    plumbing.Hash
		sum  [32]byte
		z    []byte
	)
	prepare := func() {
		d, kept, derr = published.FileDigest(s.v.Algorithm(), s.view, p, data)
		if derr != nil {
			return
		}
		sum = blake3.Sum256(data)
		h = objectHash(plumbing.BlobObject, data)
		z = deflated(data)
	}
	return s.enqueue(prepare, func() error {
		if derr != nil {
			return fmt.Errorf("write %s: %w", s.node, derr)
		}
		if err := s.putPrepared(h, data, z); err != nil {
			return err
		}
		delete(s.removed, p)
		s.nodeFiles[p] = published.ChangedFile{Entry: published.Entry{Path: p, Mode: 0o644, Size: int64(len(data)), Sum: sum, GitOID: h}, Digest: d, Kept: kept}
		return nil
	})
}

// RemoveNode stages the removal of the node file at path p.
func (s *Staged) RemoveNode(p string) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	return s.enqueue(nil, func() error {
		delete(s.nodeFiles, p)
		s.removed[p] = true
		return nil
	})
}

// PutFile stages data as the vault file at slash path p outside
// published/ (as WriteOptions.Files); the bytes are held as PutNode's.
func (s *Staged) PutFile(p string, data []byte) error {
	return s.enqueue(nil, func() error {
		h, err := s.putBlob(data)
		if err != nil {
			return err
		}
		s.files[p] = h
		return nil
	})
}

// enqueue hands one put to the workers, started by the first: prepare
// (if any) on a prep worker, then put on the ordering worker, in the
// order the puts were made.
func (s *Staged) enqueue(prepare func(), put func() error) error {
	if err := s.failed(); err != nil {
		return err
	}
	if s.stopped {
		return fmt.Errorf("write %s: staged after the staging ended", s.node)
	}
	if s.order == nil {
		s.order = make(chan *stagedPut, stageQueue)
		s.prep = make(chan *stagedPut)
		for range stagePrep {
			s.preps.Go(func() {
				for sp := range s.prep {
					if s.failed() == nil {
						sp.prepare()
					}
					close(sp.ready)
				}
			})
		}
		s.done.Go(func() {
			for sp := range s.order {
				<-sp.ready
				if s.failed() != nil {
					continue // drained: nothing after an error is put
				}
				if err := sp.put(); err != nil {
					s.errMu.Lock()
					s.err = err
					s.errMu.Unlock()
				}
			}
		})
	}
	sp := &stagedPut{prepare: prepare, put: put, ready: make(chan struct{})}
	s.order <- sp
	if prepare == nil {
		close(sp.ready)
	} else {
		s.prep <- sp
	}
	return nil
}

func (s *Staged) failed() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// wait ends the staging: it returns once every put is made, with the
// first error of any. The write calls it when its Stage returns, however
// it returns.
func (s *Staged) wait() error {
	if !s.stopped {
		s.stopped = true
		if s.order != nil {
			close(s.prep)
			close(s.order)
			s.preps.Wait()
			s.done.Wait()
		}
	}
	return s.failed()
}

func (s *Staged) checkPath(p string) error {
	n, err := published.NormalizePath(p)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.node, err)
	}
	if n != p {
		return fmt.Errorf("write %s: path %q is not in normal form (%q)", s.node, p, n)
	}
	return nil
}

// putBlob writes data as a blob unless the store or the batch holds it.
// It writes rather than puts: put keeps the bytes for the checkout, which
// takes a staged file's content from its spool file instead (see
// blobSpool), or reads it back from the store.
func (s *Staged) putBlob(data []byte) (plumbing.Hash, error) {
	h := objectHash(plumbing.BlobObject, data)
	if s.b.has(h) {
		return h, nil
	}
	err := s.b.write(h, plumbing.BlobObject, int64(len(data)), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err == nil {
		s.b.sources.spool.put(h, data)
	}
	return h, err
}

// putPrepared writes the blob h of data, whose zlib stream z was
// compressed already, unless the store or the batch holds it (as
// putBlob).
func (s *Staged) putPrepared(h plumbing.Hash, data, z []byte) error {
	if s.b.has(h) {
		return nil
	}
	if err := s.b.writeDeflated(h, plumbing.BlobObject, data, z); err != nil {
		return err
	}
	s.b.sources.spool.put(h, data)
	return nil
}

// file is the staged node file at p, if any (s may be nil).
func (s *Staged) file(p string) (published.ChangedFile, bool) {
	if s == nil {
		return published.ChangedFile{}, false
	}
	f, ok := s.nodeFiles[p]
	return f, ok
}

// sums are what the staged node files contribute to their directories'
// fingerprints, by path, for the write's nodeSummer (nil when s is nil).
func (s *Staged) sums() map[string]published.ChangedFile {
	if s == nil {
		return nil
	}
	return s.nodeFiles
}
