package wiki

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// referencedBy returns the links of a page file's "Referenced by" block
// (href → text) and its "and N more" line, or nil when it has none.
func referencedBy(t *testing.T, w *Wiki, name string) (map[string]string, string) {
	t.Helper()
	_, data, err := w.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, `<aside class="backlinks"`)
	if i < 0 {
		return nil, ""
	}
	block := s[i : i+strings.Index(s[i:], "</aside>")]
	out := map[string]string{}
	for _, part := range strings.Split(block, `<li><a href="`)[1:] {
		href, rest, _ := strings.Cut(part, `">`)
		text, _, _ := strings.Cut(rest, "</a>")
		out[href] = text
	}
	more := ""
	if j := strings.Index(block, `<p class="more">`); j >= 0 {
		more = block[j:]
	}
	return out, more
}

func TestReferencedByFollowsLinksInTheSameCommit(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "terms/canary", "concept", map[string]string{"summary": "<p>A small first release.</p>"})
	_, before, _ := w.ReadFile("terms/canary")
	if got, _ := referencedBy(t, w, "terms/canary"); got != nil {
		t.Fatalf("a page nothing links to shows %v", got)
	}
	// Two pages link to it: one from a slot, one from related.
	mustUpdate(t, w, func(tx *Tx) error {
		if _, _, err := tx.New("ops/deploy", NewOptions{Template: "note", Title: "Deploying", Slots: map[string]string{"body": `<p>Start with a <a href="../terms/canary.html#s-x">canary</a>.</p>`}}); err != nil {
			return err
		}
		_, _, err := tx.New("ops/rollback", NewOptions{Template: "note", Title: "Rolling back", Meta: Meta{KeyRelated: []any{"terms/canary"}}})
		return err
	})
	w.Now = func() time.Time { return time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC) }
	got, _ := referencedBy(t, w, "terms/canary")
	want := map[string]string{"../ops/deploy.html": "Deploying", "../ops/rollback.html": "Rolling back"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Referenced by %v, want %v", got, want)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	// The link goes: the target's shell loses it in the commit that
	// removes it, the target's truth and date stay, and its facet does not
	// move (a shell-only change is immaterial).
	res := mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("ops/deploy", "body", "<p>Start small.</p>")
		return err
	})
	if !slices.Contains(res.Changed, "terms/canary.html") {
		t.Fatalf("the commit that removed the link did not re-render its target: changed %v", res.Changed)
	}
	if slices.Contains(res.Moved, "terms") {
		t.Fatalf("a shell-only change moved the target's facet: moved %v", res.Moved)
	}
	got, _ = referencedBy(t, w, "terms/canary")
	if want := map[string]string{"../ops/rollback.html": "Rolling back"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the link went: %v, want %v", got, want)
	}
	_, p, _ := w.Read("terms/canary")
	if p.Meta.String(KeyUpdated) != "2026-01-02" {
		t.Fatalf("a shell-only change moved the page's date to %v", p.Meta[KeyUpdated])
	}
	if _, ok := p.Meta["backlinks"]; ok {
		t.Fatal("backlinks stored in meta")
	}
	// A retitled linker is shown by its new title; a moved one by its new
	// path; a removed one not at all.
	mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.SetMeta("ops/rollback", map[string]any{KeyTitle: "Undoing a deploy"}, nil)
		return err
	})
	if got, _ = referencedBy(t, w, "terms/canary"); got["../ops/rollback.html"] != "Undoing a deploy" {
		t.Fatalf("after the retitle: %v", got)
	}
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, _, err := tx.Move("ops/rollback", "runbooks/undo")
		return err
	})
	if got, _ = referencedBy(t, w, "terms/canary"); fmt.Sprint(got) != fmt.Sprint(map[string]string{"../runbooks/undo.html": "Undoing a deploy"}) {
		t.Fatalf("after the move: %v", got)
	}
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.Remove("runbooks/undo", false)
		return err
	})
	if got, _ = referencedBy(t, w, "terms/canary"); got != nil {
		t.Fatalf("after the linker went: %v", got)
	}
	_, after, _ := w.ReadFile("terms/canary")
	if string(after) != string(before) {
		t.Fatal("with its links gone the page is not the file it was")
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	rep, err := w.Lint(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == "error" {
			t.Errorf("lint: %+v", f)
		}
	}
}

// A page created where a link was waiting (a broken link) shows it; a
// rebuild renders every page's from scratch.
func TestReferencedByOfANewPageAndRebuild(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/early", "note", map[string]string{"body": `<p>See <a href="late.html">later</a>.</p>`})
	newPage(t, w, "a/late", "note", nil)
	if got, _ := referencedBy(t, w, "a/late"); got["early.html"] != "Early" {
		t.Fatalf("a new page linked before it existed shows %v", got)
	}
	// The cache goes (a fresh clone): a rebuild still renders it.
	os.RemoveAll(filepath.Dir(w.linksPath()))
	if _, err := w.Rebuild(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := referencedBy(t, w, "a/late"); got["early.html"] != "Early" {
		t.Fatalf("after a rebuild: %v", got)
	}
	gitStatusClean(t, w)
}

// A damaged or stale cache of links is never trusted: it is rebuilt or
// caught up from the vault.
func TestReferencedByCacheDamagedOrStale(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "t/x", "note", nil)
	newPage(t, w, "a/one", "note", map[string]string{"body": `<p><a href="../t/x.html">x</a></p>`})
	cache := w.linksPath()
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	for i, bad := range [][]byte{[]byte("garbage"), append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^1)} {
		os.WriteFile(cache, bad, 0o644)
		newPage(t, w, fmt.Sprintf("b/two%d", i), "note", map[string]string{"body": `<p><a href="../t/x.html">x</a></p>`})
		got, _ := referencedBy(t, w, "t/x")
		if got["../a/one.html"] != "One" || got[fmt.Sprintf("../b/two%d.html", i)] == "" {
			t.Fatalf("with a damaged cache (%d): %v", i, got)
		}
	}
	// A cache of an earlier tree is caught up.
	os.WriteFile(cache, good, 0o644)
	newPage(t, w, "b/three", "note", map[string]string{"body": `<p><a href="../t/x.html">x</a></p>`})
	if got, _ := referencedBy(t, w, "t/x"); len(got) != 4 {
		t.Fatalf("with a stale cache: %v", got)
	}
}

// A page linked from many shows MaxBacklinks of them and says how many
// more, naming the command that lists them all; the API lists them all.
func TestReferencedByIsBounded(t *testing.T) {
	w := newWiki(t)
	n := MaxBacklinks + 7
	mustUpdate(t, w, func(tx *Tx) error {
		if _, _, err := tx.New("glossary/ffi-cif", NewOptions{Template: "concept", Title: "ffi_cif"}); err != nil {
			return err
		}
		for i := range n {
			dir := "docs"
			if i%3 == 0 {
				dir = "notes"
			}
			if _, _, err := tx.New(fmt.Sprintf("%s/p%03d", dir, i), NewOptions{Template: "note", Slots: map[string]string{"body": `<p><a href="../glossary/ffi-cif.html">ffi_cif</a></p>`}}); err != nil {
				return err
			}
		}
		return nil
	})
	got, more := referencedBy(t, w, "glossary/ffi-cif")
	if len(got) != MaxBacklinks {
		t.Fatalf("%d links shown, want %d", len(got), MaxBacklinks)
	}
	if !strings.Contains(more, "and 7 more") || !strings.Contains(more, "prose wiki backlinks glossary/ffi-cif") || !strings.Contains(more, `href="../docs/README.html"`) {
		t.Fatalf("the more line: %q", more)
	}
	rel, all, err := w.Backlinks(context.Background(), "ffi-cif")
	if err != nil || rel != "glossary/ffi-cif.html" || len(all) != n {
		t.Fatalf("Backlinks: %s, %d pages, %v; want %d", rel, len(all), err, n)
	}
}

// Text a person types into the "Referenced by" block is shell: taking
// the page in names it as discarded; a link they add in a slot shows on
// its target in the same commit.
func TestReferencedByIsShellForHandEdits(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "t/x", "note", nil)
	newPage(t, w, "a/one", "note", map[string]string{"body": `<p><a href="../t/x.html">x</a></p>`})
	newPage(t, w, "a/two", "note", map[string]string{"body": `<p>nothing</p>`})
	xf := filepath.Join(w.Root(), "t", "x.html")
	data, _ := os.ReadFile(xf)
	edited := strings.Replace(string(data), `</ul>`, `<li>typed here</li></ul>`, 1)
	if edited == string(data) {
		t.Fatal("no Referenced by block to edit")
	}
	os.WriteFile(xf, []byte(edited), 0o644)
	two := filepath.Join(w.Root(), "a", "two.html")
	data, _ = os.ReadFile(two)
	os.WriteFile(two, []byte(strings.Replace(string(data), "<p>nothing</p>", `<p><a href="../t/x.html">x too</a></p>`, 1)), 0o644)
	res, err := w.CommitHandEdits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Discarded["t/x.html"]; len(d) != 1 || !strings.Contains(d[0], "typed here") {
		t.Fatalf("discarded: %v", res.Discarded)
	}
	if d := res.Discarded["a/two.html"]; len(d) != 0 {
		t.Fatalf("discarded on the linking page: %v", d)
	}
	got, _ := referencedBy(t, w, "t/x")
	if want := map[string]string{"../a/one.html": "One", "../a/two.html": "Two"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the hand edit: %v, want %v", got, want)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

// A folder's index shows the pages linking to the folder, and a folder
// description's links count like any page's.
func TestReferencedByOfAFolderIndex(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "ops/runbook", "note", nil)
	newPage(t, w, "docs/intro", "note", map[string]string{"body": `<p>See <a href="../ops/">the ops folder</a>.</p>`})
	mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("docs/README", "description", `<p>Start at <a href="../ops/runbook.html">the runbook</a>.</p>`)
		return err
	})
	if got, _ := referencedBy(t, w, "ops/README"); got["../docs/intro.html"] != "Intro" {
		t.Fatalf("the folder index: %v", got)
	}
	if got, _ := referencedBy(t, w, "ops/runbook"); got["../docs/README.html"] != "Docs" {
		t.Fatalf("linked from a folder description: %v", got)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

// A commit leaves the cache of links current for the tree it made, the
// same bytes a rebuild from the vault writes: the next command neither
// diffs the trees nor parses the pages again.
func TestReferencedByCacheIsCurrentAfterACommit(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "t/x", "note", nil)
	newPage(t, w, "t/y", "note", nil)
	newPage(t, w, "a/one", "note", map[string]string{"body": `<p><a href="../t/x.html">x</a></p>`})
	mustUpdate(t, w, func(tx *Tx) error {
		if _, err := tx.WriteSlot("a/one", "body", `<p><a href="../t/y.html">y</a></p>`); err != nil {
			return err
		}
		_, _, err := tx.Remove("t/x", true)
		return err
	})
	_, tree, err := w.v.NodeHead(Node)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(w.linksPath())
	if err != nil {
		t.Fatal(err)
	}
	l, ok := decodeLinks(saved)
	if !ok || l.tree != tree {
		t.Fatalf("the cache reflects tree %v (ok %v), the branch's wiki is %v", l.tree, ok, tree)
	}
	os.Remove(w.linksPath())
	if _, err := w.linkIndex(context.Background(), tree); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := os.ReadFile(w.linksPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != string(rebuilt) {
		t.Fatalf("the cache a commit wrote differs from a rebuild:\n%q\n%q", saved, rebuilt)
	}
	if got, _ := referencedBy(t, w, "t/y"); got["../a/one.html"] != "One" {
		t.Fatalf("t/y referenced by %v", got)
	}
}

// A commit that changes no page's title or links writes the cache of its
// base for the new tree, one that moves a link encodes it anew: either way
// the bytes a rebuild writes.
func TestLinkCacheOfACommitThatMovesNoLinkIsARebuilds(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "t/x", "note", nil)
	newPage(t, w, "t/y", "note", nil)
	newPage(t, w, "a/one", "note", map[string]string{"body": `<p><a href="../t/x.html">x</a></p>`})
	for i, write := range []func(tx *Tx) error{
		func(tx *Tx) error { // the body again, with the same link
			_, err := tx.WriteSlot("a/one", "body", `<p>Now <a href="../t/x.html">x</a> again.</p>`)
			return err
		},
		func(tx *Tx) error { _, err := tx.SetMeta("t/x", map[string]any{"rank": float64(3)}, nil); return err },
		func(tx *Tx) error { // a link moved: the cache is encoded anew
			_, err := tx.WriteSlot("a/one", "body", `<p><a href="../t/y.html">y</a></p>`)
			return err
		},
		func(tx *Tx) error { // and back
			_, err := tx.WriteSlot("a/one", "body", `<p><a href="../t/x.html">x</a></p>`)
			return err
		},
	} {
		mustUpdate(t, w, write)
		_, tree, err := w.v.NodeHead(Node)
		if err != nil {
			t.Fatal(err)
		}
		saved, err := os.ReadFile(w.linksPath())
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := decodeLinks(saved); !ok || l.tree != tree {
			t.Fatalf("write %d: the cache is damaged (%v) or of another tree", i, ok)
		}
		os.Remove(w.linksPath())
		if _, err := w.linkIndex(context.Background(), tree); err != nil {
			t.Fatal(err)
		}
		rebuilt, err := os.ReadFile(w.linksPath())
		if err != nil {
			t.Fatal(err)
		}
		if string(saved) != string(rebuilt) {
			t.Fatalf("write %d: the cache a commit wrote differs from a rebuild:\n%q\n%q", i, saved, rebuilt)
		}
	}
	if got, _ := referencedBy(t, w, "t/x"); got["../a/one.html"] != "One" {
		t.Fatalf("t/x referenced by %v", got)
	}
}
