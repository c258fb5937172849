//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/durable"
	"github.com/prose-store/prose/internal/progress"
	"github.com/prose-store/prose/internal/testtmp"
)

// The tests that measure memory or send signals run prose in a child
// process: this test binary, re-executed with PROSE_TEST_CHILD=1, runs the
// command line it is given instead of the tests.

// signalMark is the line a child run with PROSE_TEST_SIGNAL_MARK=1 writes
// to its standard error once it has taken note of a signal.
const signalMark = "prose-test: signal noticed:"

func TestMain(m *testing.M) {
	if os.Getenv("PROSE_TEST_CHILD") == "1" {
		if mb, err := strconv.Atoi(os.Getenv("PROSE_TEST_ADDRESS_MB")); err == nil && mb > 0 {
			smallThreadStacks()
			limitAddressSpace(int64(mb) << 20)
		}
		if os.Getenv("PROSE_TEST_SIGNAL_MARK") == "1" {
			signalNoticed = func(s os.Signal) { fmt.Fprintf(os.Stderr, "%s %v\n", signalMark, s) }
		}
		if at := os.Getenv("PROSE_TEST_KILL_AT_RENAME"); at != "" {
			killAt(durable.StepRename, at)
		}
		if at := os.Getenv("PROSE_TEST_KILL_AT_WRITE"); at != "" {
			killAt(durable.StepWrite, at)
		}
		if os.Getenv("PROSE_TEST_PROGRESS_AT_ONCE") == "1" {
			progress.SetDefaultDelay(-1)
		}
		stopHeap := func() {}
		if f := os.Getenv("PROSE_TEST_LIVE_HEAP_FILE"); f != "" {
			stopHeap = watchLiveHeap(f)
		}
		code := run(append([]string{"prose"}, os.Args[1:]...), os.Stdout, os.Stderr)
		stopHeap()
		if f := os.Getenv("PROSE_TEST_PEAK_FILE"); f != "" {
			// The peak of this process's own memory: the rusage a parent
			// sees also counts the parent's memory shared until the exec.
			if kb := procStatusKB("VmHWM:"); kb > 0 {
				_ = os.WriteFile(f, []byte(strconv.FormatInt(kb, 10)), 0o644)
			}
		}
		os.Exit(code)
	}
	os.Exit(testtmp.Main(m)) // a short run's temporary files on a RAM file system
}

// watchLiveHeap records the largest live heap the collector found (the
// heap marked live at the end of a cycle: what the program held, not when
// the collector ran) in file, as bytes, once stop is called. It samples
// every 5 ms; a cycle's figure stays until the next cycle, so no cycle is
// missed unless two end within 5 ms.
func watchLiveHeap(file string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	read := func() {
		metrics.Read(sample)
		peak = max(peak, sample[0].Value.Uint64())
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				runtime.GC() // the heap held at the end counts too
				read()
				_ = os.WriteFile(file, []byte(strconv.FormatUint(peak, 10)), 0o644)
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// killAt makes the child SIGKILL itself just before its n-th step (a
// rename: PROSE_TEST_KILL_AT_RENAME; a write of a temporary file, such as
// a git object's: PROSE_TEST_KILL_AT_WRITE) of a file whose path contains
// substr, given as "SUBSTR:N": a writer killed in the middle of a checkout
// (step 5 of docs/vault-format.md), or while it writes its objects.
func killAt(at durable.Step, spec string) {
	i := strings.LastIndexByte(spec, ':')
	n, err := strconv.Atoi(spec[i+1:])
	if i < 0 || err != nil {
		panic("PROSE_TEST_KILL_AT_" + strings.ToUpper(string(at)) + " is SUBSTR:N, not " + spec)
	}
	substr := spec[:i]
	var seen atomic.Int64
	durable.SetFault(func(step durable.Step, path string) error {
		if step == at && strings.Contains(path, substr) && seen.Add(1) == int64(n) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		return nil
	})
}

// limitAddressSpace caps the process's address space at what it maps now
// plus extra bytes: an allocation beyond fails (the Go runtime then stops
// the process) instead of exhausting the machine. The cap is set from
// inside because the runtime reserves address space when it starts.
func limitAddressSpace(extra int64) {
	if kb := procStatusKB("VmSize:"); kb > 0 {
		lim := uint64(kb<<10 + extra)
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
	}
}

// childStack is the stack size a capped child's threads reserve.
const childStack = 1 << 20

// smallThreadStacks re-executes the child with RLIMIT_STACK at childStack
// when it is larger. With cgo every thread the runtime starts reserves
// RLIMIT_STACK of address space (8 MiB by default) for its stack, and a
// loaded machine starts more threads around blocking reads: under an
// address-space cap, twenty of them spent 160 MiB of a 256 MiB cap and the
// child ran out of memory holding 24 MB (seen in CI). The C library reads
// the limit once, at start, hence the exec; the process keeps its pid.
func smallThreadStacks() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_STACK, &lim) != nil || lim.Cur <= childStack {
		return
	}
	lim.Cur = childStack
	if syscall.Setrlimit(syscall.RLIMIT_STACK, &lim) != nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	err = syscall.Exec(exe, os.Args, os.Environ())
	panic("re-executing the test child with small thread stacks: " + err.Error())
}

// procStatusKB reads one kilobyte figure of /proc/self/status, or 0.
func procStatusKB(field string) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// childResult is the outcome of a prose command line run in a child.
type childResult struct {
	stdout, stderr string
	code           int
	peakRSS        int64 // bytes
	signal         syscall.Signal
}

// child is a prose command line running in a child process.
type child struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{} // closed when the child has exited
	err       error         // from Wait, once done
	peakFile  string        // where the child writes its peak RSS
}

// startChild starts prose args in a child process whose address space is
// capped at what it maps at start plus addressMB (0: no cap).
func startChild(t *testing.T, addressMB int, args ...string) *child {
	t.Helper()
	return startChildWithStdin(t, addressMB, nil, args...)
}

// finish waits for the child and collects what it did.
func (c *child) finish(t *testing.T) childResult {
	t.Helper()
	<-c.done
	cmd := c.cmd
	if _, ok := c.err.(*exec.ExitError); c.err != nil && !ok {
		t.Fatal(c.err)
	}
	res := childResult{stdout: c.out.String(), stderr: c.errb.String(), code: cmd.ProcessState.ExitCode()}
	if data, err := os.ReadFile(c.peakFile); err == nil {
		kb, _ := strconv.ParseInt(string(data), 10, 64)
		res.peakRSS = kb << 10
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// No report (the child died): rusage, which may count more.
		res.peakRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.signal = ws.Signal()
	}
	if strings.Contains(res.stderr, "goroutine ") || strings.Contains(res.stderr, "panic:") {
		t.Fatalf("stack trace on stderr:\n%.4000s", res.stderr)
	}
	return res
}

// runChild runs prose args in a child process and waits for it.
func runChild(t *testing.T, addressMB int, args ...string) childResult {
	t.Helper()
	return startChild(t, addressMB, args...).finish(t)
}

// TestProgressOnATerminalOnly: a publish long enough for the progress line
// draws it on a terminal (a pseudo-terminal from script(1)), naming the
// step under way, and draws nothing when stderr is a pipe.
func TestProgressOnATerminalOnly(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("script(1) is required in CI (util-linux)")
		}
		t.Skip("script(1) not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	// The child draws its bars at once (PROSE_TEST_PROGRESS_AT_ONCE): a
	// publish of any size would have to outlast the 300 ms delay on every
	// machine, and one of 8,000 files did not on a quiet one.
	for i := 0; i < 400; i++ {
		p := filepath.Join(src, "d"+strconv.Itoa(i%80), "f"+strconv.Itoa(i)+".md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("text ", 200)+strconv.Itoa(i)), 0o644)
	}
	publishIn := func(vault string, tty bool) string {
		t.Helper()
		t.Setenv("PROSE_TEST_PROGRESS_AT_ONCE", "1")
		if r := runChild(t, 0, "init", vault); r.code != 0 {
			t.Fatalf("init: %s", r.stderr)
		}
		args := []string{os.Args[0], "--vault", vault, "publish", "wm", src}
		if !tty {
			r := runChild(t, 0, args[1:]...)
			if r.code != 0 {
				t.Fatalf("publish: %s", r.stderr)
			}
			return r.stderr
		}
		out := filepath.Join(dir, "typescript")
		cmd := exec.Command(script, "-q", "-e", "-c", strings.Join(args, " "), out)
		cmd.Env = append(os.Environ(), "PROSE_TEST_CHILD=1", "PROSE_TEST_PROGRESS_AT_ONCE=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("publish on a terminal: %v\n%s", err, b)
		}
		data, _ := os.ReadFile(out)
		return string(data)
	}
	onTTY := publishIn(filepath.Join(dir, "v1"), true)
	if !strings.Contains(onTTY, "\rpublish wm:") && !strings.Contains(onTTY, " publish wm: ") {
		t.Fatalf("no progress line on a terminal:\n%q", onTTY)
	}
	if piped := publishIn(filepath.Join(dir, "v2"), false); strings.Contains(piped, "\r") || strings.Contains(piped, "publish wm:") {
		t.Fatalf("progress drawn on a pipe:\n%q", piped)
	}
}
