package cas

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/durable"
)

func TestRoundTrip(t *testing.T) {
	s := openStore(t)
	for _, content := range [][]byte{
		nil,
		[]byte("hello, world\n"),
		bytes.Repeat([]byte{0, 1, 2, 255}, 300_001), // above one buffer
	} {
		id, n, err := s.Put(bytes.NewReader(content))
		if err != nil {
			t.Fatal(err)
		}
		if id != idOf(content) || n != int64(len(content)) {
			t.Fatalf("Put = %s, %d; want %s, %d", id, n, idOf(content), len(content))
		}
		got, err := s.ReadAll(id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("ReadAll of %d bytes differs", len(content))
		}
		rc, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(streamed, content) {
			t.Fatalf("Get: %v", err)
		}
		if ok, err := s.Has(id); !ok || err != nil {
			t.Fatalf("Has = %v, %v", ok, err)
		}
		id2, err := s.PutBytes(content)
		if err != nil || id2 != id {
			t.Fatalf("PutBytes = %s, %v; want %s", id2, err, id)
		}
	}
	assertConsistent(t, s)
}

// TestOnDiskFormat pins the layout: objects/<2 hex>/<62 hex>, mode 0444,
// content stored as is.
func TestOnDiskFormat(t *testing.T) {
	s := openStore(t)
	id := mustPut(t, s, "")
	if id.Hex() != emptyHex {
		t.Fatalf("empty object = %s, want blake3:%s", id, emptyHex)
	}
	p := filepath.Join(s.Root(), "objects", emptyHex[:2], emptyHex[2:])
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o444 || fi.Size() != 0 {
		t.Errorf("object file mode %v size %d, want 0444 and 0", fi.Mode().Perm(), fi.Size())
	}
	id = mustPut(t, s, "abc")
	data, err := os.ReadFile(filepath.Join(s.Root(), "objects", id.Hex()[:2], id.Hex()[2:]))
	if err != nil || string(data) != "abc" {
		t.Errorf("object file holds %q, %v", data, err)
	}
	if s.LockPath() != filepath.Join(s.Root(), "lock") {
		t.Errorf("LockPath = %s", s.LockPath())
	}
}

func TestDedup(t *testing.T) {
	s := openStore(t)
	a := mustPut(t, s, "same")
	b, n, err := s.Put(strings.NewReader("same"))
	if err != nil || b != a || n != 4 {
		t.Fatalf("second Put = %s, %d, %v", b, n, err)
	}
	count := 0
	if err := s.List(func(ID) error { count++; return nil }); err != nil {
		t.Fatal(err)
	}
	if count != 1 {
		t.Errorf("%d objects, want 1", count)
	}
	assertConsistent(t, s)
}

// TestPutRepairsTruncatedObject: a copy of the wrong size is replaced rather
// than deduplicated against.
func TestPutRepairsTruncatedObject(t *testing.T) {
	s := openStore(t)
	id := mustPut(t, s, "complete content")
	p := s.path(id)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadAll(id); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated object: err = %v, want ErrCorrupt", err)
	}
	mustPut(t, s, "complete content")
	if got, err := s.ReadAll(id); err != nil || string(got) != "complete content" {
		t.Fatalf("after repair: %q, %v", got, err)
	}
}

// TestLargeStream puts 64 MiB from a generator and reads it back, checking
// that memory use stays flat.
func TestLargeStream(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB stream")
	}
	const size = 64 << 20
	want := hashStream(7, size)
	s := openStore(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	id, n, err := s.Put(io.LimitReader(newStream(7), size))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if id != want || n != size {
		t.Fatalf("Put = %s, %d; want %s, %d", id, n, want, size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("Put allocated %d bytes for a %d-byte stream", alloc, size)
	}
	rc, err := s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	// Compare against the generator without holding either side in memory.
	got, wantStream := make([]byte, 1<<20), make([]byte, 1<<20)
	gen := io.LimitReader(newStream(7), size)
	var total int64
	for {
		k, err := io.ReadFull(rc, got)
		if k > 0 {
			if _, werr := io.ReadFull(gen, wantStream[:k]); werr != nil || !bytes.Equal(got[:k], wantStream[:k]) {
				t.Fatalf("content differs near offset %d", total)
			}
			total += int64(k)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if total != size {
		t.Fatalf("read %d bytes, want %d", total, size)
	}
}

func TestCorruption(t *testing.T) {
	s := openStore(t)
	good := mustPut(t, s, "intact")
	id := mustPut(t, s, strings.Repeat("precious data ", 1000))
	p := s.path(id)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	actual := idOf(data)

	rc, err := s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, rc)
	rc.Close()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get: err = %v, want ErrCorrupt", err)
	}
	for _, want := range []string{"cas get " + id.String(), "corrupt", actual.String()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := s.ReadAll(id); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ReadAll: err = %v, want ErrCorrupt", err)
	}

	var reported []ID
	checked, bad, err := s.Verify(func(bid ID, err error) {
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("Verify reported %s with %v, want ErrCorrupt", bid, err)
		}
		reported = append(reported, bid)
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked != 2 || bad != 1 || len(reported) != 1 || reported[0] != id {
		t.Errorf("Verify = %d checked, %d bad, reported %v; want 2, 1, [%s]", checked, bad, reported, id)
	}
	if _, err := s.ReadAll(good); err != nil {
		t.Errorf("intact object: %v", err)
	}
}

// TestVerifyReportsEveryBadObject damages several objects in several ways.
func TestVerifyReportsEveryBadObject(t *testing.T) {
	s := openStore(t)
	var damaged []ID
	for i := range 10 {
		id := mustPut(t, s, fmt.Sprintf("object %d", i))
		if i%3 != 0 {
			continue
		}
		p := s.path(id)
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("replaced"), 0o644); err != nil {
			t.Fatal(err)
		}
		damaged = append(damaged, id)
	}
	var reported []ID
	checked, bad, err := s.Verify(func(id ID, _ error) { reported = append(reported, id) })
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(damaged, func(a, b ID) int { return bytes.Compare(a[:], b[:]) })
	if checked != 10 || bad != len(damaged) || !slices.Equal(reported, damaged) {
		t.Errorf("Verify = %d, %d, %v; want 10, %d, %v", checked, bad, reported, len(damaged), damaged)
	}
}

func TestNotFound(t *testing.T) {
	s := openStore(t)
	id := idOf([]byte("never stored"))
	if _, err := s.Get(id); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), id.String()) {
		t.Errorf("Get: err = %v, want ErrNotFound naming the id", err)
	}
	if _, err := s.ReadAll(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadAll: err = %v, want ErrNotFound", err)
	}
	if ok, err := s.Has(id); ok || err != nil {
		t.Errorf("Has = %v, %v", ok, err)
	}
}

func TestListSortedIgnoresForeignFiles(t *testing.T) {
	s := openStore(t)
	var want []ID
	for i := range 200 {
		want = append(want, mustPut(t, s, fmt.Sprint(i)))
	}
	slices.SortFunc(want, func(a, b ID) int { return bytes.Compare(a[:], b[:]) })
	// Things that are not objects.
	if err := os.WriteFile(filepath.Join(s.objects, "README"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.objects, "AB"), 0o755); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Dir(s.path(want[0]))
	if err := os.WriteFile(filepath.Join(shard, "short"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.tmp, ".tmp-put-123"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []ID
	if err := s.List(func(id ID) error { got = append(got, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List returned %d ids, not the %d stored in order", len(got), len(want))
	}
	stop := errors.New("stop")
	n := 0
	err := s.List(func(ID) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("List after fn error: %v after %d calls", err, n)
	}
}

func TestPutReadError(t *testing.T) {
	s := openStore(t)
	boom := errors.New("network down")
	_, _, err := s.Put(io.MultiReader(strings.NewReader("part"), failingReader{boom}))
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "cas put: ") {
		t.Fatalf("err = %v", err)
	}
	assertConsistent(t, s)
	if err := s.List(func(id ID) error { return fmt.Errorf("unexpected object %s", id) }); err != nil {
		t.Fatal(err)
	}
}

// TestLargePutFailures fails a multi-buffer Put part way, on the reading and
// on the writing side.
func TestLargePutFailures(t *testing.T) {
	const size = 5<<20 + 3
	t.Run("read", func(t *testing.T) {
		s := openStore(t)
		boom := errors.New("source broke")
		_, _, err := s.Put(io.MultiReader(io.LimitReader(newStream(3), size), failingReader{boom}))
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the read error", err)
		}
		assertConsistent(t, s)
		if n := count(t, s); n != 0 {
			t.Errorf("%d objects after a failed Put", n)
		}
	})
	t.Run("write", func(t *testing.T) {
		s := openStore(t)
		var mu sync.Mutex
		writes := 0
		restore := durable.SetFault(func(step durable.Step, _ string) error {
			mu.Lock()
			defer mu.Unlock()
			if step == durable.StepWrite {
				writes++
				if writes == 3 {
					return durable.ErrInjected
				}
			}
			return nil
		})
		_, _, err := s.Put(io.LimitReader(newStream(3), size))
		restore()
		if !errors.Is(err, durable.ErrInjected) {
			t.Fatalf("err = %v, want the injected fault", err)
		}
		assertConsistent(t, s)
		if n := count(t, s); n != 0 {
			t.Errorf("%d objects after a failed Put", n)
		}
		id, n, err := s.Put(io.LimitReader(newStream(3), size))
		if err != nil || n != size || id != hashStream(3, size) {
			t.Fatalf("Put after the fault = %s, %d, %v", id, n, err)
		}
	})
	t.Run("exact buffer multiples", func(t *testing.T) {
		s := openStore(t)
		for _, n := range []int64{bufSize - 1, bufSize, bufSize + 1, 2 * bufSize, pipelineDepth * bufSize, (pipelineDepth + 1) * bufSize} {
			id, got, err := s.Put(io.LimitReader(newStream(uint64(n)), n))
			if err != nil || got != n || id != hashStream(uint64(n), n) {
				t.Fatalf("Put of %d bytes = %s, %d, %v", n, id, got, err)
			}
		}
		assertConsistent(t, s)
	})
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// TestConcurrentWriters has goroutines put the same and different content
// at once; all succeed and the store stays consistent.
func TestConcurrentWriters(t *testing.T) {
	s := openStore(t)
	shared := strings.Repeat("shared ", 10000)
	var wg sync.WaitGroup
	ids := make([]ID, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				id, _, err := s.Put(strings.NewReader(shared))
				if err != nil {
					t.Error(err)
					return
				}
				ids[g] = id
				if _, err := s.PutBytes([]byte(fmt.Sprintf("goroutine %d item %d", g, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// A reader alongside the writers never sees a partial object.
	done := make(chan struct{})
	go func() {
		defer close(done)
		want := idOf([]byte(shared))
		for range 200 {
			if got, err := s.ReadAll(want); err == nil && string(got) != shared {
				t.Error("reader saw a partial object")
				return
			} else if err != nil && !errors.Is(err, ErrNotFound) {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	for _, id := range ids {
		if id != idOf([]byte(shared)) {
			t.Fatalf("a writer got %s", id)
		}
	}
	checked, _, err := s.Verify(nil)
	if err != nil || checked != 1+16*20 {
		t.Errorf("Verify checked %d (%v), want %d", checked, err, 1+16*20)
	}
	assertConsistent(t, s)
}

// TestCleanTempsOnOpen: a crashed writer's leftover is removed when old, a
// recent one (possibly a live writer's) is kept.
func TestCleanTempsOnOpen(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".prose")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	f, err := durable.CreateTemp(s.tmp, "put", objectMode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("half an object")); err != nil {
		t.Fatal(err)
	}
	old := f.Name() // never committed: the writer "crashed"
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	fresh, err := durable.CreateTemp(s.tmp, "put", objectMode)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Abort()

	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Error("stale temporary file survived Open")
	}
	if _, err := os.Stat(fresh.Name()); err != nil {
		t.Error("recent temporary file was removed")
	}
}

// TestFaultInjection fails each step of a Put and checks that the store
// stays consistent: no object at its final path that does not hash to its
// name, no temporary file left, and the next Put succeeds.
func TestFaultInjection(t *testing.T) {
	for _, step := range []durable.Step{durable.StepWrite, durable.StepFsync, durable.StepRename, durable.StepDirSync} {
		for _, put := range []string{"Put", "PutBytes"} {
			t.Run(string(step)+"/"+put, func(t *testing.T) {
				s := openStore(t)
				mustPut(t, s, "already there")
				content := "content written during a fault"
				restore := durable.SetFault(durable.FailAt(step, ""))
				var err error
				if put == "Put" {
					_, _, err = s.Put(strings.NewReader(content))
				} else {
					_, err = s.PutBytes([]byte(content))
				}
				restore()
				if !errors.Is(err, durable.ErrInjected) {
					t.Fatalf("err = %v, want the injected fault", err)
				}
				if !strings.HasPrefix(err.Error(), "cas put") {
					t.Errorf("error %q lacks the cas put context", err)
				}
				assertConsistent(t, s)
				has, _ := s.Has(idOf([]byte(content)))
				if has && step != durable.StepDirSync {
					t.Errorf("object present after a failure at %s", step)
				}
				id := mustPut(t, s, content)
				if got, err := s.ReadAll(id); err != nil || string(got) != content {
					t.Fatalf("Put after the fault: %q, %v", got, err)
				}
				assertConsistent(t, s)
			})
		}
	}
}
