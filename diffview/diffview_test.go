package diffview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prose-store/prose/vault"
)

func words(n int, prefix string) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return w
}

// A change in the middle of a long text is shown with the words around
// it, not the text's beginning.
func TestDiffWindowsAroundTheChange(t *testing.T) {
	a := words(500, "w")
	b := append([]string{}, a...)
	b[300] = "CHANGED"
	d := DiffTokens(a, b)
	got := style{}.words(d, "")
	if !strings.Contains(got, "[-w300-] {+CHANGED+}") || !strings.Contains(got, "w299") || !strings.Contains(got, "w301") {
		t.Fatalf("the change is not shown in its context: %s", got)
	}
	if strings.Contains(got, "w0 ") || strings.Contains(got, "w200") || strings.Contains(got, "w400") {
		t.Fatalf("the window holds words far from the change: %s", got)
	}
	if d.Removed != 1 || d.Added != 1 || d.Coarse {
		t.Fatalf("counts: %+v", d)
	}
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Fatalf("the words left out are not marked: %s", got)
	}
}

func TestDiffFindsInsertionsAndDeletions(t *testing.T) {
	d := Diff("the cat sat on the mat", "the black cat sat on mat today")
	got := style{}.words(d, "")
	want := "the {+black+} cat sat on [-the-] mat {+today+}"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Past the LCS bound the changed stretch is one removal and one addition,
// counted, and the table is never built.
func TestDiffIsBoundedOnLongRewrites(t *testing.T) {
	a, b := words(5000, "a"), words(5000, "b")
	var d WordDiff
	allocs := testing.AllocsPerRun(1, func() { d = DiffTokens(a, b) })
	if !d.Coarse || d.Removed != 5000 || d.Added != 5000 {
		t.Fatalf("not the coarse fallback: %+v", d.Removed)
	}
	if allocs > 100 {
		t.Fatalf("%v allocations for a coarse diff", allocs)
	}
	got := style{}.words(d, "")
	if !strings.Contains(got, "too long to compare word by word: 5000 words removed, 5000 added") || len(got) > 4000 {
		t.Fatalf("fallback text (%d bytes): %.300s", len(got), got)
	}
}

func TestDiffShowsAtMostMaxHunks(t *testing.T) {
	a := words(400, "w")
	b := append([]string{}, a...)
	for i := 0; i < 10; i++ {
		b[i*40+5] = "X"
	}
	d := DiffTokens(a, b)
	if d.More != 10-maxHunks || d.Removed != 10 || d.Added != 10 {
		t.Fatalf("hunks: more %d removed %d added %d", d.More, d.Removed, d.Added)
	}
	got := style{}.words(d, "")
	if !strings.Contains(got, "(4 more changes)") || strings.Count(got, "{+X+}") != maxHunks {
		t.Fatalf("%s", got)
	}
}

func TestSlotComparesTextAndNotesMarkup(t *testing.T) {
	s := slotChange("body", "changed", `<p>See the cache.</p>`, `<p>See the <a href="cache.html">cache</a>.</p>`)
	if !s.MarkupOnly || len(s.Markup) != 1 || s.Markup[0] != `+<a href="cache.html">` {
		t.Fatalf("markup-only change: %+v", s)
	}
	s = slotChange("body", "changed", `<p>Old words here.</p>`, `<p>New words here.</p>`)
	if s.MarkupOnly || len(s.Markup) != 0 || s.Text.Removed != 1 || s.Text.Added != 1 {
		t.Fatalf("text change: %+v", s)
	}
}

func wikiChange(path, op string, old, new any) vault.Change {
	return vault.Change{Node: "wiki", Facet: "ml", Path: path, Op: op, Old: old, New: new}
}

// A page's bookkeeping is kept apart from what people set; a page
// removed and one created with its title and template is a move.
func TestBuildPagesMovesAndBookkeeping(t *testing.T) {
	res := &vault.DiffResult{From: "a", To: "b", Changes: []vault.Change{
		wikiChange(`core.attention\.html.meta.template`, "added", nil, "concept"),
		wikiChange(`core.attention\.html.meta.title`, "added", nil, "Attention"),
		wikiChange(`core.attention\.html.slots.summary`, "added", nil, "<p>Weights tokens.</p>"),
		wikiChange(`ml.attention\.html.meta.template`, "removed", "concept", nil),
		wikiChange(`ml.attention\.html.meta.title`, "removed", "Attention", nil),
		wikiChange(`ml.attention\.html.slots.summary`, "removed", "<p>Weights tokens.</p>", nil),
		wikiChange(`ml.other\.html.meta.generated.summary`, "changed", "blake3:1", "blake3:2"),
		wikiChange(`ml.other\.html.meta.sources[1]`, "added", nil, "blake3:9"),
		wikiChange(`ml.other\.html.meta.source_mark`, "changed", "from-1", "from-2"),
		wikiChange(`ml.other\.html.meta.tags[0]`, "changed", "x", "y"),
		{Node: "node.one", Facet: "items", Path: "items.a.n", Op: "changed", Old: 1.0, New: 2.0},
	}}
	r := Build(Input{Result: res, Receipts: 2})
	// A new page with no slots yet: its empty slots object is no slot.
	empty := Build(Input{Result: &vault.DiffResult{Changes: []vault.Change{
		wikiChange(`ml.new\.html.meta.title`, "added", nil, "New"),
		wikiChange(`ml.new\.html.meta.template`, "added", nil, "concept"),
		wikiChange(`ml.new\.html.slots`, "added", nil, map[string]any{}),
	}}})
	if len(empty.Pages) != 1 || empty.Pages[0].Op != "created" || len(empty.Pages[0].Slots) != 0 {
		t.Fatalf("a page with no slots: %+v", empty.Pages)
	}
	if r.Summary.PagesMoved != 1 || r.Summary.PagesChanged != 1 || r.Summary.PagesCreated != 0 || r.Summary.PagesRemoved != 0 {
		t.Fatalf("summary: %+v", r.Summary)
	}
	var other *Page
	for i := range r.Pages {
		p := &r.Pages[i]
		if p.Op == "moved" && (p.From != "ml/attention" || p.Path != "core/attention" || len(p.Slots) != 0) {
			t.Fatalf("move: %+v", p)
		}
		if p.Path == "ml/other" {
			other = p
		}
	}
	if other == nil || len(other.Meta) != 1 || other.Meta[0].Key != "tags[0]" || len(other.Bookkeeping) != 3 {
		t.Fatalf("meta people set vs bookkeeping: %+v", other)
	}
	md := Markdown(r, Options{Range: "a..b"})
	if !strings.Contains(md, "prose bookkeeping: generated, source_mark, sources (`--verbose` shows it)") || strings.Contains(md, "blake3:2") || strings.Contains(md, "from-2") {
		t.Fatalf("bookkeeping not collapsed:\n%s", md)
	}
	if v := Markdown(r, Options{Range: "a..b", Verbose: true}); !strings.Contains(v, "`generated.summary` `\"blake3:1\"` → `\"blake3:2\"`") {
		t.Fatalf("--verbose does not show the bookkeeping:\n%s", v)
	}
	if !strings.HasPrefix(md, "### prose diff `a..b`\n\n**1 page changed, 1 moved · 1 world-model node changed (1 path) · 2 receipts**\n") {
		t.Fatalf("summary first:\n%s", md)
	}
}

func TestReviewOpenedAndResolved(t *testing.T) {
	old := []byte(`{"items":[{"id":"r1","page":"a","kind":"kept-edit","detail":"d1","added":"x"},{"id":"r2","page":"b","detail":"d2","added":"x"}]}`)
	now := []byte(`{"items":[{"id":"r1","page":"a","kind":"kept-edit","detail":"d1","added":"x","resolved":"kept"},{"id":"r2","page":"b","detail":"d2","added":"x"},{"id":"r3","page":"c","detail":"d3","added":"y"}]}`)
	got := reviewChanges(old, now)
	if len(got) != 2 || got[0].ID != "r3" || got[0].Op != "opened" || got[1].ID != "r1" || got[1].Op != "resolved" || got[1].How != "kept" {
		t.Fatalf("%+v", got)
	}
}

// However large the change, the markdown fits a comment and says what it
// left out and how to see it.
func TestMarkdownFitsACommentAndSaysWhatIsLeftOut(t *testing.T) {
	res := &vault.DiffResult{From: "a", To: "b"}
	for i := 0; i < 3000; i++ {
		res.Changes = append(res.Changes, vault.Change{Node: "big", Facet: "items", Path: fmt.Sprintf("items.k%04d", i), Op: "added", New: strings.Repeat("word ", 30)})
	}
	md := Markdown(Build(Input{Result: res, Receipts: 1}), Options{Range: "a..b", Command: "prose diff a b"})
	if len(md) > CommentLimit {
		t.Fatalf("%d bytes", len(md))
	}
	if !strings.Contains(md, "world-model changes. `prose diff a b` shows everything") || !strings.Contains(md, "3000 paths") {
		t.Fatalf("no note of what was left out:\n%s", md[len(md)-600:])
	}
	if !strings.Contains(md, "`items.k0000`") {
		t.Fatal("the first changes are not shown")
	}
	if txt := Text(Build(Input{Result: res}), Options{}); !strings.Contains(txt, "items.k2999") {
		t.Fatal("text leaves changes out")
	}
}

// BenchmarkDiffSlot: a 1,000-word slot with one sentence changed in the
// middle, the common case of a slot edit.
func BenchmarkDiffSlot(b *testing.B) {
	a := words(1000, "w")
	c := append([]string{}, a...)
	c[500], c[501] = "changed", "words"
	for i := 0; i < b.N; i++ {
		DiffTokens(a, c)
	}
}

// BenchmarkDiffScattered: 1,000 words, a change every 100 words, so the
// LCS table covers most of the text.
func BenchmarkDiffScattered(b *testing.B) {
	a := words(1000, "w")
	c := append([]string{}, a...)
	for i := 5; i < 1000; i += 100 {
		c[i] = "x"
	}
	for i := 0; i < b.N; i++ {
		DiffTokens(a, c)
	}
}
