package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
)

// pageTitled returns the path of the page titled title, found through
// `wiki find` ("" when there is none).
func pageTitled(t *testing.T, dir, title string) string {
	t.Helper()
	var doc struct {
		Pages []struct {
			Path  string `json:"path"`
			Title string `json:"title"`
		} `json:"pages"`
	}
	out, _, code := prose(t, "--vault", dir, "--json", "wiki", "find", title)
	if code != 0 {
		return ""
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Pages {
		if p.Title == title {
			return p.Path
		}
	}
	return ""
}

// reviewItems returns the vault's review items (resolved too).
func reviewItems(t *testing.T, dir string) []ingest.ReviewEntry {
	t.Helper()
	var q struct {
		Items []ingest.ReviewEntry `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "review", "list", "--all")), &q); err != nil {
		t.Fatal(err)
	}
	return q.Items
}

func removedItems(t *testing.T, dir, page string) []ingest.ReviewEntry {
	t.Helper()
	var out []ingest.ReviewEntry
	for _, it := range reviewItems(t, dir) {
		if it.Kind == ingest.ReviewRemoved && it.Page == page {
			out = append(out, it)
		}
	}
	return out
}

func lintErrors(t *testing.T, dir string) []string {
	t.Helper()
	out, _, _ := prose(t, "--vault", dir, "--json", "wiki", "lint")
	var rep struct {
		Findings []struct{ Kind, Severity, Page, Detail string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("lint --json: %v\n%s", err, out)
	}
	var errs []string
	for _, f := range rep.Findings {
		if f.Severity == "error" {
			errs = append(errs, f.Kind+" "+f.Page+": "+f.Detail)
		}
	}
	return errs
}

// TestARemovedPageStaysRemoved: a page a person removed with wiki rm, or
// deleted by hand and took in with wiki commit, is not re-created by the
// next ingest of its changed source, in this vault or a clone of it; its
// open review items are closed (take says why); the links it leaves are
// reported; the ingest says it did not re-create the page and queues an
// item when the source says something new about it, once.
func TestARemovedPageStaysRemoved(t *testing.T) {
	dir := newIngestVault(t)
	src := filepath.Join(t.TempDir(), "src")
	deploy := filepath.Join(src, "deploy.md")
	writeFiles(t, src, map[string]string{"deploy.md": reviewDeploy})
	mustProse(t, "--vault", dir, "ingest", src)
	canary, rollback := pageTitled(t, dir, "Canary"), pageTitled(t, dir, "Rollback")
	if canary == "" || rollback == "" {
		t.Fatalf("the ingest made no Canary or Rollback page:\n%s", mustProse(t, "--vault", dir, "wiki", "tree"))
	}
	// An open kept-edit item on each page that goes.
	mustProse(t, "--vault", dir, "wiki", "write-slot", canary, "summary", "--content", "<p>Ours.</p>")
	mustProse(t, "--vault", dir, "wiki", "write-slot", rollback, "summary", "--content", "<p>Ours too.</p>")
	v2 := strings.NewReplacer("production traffic", "live traffic", "previous release", "prior release").Replace(reviewDeploy)
	writeFiles(t, src, map[string]string{"deploy.md": v2})
	mustProse(t, "--vault", dir, "ingest", src)
	keptOf := map[string]string{}
	for _, it := range reviewItems(t, dir) {
		if it.Kind == ingest.ReviewKept && it.Resolved == "" {
			keptOf[it.Page] = it.ID
		}
	}
	kept := keptOf[canary]
	if kept == "" || keptOf[rollback] == "" {
		t.Fatalf("no open kept-edit items for %s and %s: %+v", canary, rollback, reviewItems(t, dir))
	}

	_, errs, _ := prose(t, "--vault", dir, "wiki", "rm", "--force", canary)
	if !strings.Contains(errs, "links to "+canary) {
		t.Errorf("wiki rm does not report the links it breaks: %q", errs)
	}
	for _, it := range reviewItems(t, dir) {
		if it.ID == kept && (it.Resolved == "" || !strings.Contains(it.Closed, "page was removed")) {
			t.Fatalf("the kept-edit item of the removed page: %+v", it)
		}
	}
	if _, errs, code := prose(t, "--vault", dir, "wiki", "review", "take", kept); code != 1 || !strings.Contains(errs, "page was removed") || strings.Contains(errs, "no such page") {
		t.Fatalf("take of the removed page's item: exit %d %q", code, errs)
	}
	rec, err := exec.Command(needGit(t), "-C", dir, "show", "HEAD:"+ingest.RemovedFile).Output()
	if err != nil || !strings.Contains(string(rec), `"`+canary+`"`) {
		t.Fatalf("the removal is not committed in %s: %v\n%s", ingest.RemovedFile, err, rec)
	}

	// The source says something new about the removed page.
	v3 := strings.Replace(v2, "live traffic", "real traffic", 1)
	writeFiles(t, src, map[string]string{"deploy.md": v3})
	out := mustProse(t, "--vault", dir, "ingest", src)
	if !strings.Contains(out, "removed by a person, not re-created: "+canary) {
		t.Errorf("the ingest does not say it kept the page removed:\n%s", out)
	}
	if p := pageTitled(t, dir, "Canary"); p != "" {
		t.Fatalf("the ingest re-created the removed page as %s", p)
	}
	if e := lintErrors(t, dir); len(e) > 0 {
		t.Errorf("the ingest left lint errors: %v", e)
	}
	items := removedItems(t, dir, canary)
	if len(items) != 1 || !strings.Contains(items[0].Detail, "real traffic") || items[0].Resolved != "" {
		t.Fatalf("removed-page items for %s: %+v", canary, items)
	}
	// Said again, it is not queued again.
	mustProse(t, "--vault", dir, "ingest", "--force", src)
	if items := removedItems(t, dir, canary); len(items) != 1 {
		t.Fatalf("removed-page items after the same text again: %+v", items)
	}

	// Deleted by hand, taken in with wiki commit.
	if err := os.Remove(filepath.Join(dir, "published", "wiki", filepath.FromSlash(rollback))); err != nil {
		t.Fatal(err)
	}
	_, errs, code := prose(t, "--vault", dir, "wiki", "commit")
	if code != 0 || !strings.Contains(errs, "links to "+rollback) {
		t.Errorf("wiki commit of a deletion: exit %d, does not warn of the links it breaks: %q", code, errs)
	}
	if _, errs, code := prose(t, "--vault", dir, "wiki", "review", "take", keptOf[rollback]); code != 1 || !strings.Contains(errs, "page was removed") {
		t.Fatalf("take of the item of a page deleted by hand: exit %d %q", code, errs)
	}
	broken := false
	for _, e := range lintErrors(t, dir) {
		broken = broken || strings.HasPrefix(e, "broken-link") && strings.Contains(e, filepath.Base(rollback))
	}
	if !broken {
		t.Errorf("lint does not report the links to the deleted page: %v", lintErrors(t, dir))
	}
	if err := os.WriteFile(deploy, []byte(strings.Replace(v3, "prior release", "last release", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// In a clone: the record travels with the vault.
	clone := filepath.Join(t.TempDir(), "clone")
	for _, args := range [][]string{{"clone", "-q", dir, clone}, {"-C", clone, "fetch", "-q", "origin", "refs/prose/*:refs/prose/*"}} {
		if out, err := exec.Command(needGit(t), args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, v := range []string{dir, clone} {
		out := mustProse(t, "--vault", v, "ingest", src)
		for _, p := range []string{canary, rollback} {
			if !strings.Contains(out, "removed by a person, not re-created: "+p) {
				t.Errorf("%s: the ingest does not say it kept %s removed:\n%s", v, p, out)
			}
		}
		if p, q := pageTitled(t, v, "Rollback"), pageTitled(t, v, "Canary"); p != "" || q != "" {
			t.Fatalf("%s: the ingest re-created a removed page (%q %q)", v, p, q)
		}
		if e := lintErrors(t, v); len(e) > 0 {
			t.Errorf("%s: the ingest left lint errors: %v", v, e)
		}
		if items := removedItems(t, v, rollback); len(items) != 1 || !strings.Contains(items[0].Detail, "last release") {
			t.Errorf("%s: removed-page items for %s: %+v", v, rollback, items)
		}
	}
	cleanAndFsck(t, dir)

	// A person who creates the page again gets it written again.
	mustProse(t, "--vault", dir, "wiki", "new", canary, "--title", "Canary", "--template", "concept")
	writeFiles(t, src, map[string]string{"deploy.md": strings.Replace(v3, "real traffic", "some traffic", 1)})
	if rec, _ := exec.Command(needGit(t), "-C", dir, "show", "HEAD:"+ingest.RemovedFile).Output(); !strings.Contains(string(rec), `"`+canary+`"`) {
		t.Fatalf("%s does not name %s before the next ingest:\n%s", ingest.RemovedFile, canary, rec)
	}
	out = mustProse(t, "--vault", dir, "ingest", src)
	if rec, _ := exec.Command(needGit(t), "-C", dir, "show", "HEAD:"+ingest.RemovedFile).Output(); strings.Contains(string(rec), `"`+canary+`"`) || !strings.Contains(string(rec), `"`+rollback+`"`) {
		t.Errorf("after the page was created again, %s:\n%s", ingest.RemovedFile, rec)
	}
	if strings.Contains(out, "not re-created: "+canary) {
		t.Errorf("the page a person created again is still kept out:\n%s", out)
	}
	if s := mustProse(t, "--vault", dir, "wiki", "slot", canary, "summary"); !strings.Contains(s, "some traffic") {
		t.Errorf("the page created again was not written: %q", s)
	}
	cleanAndFsck(t, dir)
}
