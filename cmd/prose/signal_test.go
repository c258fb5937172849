//go:build linux

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/lock"
)

// TestSignalStopsPublish starts a publish of a large world-model in a child
// process, signals it once it holds the vault, and checks that it stops
// with 128+signal, says it was interrupted, and leaves the vault as it was:
// no new receipt, no new commit, fsck clean.
func TestSignalStopsPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes a large file")
	}
	requireGitCLI(t)
	for _, tt := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{
		{syscall.SIGTERM, "SIGTERM", 143},
		{syscall.SIGINT, "SIGINT", 130},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			vdir := filepath.Join(tmp, "v")
			mustProse(t, "init", vdir)
			small := filepath.Join(tmp, "small")
			writeFiles(t, small, map[string]string{"a.md": "a"})
			mustProse(t, "--vault", vdir, "publish", "n", small)
			before := vaultState(t, vdir)

			// Hashing 64 GiB takes far longer than the signal takes to
			// arrive; the publish never gets to the end.
			src := filepath.Join(tmp, "big")
			sparseFile(t, filepath.Join(src, "big.bin"), 64<<30, []byte{0xff})
			writeFiles(t, filepath.Join(src, "more"), map[string]string{"b.md": "b"})
			c := startChild(t, 0, "--vault", vdir, "publish", "n", src)
			waitForHolder(t, filepath.Join(vdir, ".prose", "lock"), c)
			if err := c.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			res := c.finish(t)
			if res.code != tt.code || !strings.Contains(res.stderr, "interrupted by "+tt.name) {
				t.Fatalf("exit %d (want %d), stderr:\n%s", res.code, tt.code, res.stderr)
			}
			if after := vaultState(t, vdir); after != before {
				t.Fatalf("the vault changed:\nbefore %s\nafter  %s", before, after)
			}
			mustProse(t, "--vault", vdir, "fsck")
		})
	}
}

// vaultState is what a publish changes: the refs and the receipts.
func vaultState(t *testing.T, vdir string) string {
	t.Helper()
	refs, err := exec.Command("git", "-C", vdir, "for-each-ref", "--format=%(refname) %(objectname)").CombinedOutput()
	if err != nil {
		t.Fatalf("git for-each-ref: %v\n%s", err, refs)
	}
	return string(refs) + mustProse(t, "--vault", vdir, "receipts", "list")
}

// waitForHolder waits until the child holds the lock at path (its holder
// record names its pid), so the signal arrives while it works; it fails
// the test if the child exits first or a minute passes.
func waitForHolder(t *testing.T, path string, c *child) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if h, err := lock.ReadHolder(path); err == nil && h != nil && h.PID == c.cmd.Process.Pid {
			return
		}
		select {
		case <-c.done:
			t.Fatalf("the child exited before it held the vault:\n%s", c.errb.String())
		case <-time.After(5 * time.Millisecond): // polling a condition, not timing one
		}
	}
	t.Fatal("the child never held the vault")
}

func requireGitCLI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}
