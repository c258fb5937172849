package durable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// temps lists the temporary files left in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ref")
	for _, content := range []string{"first", "second, longer content", ""} {
		if err := WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("content = %q, want %q", got, content)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&^0o644 != 0 {
		t.Errorf("mode = %v, want at most 0644", fi.Mode().Perm())
	}
	if left := temps(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteFileReadOnlyMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "obj")
	if err := WriteFile(path, []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("mode = %v, want 0444", fi.Mode().Perm())
	}
}

func TestWriteFromStreams(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big")
	const size = 3<<20 + 17
	n, err := WriteFrom(path, io.LimitReader(&pattern{}, size), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n != size {
		t.Fatalf("n = %d, want %d", n, size)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(io.LimitReader(&pattern{}, size))
	if !bytes.Equal(got, want) {
		t.Fatal("streamed content differs")
	}
}

func TestWriteFromReadErrorLeavesTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ref")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("source broke")
	_, err := WriteFrom(path, io.MultiReader(strings.NewReader("partial"), errReader{boom}), 0o644)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
	assertContent(t, path, "old")
	if left := temps(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestFaultAtEachStep checks that a failure at each step returns the
// injected error, leaves the target's old content (or no file) and removes
// the temporary file.
func TestFaultAtEachStep(t *testing.T) {
	for _, step := range []Step{StepWrite, StepFsync, StepRename, StepDirSync} {
		for _, existed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/existed=%v", step, existed), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "HEAD")
				if existed {
					if err := WriteFile(path, []byte("old"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				restore := SetFault(FailAt(step, ""))
				err := WriteFile(path, []byte("new"), 0o644)
				restore()
				if !errors.Is(err, ErrInjected) {
					t.Fatalf("err = %v, want ErrInjected", err)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name the target", err)
				}
				switch {
				case step == StepDirSync:
					// The rename happened; only its durability is in doubt.
					assertContent(t, path, "new")
				case existed:
					assertContent(t, path, "old")
				default:
					if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("target exists after a failed first write: %v", err)
					}
				}
				if left := temps(t, dir); len(left) != 0 {
					t.Errorf("temporary files left: %v", left)
				}
			})
		}
	}
}

func TestFaultPathsAndStepOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a")
	var mu sync.Mutex
	var seen []string
	restore := SetFault(func(s Step, p string) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(s)+" "+p)
		return nil
	})
	defer restore()
	if err := WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"write " + path, "fsync " + path, "rename " + path, "dir-sync " + dir}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("steps = %q, want %q", seen, want)
	}
}

func TestFaultOnlyMatchingPath(t *testing.T) {
	dir := t.TempDir()
	defer SetFault(FailAt(StepRename, "refs"))()
	if err := WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o644); err != nil {
		t.Fatalf("unmatched path failed: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "refs"), []byte("x"), 0o644); !errors.Is(err, ErrInjected) {
		t.Fatalf("matched path: err = %v, want ErrInjected", err)
	}
}

func TestSetFaultRestores(t *testing.T) {
	dir := t.TempDir()
	restoreOuter := SetFault(FailAt(StepWrite, "outer"))
	restoreInner := SetFault(FailAt(StepWrite, "inner"))
	restoreInner()
	if err := WriteFile(filepath.Join(dir, "inner"), nil, 0o644); err != nil {
		t.Errorf("inner hook still active: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "outer"), []byte("x"), 0o644); !errors.Is(err, ErrInjected) {
		t.Errorf("outer hook lost: %v", err)
	}
	restoreOuter()
	if err := WriteFile(filepath.Join(dir, "outer"), []byte("x"), 0o644); err != nil {
		t.Errorf("hook not removed: %v", err)
	}
}

func TestCreateTempCommitTo(t *testing.T) {
	dir := t.TempDir()
	tmpDir := filepath.Join(dir, "tmp")
	dst := filepath.Join(dir, "ab", "cd")
	if err := MkdirAll(tmpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := CreateTemp(tmpDir, "put", 0o444)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if !strings.HasPrefix(filepath.Base(f.Name()), ".tmp-put-") {
		t.Errorf("temporary name %q lacks the .tmp-put- prefix", f.Name())
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit without a target succeeded")
	}
	// The failed Commit finished the write; start again.
	f, err = CreateTemp(tmpDir, "put", 0o444)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := f.CommitTo(dst); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no effect after a commit
	assertContent(t, dst, "hello")
	if left := temps(t, tmpDir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := f.Write([]byte("more")); err == nil {
		t.Error("Write after Commit succeeded")
	}
}

func TestAbortRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "x"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	f.Abort()
	if left := temps(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Error("aborted write created its target")
	}
}

// TestConcurrentWriters has many goroutines replace one file; every reader
// sees one complete version, and no temporary file survives.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shared")
	versions := make(map[string]bool)
	for i := range 16 {
		versions[strings.Repeat(fmt.Sprintf("v%02d;", i), 1000+i)] = true
	}
	if err := WriteFile(path, []byte(strings.Repeat("v00;", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil {
				readerErr <- err
				return
			}
			if !versions[string(got)] {
				readerErr <- fmt.Errorf("reader saw a torn file of %d bytes", len(got))
				return
			}
		}
	}()
	for v := range versions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if err := WriteFile(path, []byte(v), 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !versions[string(got)] {
		t.Fatal("final content is not one of the written versions")
	}
	if left := temps(t, dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	var synced []string
	restore := SetFault(func(s Step, p string) error {
		if s == StepDirSync {
			synced = append(synced, p)
		}
		return nil
	})
	err := MkdirAll(deep, 0o755)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")}
	if fmt.Sprint(synced) != fmt.Sprint(want) {
		t.Errorf("synced parents %v, want %v", synced, want)
	}
	if err := MkdirAll(deep, 0o755); err != nil {
		t.Errorf("existing directory: %v", err)
	}
	file := filepath.Join(root, "file")
	if err := WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(filepath.Join(file, "sub"), 0o755); err == nil {
		t.Error("MkdirAll under a file succeeded")
	}
	if err := MkdirAll(file, 0o755); err == nil {
		t.Error("MkdirAll over a file succeeded")
	}
}

func TestMkdirAllConcurrent(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := MkdirAll(filepath.Join(root, "x", "y", "z"), 0o755); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestSyncDirMissing(t *testing.T) {
	if err := SyncDir(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("SyncDir of a missing directory succeeded")
	}
}

// TestCleanTempsAfterCrash leaves temporary files as a crashed writer would
// and checks that only old ones are removed.
func TestCleanTempsAfterCrash(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "ref"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	// The "crash": the temporary file is never committed nor aborted.
	crashed := f.Name()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(crashed, old, old); err != nil {
		t.Fatal(err)
	}
	fresh, err := Create(filepath.Join(dir, "other"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Abort()
	if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "keep"), old, old); err != nil {
		t.Fatal(err)
	}

	n, err := CleanTemps(dir, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	if _, err := os.Stat(crashed); !errors.Is(err, os.ErrNotExist) {
		t.Error("old temporary file survived")
	}
	if _, err := os.Stat(fresh.Name()); err != nil {
		t.Error("a write in progress lost its temporary file")
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Error("an ordinary file was removed")
	}
	if n, err := CleanTemps(filepath.Join(dir, "missing"), 0); err != nil || n != 0 {
		t.Errorf("missing directory: %d, %v", n, err)
	}
}

func assertContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", path, got, want)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// pattern is an endless deterministic byte stream.
type pattern struct{ off int }

func (s *pattern) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s.off*7 + s.off>>8)
		s.off++
	}
	return len(p), nil
}

func BenchmarkWriteFile(b *testing.B) {
	dir := b.TempDir()
	data := bytes.Repeat([]byte("x"), 4096)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func TestInject(t *testing.T) {
	if err := Inject(StepFsync, "/x/objects/ab"); err != nil {
		t.Fatalf("no hook: %v", err)
	}
	defer SetFault(FailAt(StepFsync, "objects"))()
	if err := Inject(StepFsync, "/x/objects/ab"); !errors.Is(err, ErrInjected) {
		t.Errorf("matching step: %v", err)
	}
	if err := Inject(StepRename, "/x/objects/ab"); err != nil {
		t.Errorf("other step: %v", err)
	}
}
