package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
)

const reviewDeploy = "# Deploying the service\n\nWe deploy every Tuesday.\n\n## Glossary\n\nCanary: a small slice of production traffic that sees a release first.\nRollback: returning production to the previous release.\n"

// gitLog returns the subject lines of the vault's last n commits.
func gitLog(t *testing.T, dir string, n int) []string {
	t.Helper()
	out, err := exec.Command(needGit(t), "-C", dir, "log", "-n", strconv.Itoa(n), "--format=%s").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestForcedIngestSaysItCommittedTheReviewQueue: a forced run whose pages
// come out as they were but which keeps a slot a person changed commits
// the review queue on its own; the output and the JSON say so, with the
// item, instead of "no commit".
func TestForcedIngestSaysItCommittedTheReviewQueue(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		dir := newIngestVault(t)
		src := filepath.Join(t.TempDir(), "src")
		writeFiles(t, src, map[string]string{"deploy.md": reviewDeploy})
		mustProse(t, "--vault", dir, "ingest", src)
		mustProse(t, "--vault", dir, "wiki", "write-slot", "canary", "summary", "--content", "<p>Ours.</p>")
		if !asJSON {
			out := mustProse(t, "--vault", dir, "ingest", "--force", src)
			head := headOf(t, dir)
			if strings.Contains(out, "no commit") || !strings.Contains(out, "committed the review queue "+head[:12]) || !strings.Contains(out, "1 new item") {
				t.Fatalf("forced ingest that committed the review queue (%s) says:\n%s", head[:12], out)
			}
			if !strings.Contains(out, "  review   r") {
				t.Fatalf("the item is not listed:\n%s", out)
			}
		} else {
			var doc struct {
				Status       string               `json:"status"`
				Review       []ingest.ReviewEntry `json:"review"`
				Commit       string               `json:"commit"`
				ReviewCommit string               `json:"review_commit"`
			}
			if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "ingest", "--force", src)), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Status != "skipped" || doc.Commit != "" || doc.ReviewCommit != headOf(t, dir) || len(doc.Review) != 1 || doc.Review[0].Kind != ingest.ReviewKept || doc.Review[0].Slot != "summary" {
				t.Fatalf("--json of a run that committed the review queue (head %s): %+v", headOf(t, dir), doc)
			}
		}
		if got := gitLog(t, dir, 1); got[0] != "prose ingest: 1 review items" {
			t.Fatalf("last commit: %q", got)
		}
		cleanAndFsck(t, dir)
	}
}
