package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPackageInitsStayCheap: every prose command runs the initializers of
// every prose package, so they build nothing only one command needs —
// regular expressions, program schemas — at start (internal/lazyre). The
// bound is on bytes allocated (GODEBUG=inittrace), not on time: the
// initializers allocated ≈ 490 KB before, ≈ 45 KB since.
//
// It runs the real binary: this test binary's main package also holds the
// tests' own setup.
func TestPackageInitsStayCheap(t *testing.T) {
	bin := buildProse(t)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("prose --version: %v\n%s", err, out)
	}
	const bound = 64 << 10
	total, seen := 0, 0
	var report []string
	for _, line := range strings.Split(string(out), "\n") {
		// init github.com/prose-store/prose/forme @2.1 ms, 0.05 ms clock, 17888 bytes, 134 allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/prose-store/prose/") && f[1] != "main" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unreadable inittrace line %q", line)
		}
		seen++
		total += n
		report = append(report, f[1]+" "+f[7])
	}
	if seen < 10 {
		t.Fatalf("inittrace listed %d prose packages; the trace format may have changed:\n%s", seen, out)
	}
	if total > bound {
		t.Fatalf("prose's package initializers allocate %d bytes at start, more than %d; make what they build lazy (internal/lazyre, sync.OnceValue):\n%s",
			total, bound, strings.Join(report, "\n"))
	}
}

// buildProse builds the prose binary into a temporary directory, for tests
// that need the real program rather than this test binary; -short skips
// them.
func buildProse(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "prose")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
