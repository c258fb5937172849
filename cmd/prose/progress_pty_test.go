//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/prose-store/prose/internal/fakewiki"
	"github.com/prose-store/prose/model/fakeserver"
)

// openPTY opens a pseudo-terminal of 40 rows and 200 columns: the
// terminal's side (a child's stderr) and the side that reads what was
// drawn on it.
func openPTY(t *testing.T) (term, reader *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a pseudo-terminal is required under CI: %v", err)
		}
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 200}); err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// screen is what a child drew on a pseudo-terminal so far; wait blocks
// until it matches a pattern (or gives up after a while).
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more *sync.Cond
	done bool
}

func newScreen(r *os.File) *screen {
	s := &screen{}
	s.more = sync.NewCond(&s.mu)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			if err != nil {
				s.done = true
			}
			s.more.Broadcast()
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { // wake the waiters now and then, so they time out
		for {
			time.Sleep(50 * time.Millisecond)
			s.mu.Lock()
			s.more.Broadcast()
			done := s.done
			s.mu.Unlock()
			if done {
				return
			}
		}
	}()
	return s
}

func (s *screen) wait(re *regexp.Regexp, d time.Duration) bool {
	end := time.Now().Add(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for !re.Match(s.buf.Bytes()) {
		if s.done || time.Now().After(end) {
			return false
		}
		s.more.Wait()
	}
	return true
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

var (
	inFlightRe = regexp.MustCompile(`3 calls in flight`)
	tokensRe   = regexp.MustCompile(`· ([1-9][0-9]*) tokens`)
	oneDoneRe  = regexp.MustCompile(`\([1-4]/4`)
)

// TestIngestProgressOnATerminal: `prose ingest` with a provider draws on
// a terminal, while its calls are under way, the sources done of the run
// (N/4), the source of the latest call, the calls in flight and the
// tokens so far — each seen before the fake answers the calls that wait
// for it: the first three analyses are held until the terminal shows
// them in flight, the later calls until it shows tokens counted, and the
// fourth source's first call until it shows a source done. On a pipe,
// and with --json on a terminal, the same run draws nothing.
func TestIngestProgressOnATerminal(t *testing.T) {
	bin := buildProse(t)
	src := scaleSources(t, 4)
	run := func(t *testing.T, stderr *os.File, scr *screen, flags ...string) (string, int64) {
		var mu sync.Mutex
		var missed []string
		hold := func(re *regexp.Regexp, what string) {
			if scr != nil && !scr.wait(re, 10*time.Second) {
				mu.Lock()
				missed = append(missed, what)
				mu.Unlock()
			}
		}
		fm := &fakewiki.Model{}
		latency := time.Duration(0)
		if scr == nil {
			latency = 200 * time.Millisecond // past the bar's delay: a bar would be drawn by now
		}
		srv := fm.Serve(t, fakeserver.Responses, fakeserver.Options{Latency: latency, Arrived: func(in *fakeserver.Incoming) {
			switch {
			case in.N < 3:
				hold(inFlightRe, "3 calls in flight")
			case strings.Contains(in.Text(), `<source name="docs/runbook-03.md"`) && in.Assistant == 0:
				hold(oneDoneRe, "a source done (N/4)")
			default:
				hold(tokensRe, "tokens so far")
			}
		}})
		env := srv.Env()
		dir := newIngestVault(t)
		cmd := exec.Command(bin, append(append([]string{"--vault", dir}, flags...), "ingest", "--jobs", "3", "--model", "openai:fake-model", src)...)
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+env("OPENAI_BASE_URL"), "OPENAI_API_KEY="+env("OPENAI_API_KEY"), "PROSE_NOW=2026-01-31")
		var out, errs bytes.Buffer
		cmd.Stdout = &out
		if stderr != nil {
			cmd.Stderr = stderr
		} else {
			cmd.Stderr = &errs
		}
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
		}
		for _, m := range missed {
			t.Errorf("the terminal never showed %s while the calls waited for it", m)
		}
		if !strings.Contains(out.String(), "wiki: rendered") && !strings.Contains(out.String(), `"status": "rendered"`) {
			t.Errorf("the run did not land:\n%s", out.String())
		}
		used := srv.Used()
		return errs.String(), used.Input + used.Output
	}
	t.Run("terminal", func(t *testing.T) {
		term, reader := openPTY(t)
		defer reader.Close()
		scr := newScreen(reader)
		_, used := run(t, term, scr)
		term.Close()
		drawn := scr.text()
		if !strings.Contains(drawn, "docs/runbook-0") {
			t.Errorf("no source named on the terminal:\n%q", drawn)
		}
		var last int64
		for _, m := range tokensRe.FindAllStringSubmatch(drawn, -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			if n < last || n > used {
				t.Errorf("tokens drawn %d after %d (the run used %d): not a running count", n, last, used)
			}
			last = n
		}
		if last == 0 {
			t.Errorf("no tokens counted on the terminal:\n%q", drawn)
		}
		if t.Failed() {
			t.Logf("drawn:\n%q", drawn)
		}
	})
	t.Run("json", func(t *testing.T) {
		// --json on a terminal: the output is for a program, no bar.
		term, reader := openPTY(t)
		defer reader.Close()
		scr := newScreen(reader)
		run(t, term, nil, "--json")
		term.Close()
		if drawn := scr.text(); strings.ContainsAny(drawn, "\r\x1b") || strings.Contains(drawn, "in flight") {
			t.Errorf("progress drawn with --json: %q", drawn)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		errs, _ := run(t, nil, nil)
		if strings.ContainsAny(errs, "\r\x1b") || strings.Contains(errs, "in flight") || strings.Contains(errs, "tokens") {
			t.Errorf("progress drawn on a pipe: %q", errs)
		}
	})
}
