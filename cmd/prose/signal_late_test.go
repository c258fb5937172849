//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSignalAfterTheCommitSaysItLanded signals an ingest while it prints
// what it committed: the work stands, the command exits 0, and it says
// that the signal came too late to stop anything rather than nothing.
func TestSignalAfterTheCommitSaysItLanded(t *testing.T) {
	t.Setenv("PROSE_NOW", "2026-01-31")
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	files := map[string]string{}
	// Enough sources that what the command prints (a line per source and
	// per page) is more than the pipe below holds.
	for i := 0; i < 150; i++ {
		files[fmt.Sprintf("doc-%03d.md", i)] = fmt.Sprintf("# Runbook %d\n\nThe service number %d keeps a record of every request.\n", i, i)
	}
	src := filepath.Join(tmp, "src")
	writeFiles(t, src, files)
	before := headOf(t, vdir)

	// The child prints into a pipe of one page that is read only slowly:
	// its first line means the commit has landed, and the child then waits
	// on the full pipe while the signal arrives.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const setPipeSize = 1031 // F_SETPIPE_SZ
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), setPipeSize, 4096); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer er.Close()
	cmd := exec.Command(os.Args[0], "--vault", vdir, "ingest", src)
	cmd.Env = append(os.Environ(), "PROSE_TEST_CHILD=1", "PROSE_TEST_SIGNAL_MARK=1")
	cmd.Stdout, cmd.Stderr = w, ew
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ew.Close()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	// Standard error is read as it comes: the child's note that it took
	// the signal in is what the test waits for, however loaded the
	// machine, before it lets the child finish.
	var stderr lockedBuffer
	noticed := make(chan struct{})
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(er)
		once := false
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, signalMark) {
				if !once {
					close(noticed)
					once = true
				}
				continue
			}
			stderr.WriteString(line + "\n")
		}
	}()
	var first []byte
	b := make([]byte, 1)
	for {
		if _, err := r.Read(b); err != nil {
			t.Fatalf("the ingest printed no line: %v; stderr:\n%s", err, stderr.String())
		}
		first = append(first, b[0])
		if b[0] == '\n' {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-noticed:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the child never took the signal in; stderr:\n%s", stderr.String())
	}
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	<-stderrDone
	out := string(first) + string(rest)
	if err != nil || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("exit %v, stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "SIGINT came after the command had finished its work; what it did stands") {
		t.Errorf("the late signal went unmentioned; stderr:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "the vault is as it was") {
		t.Errorf("the command claims it undid work that landed:\n%s", stderr.String())
	}
	if !strings.Contains(out, "wiki: rendered") || headOf(t, vdir) == before {
		t.Errorf("the ingest did not land:\n%s", out)
	}
}

// lockedBuffer is a buffer one goroutine writes while another reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
