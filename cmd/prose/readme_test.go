package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/refdata"
)

// TestReadmeUsingItRuns runs the README's "Using it" block as pasted, from
// the root of the checkout, and fails on the first command that fails.
func TestReadmeUsingItRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds prose and runs the README block")
	}
	needGit(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	root := refdata.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "## Using it\n")
	if !ok {
		t.Fatal("README.md has no ## Using it section")
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 || !strings.Contains(block, "prose init") {
		t.Fatal("no sh block under ## Using it")
	}
	cmd := exec.Command(bash, "-e", "-o", "pipefail", "-c", block)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "PROSE_VAULT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's Using-it block failed: %v\n%s", err, out)
	}
	for _, want := range []string{"Initialized prose vault", "activated dist/manifest.active.json", "dashboard: rendered", "2 receipts, 1 node, 0 problems", "blake3:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the block's output lacks %q:\n%s", want, out)
		}
	}
}
