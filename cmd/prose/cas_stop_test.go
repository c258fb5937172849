//go:build linux

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCasPutStopsOnSIGINT: a cas put reading a long stream stops within a
// read of Ctrl-C, exits 130 and stores nothing. The stream ends by itself
// after 512 MiB, so a put that ignored the signal would finish and store
// an object instead of hanging the test.
func TestCasPutStopsOnSIGINT(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	fifo := filepath.Join(tmp, "stream")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	c := startChild(t, 0, "--vault", vdir, "cas", "put", fifo)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan int64, 1)
	go func() {
		defer w.Close()
		chunk := make([]byte, 1<<20)
		var n int64
		for n < 512<<20 {
			k, err := w.Write(chunk)
			n += int64(k)
			if err != nil {
				break
			}
			if n == 8<<20 {
				written <- n
			}
		}
	}()
	select {
	case <-written:
	case <-time.After(time.Minute):
		t.Fatal("the put did not read the stream")
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res := c.finish(t)
	if res.code != 130 || !strings.Contains(res.stderr, "interrupted by SIGINT") {
		t.Fatalf("exit %d (want 130), stderr:\n%s", res.code, res.stderr)
	}
	var stored []string
	filepath.WalkDir(filepath.Join(vdir, ".prose", "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			stored = append(stored, p)
		}
		return nil
	})
	if len(stored) > 0 {
		t.Fatalf("an interrupted put left files in the store: %v", stored)
	}
}

// TestCasGetOutputIsAllOrNothing: `cas get -o FILE` of an object that fails
// its hash check leaves FILE as it was; a good object replaces it whole.
func TestCasGetOutputIsAllOrNothing(t *testing.T) {
	content := strings.Repeat("the stored content\n", 200000) // several read buffers
	tmp, vdir, id := casVault(t, content)
	out := filepath.Join(tmp, "out")
	if err := os.WriteFile(out, []byte("what was there"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Damage the stored object near its end, past the first buffers.
	hexID := strings.TrimPrefix(id, "blake3:")
	obj := filepath.Join(vdir, ".prose", "objects", hexID[:2], hexID[2:])
	os.Chmod(obj, 0o644)
	f, err := os.OpenFile(obj, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), int64(len(content)-10)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, stderr, code := prose(t, "--vault", vdir, "cas", "get", id, "-o", out)
	if code == 0 {
		t.Fatal("a damaged object was written out without an error")
	}
	if got, _ := os.ReadFile(out); string(got) != "what was there" {
		t.Fatalf("a failed get changed FILE (%d bytes); stderr:\n%s", len(got), stderr)
	}
	// Put the content back: the get now replaces FILE whole.
	f, _ = os.OpenFile(obj, os.O_WRONLY, 0)
	f.WriteAt([]byte(content[len(content)-10:len(content)-9]), int64(len(content)-10))
	f.Close()
	mustProse(t, "--vault", vdir, "cas", "get", id, "-o", out)
	if got, err := os.ReadFile(out); err != nil || string(got) != content {
		t.Fatalf("get -o wrote %d bytes (%v), want %d", len(got), errors.Unwrap(err), len(content))
	}
}

// TestCasRefusesDirectories: a directory given to cas put, or as the -o
// FILE of cas get, is a usage error naming the fix.
func TestCasRefusesDirectories(t *testing.T) {
	tmp, vdir, id := casVault(t, "content")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cas", "put", tmp}, "is a directory; pass a file"},
		{[]string{"cas", "get", id, "-o", tmp}, "is a directory; name the file"},
	} {
		_, stderr, code := prose(t, append([]string{"--vault", vdir}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("prose %s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestCasGetOutputTargets: a named pipe (like /dev/null or /dev/stdout, not
// a regular file) is written in place, not replaced; a symbolic link stays
// a link and its target gets the content; an existing file keeps its
// permissions.
func TestCasGetOutputTargets(t *testing.T) {
	tmp, vdir, id := casVault(t, "content")

	fifo := filepath.Join(tmp, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		read <- string(b)
	}()
	mustProse(t, "--vault", vdir, "cas", "get", id, "-o", fifo)
	select {
	case got := <-read:
		if got != "content" {
			t.Fatalf("read %q from the pipe", got)
		}
	case <-time.After(10 * time.Second):
		os.WriteFile(fifo, nil, 0) // let the reader go (if a pipe is still there)
		t.Fatal("nothing was written to the pipe")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", fi.Mode(), err)
	}

	target := filepath.Join(tmp, "target")
	os.WriteFile(target, []byte("old"), 0o600)
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mustProse(t, "--vault", vdir, "cas", "get", id, "-o", link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	got, _ := os.ReadFile(target)
	fi, _ := os.Stat(target)
	if string(got) != "content" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("target = %q, mode %v; want the content, mode 0600", got, fi.Mode().Perm())
	}
}

// casVault makes a vault in a temporary directory and stores content in
// its object store; it returns the directory, the vault and the object id.
func casVault(t *testing.T, content string) (tmp, vdir, id string) {
	t.Helper()
	tmp = t.TempDir()
	vdir = filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "blob")
	if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp, vdir, strings.TrimSpace(mustProse(t, "--vault", vdir, "cas", "put", src))
}
