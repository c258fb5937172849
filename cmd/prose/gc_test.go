//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prose-store/prose/published"
)

// gcCycles runs a prose command line in a child process (this test binary,
// see TestMain) with the collector's trace on, and returns how many
// collections it ran.
func gcCycles(t *testing.T, args ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PROSE_TEST_CHILD=1", "GODEBUG=gctrace=1")
	for _, kv := range []string{"GOGC", "GOMEMLIMIT"} {
		if os.Getenv(kv) != "" {
			t.Skipf("%s is set: the environment decides the collector", kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "gc ") {
			n++
		}
	}
	return n
}

// TestCollectorRunsOnlyForLargeCommands: a small command never collects
// (under Go's defaults a 200-file publish ran two collections of nothing),
// and a command whose live heap grows large gets the collector back.
func TestCollectorRunsOnlyForLargeCommands(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	small := filepath.Join(tmp, "small")
	files := map[string]string{}
	for i := 0; i < 200; i++ {
		files["f"+strconv.Itoa(i)+".md"] = "file " + strconv.Itoa(i)
	}
	writeFiles(t, small, files)
	if n := gcCycles(t, "--vault", vdir, "publish", "small", small); n != 0 {
		t.Errorf("a 200-file publish ran %d collections; want none", n)
	}
	// The worst case at the JSON limit parses to ≈ 100 MB live.
	large := filepath.Join(tmp, "large")
	k := published.MaxJSONFile / 3
	writeFiles(t, large, map[string]string{"a.json": "[" + strings.Repeat("{},", k-1) + "{}]"})
	if n := gcCycles(t, "--vault", vdir, "publish", "large", large); n == 0 {
		t.Error("a publish holding ≈ 100 MB live ran no collection")
	}
}
