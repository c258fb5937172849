package cas

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/zeebo/blake3"
)

// Get opens object id for reading. The reader re-hashes the content as it is
// read; at the end, if the content does not hash to id, Read returns an error
// wrapping ErrCorrupt instead of io.EOF. Content is only verified when read
// to the end. Get returns an error wrapping ErrNotFound if the object is
// absent. Close the reader when done.
func (s *Store) Get(id ID) (io.ReadCloser, error) {
	f, err := os.Open(s.path(id))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cas get %s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("cas get %s: %w", id, err)
	}
	return &verifier{f: f, id: id, h: blake3.New()}, nil
}

// ReadAll returns the whole content of object id, verified.
func (s *Store) ReadAll(id ID) ([]byte, error) {
	rc, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	v := rc.(*verifier)
	size := 512
	if fi, err := v.f.Stat(); err == nil && fi.Size() < 1<<40 {
		size = int(fi.Size()) + 1 // one more byte so the final Read sees EOF without growing
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(512, len(buf)))
		}
		n, err := v.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// verifier reads an object file and checks its hash at EOF.
type verifier struct {
	f   *os.File
	id  ID
	h   *blake3.Hasher
	err error // sticky: io.EOF, a corruption or a read error
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.f.Read(p)
	v.h.Write(p[:n])
	switch {
	case err == io.EOF:
		var got ID
		v.h.Sum(got[:0])
		if got != v.id {
			v.err = corrupt(v.id, got)
		} else {
			v.err = io.EOF
		}
		return n, v.err
	case err != nil:
		v.err = fmt.Errorf("cas get %s: %w", v.id, err)
		return n, v.err
	}
	return n, nil
}

func (v *verifier) Close() error { return v.f.Close() }

func corrupt(want, got ID) error {
	return fmt.Errorf("cas get %s: %w (its content hashes to %s)", want, ErrCorrupt, got)
}
