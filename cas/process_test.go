package cas

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/testtmp"
)

// TestMain doubles as a helper process when CAS_HELPER is set (see
// runHelper), and removes the examples' directories afterwards.
func TestMain(m *testing.M) {
	if mode := os.Getenv("CAS_HELPER"); mode != "" {
		os.Exit(runHelper(mode, os.Getenv("CAS_ROOT")))
	}
	code := testtmp.Main(m) // a short run's temporary files on a RAM file system
	for _, dir := range exampleDirs {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// runHelper is the child side of the multi-process tests:
//
//	put   puts 30 copies of one shared object and 30 objects of its own,
//	      printing each ID
//	hang  starts a Put, prints "writing" once some content is written, and
//	      blocks until killed
func runHelper(mode, root string) int {
	s, err := Open(root)
	if err != nil {
		fmt.Println("error", err)
		return 2
	}
	switch mode {
	case "put":
		shared := strings.Repeat("shared across processes ", 5000)
		for i := range 30 {
			for _, content := range []string{shared, fmt.Sprintf("process %d object %d", os.Getpid(), i)} {
				id, _, err := s.Put(strings.NewReader(content))
				if err != nil {
					fmt.Println("error", err)
					return 1
				}
				fmt.Println(id)
			}
		}
		return 0
	case "hang":
		pr, pw := io.Pipe()
		go func() {
			// Once Put has taken this buffer, its temporary file exists.
			pw.Write(make([]byte, 1<<20))
			fmt.Println("writing")
			select {}
		}()
		_, _, err := s.Put(pr)
		fmt.Println("error", err)
		return 1
	}
	return 2
}

func startHelper(t *testing.T, mode, root string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CAS_HELPER="+mode, "CAS_ROOT="+root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewScanner(out)
}

// TestConcurrentProcesses runs several processes putting the same and
// different content into one store at once.
func TestConcurrentProcesses(t *testing.T) {
	s := openStore(t)
	type result struct {
		ids []ID
		err error
	}
	const procs = 4
	results := make(chan result, procs)
	for range procs {
		cmd, lines := startHelper(t, "put", s.Root())
		go func() {
			var r result
			for lines.Scan() {
				id, err := ParseID(lines.Text())
				if err != nil {
					r.err = fmt.Errorf("helper said %q", lines.Text())
					break
				}
				r.ids = append(r.ids, id)
			}
			if err := cmd.Wait(); err != nil && r.err == nil {
				r.err = err
			}
			results <- r
		}()
	}
	shared := idOf([]byte(strings.Repeat("shared across processes ", 5000)))
	for range procs {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if len(r.ids) != 60 {
			t.Fatalf("helper put %d objects, want 60", len(r.ids))
		}
		for i, id := range r.ids {
			if i%2 == 0 && id != shared {
				t.Fatalf("shared content got %s", id)
			}
			if ok, _ := s.Has(id); !ok {
				t.Fatalf("%s missing", id)
			}
		}
	}
	if n := count(t, s); n != 1+procs*30 {
		t.Errorf("%d objects, want %d", n, 1+procs*30)
	}
	assertConsistent(t, s)
}

// TestCrashMidPut kills a process in the middle of a Put: the store holds
// no partial object, and the leftover temporary file goes once it is old.
func TestCrashMidPut(t *testing.T) {
	s := openStore(t)
	cmd, lines := startHelper(t, "hang", s.Root())
	if !lines.Scan() || lines.Text() != "writing" {
		t.Fatalf("helper: %q %v", lines.Text(), lines.Err())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	left := tempsLeft(t, s)
	if len(left) != 1 {
		t.Fatalf("temporary files after the crash: %v, want one", left)
	}
	if n := count(t, s); n != 0 {
		t.Fatalf("%d objects after a crashed Put", n)
	}
	if _, err := Open(s.Root()); err != nil {
		t.Fatal(err)
	}
	if len(tempsLeft(t, s)) != 1 {
		t.Fatal("Open removed a recent temporary file")
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.tmp, left[0]), past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(s.Root()); err != nil {
		t.Fatal(err)
	}
	assertConsistent(t, s)
}
