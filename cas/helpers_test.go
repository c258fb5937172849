package cas

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

func openStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), ".prose"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPut(t testing.TB, s *Store, content string) ID {
	t.Helper()
	id, err := s.PutBytes([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func idOf(b []byte) ID { return ID(blake3.Sum256(b)) }

// tempsLeft lists the temporary files in the store's tmp directory.
func tempsLeft(t testing.TB, s *Store) []string {
	t.Helper()
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// assertConsistent checks the store invariant: every object file hashes to
// its name, and no temporary file is left.
func assertConsistent(t testing.TB, s *Store) {
	t.Helper()
	_, bad, err := s.Verify(func(id ID, err error) { t.Errorf("bad object %s: %v", id, err) })
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d bad objects", bad)
	}
	if left := tempsLeft(t, s); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// stream is a deterministic endless byte stream that never holds more than
// the caller's buffer. It produces 8 bytes per step of its generator; pos
// keeps the output independent of how reads are split.
type stream struct {
	x   uint64
	cur [8]byte
	pos int // next byte of cur; 8 means cur is used up
}

func newStream(seed uint64) *stream { return &stream{x: seed | 1, pos: 8} }

func (s *stream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if s.pos == 8 {
			s.x ^= s.x << 13
			s.x ^= s.x >> 7
			s.x ^= s.x << 17
			binary.LittleEndian.PutUint64(s.cur[:], s.x)
			s.pos = 0
		}
		k := copy(p[n:], s.cur[s.pos:])
		s.pos += k
		n += k
	}
	return n, nil
}

// hashStream returns the ID and size of n bytes of the stream with seed.
func hashStream(seed uint64, n int64) ID {
	h := blake3.New()
	if _, err := io.Copy(h, io.LimitReader(newStream(seed), n)); err != nil {
		panic(err)
	}
	var id ID
	h.Sum(id[:0])
	return id
}
