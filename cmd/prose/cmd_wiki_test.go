package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

func jsonOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	return m
}

func wikiReceipts(t *testing.T, vdir string) int {
	t.Helper()
	out := mustProse(t, "--vault", vdir, "log", "--node", "wiki")
	return strings.Count(out, "\n")
}

func cleanAndFsck(t *testing.T, vdir string) {
	t.Helper()
	mustProse(t, "--vault", vdir, "fsck")
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	out, err := exec.Command("git", "-C", vdir, "status", "--porcelain").CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("git status: %v\n%s", err, out)
	}
}

// TestWikiEveryOperationThroughTheCLI runs every wiki operation on a fresh
// vault with --json: each real write is one receipt, an identical write
// none, and git status is clean and fsck passes after each.
func TestWikiEveryOperationThroughTheCLI(t *testing.T) {
	inParallel(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	w := func(wantReceipts int, args ...string) map[string]any {
		t.Helper()
		before := wikiReceipts(t, vdir)
		doc := jsonOf(t, mustProse(t, append([]string{"--vault", vdir, "--json", "wiki"}, args...)...))
		if got := wikiReceipts(t, vdir) - before; got != wantReceipts {
			t.Fatalf("wiki %s: %d receipts, want %d\n%v", strings.Join(args, " "), got, wantReceipts, doc)
		}
		cleanAndFsck(t, vdir)
		return doc
	}
	r := func(args ...string) map[string]any {
		t.Helper()
		return jsonOf(t, mustProse(t, append([]string{"--vault", vdir, "--json", "wiki"}, args...)...))
	}
	w(1, "new", "ml/transformers", "--template", "concept", "--title", "Transformers", "--tag", "ml", "--meta", "year:=2017")
	w(1, "new", "ml/attention", "--template", "concept")
	doc := w(1, "write-slot", "transformers", "summary", "--content", `<p>Stacks of <a href="attention.html">attention</a>.<script>alert(1)</script></p>`)
	if rm := doc["removed"].([]any); len(rm) != 1 || !strings.Contains(rm[0].(string), "script") {
		t.Fatalf("removed: %v", doc["removed"])
	}
	slot := r("slot", "transformers", "summary")["html"].(string)
	w(0, "write-slot", "transformers", "summary", "--content", slot)
	w(1, "append-slot", "transformers", "body", "--markdown", "--content", "# Part\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
	w(1, "set-meta", "ml/transformers.html", "title=Transformer models", "year=", "kind:=\"architecture\"")
	html := r("read", "transformers", "--html")["html"].(string)
	if !strings.Contains(html, "<title>Transformer models</title>") || !strings.Contains(html, "<h1>Transformer models</h1>") {
		t.Fatal("title and heading do not show the new title")
	}
	meta := r("meta", "transformers")["meta"].(map[string]any)
	if _, ok := meta["year"]; ok || meta["kind"] != "architecture" {
		t.Fatalf("meta: %v", meta)
	}
	if len(r("read", "transformers")["slots"].([]any)) != 4 {
		t.Fatal("read: slots")
	}
	if s := r("list-slots", "transformers")["slots"].([]any); len(s) != 4 {
		t.Fatalf("list-slots: %v", s)
	}
	if ts := r("templates")["templates"].([]any); len(ts) != 12 {
		t.Fatalf("templates: %d", len(ts))
	}
	if tr := r("tree")["folders"].([]any); len(tr) != 1 {
		t.Fatalf("tree: %v", tr)
	}
	if ps := r("index", "ml")["pages"].([]any); len(ps) != 2 {
		t.Fatalf("index: %v", ps)
	}
	if ps := r("find", "attent")["pages"].([]any); len(ps) != 1 {
		t.Fatalf("find: %v", ps)
	}
	if hs := r("search", "attention")["hits"].([]any); len(hs) == 0 {
		t.Fatal("search found nothing")
	}
	if s := r("stats"); s["pages"].(float64) != 2 {
		t.Fatalf("stats: %v", s)
	}
	w(1, "mv", "attention", "core/attention")
	if !strings.Contains(r("slot", "transformers", "summary")["html"].(string), `href="../core/attention.html"`) {
		t.Fatal("mv did not rewrite the link")
	}
	// Pages link to it: rm refuses, exit 1, and removes nothing.
	if out, errs, code := prose(t, "--vault", vdir, "--json", "wiki", "rm", "core/attention"); code != 1 || !strings.Contains(errs, "--unlink") || !strings.Contains(errs, "--force") || jsonOf(t, out)["ok"] != false {
		t.Fatalf("rm of a linked page: exit %d %s %s", code, out, errs)
	}
	doc = w(1, "rm", "--force", "core/attention")
	if b := doc["broken"].([]any); len(b) != 1 {
		t.Fatalf("rm: %v", doc)
	}
	w(0, "rebuild")
	out, _, code := prose(t, "--vault", vdir, "--json", "wiki", "lint")
	if code != 1 || len(jsonOf(t, out)["findings"].([]any)) == 0 {
		t.Fatalf("lint: exit %d %s", code, out)
	}
	// A hand edit: any write refuses and names wiki commit, which takes it in.
	page := filepath.Join(vdir, "published", "wiki", "ml", "transformers.html")
	data, _ := os.ReadFile(page)
	os.WriteFile(page, []byte(strings.Replace(string(data), "Stacks of", "Hand-typed: stacks of", 1)), 0o644)
	_, errs, code := prose(t, "--vault", vdir, "wiki", "set-meta", "transformers", "x=1")
	if code != 1 || !strings.Contains(errs, "prose wiki commit") {
		t.Fatalf("write over a hand edit: exit %d, %s", code, errs)
	}
	w(1, "commit")
	if !strings.Contains(r("slot", "transformers", "summary")["html"].(string), "Hand-typed") {
		t.Fatal("the hand edit was lost")
	}
	// Unsafe paths: exit 2, nothing written.
	for _, p := range []string{"../x", "/etc/x"} {
		_, errs, code := prose(t, "--vault", vdir, "wiki", "new", p)
		if code != 2 || !strings.Contains(errs, "not allowed") {
			t.Fatalf("new %s: exit %d %s", p, code, errs)
		}
	}
	// An older prose refuses the vault.
	cfg, _ := os.ReadFile(filepath.Join(vdir, "prose.yaml"))
	if !strings.Contains(string(cfg), "format: 2") {
		t.Fatalf("prose.yaml: %s", cfg)
	}
}

// TestWikiDiffMarkdownGolden shows a wiki change through the wiki's view:
// pages and slots, never the shell.
func TestWikiDiffMarkdownGolden(t *testing.T) {
	inParallel(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	mustProse(t, "--vault", vdir, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "summary", "--content", "<p>Weights tokens.</p>")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "summary", "--content", "<p>Weights tokens by relevance.</p>")
	mustProse(t, "--vault", vdir, "wiki", "set-meta", "attention", "tags:=[\"ml\",\"core\"]")
	out := mustProse(t, "--vault", vdir, "diff", "HEAD~2", "HEAD", "--format", "markdown")
	// Commit ids change with the clock: name them by position.
	out = regexp.MustCompile("`[0-9a-f]{12}\\.\\.[0-9a-f]{12}`").ReplaceAllString(out, "`HEAD~2..HEAD`")
	golden := filepath.Join("testdata", "wiki-diff.md")
	if *updateGolden {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(out), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != out {
		t.Fatalf("diff markdown:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(out, "updated") || strings.Contains(out, "<style>") {
		t.Fatal("the diff shows immaterial churn")
	}
}

func TestScoreText(t *testing.T) {
	inParallel(t)
	for score, want := range map[float64]string{0.282: "0.282", 1.1e-05: "<0.001", 0.0004999: "<0.001", 0.0005: "0.001", 0: "0.000", 12.3456: "12.346"} {
		if got := scoreText(score); got != want {
			t.Errorf("scoreText(%g) = %q, want %q", score, got, want)
		}
	}
}

// Messages a new user met: a folder that does not exist, a negative
// budget, argument counts in the singular.
func TestWikiAndIngestUsageMessages(t *testing.T) {
	inParallel(t)
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(t.TempDir(), "a.md")
	os.WriteFile(src, []byte("# A\n\nSome text here.\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--vault", vdir, "wiki", "index", "nope"}, 1, "no folder nope in the wiki"},
		{[]string{"--vault", vdir, "ingest", "--budget", "-5", src}, 2, "--budget -5: a prompt budget is a number of tokens, 0 or more"},
		{[]string{"--vault", vdir, "enrich", "--all", "--budget", "-1"}, 2, "--budget -1"},
		{[]string{"--vault", vdir, "publish", "x"}, 2, "got 1 argument ("},
		{[]string{"--vault", vdir, "ingest", t.TempDir()}, 1, "the directories named hold no files"},
	} {
		_, errs, code := prose(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	if _, errs, code := prose(t, "--vault", vdir, "wiki", "index"); code != 0 {
		t.Fatalf("wiki index of the top level: exit %d %s", code, errs)
	}
	// Search in text mode: a snippet's entities printed as characters;
	// no match said so.
	os.WriteFile(src, []byte("# Canary Notes\n\nThe canary's \"currency_code\" field matters.\n"), 0o644)
	mustProse(t, "--vault", vdir, "ingest", src)
	if out := mustProse(t, "--vault", vdir, "wiki", "search", "canary"); !strings.Contains(out, `canary's] "currency_code"`) || strings.Contains(out, "&#") {
		t.Errorf("search snippet:\n%s", out)
	}
	if out := mustProse(t, "--vault", vdir, "wiki", "find", "zzzqqq"); !strings.Contains(out, `no page's path or title matches "zzzqqq"`) {
		t.Errorf("wiki find without a match: %q", out)
	}
	if out := mustProse(t, "--vault", vdir, "wiki", "search", "zzzqqq"); !strings.Contains(out, `no page matches "zzzqqq"`) {
		t.Errorf("search without a match printed %q", out)
	}
}

func TestHandEditFixNamesTheRightCommand(t *testing.T) {
	inParallel(t)
	for _, c := range []struct{ where, reason, want string }{
		{"published/wiki/a/b.html", "modified by hand", "keep it with `prose wiki commit`, or restore it with `git checkout -- published/wiki/a/b.html`"},
		{"published/wiki/a/c.html", "added by hand (not in any receipt)", "keep it with `prose wiki commit`, or remove the file with `rm published/wiki/a/c.html`"},
		{"published/wm/f/x.json", "deleted by hand", "keep it by publishing the node again with `prose publish wm DIR`, or restore it with `git checkout -- published/wm/f/x.json`"},
		{"published/wm/f/y.json", "staged by hand (git add) but in no receipt", "keep it by publishing the node again with `prose publish wm DIR`, or undo it with `git restore --staged -- published/wm/f/y.json`"},
		{"published/wm/sub", "the directory published/wm/sub was replaced by a symlink; prose never writes or deletes through one (restore it: …)", ""},
	} {
		if got := handEditFix(c.where, c.reason); got != c.want {
			t.Errorf("%s (%s): %q, want %q", c.where, c.reason, got, c.want)
		}
	}
}
