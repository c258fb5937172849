package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
)

// twoVaults is the set-up the sync tests share: a bare remote under a
// fresh root, a vault a made there and given its first pages by seed,
// pushed, and b cloned from the remote.
func twoVaults(t *testing.T, seed func(root, a string)) (root, a, b string) {
	t.Helper()
	needGit(t) // GIT_TERMINAL_PROMPT=0: see syncWorld
	root = t.TempDir()
	remote := filepath.Join(root, "remote.git")
	syncGit(t, root, "init", "--quiet", "--bare", remote)
	a, b = filepath.Join(root, "a"), filepath.Join(root, "b")
	mustProse(t, "init", a)
	seed(root, a)
	mustProse(t, "--vault", a, "remote", "add", "origin", remote)
	mustProse(t, "--vault", a, "push")
	mustProse(t, "clone", remote, b)
	return root, a, b
}

// wikiWorld is a bare remote, a vault a that ingested one source and
// pushed, and its clone b.
func wikiWorld(t *testing.T) (root, a, b string, ingest func(v, dir, name, title string)) {
	t.Helper()
	root, a, b = twoVaults(t, func(root, a string) {
		ingest = func(v, dir, name, title string) {
			t.Helper()
			src := filepath.Join(root, dir)
			writeFiles(t, src, map[string]string{name: "# " + title + "\n\n" + title + " is a letter of the Greek alphabet. It has a name and a place in the order.\n"})
			mustProse(t, "--vault", v, "ingest", src)
		}
		ingest(a, "s0", "base.md", "Omega")
	})
	return root, a, b, ingest
}

// branchRefsUnchanged fails when a refused command moved a ref other
// than the remote-tracking ones a fetch moves, or changed the working tree.
func branchRefsUnchanged(t *testing.T, dir, before string) {
	t.Helper()
	after := refsOf(t, dir)
	for _, line := range strings.Split(before, "\n") {
		if !strings.HasPrefix(line, "refs/remotes/") && !strings.Contains(after, line) {
			t.Fatalf("a refused command moved %s (now:\n%s)", line, after)
		}
	}
	if st := syncGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("a refused command changed the working tree:\n%s", st)
	}
}

// TestSyncTwoIngestsIntoOneWikiMerge: two ingests into the same wiki on
// the two sides merge page by page — one merge commit, one ledger merge,
// one wiki merge receipt taken both — with both sides' pages, catalog and
// review items, and every check passes on every side with no receipt lost.
func TestSyncTwoIngestsIntoOneWikiMerge(t *testing.T) {
	inParallel(t)
	_, a, b, ingest := wikiWorld(t)
	for round := range 2 {
		ingest(a, fmt.Sprintf("a%d", round), "alpha.md", fmt.Sprintf("Alpha%d", round))
		ingest(b, fmt.Sprintf("b%d", round), "beta.md", fmt.Sprintf("Beta%d", round))
		mustProse(t, "--vault", a, "push")
		all := append(receiptHashes(t, a), receiptHashes(t, b)...)
		items := append(reviewIDs(t, a), reviewIDs(t, b)...)
		mustProse(t, "--vault", b, "wiki", "search", "letter") // the search index, as it was before the pull
		out := mustProse(t, "--vault", b, "pull")
		t.Logf("round %d: %d review items on the two sides; pull:\n%s", round, len(items), out)
		if got := strings.Join(reviewIDs(t, b), " "); len(items) > 0 {
			for _, id := range items {
				if !strings.Contains(got, id) {
					t.Fatalf("round %d: the merged review queue lacks item %s (has %s)", round, id, got)
				}
			}
		}
		if !strings.Contains(out, "joined: node wiki (taken both)") || !strings.Contains(out, "merged file by file:") {
			t.Fatalf("round %d: pull of two ingests:\n%s", round, out)
		}
		for _, dir := range []string{fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)} {
			if _, err := os.Stat(filepath.Join(b, "published", "wiki", dir)); err != nil {
				t.Fatalf("round %d: pages of %s missing after the merge: %v", round, dir, err)
			}
			catalog := syncGit(t, b, "show", "HEAD:sources/index.json") + syncGit(t, b, "ls-tree", "-r", "--name-only", "HEAD", "sources/pages")
			if !strings.Contains(catalog, dir+"/") || !strings.Contains(catalog, dir+".tsv") {
				t.Fatalf("round %d: the merged catalog lacks %s:\n%s", round, dir, catalog)
			}
		}
		m := mergeOf(t, lastOf(t, b, "wiki"))
		if m["taken"] != "both" {
			t.Fatalf("round %d: wiki merge receipt %v", round, m)
		}
		// The search index catches up with the pages that arrived.
		if hits := mustProse(t, "--vault", b, "wiki", "search", fmt.Sprintf("alpha%d", round)); !strings.Contains(hits, fmt.Sprintf("a%d/", round)) {
			t.Fatalf("round %d: search after the merge does not find the remote's page:\n%s", round, hits)
		}
		// The wiki is written to again after the merge: nothing waits
		// for `prose wiki commit`.
		mustProse(t, "--vault", b, "wiki", "lint")
		hasAll(t, "b after the merge", receiptHashes(t, b), all)
		checkVaults(t, a, b)
		mustProse(t, "--vault", b, "push")
		mustProse(t, "--vault", a, "pull")
		hasAll(t, "a after pulling the merge", receiptHashes(t, a), all)
		checkVaults(t, a, b)
	}
}

// reviewIDs lists the ids of the committed review queue's items.
func reviewIDs(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "show", "HEAD:review/queue.json")
	cmd.Dir = dir
	data, err := cmd.Output()
	if err != nil {
		return nil // no queue
	}
	var q struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatalf("review queue of %s: %v", dir, err)
	}
	var ids []string
	for _, it := range q.Items {
		ids = append(ids, it.ID)
	}
	return ids
}

// slotOfPage is a page's slot as prose wiki slot prints it.
func slotOfPage(t *testing.T, dir, page, slot string) string {
	t.Helper()
	return strings.TrimSpace(mustProse(t, "--vault", dir, "wiki", "slot", page, slot))
}

// TestSyncWikiSlotMergeConflictAndResolve: the same page edited in
// different slots on the two sides merges; the same slot edited on both
// is refused with nothing changed, names the page, the slot, both heads
// and the commands, and is then settled by prose resolve PAGE --slot S
// --theirs and, in a second round, --ours; each step leaves every check
// passing on every side with no receipt lost.
func TestSyncWikiSlotMergeConflictAndResolve(t *testing.T) {
	inParallel(t)
	_, a, b := twoVaults(t, func(root, a string) {
		mustProse(t, "--vault", a, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
		mustProse(t, "--vault", a, "wiki", "new", "ops/deploy", "--template", "note", "--title", "Deploying")
		mustProse(t, "--vault", a, "wiki", "write-slot", "ml/attention", "summary", "--content", "<p>Weights tokens.</p>")
	})
	write := func(v, page, slot, html string) {
		t.Helper()
		mustProse(t, "--vault", v, "wiki", "write-slot", page, slot, "--content", html)
	}

	// Different slots of one page: merged.
	write(a, "ml/attention", "summary", "<p>Weights tokens by relevance.</p>")
	write(a, "ops/deploy", "body", `<p>Mind the <a href="../ml/attention.html">attention</a>.</p>`)
	write(b, "ml/attention", "body", "<p>Queries meet keys.</p>")
	mustProse(t, "--vault", a, "push")
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)
	out := mustProse(t, "--vault", b, "pull")
	t.Logf("pull:\n%s", out)
	if !strings.Contains(out, "joined: node wiki (taken both)") || !strings.Contains(out, "ml/attention.html") {
		t.Fatalf("pull of two slot edits:\n%s", out)
	}
	if got := slotOfPage(t, b, "ml/attention", "summary"); got != "<p>Weights tokens by relevance.</p>" {
		t.Fatalf("summary after the merge: %q", got)
	}
	if got := slotOfPage(t, b, "ml/attention", "body"); got != "<p>Queries meet keys.</p>" {
		t.Fatalf("body after the merge: %q", got)
	}
	// The derived shell is rendered again: the merged page shows the
	// link a added to it from ops/deploy (b's file of the page, which
	// the merge kept its shell from, did not).
	if data, _ := os.ReadFile(filepath.Join(b, "published", "wiki", "ml", "attention.html")); !strings.Contains(string(data), "Referenced by") || !strings.Contains(string(data), "../ops/deploy.html") {
		t.Fatalf("ml/attention does not show the link from ops/deploy after the merge:\n%s", data)
	}
	hasAll(t, "b after the slot merge", receiptHashes(t, b), all)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	checkVaults(t, a, b)

	for round, side := range []string{"theirs", "ours"} {
		aText, bText := fmt.Sprintf("<p>From a, round %d.</p>", round), fmt.Sprintf("<p>From b, round %d.</p>", round)
		write(a, "ml/attention", "summary", aText)
		write(b, "ml/attention", "summary", bText)
		mustProse(t, "--vault", a, "push")
		all := append(receiptHashes(t, a), receiptHashes(t, b)...)
		before := refsOf(t, b)
		_, errs, code := prose(t, "--vault", b, "pull")
		t.Logf("refused pull:\n%s", errs)
		for _, want := range []string{"published/wiki/ml/attention.html slot summary", "node wiki advanced on both sides", "prose resolve ml/attention --slot summary --ours", "prose resolve wiki --ours|--theirs", "nothing changed in this vault"} {
			if code != 1 || !strings.Contains(errs, want) {
				t.Fatalf("round %d: pull of one slot changed on both sides: exit %d, want 1 and %q in\n%s", round, code, want, errs)
			}
		}
		if strings.Contains(errs, "--render") {
			t.Fatalf("round %d: the refusal of a wiki conflict offers --render, which is for world-model nodes:\n%s", round, errs)
		}
		if _, errs, code := prose(t, "--vault", b, "resolve", "wiki", "--render"); code != 2 || !strings.Contains(errs, "the wiki is not rendered by the runtime") {
			t.Fatalf("round %d: resolve wiki --render: exit %d\n%s", round, code, errs)
		}
		branchRefsUnchanged(t, b, before)
		if got := slotOfPage(t, b, "ml/attention", "summary"); got != bText {
			t.Fatalf("round %d: a refused pull changed the slot: %q", round, got)
		}
		checkVaults(t, a, b)
		// A slot without a conflict is refused, and changes nothing.
		if _, errs, code := prose(t, "--vault", b, "resolve", "ml/attention", "--slot", "body", "--ours"); code != 1 || !strings.Contains(errs, "has no conflict") {
			t.Fatalf("round %d: resolve of a slot without a conflict: exit %d\n%s", round, code, errs)
		}
		branchRefsUnchanged(t, b, before)

		out := mustProse(t, "--vault", b, "resolve", "ml/attention", "--slot", "summary", "--"+side)
		if !strings.Contains(out, "joined: node wiki (taken both)") {
			t.Fatalf("round %d resolve:\n%s", round, out)
		}
		want := aText
		if side == "ours" {
			want = bText
		}
		if got := slotOfPage(t, b, "ml/attention", "summary"); got != want {
			t.Fatalf("round %d: --%s: summary %q, want %q", round, side, got, want)
		}
		m := mergeOf(t, lastOf(t, b, "wiki"))
		res, _ := m["resolved"].([]any)
		if len(res) != 1 {
			t.Fatalf("round %d: merge receipt names no resolved conflict: %v", round, m)
		}
		r := res[0].(map[string]any)
		notTaken := m["ours"]
		if side == "ours" {
			notTaken = m["theirs"]
		}
		if r["path"] != "published/wiki/ml/attention.html" || r["conflict"] != "slot:summary" || r["taken"] != side || r["not_taken"] != notTaken {
			t.Fatalf("round %d: resolved %v (merge %v)", round, r, m)
		}
		if _, err := os.Stat(filepath.Join(b, ".prose", "resolve.json")); !os.IsNotExist(err) {
			t.Fatalf("round %d: the resolve record stays after the merge landed: %v", round, err)
		}
		hasAll(t, "b after resolve", receiptHashes(t, b), all)
		checkVaults(t, a, b)
		mustProse(t, "--vault", b, "push")
		mustProse(t, "--vault", a, "pull")
		if got := slotOfPage(t, a, "ml/attention", "summary"); got != want {
			t.Fatalf("round %d: a after pulling the resolve: %q", round, got)
		}
		hasAll(t, "a after pulling the resolve", receiptHashes(t, a), all)
		checkVaults(t, a, b)
	}
}

// TestSyncWikiConflictResolvedAsAWholeNode: a slot conflict can still be
// settled by taking one side's whole wiki.
func TestSyncWikiConflictResolvedAsAWholeNode(t *testing.T) {
	inParallel(t)
	_, a, b, _ := wikiWorld(t)
	page := strings.TrimSpace(mustProse(t, "--vault", a, "wiki", "find", "omega"))
	if i := strings.IndexAny(page, " \t\n"); i > 0 {
		page = page[:i]
	}
	mustProse(t, "--vault", a, "wiki", "write-slot", page, "abstract", "--content", "<p>From a.</p>")
	mustProse(t, "--vault", b, "wiki", "write-slot", page, "abstract", "--content", "<p>From b.</p>")
	mustProse(t, "--vault", a, "push")
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)
	if _, errs, code := prose(t, "--vault", b, "pull"); code != 1 || !strings.Contains(errs, "slot abstract") {
		t.Fatalf("pull: exit %d\n%s", code, errs)
	}
	out := mustProse(t, "--vault", b, "resolve", "wiki", "--theirs")
	if !strings.Contains(out, "joined: node wiki (taken theirs)") {
		t.Fatalf("resolve wiki --theirs:\n%s", out)
	}
	if got := slotOfPage(t, b, page, "abstract"); got != "<p>From a.</p>" {
		t.Fatalf("summary after resolve wiki --theirs: %q", got)
	}
	hasAll(t, "b", receiptHashes(t, b), all)
	checkVaults(t, a, b)
}

// TestSyncWikiMetaAndRemovalConflictsPerPage: a title both sides set
// differently and a page removed on one side and edited on the other are
// refused and named; prose resolve PAGE --theirs|--ours settles every
// conflict of the page (no --slot), and the merge lands when both pages
// are settled.
func TestSyncWikiMetaAndRemovalConflictsPerPage(t *testing.T) {
	inParallel(t)
	_, a, b := twoVaults(t, func(root, a string) {
		mustProse(t, "--vault", a, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
		mustProse(t, "--vault", a, "wiki", "new", "ml/gone", "--template", "note", "--title", "Gone")
	})

	mustProse(t, "--vault", a, "wiki", "set-meta", "ml/attention", "title=Attention (a)", "tags:=[\"ml\"]")
	mustProse(t, "--vault", b, "wiki", "set-meta", "ml/attention", "title=Attention (b)")
	mustProse(t, "--vault", a, "wiki", "write-slot", "ml/gone", "body", "--content", "<p>Still here.</p>")
	mustProse(t, "--vault", b, "wiki", "rm", "ml/gone", "--force")
	mustProse(t, "--vault", a, "push")
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)
	before := refsOf(t, b)
	_, errs, code := prose(t, "--vault", b, "pull")
	for _, want := range []string{"published/wiki/ml/attention.html meta title", "published/wiki/ml/gone.html: removed on one side", "prose resolve ml/attention --ours"} {
		if code != 1 || !strings.Contains(errs, want) {
			t.Fatalf("pull: exit %d, want 1 and %q in\n%s", code, want, errs)
		}
	}
	branchRefsUnchanged(t, b, before)
	checkVaults(t, a, b)

	// One page settled: recorded, the merge still waits for the other.
	if _, errs, code := prose(t, "--vault", b, "resolve", "ml/attention", "--theirs"); code != 1 || !strings.Contains(errs, "recorded; the merge still waits") || !strings.Contains(errs, "ml/gone.html") || strings.Contains(errs, "meta title") {
		t.Fatalf("first resolve: exit %d\n%s", code, errs)
	}
	branchRefsUnchanged(t, b, before)
	out := mustProse(t, "--vault", b, "resolve", "ml/gone", "--ours")
	if !strings.Contains(out, "joined: node wiki (taken both)") {
		t.Fatalf("second resolve:\n%s", out)
	}
	meta := mustProse(t, "--vault", b, "--json", "wiki", "meta", "ml/attention")
	if !strings.Contains(meta, `"Attention (a)"`) || !strings.Contains(meta, `"ml"`) {
		t.Fatalf("ml/attention meta after --theirs: %s", meta)
	}
	if _, err := os.Stat(filepath.Join(b, "published", "wiki", "ml", "gone.html")); !os.IsNotExist(err) {
		t.Fatalf("ml/gone after --ours (removed here): %v", err)
	}
	m := mergeOf(t, lastOf(t, b, "wiki"))
	if res, _ := m["resolved"].([]any); len(res) != 2 {
		t.Fatalf("merge receipt resolved %v, want the two choices", m["resolved"])
	}
	hasAll(t, "b", receiptHashes(t, b), all)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	checkVaults(t, a, b)
}

// TestSyncWikiMergeRendersOnlyWhatChanged: after a page merge, pull
// renders again only the shells the merge can have changed — yet the
// wiki it leaves is the one a whole `prose wiki rebuild` gives: a
// rebuild afterwards changes nothing. The sides cover each way a shell
// goes stale: a link added on the remote to a page neither side touched
// (its "Referenced by" on this side is stale), a linking page removed
// there, a new folder (the root's listing), a page new here in a folder
// whose other page the remote changed, a page both sides changed that
// links to a page of this side only, and a page both sides changed whose
// two links to a page each side dropped one of: neither side's file of
// the linked page changed, but the merged wiki's does.
func TestSyncWikiMergeRendersOnlyWhatChanged(t *testing.T) {
	inParallel(t)
	write := func(v, page, slot, html string) {
		t.Helper()
		mustProse(t, "--vault", v, "wiki", "write-slot", page, slot, "--content", html)
	}
	_, a, b := twoVaults(t, func(root, a string) {
		for _, p := range [][3]string{
			{"ml/attention", "concept", "Attention"}, {"ml/softmax", "concept", "Softmax"}, {"ml/gelu", "concept", "GELU"},
			{"ops/deploy", "note", "Deploying"}, {"ops/old", "note", "Old"}, {"notes/keep", "note", "Keep"},
		} {
			mustProse(t, "--vault", a, "wiki", "new", p[0], "--template", p[1], "--title", p[2])
		}
		for i := range 12 { // pages no merge touches: the rebuild must leave them
			mustProse(t, "--vault", a, "wiki", "new", fmt.Sprintf("quiet/q%d", i), "--template", "note", "--title", fmt.Sprintf("Quiet %d", i))
		}
		write(a, "ops/old", "body", `<p>See <a href="../ml/gelu.html">gelu</a>.</p>`)
		write(a, "ml/attention", "summary", `<p>Weights by <a href="softmax.html">softmax</a>.</p>`)
		write(a, "ml/attention", "body", `<p>Normalized by <a href="softmax.html">softmax</a>.</p>`)
	})

	write(a, "ops/deploy", "body", `<p>Mind the <a href="../ml/gelu.html">gelu</a>.</p>`)
	mustProse(t, "--vault", a, "wiki", "rm", "ops/old", "--force")
	mustProse(t, "--vault", a, "wiki", "new", "fresh/start", "--template", "note", "--title", "Fresh start")
	write(a, "ml/attention", "summary", "<p>Weights tokens by relevance.</p>")
	mustProse(t, "--vault", a, "wiki", "set-meta", "notes/keep", "title=Keep (renamed)")
	write(b, "ml/attention", "body", `<p>Queries meet keys; <a href="../notes/keep.html">keep</a> this.</p>`)
	mustProse(t, "--vault", b, "wiki", "new", "ml/extra", "--template", "note", "--title", "Extra")
	mustProse(t, "--vault", a, "push")

	out := mustProse(t, "--vault", b, "pull")
	t.Logf("pull:\n%s", out)
	if !strings.Contains(out, "merged file by file:") || !strings.Contains(out, "rendered the shells of ") {
		t.Fatalf("pull of a page merge:\n%s", out)
	}
	// Fewer pages than the wiki holds were rendered again.
	var n int
	if _, err := fmt.Sscanf(out[strings.Index(out, "rendered the shells of ")+len("rendered the shells of "):], "%d", &n); err != nil {
		t.Fatal(err)
	}
	total := strings.Count(syncGit(t, b, "ls-tree", "-r", "--name-only", "HEAD", "published/wiki"), ".html")
	if n == 0 || n > total-12 {
		t.Fatalf("rendered %d pages again after the merge, want some, and not the 12 quiet ones of the wiki's %d", n, total)
	}
	if data, _ := os.ReadFile(filepath.Join(b, "published", "wiki", "ml", "gelu.html")); !strings.Contains(string(data), "../ops/deploy.html") || strings.Contains(string(data), "../ops/old.html") {
		t.Fatalf("ml/gelu's Referenced by after the merge:\n%s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(b, "published", "wiki", "ml", "softmax.html")); strings.Contains(string(data), `href="attention.html"`) {
		t.Fatalf("ml/softmax is still referenced by ml/attention, whose links to it both sides dropped:\n%s", data)
	}
	head := syncGit(t, b, "rev-parse", "HEAD")
	tree := syncGit(t, b, "rev-parse", "HEAD:published/wiki")
	rb := mustProse(t, "--vault", b, "wiki", "rebuild")
	if got := syncGit(t, b, "rev-parse", "HEAD:published/wiki"); got != tree {
		t.Fatalf("a whole rebuild after the merge changed the wiki (%s → %s):\n%s\n%s", tree, got, rb, syncGit(t, b, "diff", "--stat", head, "HEAD"))
	}
	checkVaults(t, a, b)
}

// openItems lists the open review items of a vault (prose wiki review
// list --json), by id.
func openItems(t *testing.T, dir string) map[string]ingest.ReviewEntry {
	t.Helper()
	var q struct {
		Items []ingest.ReviewEntry `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "review", "list")), &q); err != nil {
		t.Fatal(err)
	}
	out := map[string]ingest.ReviewEntry{}
	for _, it := range q.Items {
		out[it.ID] = it
	}
	return out
}

// TestSyncReviewQueueMergesThroughAPull: a person's edit on each side
// that an ingest there then wanted to overwrite becomes a review item on
// that side; a pull merges the two queues, so both items are open in
// prose wiki review list on the merged side; an item resolved on one
// side while the other side resolves the other stays resolved through
// the next pull either way, and the queue lists neither.
func TestSyncReviewQueueMergesThroughAPull(t *testing.T) {
	t.Setenv("PROSE_NOW", "2026-01-31")
	const ops = "# Operating the service\n\nWe watch the service every day.\n\n## Glossary\n\nPager: the device that wakes the person on call.\nRunbook: the steps that fix a known failure.\n"
	// One source directory, so both sides name the sources alike; each
	// side's change of it is made for its own ingest and undone after.
	var src string
	_, a, b := twoVaults(t, func(root, a string) {
		src = filepath.Join(root, "src")
		writeFiles(t, src, map[string]string{"deploy.md": reviewDeploy, "ops.md": ops})
		mustProse(t, "--vault", a, "ingest", src)
	})

	// a: a person writes canary's summary, then the deploy guide changes
	// what it says of canaries; b: the same for pager and the ops guide.
	mustProse(t, "--vault", a, "wiki", "write-slot", "canary", "summary", "--content", "<p>Ours, from a.</p>")
	writeFiles(t, src, map[string]string{"deploy.md": strings.Replace(reviewDeploy, "production traffic", "live traffic", 1)})
	mustProse(t, "--vault", a, "ingest", src)
	writeFiles(t, src, map[string]string{"deploy.md": reviewDeploy})
	mustProse(t, "--vault", b, "wiki", "write-slot", "pager", "summary", "--content", "<p>Ours, from b.</p>")
	writeFiles(t, src, map[string]string{"ops.md": strings.Replace(ops, "wakes the person", "wakes whoever is", 1)})
	mustProse(t, "--vault", b, "ingest", src)
	itemA, itemB := openItems(t, a), openItems(t, b)
	if len(itemA) != 1 || len(itemB) != 1 {
		t.Fatalf("want one open item on each side, got a %v, b %v", itemA, itemB)
	}
	var idA, idB string
	for id, it := range itemA {
		idA = id
		if it.Kind != ingest.ReviewKept || !strings.Contains(it.Page, "canary") {
			t.Fatalf("a's item: %+v", it)
		}
	}
	for id, it := range itemB {
		idB = id
		if it.Kind != ingest.ReviewKept || !strings.Contains(it.Page, "pager") {
			t.Fatalf("b's item: %+v", it)
		}
	}
	if idA == idB {
		t.Fatalf("the two sides' items have one id %s", idA)
	}

	mustProse(t, "--vault", a, "push")
	out := mustProse(t, "--vault", b, "pull")
	t.Logf("pull:\n%s", out)
	if !strings.Contains(out, "merged") {
		t.Fatalf("pull of two ingests with review items:\n%s", out)
	}
	merged := openItems(t, b)
	list := mustProse(t, "--vault", b, "wiki", "review", "list")
	for _, id := range []string{idA, idB} {
		if _, ok := merged[id]; !ok || !strings.Contains(list, id) {
			t.Fatalf("item %s is not open on the merged side:\n%s", id, list)
		}
	}
	if got := slotOfPage(t, b, "canary", "summary"); got != "<p>Ours, from a.</p>" {
		t.Fatalf("canary's summary after the merge: %q (a person's edit from a)", got)
	}
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	if got := openItems(t, a); len(got) != 2 {
		t.Fatalf("a after pulling the merge has open items %v, want both", got)
	}

	// Each side resolves one item; the pulls merge the two queues.
	mustProse(t, "--vault", a, "wiki", "review", "resolve", idA)
	mustProse(t, "--vault", b, "wiki", "review", "take", idB)
	mustProse(t, "--vault", a, "push")
	out = mustProse(t, "--vault", b, "pull")
	t.Logf("second pull:\n%s", out)
	if !strings.Contains(out, "merged") {
		t.Fatalf("second pull:\n%s", out)
	}
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	for _, dir := range []string{a, b} {
		if got := openItems(t, dir); len(got) != 0 {
			t.Fatalf("%s: items resolved on one side each are open again after the pull: %v", dir, got)
		}
		for _, it := range keptItems(t, dir) {
			if (it.ID == idA || it.ID == idB) && it.Resolved == "" {
				t.Fatalf("%s: item %s is not resolved: %+v", dir, it.ID, it)
			}
		}
	}
	checkVaults(t, a, b)
}

// TestSyncResolveOneMetaKey: a page whose title both sides set
// differently and whose summary both sides wrote differently is refused,
// the error naming `prose resolve PAGE --key title`; --key title
// --theirs settles the title alone (the merge still waits for the slot),
// a --key naming a key without a conflict is refused and changes
// nothing, --key with --slot is a usage error, and --slot --ours lands
// the merge with the remote's title and this vault's summary.
func TestSyncResolveOneMetaKey(t *testing.T) {
	inParallel(t)
	_, a, b := twoVaults(t, func(root, a string) {
		mustProse(t, "--vault", a, "wiki", "new", "ml/attention", "--template", "concept", "--title", "Attention")
	})
	mustProse(t, "--vault", a, "wiki", "set-meta", "ml/attention", "title=Attention (a)", "tags:=[\"ml\"]")
	mustProse(t, "--vault", a, "wiki", "write-slot", "ml/attention", "summary", "--content", "<p>From a.</p>")
	mustProse(t, "--vault", b, "wiki", "set-meta", "ml/attention", "title=Attention (b)")
	mustProse(t, "--vault", b, "wiki", "write-slot", "ml/attention", "summary", "--content", "<p>From b.</p>")
	mustProse(t, "--vault", a, "push")
	all := append(receiptHashes(t, a), receiptHashes(t, b)...)
	before := refsOf(t, b)
	_, errs, code := prose(t, "--vault", b, "pull")
	if code != 1 || !strings.Contains(errs, "meta title") || !strings.Contains(errs, "slot summary") || !strings.Contains(errs, "prose resolve ml/attention --key title --ours") {
		t.Fatalf("pull: exit %d\n%s", code, errs)
	}
	branchRefsUnchanged(t, b, before)

	if _, errs, code := prose(t, "--vault", b, "resolve", "ml/attention", "--key", "title", "--slot", "summary", "--ours"); code != 2 || !strings.Contains(errs, "not both") {
		t.Fatalf("resolve with --key and --slot: exit %d\n%s", code, errs)
	}
	if _, errs, code := prose(t, "--vault", b, "resolve", "ml/attention", "--key", "tags", "--ours"); code != 1 || !strings.Contains(errs, "has no conflict") {
		t.Fatalf("resolve of a key without a conflict: exit %d\n%s", code, errs)
	}
	branchRefsUnchanged(t, b, before)
	// The title alone: recorded, and the slot still waits.
	_, errs, code = prose(t, "--vault", b, "resolve", "ml/attention", "--key", "title", "--theirs")
	if code != 1 || !strings.Contains(errs, "recorded; the merge still waits") || !strings.Contains(errs, "slot summary") || strings.Contains(errs, "meta title") {
		t.Fatalf("resolve --key title: exit %d\n%s", code, errs)
	}
	branchRefsUnchanged(t, b, before)
	out := mustProse(t, "--vault", b, "resolve", "ml/attention", "--slot", "summary", "--ours")
	if !strings.Contains(out, "joined: node wiki (taken both)") {
		t.Fatalf("resolve --slot summary:\n%s", out)
	}
	meta := mustProse(t, "--vault", b, "--json", "wiki", "meta", "ml/attention")
	if !strings.Contains(meta, `"Attention (a)"`) || !strings.Contains(meta, `"ml"`) {
		t.Fatalf("meta after --key title --theirs: %s", meta)
	}
	if got := slotOfPage(t, b, "ml/attention", "summary"); got != "<p>From b.</p>" {
		t.Fatalf("summary after --slot summary --ours: %q", got)
	}
	// The resolve rendered the shells the merge changed: a whole
	// rebuild finds nothing left to do.
	tree := syncGit(t, b, "rev-parse", "HEAD:published/wiki")
	mustProse(t, "--vault", b, "wiki", "rebuild")
	if got := syncGit(t, b, "rev-parse", "HEAD:published/wiki"); got != tree {
		t.Fatalf("a whole rebuild after the resolve changed the wiki (%s → %s)", tree, got)
	}
	m := mergeOf(t, lastOf(t, b, "wiki"))
	res, _ := m["resolved"].([]any)
	var conflicts []string
	for _, r := range res {
		r := r.(map[string]any)
		conflicts = append(conflicts, fmt.Sprintf("%s=%s", r["conflict"], r["taken"]))
	}
	if got := strings.Join(conflicts, " "); !strings.Contains(got, "meta:title=theirs") || !strings.Contains(got, "slot:summary=ours") || len(conflicts) != 2 {
		t.Fatalf("merge receipt resolved %s", got)
	}
	hasAll(t, "b", receiptHashes(t, b), all)
	checkVaults(t, a, b)
	mustProse(t, "--vault", b, "push")
	mustProse(t, "--vault", a, "pull")
	checkVaults(t, a, b)
}
