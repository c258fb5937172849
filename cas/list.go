package cas

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// List calls fn for every object in the store, in increasing order of ID.
// It stops at the first error fn returns and returns that error unchanged.
// Objects added or removed while List runs may or may not be seen.
func (s *Store) List(fn func(ID) error) error {
	shards, err := os.ReadDir(s.objects)
	if err != nil {
		return fmt.Errorf("cas list: %w", err)
	}
	for _, sh := range shards { // os.ReadDir sorts by name
		var prefix [1]byte
		if !sh.IsDir() || !isLowerHex(sh.Name(), 2) {
			continue // tmp and anything foreign
		}
		_, _ = hex.Decode(prefix[:], []byte(sh.Name()))
		entries, err := os.ReadDir(filepath.Join(s.objects, sh.Name()))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return fmt.Errorf("cas list: %w", err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !isLowerHex(e.Name(), 62) {
				continue
			}
			var id ID
			id[0] = prefix[0]
			_, _ = hex.Decode(id[1:], []byte(e.Name()))
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// isLowerHex reports whether s is n lowercase hex digits, the only form the
// store writes.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Verify re-hashes every object and calls fn (if not nil) once for each bad
// one, with an error wrapping ErrCorrupt or describing why it could not be
// read. It returns how many objects it checked and how many were bad; err is
// set only when the store itself could not be listed. Objects removed while
// Verify runs are skipped.
func (s *Store) Verify(fn func(ID, error)) (checked int, bad int, err error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	err = s.List(func(id ID) error {
		verr := s.verifyOne(id, *bp)
		if errors.Is(verr, ErrNotFound) {
			return nil
		}
		checked++
		if verr != nil {
			bad++
			if fn != nil {
				fn(id, verr)
			}
		}
		return nil
	})
	if err != nil {
		return checked, bad, fmt.Errorf("cas verify: %w", err)
	}
	return checked, bad, nil
}

func (s *Store) verifyOne(id ID, buf []byte) error {
	rc, err := s.Get(id)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.CopyBuffer(io.Discard, onlyReader{rc}, buf)
	return err
}

// onlyReader hides any WriterTo so that io.CopyBuffer uses the given buffer.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
