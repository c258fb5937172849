package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
)

const reviewDeploy = "# Deploying the service\n\nWe deploy every Tuesday, canary first.\n\n## Glossary\n\nCanary: a small slice of production traffic that sees a release first.\nRollback: returning production to the previous release.\n"

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
			if !regexp.MustCompile(`(?m)^  review   r[0-9a-f]{8} [^ ]*canary\.html: `).MatchString(out) {
				t.Fatalf("the item is not listed with its page:\n%s", out)
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

// keptItems returns the vault's kept-edit items (resolved too).
func keptItems(t *testing.T, dir string) []ingest.ReviewEntry {
	t.Helper()
	var q struct {
		Items []ingest.ReviewEntry `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "review", "list", "--all")), &q); err != nil {
		t.Fatal(err)
	}
	var out []ingest.ReviewEntry
	for _, it := range q.Items {
		if it.Kind == ingest.ReviewKept {
			out = append(out, it)
		}
	}
	return out
}

// TestReviewTakeOfAnOlderOrOverwrittenItem: through the CLI, a second
// change of the source supersedes the first kept-edit item (take of it
// exits 1 naming the newer one), and take refuses to write over a slot a
// person wrote after the item was queued unless --force.
func TestReviewTakeOfAnOlderOrOverwrittenItem(t *testing.T) {
	dir, src := vaultWithAKeptEdit(t)
	writeFiles(t, src, map[string]string{"deploy.md": strings.Replace(reviewDeploy, "production traffic", "real traffic", 1)})
	mustProse(t, "--vault", dir, "ingest", src)
	items := keptItems(t, dir)
	if len(items) != 2 || items[0].SupersededBy != items[1].ID || items[1].Resolved != "" || !strings.Contains(items[1].Proposed, "real traffic") {
		t.Fatalf("kept-edit items after two changes: %+v", items)
	}
	older, newer := items[0], items[1]
	if list := mustProse(t, "--vault", dir, "wiki", "review", "list", "--all"); !strings.Contains(list, "superseded by "+newer.ID) {
		t.Fatalf("review list --all:\n%s", list)
	}
	if _, errs, code := prose(t, "--vault", dir, "wiki", "review", "take", older.ID); code != 1 || !strings.Contains(errs, "superseded") || !strings.Contains(errs, newer.ID) {
		t.Fatalf("take of the older item: exit %d %q", code, errs)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "canary", "summary"); got != "<p>Ours.</p>" {
		t.Fatalf("the older item was written: %q", got)
	}

	mustProse(t, "--vault", dir, "wiki", "write-slot", "canary", "summary", "--content", "<p>Ours, later.</p>")
	head := headOf(t, dir)
	_, errs, code := prose(t, "--vault", dir, "wiki", "review", "take", newer.ID)
	if code != 1 || !strings.Contains(errs, "review show "+newer.ID) || !strings.Contains(errs, "write-slot") || !strings.Contains(errs, "take --force "+newer.ID) {
		t.Fatalf("take over a slot written after the item: exit %d %q", code, errs)
	}
	if headOf(t, dir) != head || mustProse(t, "--vault", dir, "wiki", "slot", "canary", "summary") != "<p>Ours, later.</p>" {
		t.Fatal("a refused take wrote something")
	}
	mustProse(t, "--vault", dir, "wiki", "review", "take", "--force", newer.ID)
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "canary", "summary"); got != newer.Proposed {
		t.Fatalf("after take --force: %q, want %q", got, newer.Proposed)
	}
	// Items are dated by PROSE_NOW, as an ingest dates them.
	if items := keptItems(t, dir); items[1].Resolved != "2026-01-31" || items[0].Resolved != "2026-01-31" {
		t.Fatalf("resolved on %q and %q, want PROSE_NOW's 2026-01-31", items[0].Resolved, items[1].Resolved)
	}
	cleanAndFsck(t, dir)
}

// TestMovedPagesKeepTheirProvenanceAndReviewItems: wiki mv rewrites the
// links of the moved pages and of the pages linking to them, which is no
// person's edit: the next ingest of the changed source updates them. The
// open kept-edit item of a moved page names its new path, its proposal's
// links read right from there, and review take writes it.
func TestMovedPagesKeepTheirProvenanceAndReviewItems(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	writeFiles(t, src, map[string]string{"deploy.md": reviewDeploy})
	mustProse(t, "--vault", dir, "ingest", src)
	// The person's text links to the page moved below: mv rewrites that
	// link, and take must not read the rewrite as a later edit.
	mustProse(t, "--vault", dir, "wiki", "write-slot", "glossary/canary", "body", "--content", `<p>Ours; see <a href="../src/deploy.html">the guide</a>.</p>`)
	v2 := strings.Replace(reviewDeploy, "production traffic", "live traffic", 1)
	writeFiles(t, src, map[string]string{"deploy.md": v2})
	mustProse(t, "--vault", dir, "ingest", src)
	items := keptItems(t, dir)
	if len(items) != 1 || items[0].Page != "glossary/canary.html" || !strings.Contains(items[0].Proposed, `href="../src/deploy.html"`) {
		t.Fatalf("kept-edit items: %+v", items)
	}
	id := items[0].ID

	mustProse(t, "--vault", dir, "wiki", "mv", "glossary/canary", "other/canary")
	mustProse(t, "--vault", dir, "wiki", "mv", "src/deploy", "guides/deploy")
	items = keptItems(t, dir)
	if len(items) != 1 || items[0].ID != id || items[0].Page != "other/canary.html" || !strings.Contains(items[0].Proposed, `href="../guides/deploy.html"`) {
		t.Fatalf("kept-edit items after the moves: %+v", items)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "other/canary", "body"); got != `<p>Ours; see <a href="../guides/deploy.html">the guide</a>.</p>` {
		t.Fatalf("the person's text after the moves: %q", got)
	}
	if show := mustProse(t, "--vault", dir, "wiki", "review", "show", id); !strings.Contains(show, "other/canary.html") {
		t.Fatalf("review show after mv:\n%s", show)
	}
	mustProse(t, "--vault", dir, "wiki", "review", "take", id)
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "other/canary", "body"); got != items[0].Proposed {
		t.Fatalf("after take: %q, want %q", got, items[0].Proposed)
	}

	writeFiles(t, src, map[string]string{"deploy.md": strings.NewReplacer("live traffic", "real traffic", "every Tuesday", "every Wednesday", "## Glossary", "## Terms").Replace(v2)})
	out := mustProse(t, "--vault", dir, "ingest", src)
	if items := keptItems(t, dir); len(items) != 1 {
		t.Fatalf("the moved pages read as changed by a person:\n%s\n%+v", out, items)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "guides/deploy", "abstract"); !strings.Contains(got, "every Wednesday") {
		t.Fatalf("the moved source page was not updated: %q", got)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "other/canary", "body"); !strings.Contains(got, "“Terms”") {
		t.Fatalf("the moved page, taken back, was not updated: %q", got)
	}
	if lint := mustProse(t, "--vault", dir, "wiki", "lint"); !strings.Contains(lint, " 0 errors") {
		t.Fatalf("lint:\n%s", lint)
	}
	cleanAndFsck(t, dir)
}

// TestReviewItemsOfARemovedPageAreClosed: wiki rm closes the open items
// naming the page it removes, in the same commit, dated by PROSE_NOW;
// take and resolve of such an item exit 1 saying why.
func TestReviewItemsOfARemovedPageAreClosed(t *testing.T) {
	dir, _ := vaultWithAKeptEdit(t)
	items := keptItems(t, dir)
	if len(items) != 1 || items[0].Resolved != "" {
		t.Fatalf("kept-edit items: %+v", items)
	}
	id := items[0].ID
	mustProse(t, "--vault", dir, "wiki", "rm", "--force", "canary")
	if it := keptItems(t, dir)[0]; it.Resolved != "2026-01-31" || !strings.Contains(it.Closed, "page was removed") {
		t.Fatalf("the item after wiki rm of its page: %+v", it)
	}
	if list := mustProse(t, "--vault", dir, "wiki", "review", "list"); strings.Contains(list, id) {
		t.Fatalf("the closed item is listed as open:\n%s", list)
	}
	for _, verb := range []string{"take", "resolve"} {
		if _, errs, code := prose(t, "--vault", dir, "wiki", "review", verb, id); code != 1 || !strings.Contains(errs, "page was removed") {
			t.Fatalf("review %s of a closed item: exit %d %q", verb, code, errs)
		}
	}
	cleanAndFsck(t, dir)
}

// vaultWithAKeptEdit ingests reviewDeploy, writes the canary page's summary
// by hand and ingests a change of the source: the vault holds one open
// kept-edit item. It returns the vault and the source directory.
func vaultWithAKeptEdit(t *testing.T) (dir, src string) {
	t.Helper()
	dir = newIngestVault(t)
	src = filepath.Join(t.TempDir(), "src")
	writeFiles(t, src, map[string]string{"deploy.md": reviewDeploy})
	mustProse(t, "--vault", dir, "ingest", src)
	mustProse(t, "--vault", dir, "wiki", "write-slot", "canary", "summary", "--content", "<p>Ours.</p>")
	writeFiles(t, src, map[string]string{"deploy.md": strings.Replace(reviewDeploy, "production traffic", "live traffic", 1)})
	mustProse(t, "--vault", dir, "ingest", src)
	return dir, src
}
