package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// The libraries' initializers have a bound too, on the same measure: every
// package's, summed, allocated ≈ 5.4 MB while jsonschema/v6 (meta-schemas,
// 1.7 MB) and bleve (scorch's automata, 1.1 MB) were linked, ≈ 2.6 MB
// since; a library that builds at init what few commands use fails it.
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
	const bound, allBound = 64 << 10, 3 << 20
	total, seen, all := 0, 0, 0
	var report, libs []string
	for _, line := range strings.Split(string(out), "\n") {
		// init github.com/prose-store/prose/forme @2.1 ms, 0.05 ms clock, 17888 bytes, 134 allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unreadable inittrace line %q", line)
		}
		all += n
		if n >= 64<<10 {
			libs = append(libs, f[1]+" "+f[7])
		}
		if !strings.HasPrefix(f[1], "github.com/prose-store/prose/") && f[1] != "main" {
			continue
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
	if all > allBound {
		t.Fatalf("the package initializers of prose and its libraries allocate %d bytes at start, more than %d; a library that builds at init what few commands use costs every command (docs/benchmarks.md); the largest:\n%s",
			all, allBound, strings.Join(libs, "\n"))
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

// TestUnlinkedLibraries: libraries prose replaced because their
// initializers cost every command start time stay out of the binary
// (bluemonday is the slot sanitizer's reference in wiki's tests only), and
// the release build's tag (scripts/release.sh) leaves out urfave/cli's
// man-page writer and its blackfriday.
func TestUnlinkedLibraries(t *testing.T) {
	plain := buildProse(t)
	tagged := filepath.Join(t.TempDir(), "prose")
	if out, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", tagged, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags urfave_cli_no_docs: %v\n%s", err, out)
	}
	for bin, gone := range map[string][]string{
		plain:  unlinked,
		tagged: append(slices.Clone(unlinked), "github.com/russross/blackfriday/v2", "github.com/cpuguy83/go-md2man/v2"),
	} {
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Deps) < 5 {
			t.Fatalf("the binary lists %d modules; the build info may have changed", len(info.Deps))
		}
		for _, d := range info.Deps {
			if slices.Contains(gone, d.Path) {
				t.Errorf("%s links %s (docs/benchmarks.md says what it cost at start)", bin, d.Path)
			}
		}
	}
	out, err := exec.Command(tagged, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "prose ") {
		t.Fatalf("the release build's prose --version: %v\n%s", err, out)
	}
}

var unlinked = []string{
	"github.com/microcosm-cc/bluemonday",
	"github.com/gorilla/css",
	"github.com/aymerick/douceur",
}
