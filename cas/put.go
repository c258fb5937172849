package cas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/prose-store/prose/internal/ctxio"
	"github.com/prose-store/prose/internal/durable"
	"github.com/zeebo/blake3"
)

// bufSize is the unit of reading, hashing and writing.
const bufSize = 1 << 20

// pipelineDepth is how many buffers a large Put has in flight: one being
// read and hashed while the others wait for or go through the file write.
const pipelineDepth = 4

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// Put stores the content read from r until EOF and returns its ID and size.
// Memory use does not depend on the size of the content (at most a few
// MiB). If the object already exists, Put leaves it as it is. When Put
// returns without error the object is durable.
//
// Content larger than one buffer is hashed and written concurrently, so a
// large Put costs about the slower of hashing and writing, not their sum.
func (s *Store) Put(r io.Reader) (ID, int64, error) {
	return s.PutContext(context.Background(), r)
}

// PutContext is Put that stops, storing nothing, within one read of ctx
// ending, and returns ctx's error.
func (s *Store) PutContext(ctx context.Context, r io.Reader) (ID, int64, error) {
	r = ctxio.Reader(ctx, r)
	if err := s.gate.enter(); err != nil {
		return ID{}, 0, err
	}
	defer s.gate.leave()
	f, err := durable.CreateTemp(s.tmp, "put", objectMode)
	if err != nil {
		return ID{}, 0, fmt.Errorf("cas put: %w", err)
	}
	defer f.Abort()
	h := blake3.New()

	first := bufPool.Get().(*[]byte)
	n, eof, err := fill(r, *first)
	if err != nil {
		bufPool.Put(first)
		return ID{}, 0, err
	}
	var size int64
	if eof {
		// Small content: no pipeline.
		h.Write((*first)[:n])
		_, err = f.Write((*first)[:n])
		bufPool.Put(first)
		if err != nil {
			return ID{}, 0, fmt.Errorf("cas put: %w", err)
		}
		size = int64(n)
	} else if size, err = pipeline(r, f, h, first, n); err != nil {
		return ID{}, 0, err
	}

	var id ID
	h.Sum(id[:0])
	if err := s.commit(f, id, size); err != nil {
		return ID{}, 0, err
	}
	return id, size, nil
}

// PutBytes stores b and returns its ID.
func (s *Store) PutBytes(b []byte) (ID, error) {
	id := ID(blake3.Sum256(b))
	if err := s.gate.enter(); err != nil {
		return ID{}, err
	}
	defer s.gate.leave()
	if s.present(id, int64(len(b))) {
		return id, nil
	}
	f, err := durable.CreateTemp(s.tmp, "put", objectMode)
	if err != nil {
		return ID{}, fmt.Errorf("cas put: %w", err)
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return ID{}, fmt.Errorf("cas put: %w", err)
	}
	if err := s.commit(f, id, int64(len(b))); err != nil {
		return ID{}, err
	}
	return id, nil
}

// pipeline streams the rest of r to f while hashing it into h: this
// goroutine reads and hashes, another writes. first already holds n bytes.
// It returns the total size; f has received every byte when it returns
// without error.
func pipeline(r io.Reader, f *durable.File, h *blake3.Hasher, first *[]byte, n int) (int64, error) {
	type chunk struct {
		buf *[]byte
		n   int
	}
	free := make(chan *[]byte, pipelineDepth)
	full := make(chan chunk, pipelineDepth)
	for range pipelineDepth - 1 {
		free <- bufPool.Get().(*[]byte)
	}
	done := make(chan error, 1)
	var writeFailed atomic.Bool // tells the reader to stop early
	go func() {
		var err error
		for c := range full {
			if err == nil {
				if _, err = f.Write((*c.buf)[:c.n]); err != nil {
					writeFailed.Store(true)
				}
			}
			free <- c.buf
		}
		done <- err
	}()
	// finish stops the writer and returns every buffer to the pool.
	finish := func() error {
		close(full)
		err := <-done
		close(free)
		for b := range free {
			bufPool.Put(b)
		}
		return err
	}

	size := int64(0)
	cur, eof := first, false
	for {
		full <- chunk{cur, n}
		h.Write((*cur)[:n]) // concurrently with the write: both only read the buffer
		size += int64(n)
		if eof || writeFailed.Load() {
			break // a write failure is reported by finish
		}
		cur = <-free
		var err error
		if n, eof, err = fill(r, *cur); err != nil {
			bufPool.Put(cur)
			_ = finish()
			return 0, err
		}
	}
	if err := finish(); err != nil {
		return 0, fmt.Errorf("cas put: %w", err)
	}
	return size, nil
}

// fill reads from r until buf is full or r ends; eof reports the end.
func fill(r io.Reader, buf []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(r, buf)
	switch {
	case err == nil:
		return n, false, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return n, true, nil
	default:
		return n, false, fmt.Errorf("cas put: read the content: %w", err)
	}
}
