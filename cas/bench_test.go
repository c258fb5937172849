package cas

import (
	"encoding/binary"
	"fmt"
	"io"
	"testing"
)

// BenchmarkPut stores distinct objects (so nothing is deduplicated and every
// Put pays its fsyncs).
func BenchmarkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 16 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			s := openStore(b)
			data := make([]byte, size)
			newStream(1).Read(data)
			b.SetBytes(int64(size))
			var i uint64
			for b.Loop() {
				i++
				binary.LittleEndian.PutUint64(data, i)
				if _, _, err := s.Put(bytesReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 16 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			s := openStore(b)
			data := make([]byte, size)
			newStream(2).Read(data)
			id, err := s.PutBytes(data)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 1<<20)
			b.SetBytes(int64(size))
			for b.Loop() {
				rc, err := s.Get(id)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(io.Discard, onlyReader{rc}, buf); err != nil {
					b.Fatal(err)
				}
				rc.Close()
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// bytesReader is a plain reader over b, without the WriterTo of
// bytes.Reader, like a stream from a pipe.
func bytesReader(b []byte) io.Reader { return &sliceReader{b: b} }

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
