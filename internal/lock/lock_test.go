package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The helper process: when LOCK_HELPER is set, the test binary acquires the
// lock named by LOCK_PATH with LOCK_TIMEOUT, prints "locked <pid>" (or the
// error), holds the lock until its stdin closes, then releases and prints
// "released".
func TestHelperProcess(t *testing.T) {
	if os.Getenv("LOCK_HELPER") != "1" {
		t.Skip("helper process for other tests")
	}
	timeout, _ := time.ParseDuration(os.Getenv("LOCK_TIMEOUT"))
	fmt.Println("waiting")
	l, err := Acquire(context.Background(), os.Getenv("LOCK_PATH"), timeout, "prose helper")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fmt.Println("locked", os.Getpid())
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := l.Release(); err != nil {
		fmt.Println("error", err)
		os.Exit(4)
	}
	fmt.Println("released")
	os.Exit(0)
}

// helper is a child process running TestHelperProcess.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

func startHelper(t *testing.T, path string, timeout time.Duration) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "LOCK_HELPER=1", "LOCK_PATH="+path, "LOCK_TIMEOUT="+timeout.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return h
}

// expect reads the helper's next line and checks its first word.
func (h *helper) expect(t *testing.T, word string) string {
	t.Helper()
	if !h.lines.Scan() {
		t.Fatalf("helper ended before printing %q: %v", word, h.lines.Err())
	}
	line := h.lines.Text()
	if strings.Fields(line + " ")[0] != word {
		t.Fatalf("helper printed %q, want %q", line, word)
	}
	return line
}

func (h *helper) release(t *testing.T) {
	t.Helper()
	if err := h.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	h.expect(t, "released")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
}

func lockPath(t *testing.T) string { return filepath.Join(t.TempDir(), "lock") }

func TestAcquireRelease(t *testing.T) {
	path := lockPath(t)
	l, err := Acquire(context.Background(), path, time.Second, "prose publish")
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadHolder(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.PID != os.Getpid() || h.Who != "prose publish" || h.Since.IsZero() {
		t.Errorf("holder = %+v", h)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if h, err := ReadHolder(path); err == nil || h != nil {
		t.Errorf("holder record %+v survived Release", h)
	}
	if fi, err := os.Stat(path + HolderSuffix); err != nil || fi.Size() != 0 {
		t.Errorf("holder file after Release: %v, %v; want it kept, empty (the next holder writes into it)", fi, err)
	}
	before, _ := os.Stat(path + HolderSuffix)
	l2, err := TryAcquire(path, "again")
	if err != nil {
		t.Fatalf("lock not free after Release: %v", err)
	}
	if h, err := ReadHolder(path); err != nil || h.Who != "again" {
		t.Errorf("second holder's record: %+v, %v", h, err)
	}
	if after, err := os.Stat(path + HolderSuffix); err != nil || !os.SameFile(before, after) {
		t.Error("the second holder created a new holder file instead of writing into the kept one")
	}
	l2.Release()
}

// TestSameProcessExcludes: two acquisitions in one process exclude each other.
func TestSameProcessExcludes(t *testing.T) {
	path := lockPath(t)
	l, err := TryAcquire(path, "first")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = TryAcquire(path, "second")
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want a *HeldError", err)
	}
	if held.Holder == nil || held.Holder.Who != "first" {
		t.Errorf("holder = %+v, want the first acquirer", held.Holder)
	}
}

func TestMissingDirectory(t *testing.T) {
	_, err := TryAcquire(filepath.Join(t.TempDir(), "no", "lock"), "x")
	if err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want an open failure", err)
	}
}

// TestTimeoutNamesHolder: a child process holds the lock; the parent's wait
// times out with an error naming the child's pid.
func TestTimeoutNamesHolder(t *testing.T) {
	path := lockPath(t)
	child := startHelper(t, path, time.Second)
	child.expect(t, "waiting")
	line := child.expect(t, "locked")
	pid, _ := strconv.Atoi(strings.Fields(line)[1])

	start := time.Now()
	_, err := Acquire(context.Background(), path, 150*time.Millisecond, "prose publish")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("err = %v, want a *HeldError", err)
	}
	if time.Since(start) < 150*time.Millisecond || held.Waited != 150*time.Millisecond {
		t.Errorf("gave up after %v (reported %v), before the timeout", time.Since(start), held.Waited)
	}
	if held.Holder == nil || held.Holder.PID != pid || held.Holder.Who != "prose helper" {
		t.Errorf("holder = %+v, want pid %d", held.Holder, pid)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("vault is locked by pid %d (prose helper, since ", pid), "; waited 150ms", "retry later or raise --lock-timeout"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	child.release(t)
}

// TestChildWaitsForParent: the parent holds the lock; a child process waits
// and acquires it once the parent releases.
func TestChildWaitsForParent(t *testing.T) {
	path := lockPath(t)
	l, err := TryAcquire(path, "parent")
	if err != nil {
		t.Fatal(err)
	}
	child := startHelper(t, path, 30*time.Second)
	child.expect(t, "waiting")
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	child.expect(t, "locked")
	if _, err := TryAcquire(path, "parent again"); !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked while the child holds the lock", err)
	}
	child.release(t)
}

// TestParentWaitsForChild: a child holds the lock; the parent's Acquire
// waits and succeeds once the child releases.
func TestParentWaitsForChild(t *testing.T) {
	path := lockPath(t)
	child := startHelper(t, path, time.Second)
	child.expect(t, "waiting")
	child.expect(t, "locked")
	got := make(chan error, 1)
	go func() {
		l, err := Acquire(context.Background(), path, 30*time.Second, "parent")
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	child.release(t)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestDeadHolderDoesNotBlock: a killed holder leaves its record behind, but
// the operating system has released its lock.
func TestDeadHolderDoesNotBlock(t *testing.T) {
	path := lockPath(t)
	child := startHelper(t, path, time.Second)
	child.expect(t, "waiting")
	child.expect(t, "locked")
	if err := child.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.cmd.Wait()
	if _, err := ReadHolder(path); err != nil {
		t.Fatalf("expected a stale holder record: %v", err)
	}
	l, err := Acquire(context.Background(), path, 5*time.Second, "after crash")
	if err != nil {
		t.Fatalf("stale record blocked: %v", err)
	}
	defer l.Release()
	h, err := ReadHolder(path)
	if err != nil || h.PID != os.Getpid() {
		t.Errorf("holder = %+v, %v; want this process", h, err)
	}
}

func TestContextCancel(t *testing.T) {
	path := lockPath(t)
	l, err := TryAcquire(path, "holder")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Acquire(ctx, path, -1, "waiter")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("message %q does not name the holder", err)
	}
}

func TestHeldErrorMessage(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 12, 1, 2, 0, time.Local)
	long := time.Date(2024, 5, 1, 9, 30, 0, 0, time.Local)
	tests := []struct {
		err  HeldError
		want string
	}{
		{HeldError{Holder: &Holder{PID: 1234, Who: "prose publish", Host: host, Since: today}, Waited: 60 * time.Second},
			"vault is locked by pid 1234 (prose publish, since 12:01:02); waited 60s — retry later or raise --lock-timeout"},
		{HeldError{Holder: &Holder{PID: 7, Who: "prose cas gc", Host: "elsewhere", Since: long}, Waited: 1500 * time.Millisecond},
			"vault is locked by pid 7 on elsewhere (prose cas gc, since 2024-05-01 09:30:00); waited 2s — retry later or raise --lock-timeout"},
		{HeldError{Waited: 250 * time.Millisecond},
			"vault is locked by another process; waited 250ms — retry later or raise --lock-timeout"},
		{HeldError{Holder: &Holder{PID: 9}},
			"vault is locked by pid 9 — retry later or raise --lock-timeout"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	path := filepath.Join(b.TempDir(), "lock")
	for b.Loop() {
		l, err := TryAcquire(path, "bench")
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}
