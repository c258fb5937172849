//go:build unix

package source

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after d: a read
// that blocks (a FIFO with no writer) must fail the test, not hang it.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %s", d)
	}
}

// A path that is not a regular file — a named pipe, a device — is refused
// before it is read, naming what it is and the fix (standard input); a
// FIFO with no writer is refused at once, not waited on. A directory walk
// skips such files, saying why.
func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{fifo}
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err == nil {
			paths = append(paths, dev)
		}
	}
	for _, p := range paths {
		within(t, 5*time.Second, func() {
			data, err := ReadFile(p, p)
			if !errors.Is(err, ErrNotRegular) || data != nil {
				t.Errorf("%s: %d bytes, err %v; want it refused as not a regular file", p, len(data), err)
				return
			}
			for _, want := range []string{p, "not a regular file", "prose ingest -"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %q lacks %q", p, err, want)
				}
			}
		})
		within(t, 5*time.Second, func() {
			if _, _, err := Collect([]string{p}, nil, ""); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Collect %s: %v", p, err)
			}
		})
	}
	if !strings.Contains(mustFail(ReadFile(fifo, "pipe.md")), "named pipe") {
		t.Error("the FIFO is not named as one")
	}
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n"), 0o644)
	within(t, 5*time.Second, func() {
		inputs, skipped, err := Collect([]string{dir}, nil, "")
		if err != nil || len(inputs) != 1 || len(skipped) != 1 || !strings.HasSuffix(skipped[0].Path, "pipe.md") || !strings.Contains(skipped[0].Reason, "named pipe") {
			t.Errorf("walk: inputs %d, skipped %v, err %v", len(inputs), skipped, err)
		}
	})
}

func mustFail(_ []byte, err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A file past MaxSize is refused by its size, before a byte is read: a
// 1.5 GB sparse file costs no more memory than a small one (the refusal
// allocates far less than MaxSize, where reading up to the limit would
// allocate more than MaxSize).
func TestReadFileRefusesALargeFileBeforeReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(p, []byte("# Big\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const size = 1536 << 20
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := ReadFile(p, "big.md")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || data != nil {
		t.Fatalf("a %d-byte file: %d bytes read, err %v", size, len(data), err)
	}
	for _, want := range []string{"big.md", "1610612736 bytes", limitText(), "split it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > MaxSize/4 {
		t.Fatalf("refusing a file by its size allocated %d bytes: it was read", alloc)
	}
	// A file at the limit reads whole.
	if err := os.Truncate(p, MaxSize); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(p, "big.md"); err != nil || len(data) != MaxSize {
		t.Fatalf("a file of MaxSize bytes: %d bytes, %v", len(data), err)
	}
}

// endless is a reader of zero bytes that counts what was read from it and
// ends only after 4×MaxSize (so a reader without a limit fails the test
// instead of taking the machine's memory).
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= 4*MaxSize {
		return 0, io.EOF
	}
	n := min(len(p), int(4*MaxSize-e.n))
	clear(p[:n])
	e.n += int64(n)
	return n, nil
}

// Standard input is read through the limit: from an endless stream (prose
// ingest - < /dev/zero) at most MaxSize+1 bytes are read before the
// refusal; a stream of MaxSize bytes is read whole.
func TestStandardInputIsReadThroughTheLimit(t *testing.T) {
	src := &endless{}
	_, _, err := Collect([]string{"-"}, src, "")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "standard input") || !strings.Contains(err.Error(), limitText()) {
		t.Fatalf("endless standard input: %v", err)
	}
	if src.n > MaxSize+1 {
		t.Fatalf("read %d bytes of standard input; the limit is %d (+1 to see it passed)", src.n, MaxSize)
	}
	in, _, err := Collect([]string{"-"}, io.LimitReader(&endless{}, MaxSize), "")
	if err != nil || len(in) != 1 || len(in[0].Data) != MaxSize {
		t.Fatalf("standard input of MaxSize bytes: %v", err)
	}
	data, err := ReadLimited(bytes.NewReader(make([]byte, MaxSize+1)), "x")
	if !errors.Is(err, ErrTooLarge) || data != nil {
		t.Fatalf("ReadLimited of MaxSize+1 bytes: %v", err)
	}
}
