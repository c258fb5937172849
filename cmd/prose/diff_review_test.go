package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The golden PR-comment diffs below are re-made with
//	go test ./cmd/prose -run TestDiffGolden -update
// Their sources and pages are made in the test, so a change of the wiki's
// page layout re-makes them without fixtures to keep in step.

// checkDiffGolden names the two commits by role, compares out with
// testdata/NAME and rewrites it under -update.
func checkDiffGolden(t *testing.T, name, out string, names map[string]string) {
	t.Helper()
	for hash, role := range names {
		out = strings.ReplaceAll(out, hash[:12], role)
	}
	golden := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/prose -run TestDiffGolden -update)", err)
	}
	if string(want) != out {
		t.Fatalf("%s differs (re-make with -update after reading it):\n%s", golden, out)
	}
}

func wikiVault(t *testing.T) string {
	t.Helper()
	t.Setenv("PROSE_NOW", "2026-01-31")
	vdir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", vdir)
	return vdir
}

const longSummary = "<p>Attention lets a model weigh every token of its input against every other token. " +
	"Each token asks a question, the query, and every token offers an answer, the key. " +
	"The weights come from how well the two agree, and the output mixes the values by those weights. " +
	"Stacking many such layers gives the transformer its depth, and running several heads side by side lets it follow several relations at once.</p>"

// TestDiffGoldenSlotEdit: one sentence edited in the middle of a long slot
// shows as a word diff around it; a link added without a text change is a
// markup note; meta a person set (title, tags) shows, bookkeeping does not.
func TestDiffGoldenSlotEdit(t *testing.T) {
	vdir := wikiVault(t)
	mustProse(t, "--vault", vdir, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "summary", "--content", longSummary)
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "related_notes", "--content", "<p>See transformers.</p>")
	base := headOf(t, vdir)
	edited := strings.Replace(longSummary, "The weights come from how well the two agree", "The weights are the softmax of how well the two agree", 1)
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "summary", "--content", edited)
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "related_notes", "--content", `<p>See <a href="transformers.html">transformers</a>.</p>`)
	mustProse(t, "--vault", vdir, "wiki", "set-meta", "attention", "title=Self-attention", `tags:=["ml","core"]`)
	head := headOf(t, vdir)
	out := mustProse(t, "--vault", vdir, "diff", base, head, "--format", "markdown")
	for _, want := range []string{
		"~~come from~~ **are the softmax of**",   // the change itself, word by word
		"every token offers an answer",           // the words before it (the window)
		"mixes the values",                       // and after it
		"markup only, the text is the same",      // the link added
		"added `<a href=\"transformers.html\">`", // names the tag
		"meta `title` `\"Attention\"` → `\"Self-attention\"`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q", want)
		}
	}
	if strings.Contains(out, "Attention lets a model") || strings.Contains(out, "blake3:") {
		t.Error("the diff shows the slot's beginning, far from the change, or bookkeeping hashes")
	}
	checkDiffGolden(t, "diff-slot-edit.md", out, map[string]string{base: "BASE", head: "HEAD"})
}

// TestDiffGoldenMove: a move reads as one page moved (not a removal and a
// creation), the page linking to it as a markup change, the folder
// indexes as one line.
func TestDiffGoldenMove(t *testing.T) {
	vdir := wikiVault(t)
	mustProse(t, "--vault", vdir, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "summary", "--content", "<p>Weights tokens by relevance.</p>")
	mustProse(t, "--vault", vdir, "wiki", "new", "ml/transformers", "--template", "concept", "--title", "Transformers")
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "transformers", "summary", "--content", `<p>Stacks of <a href="attention.html">attention</a> layers.</p>`)
	base := headOf(t, vdir)
	mustProse(t, "--vault", vdir, "wiki", "mv", "attention", "core/attention")
	head := headOf(t, vdir)
	out := mustProse(t, "--vault", vdir, "diff", "--format", "markdown")
	for _, want := range []string{"1 page changed, 1 moved", "**`ml/attention` → `core/attention`** — Attention", "removed `<a href=\"attention.html\">`; added `<a href=\"../core/attention.html\">`"} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q", want)
		}
	}
	if strings.Contains(out, "created") && strings.Contains(out, "Pages created") || strings.Contains(out, "Pages removed") {
		t.Error("the move reads as a removal and a creation")
	}
	checkDiffGolden(t, "diff-move.md", out, map[string]string{base: "BASE", head: "HEAD"})
}

// TestDiffGoldenWorldModel: a world-model node's change per node and
// facet, then path; a long text value as a window around its change.
func TestDiffGoldenWorldModel(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	src := filepath.Join(tmp, "src")
	text := "Deploys happen on Tuesdays after the weekly review. The release manager checks the notes, the on-call engineer signs off, and the canary takes a tenth of the traffic for an hour before the rest follows. A failed canary rolls back without a page."
	doc := func(text string, reviewers int) string {
		b, _ := json.Marshal(map[string]any{"title": "Deploy policy", "text": text, "reviewers": reviewers})
		return string(b)
	}
	writeFiles(t, src, map[string]string{
		"policies/deploy.json": doc(text, 2),
		"people/ana.json":      `{"name": "Ana", "role": "release manager"}`,
		"people/bo.json":       `{"name": "Bo", "role": "on-call"}`,
	})
	mustProse(t, "--vault", vdir, "publish", "team.handbook", src)
	base := headOf(t, vdir)
	writeFiles(t, src, map[string]string{
		"policies/deploy.json": doc(strings.Replace(text, "a tenth of the traffic for an hour", "a twentieth of the traffic for two hours", 1), 3),
		"people/ana.json":      `{"name": "Ana", "role": "release manager"}`,
		"people/cy.json":       `{"name": "Cy", "role": "on-call"}`,
	})
	mustProse(t, "--vault", vdir, "publish", "team.handbook", src)
	head := headOf(t, vdir)
	out := mustProse(t, "--vault", vdir, "diff", "--format", "markdown")
	for _, want := range []string{"##### `team.handbook` · facet `policies`", "~~tenth~~", "**twentieth**", "| `policies.deploy.reviewers` | changed | `2` | `3` |"} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q", want)
		}
	}
	if strings.Contains(out, "Deploys happen on Tuesdays") {
		t.Error("the long text is shown from its beginning, not around its change")
	}
	checkDiffGolden(t, "diff-world-model.md", out, map[string]string{base: "BASE", head: "HEAD"})
	// The text form shows the same window.
	if txt := mustProse(t, "--vault", vdir, "diff"); !strings.Contains(txt, "a [-tenth-] of the traffic for [-an hour-]") || !strings.Contains(txt, "a {+twentieth+} of the traffic for {+two hours+}") {
		t.Errorf("text diff: %s", txt)
	}
}

func ingestSources(t *testing.T, src string, deployDay string) {
	t.Helper()
	writeFiles(t, src, map[string]string{
		"ops/deploys.md": "# Deploys\n\nWe deploy on " + deployDay + " after the review meeting, when the release notes are ready and the on-call engineer has signed off.\n\n- **Canary**: a small share of traffic that meets a release first.\n- **Rollback**: returning production to the last release.\n",
		"pager.txt":      "Pager rota\n\nThe pager wakes the on-call engineer at night.\n",
	})
}

// TestDiffGoldenIngest: an ingest of a small source set reads as pages
// created; a second ingest after a person edited a slot reads as the
// slots changed, word by word, and the review item it opened.
func TestDiffGoldenIngest(t *testing.T) {
	vdir := wikiVault(t)
	src := filepath.Join(t.TempDir(), "src")
	ingestSources(t, src, "Tuesdays")
	base := headOf(t, vdir)
	mustProse(t, "--vault", vdir, "ingest", src)
	head := headOf(t, vdir)
	out := mustProse(t, "--vault", vdir, "diff", "--format", "markdown")
	if !strings.Contains(out, "pages created") || strings.Contains(out, "blake3:") || strings.Contains(out, "source_mark") {
		t.Errorf("ingest diff: %s", out)
	}
	checkDiffGolden(t, "diff-ingest.md", out, map[string]string{base: "BASE", head: "HEAD"})
	verbose := mustProse(t, "--vault", vdir, "diff", "--format", "markdown", "--verbose")
	if !strings.Contains(verbose, "`source_mark` set to") || !strings.Contains(verbose, "blake3:") {
		t.Errorf("--verbose does not show the bookkeeping: %s", verbose)
	}

	mustProse(t, "--vault", vdir, "wiki", "write-slot", "src/ops/deploys", "abstract", "--content", "<p>We deploy on Tuesdays, after review.</p>")
	ingestSources(t, src, "Wednesdays")
	base = headOf(t, vdir)
	mustProse(t, "--vault", vdir, "ingest", src)
	head = headOf(t, vdir)
	out = mustProse(t, "--vault", vdir, "diff", "--format", "markdown")
	for _, want := range []string{"1 review item opened", "~~Tuesdays~~ **Wednesdays**", "opened `r"} {
		if !strings.Contains(out, want) {
			t.Errorf("re-ingest diff lacks %q", want)
		}
	}
	checkDiffGolden(t, "diff-reingest.md", out, map[string]string{base: "BASE", head: "HEAD"})
	// A person resolving the item shows as resolved.
	var q struct {
		Items []struct{ ID string } `json:"items"`
	}
	data, _ := os.ReadFile(filepath.Join(vdir, "review", "queue.json"))
	if json.Unmarshal(data, &q) != nil || len(q.Items) == 0 {
		t.Fatalf("queue: %s", data)
	}
	mustProse(t, "--vault", vdir, "wiki", "review", "resolve", q.Items[0].ID)
	if out := mustProse(t, "--vault", vdir, "diff", "--format", "json"); !strings.Contains(out, `"review_resolved": 1`) {
		t.Errorf("resolve: %s", out)
	}
}

// TestDiffMergeBaseRange: BASE...HEAD diffs HEAD against the merge base,
// A..B is A B, and a branch name resolves.
func TestDiffMergeBaseRange(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	vdir := wikiVault(t)
	mustProse(t, "--vault", vdir, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
	fork := headOf(t, vdir)
	mustProse(t, "--vault", vdir, "wiki", "write-slot", "attention", "summary", "--content", "<p>Weights tokens.</p>")
	head := headOf(t, vdir)
	// A side branch forked at fork, holding the same tree as HEAD: diffing
	// from it shows nothing, from the merge base the slot.
	run := func(args ...string) string {
		out, err := exec.Command(git, append([]string{"-C", vdir}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	side := run("commit-tree", head+"^{tree}", "-p", fork, "-m", "side")
	run("update-ref", "refs/heads/side", side)
	out := mustProse(t, "--vault", vdir, "diff", "side...HEAD")
	if !strings.Contains(out, "since the merge base "+fork[:12]) || !strings.Contains(out, "slot summary written") {
		t.Errorf("side...HEAD: %s", out)
	}
	if out := mustProse(t, "--vault", vdir, "diff", "side..HEAD"); !strings.Contains(out, "no material change") {
		t.Errorf("side..HEAD: %s", out)
	}
	// HEAD...side: what side changed since the fork, the same slot.
	if out := mustProse(t, "--vault", vdir, "diff", "HEAD...side"); !strings.Contains(out, "since the merge base "+fork[:12]) || !strings.Contains(out, "slot summary written") {
		t.Errorf("HEAD...side: %s", out)
	}
	if _, errs, code := prose(t, "--vault", vdir, "diff", "nosuch...HEAD"); code == 0 || !strings.Contains(errs, "nosuch") {
		t.Errorf("unknown side: exit %d %s", code, errs)
	}
	if _, errs, code := prose(t, "--vault", vdir, "diff", "a..b", "HEAD"); code != 2 || !strings.Contains(errs, "range") {
		t.Errorf("range and revision: exit %d %s", code, errs)
	}
}

// TestDiffMarkdownFitsAComment: a change larger than a PR comment is cut
// to 65,536 characters, says what it left out and names a command that
// shows it whole.
func TestDiffMarkdownFitsAComment(t *testing.T) {
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)
	big := map[string]string{}
	for i := 0; i < 3000; i++ {
		big[fmt.Sprintf("k%04d", i)] = strings.Repeat("word ", 20)
	}
	b, _ := json.Marshal(big)
	writeFiles(t, filepath.Join(tmp, "src"), map[string]string{"items/big.json": string(b)})
	mustProse(t, "--vault", vdir, "publish", "big", filepath.Join(tmp, "src"))
	out := mustProse(t, "--vault", vdir, "diff", "--format", "markdown")
	if len(out) > 65536 {
		t.Fatalf("%d bytes", len(out))
	}
	m := regexp.MustCompile("leaves out: ([0-9]+) world-model changes. `(prose diff [0-9a-f]{12} [0-9a-f]{12})` shows everything").FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no note of what was left out:\n%s", out[len(out)-800:])
	}
	shown := strings.Count(out, "| `items.big")
	left := 0
	fmt.Sscan(m[1], &left)
	if shown+left != 3000 {
		t.Fatalf("%d shown + %s left out != 3000", shown, m[1])
	}
	whole := mustProse(t, append([]string{"--vault", vdir}, strings.Fields(m[2])[1:]...)...)
	if !strings.Contains(whole, "k2999") || !strings.Contains(whole, "k0000") {
		t.Fatal("the command named does not show everything")
	}
}
