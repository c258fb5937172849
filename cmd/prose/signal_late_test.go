//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	var stderr bytes.Buffer
	cmd := exec.Command(os.Args[0], "--vault", vdir, "ingest", src)
	cmd.Env = append(os.Environ(), "PROSE_TEST_CHILD=1")
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
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
	// The child notices the signal in a goroutine of its own: once the
	// kernel has handed it over, give that goroutine a moment (generous,
	// for a loaded machine) before the child may finish.
	waitDelivered(t, cmd.Process.Pid, syscall.SIGINT)
	time.Sleep(500 * time.Millisecond)
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
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

// waitDelivered waits until signal sig is no longer pending for process
// pid: the kernel has delivered it to the process's handler.
func waitDelivered(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (uint(sig) - 1)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		pending := false
		for line := range strings.SplitSeq(string(status), "\n") {
			for _, f := range []string{"SigPnd:", "ShdPnd:"} {
				if rest, ok := strings.CutPrefix(line, f); ok {
					mask, _ := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
					pending = pending || mask&bit != 0
				}
			}
		}
		if !pending {
			return
		}
	}
	t.Fatalf("%v is still pending for process %d", sig, pid)
}
