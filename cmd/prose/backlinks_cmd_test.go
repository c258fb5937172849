package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A link written with the CLI shows on its target's "Referenced by" in the
// same commit, and goes from it in the commit that removes it; prose wiki
// backlinks lists the linkers.
func TestWikiReferencedByThroughTheCLI(t *testing.T) {
	inParallel(t)
	needGit(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	mustProse(t, "--vault", vdir, "wiki", "new", "terms/canary", "--template", "concept", "--title", "Canary release")
	mustProse(t, "--vault", vdir, "wiki", "new", "ops/deploy", "--template", "note", "--title", "Deploying")
	target := filepath.Join(vdir, "published", "wiki", "terms", "canary.html")
	page := func() string {
		data, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	committed := func() string {
		out, err := exec.Command("git", "-C", vdir, "show", "--name-only", "--format=", "HEAD").CombinedOutput()
		if err != nil {
			t.Fatalf("git show: %v\n%s", err, out)
		}
		return string(out)
	}
	if strings.Contains(page(), "Referenced by") {
		t.Fatal("a page nothing links to shows Referenced by")
	}
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "ops/deploy", "body", "--content", `<p>Start with a <a href="../terms/canary.html">canary</a>.</p>`)
	if !strings.Contains(page(), `<h2>Referenced by</h2><ul>
<li><a href="../ops/deploy.html">Deploying</a></li>`) {
		t.Fatalf("the target after the link was written:\n%s", page())
	}
	if c := committed(); !strings.Contains(c, "published/wiki/terms/canary.html") || !strings.Contains(c, "published/wiki/ops/deploy.html") {
		t.Fatalf("the link and the target's shell are not one commit:\n%s", c)
	}
	var got struct {
		Page      string `json:"page"`
		Backlinks []struct{ Path, Title string }
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", vdir, "wiki", "backlinks", "canary", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Page != "terms/canary.html" || len(got.Backlinks) != 1 || got.Backlinks[0].Path != "ops/deploy.html" || got.Backlinks[0].Title != "Deploying" {
		t.Fatalf("wiki backlinks --json: %+v", got)
	}
	if out := mustProse(t, "--vault", vdir, "wiki", "lint"); !strings.Contains(out, " 0 errors") {
		t.Fatalf("lint: %s", out)
	}
	cleanAndFsck(t, vdir)

	mustProse(t, "--vault", vdir, "wiki", "write-slot", "ops/deploy", "body", "--content", `<p>Start small.</p>`)
	if strings.Contains(page(), "Referenced by") {
		t.Fatalf("the target after the link went:\n%s", page())
	}
	if c := committed(); !strings.Contains(c, "published/wiki/terms/canary.html") {
		t.Fatalf("the link's removal did not re-render its target in its commit:\n%s", c)
	}
	if out := mustProse(t, "--vault", vdir, "wiki", "backlinks", "terms/canary"); !strings.Contains(out, "no page links to terms/canary.html") {
		t.Fatalf("wiki backlinks with none: %q", out)
	}
	if _, errs, code := prose(t, "--vault", vdir, "wiki", "backlinks", "nope"); code != 1 || !strings.Contains(errs, "no such page") {
		t.Fatalf("backlinks of a missing page: exit %d, %q", code, errs)
	}
	cleanAndFsck(t, vdir)
}
