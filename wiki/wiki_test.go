package wiki

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/vault"
)

// newWiki makes a fresh vault and opens its wiki with a fixed date.
func newWiki(t testing.TB) *Wiki {
	t.Helper()
	v, err := vault.Init(t.TempDir(), vault.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(v)
	if err != nil {
		t.Fatal(err)
	}
	w.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	return w
}

func mustUpdate(t *testing.T, w *Wiki, fn func(tx *Tx) error) *Result {
	t.Helper()
	res, err := w.Update(context.Background(), fn)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// gitStatusClean fails when `git status --porcelain` shows anything.
func gitStatusClean(t *testing.T, w *Wiki) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	out, err := exec.Command("git", "-C", w.Vault().Root(), "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Fatalf("git status is not clean:\n%s", out)
	}
}

func fsckOK(t *testing.T, w *Wiki) {
	t.Helper()
	rep, err := w.Vault().Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("fsck: %+v", rep)
	}
}

func TestWriteCommitsOnceAndIdenticalWriteNothing(t *testing.T) {
	w := newWiki(t)
	res := mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.New("ml/attention", NewOptions{Template: "concept", Title: "Attention"})
		return err
	})
	if res.Receipt == nil || res.Commit == "" {
		t.Fatalf("new page: no receipt: %+v", res)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	res = mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("attention", "summary", "<p>Weights {tokens} &lt;!-- prose:slot id=\"x\" --&gt;</p>")
		return err
	})
	if res.Receipt == nil {
		t.Fatal("write-slot: no receipt")
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	got, err := w.SlotOf("ml/attention", "summary")
	if err != nil {
		t.Fatal(err)
	}
	// A day later, writing back what slot returned changes nothing: no
	// commit, and the page keeps its updated date.
	w.Now = func() time.Time { return time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC) }
	res = mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("attention", "summary", got)
		return err
	})
	if res.Commit != "" || res.Receipt != nil {
		t.Fatalf("writing back what slot returned committed: %+v", res)
	}
	if _, p, _ := w.Read("attention"); p.Meta.String(KeyUpdated) != "2026-01-02" {
		t.Fatalf("updated moved: %v", p.Meta[KeyUpdated])
	}
	_, data, err := w.ReadFile("ml/attention")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "<title>Attention</title>") {
		t.Fatalf("page:\n%s", data)
	}
	t.Logf("%s", data)
}

func receipts(t *testing.T, w *Wiki) int {
	t.Helper()
	n := 0
	if err := w.Vault().Receipts(func(r vault.Record) error {
		if r.Receipt.Node == Node {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func newPage(t *testing.T, w *Wiki, path, tmpl string, slots map[string]string) {
	t.Helper()
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.New(path, NewOptions{Template: tmpl, Slots: slots})
		return err
	})
}

func TestSetMetaTitleRerendersShell(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "ml/attention", "concept", nil)
	before := receipts(t, w)
	mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.SetMeta("attention", map[string]any{"title": "Self-attention <b> & -->"}, nil)
		return err
	})
	if got := receipts(t, w) - before; got != 1 {
		t.Fatalf("set-meta gave %d receipts, want 1", got)
	}
	_, data, err := w.ReadFile("attention")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>Self-attention &lt;b&gt; &amp; --&gt;</title>", "<h1>Self-attention &lt;b&gt; &amp; --&gt;</h1>"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	_, p, _ := w.Read("attention")
	if p.Meta.Title() != "Self-attention <b> & -->" {
		t.Fatalf("title did not round-trip: %q", p.Meta.Title())
	}
	// A browser's tokenizer finds one meta comment, and it holds all the
	// meta: the title's --> did not end it.
	var blocks []string
	for _, c := range metaComments(string(data)) {
		if strings.Contains(c, "prose:meta") || strings.Contains(c, "title:") {
			blocks = append(blocks, c)
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("the browser reads %d meta comments: %q", len(blocks), blocks)
	}
	if m, err := decodeMeta([]byte(strings.TrimPrefix(blocks[0], " prose:meta\n"))); err != nil || !reflect.DeepEqual(m, p.Meta) {
		t.Fatalf("the browser's meta comment holds %v (%v), the page's meta is %v", m, err, p.Meta)
	}
	// The folder index lists the new title.
	_, idx, _ := w.ReadFile("ml/README")
	if !strings.Contains(string(idx), "Self-attention &lt;b&gt;") {
		t.Errorf("folder index does not show the new title")
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

func TestUnsafePathsRefusedAndNothingWritten(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", nil)
	head, _ := w.Head()
	refused := func(p, rule string) {
		t.Helper()
		_, err := w.Update(context.Background(), func(tx *Tx) error {
			_, _, err := tx.New(p, NewOptions{})
			return err
		})
		if err == nil || !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), rule) {
			t.Errorf("new %s: %v, want an unsafe-path error naming %q", p, err, rule)
		}
	}
	refused("../x", `".." segments`)
	refused("a/../../x", `".." segments`)
	refused("/etc/x", "absolute paths")
	refused(".git/x", `reserved for git`)
	refused("a/.hidden", "names starting with '.'")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(w.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	refused("out/x", "symbolic link")
	if h, _ := w.Head(); h != head {
		t.Fatal("a refused write committed")
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Fatal("a refused write wrote through the symlink")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(w.Vault().Root()), "x")); err == nil {
		t.Fatal("wrote outside the vault")
	}
}

func TestNotOwnedPageRefused(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", nil)
	os.WriteFile(filepath.Join(w.Root(), "a", "foreign.html"), []byte("<p>mine</p>"), 0o644)
	if out, err := exec.Command("git", "-C", w.Vault().Root(), "add", "-A").CombinedOutput(); err != nil {
		t.Skipf("git: %v %s", err, out)
	}
	exec.Command("git", "-C", w.Vault().Root(), "commit", "-qm", "foreign").Run()
	head, _ := w.Head()
	// Taking it in is refused: it has no prose meta block.
	if _, err := w.CommitHandEdits(context.Background()); err == nil || !strings.Contains(err.Error(), "prose meta block") {
		t.Fatalf("commit of a foreign page: %v", err)
	}
	// A write to it is refused as not owned, even past the hand-edit check.
	tx, err := w.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.WriteSlot("a/foreign", "body", "x"); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("write to a foreign page: %v", err)
	}
	if h, _ := w.Head(); h != head {
		t.Fatal("something was committed")
	}
	if data, _ := os.ReadFile(filepath.Join(w.Root(), "a", "foreign.html")); string(data) != "<p>mine</p>" {
		t.Fatal("the foreign page was changed")
	}
}

func TestHandEditThenCommit(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", map[string]string{"body": "<p>old</p>"})
	file := filepath.Join(w.Root(), "a", "page.html")
	data, _ := os.ReadFile(file)
	edited := strings.Replace(string(data), "<p>old</p>", "<p>typed by hand</p><script>x()</script>", 1)
	os.WriteFile(file, []byte(edited), 0o644)
	// A write elsewhere refuses too, naming the command.
	if _, err := w.Update(context.Background(), func(tx *Tx) error {
		_, _, err := tx.New("b/other", NewOptions{})
		return err
	}); err == nil || !strings.Contains(err.Error(), "prose wiki commit") {
		t.Fatalf("a write elsewhere with a hand edit pending: %v", err)
	}
	_, err := w.Update(context.Background(), func(tx *Tx) error {
		_, err := tx.WriteSlot("a/page", "body", "<p>other</p>")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "prose wiki commit") {
		t.Fatalf("write over a hand edit: %v, want a refusal naming prose wiki commit", err)
	}
	before := receipts(t, w)
	res, err := w.CommitHandEdits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt == nil || receipts(t, w)-before != 1 {
		t.Fatalf("hand edit commit: %+v", res)
	}
	if got, _ := w.SlotOf("a/page", "body"); got != "<p>typed by hand</p>" {
		t.Fatalf("slot after commit: %q", got)
	}
	if len(res.Removed["a/page.html"]) == 0 {
		t.Error("the removed script was not reported")
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
	// A broken page is refused with the line, and nothing is written.
	os.WriteFile(file, []byte(strings.Replace(edited, `<!-- /prose:slot id="body" -->`, "", 1)), 0o644)
	head, _ := w.Head()
	if _, err := w.CommitHandEdits(context.Background()); err == nil || !strings.Contains(err.Error(), "line ") {
		t.Fatalf("broken page: %v", err)
	}
	if h, _ := w.Head(); h != head {
		t.Fatal("a refused commit moved the branch")
	}
}

func TestGitCommittedHandEditNeedsCommit(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", map[string]string{"body": "<p>old</p>"})
	file := filepath.Join(w.Root(), "a", "page.html")
	data, _ := os.ReadFile(file)
	os.WriteFile(file, []byte(strings.Replace(string(data), "<p>old</p>", "<p>via git</p>", 1)), 0o644)
	if out, err := exec.Command("git", "-C", w.Vault().Root(), "commit", "-qam", "edit").CombinedOutput(); err != nil {
		t.Skipf("git: %v %s", err, out)
	}
	if _, err := w.Begin(context.Background()); err == nil || !strings.Contains(err.Error(), "prose wiki commit") {
		t.Fatalf("write after a git-committed edit: %v", err)
	}
	res, err := w.CommitHandEdits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt == nil {
		t.Fatal("no receipt for a git-committed edit")
	}
	if _, err := w.Begin(context.Background()); err != nil {
		t.Fatalf("after commit: %v", err)
	}
	fsckOK(t, w)
}

func TestMoveRewritesLinksAndIndexes(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "ml/attention", "note", nil)
	newPage(t, w, "ml/intro", "note", map[string]string{"body": `<p>See <a href="attention.html#x">attention</a>.</p>`})
	newPage(t, w, "other/far", "note", map[string]string{"body": `<p><a href="../ml/attention.html">a</a></p>`})
	before := receipts(t, w)
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, _, err := tx.Move("ml/attention", "core/attention")
		return err
	})
	if receipts(t, w)-before != 1 {
		t.Fatal("mv is not one receipt")
	}
	if got, _ := w.SlotOf("ml/intro", "body"); !strings.Contains(got, `href="../core/attention.html#x"`) {
		t.Errorf("intro link: %s", got)
	}
	if got, _ := w.SlotOf("other/far", "body"); !strings.Contains(got, `href="../core/attention.html"`) {
		t.Errorf("far link: %s", got)
	}
	_, oldIdx, _ := w.ReadFile("ml/README")
	_, newIdx, _ := w.ReadFile("core/README")
	if strings.Contains(string(oldIdx), "attention.html") || !strings.Contains(string(newIdx), "attention.html") {
		t.Error("folder indexes were not regenerated")
	}
	rep, _ := w.Lint(context.Background(), nil)
	if rep.Count(SevError) > 0 {
		t.Errorf("lint after mv: %+v", rep.Findings)
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

func TestRemoveReportsOrUnlinks(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "ml/attention", "note", nil)
	newPage(t, w, "ml/intro", "note", map[string]string{"body": `<p>See <a href="attention.html">attention</a>.</p>`})
	var broken []string
	mustUpdate(t, w, func(tx *Tx) error {
		var err error
		_, broken, err = tx.Remove("attention", false)
		return err
	})
	if len(broken) != 1 || broken[0] != "ml/intro.html" {
		t.Fatalf("broken: %v", broken)
	}
	newPage(t, w, "ml/attention", "note", nil)
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.Remove("attention", true)
		return err
	})
	if got, _ := w.SlotOf("ml/intro", "body"); got != "<p>See attention.</p>" {
		t.Fatalf("unlinked: %q", got)
	}
}

func TestFolderDescriptionPreserved(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "ml/a", "note", nil)
	mustUpdate(t, w, func(tx *Tx) error {
		_, err := tx.WriteSlot("ml/README", "description", "<p>Machine learning.</p>")
		return err
	})
	newPage(t, w, "ml/b", "note", nil)
	if got, _ := w.SlotOf("ml/README", "description"); got != "<p>Machine learning.</p>" {
		t.Fatalf("description: %q", got)
	}
	_, root, _ := w.ReadFile("README")
	if !strings.Contains(string(root), "Machine learning.") {
		t.Error("the root index does not carry the subfolder's note")
	}
	// The root has no folder above it; a subfolder's index links up.
	if strings.Contains(string(root), "Up to the folder") {
		t.Error("the root index links up to a folder above the wiki")
	}
	_, sub, _ := w.ReadFile("ml/README")
	if !strings.Contains(string(sub), `href="../README.html">Up to the folder`) {
		t.Error("a subfolder's index does not link up to its parent")
	}
}

func TestAmbiguousStem(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/x", "note", nil)
	newPage(t, w, "b/x", "note", nil)
	_, err := w.Resolve("x")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "a/x.html") || !strings.Contains(err.Error(), "b/x.html") {
		t.Fatalf("resolve x: %v", err)
	}
}

func TestRebuildCommitsWithoutReceipt(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/x", "note", map[string]string{"body": "<p>x</p>"})
	// A vault template override changes the shell.
	dir := filepath.Join(w.Vault().Root(), filepath.FromSlash(TemplateDir))
	os.MkdirAll(dir, 0o755)
	src, _ := builtin.ReadFile("templates/note.html")
	os.WriteFile(filepath.Join(dir, "note.html"), []byte(strings.Replace(string(src), `class="slot"`, `class="slot restyled"`, 1)), 0o644)
	exec.Command("git", "-C", w.Vault().Root(), "add", "-A").Run()
	exec.Command("git", "-C", w.Vault().Root(), "commit", "-qm", "template").Run()
	w2, err := Open(w.Vault())
	if err != nil {
		t.Fatal(err)
	}
	w2.Now = w.Now
	before := receipts(t, w2)
	res, err := w2.Rebuild(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit == "" || res.Receipt != nil || receipts(t, w2) != before {
		t.Fatalf("rebuild: %+v", res)
	}
	_, data, _ := w2.ReadFile("a/x")
	if !strings.Contains(string(data), "restyled") {
		t.Fatal("shell not re-rendered")
	}
	if got, _ := w2.SlotOf("a/x", "body"); got != "<p>x</p>" {
		t.Fatal("rebuild lost slot content")
	}
	if res, err := w2.Rebuild(context.Background(), nil); err != nil || res.Commit != "" {
		t.Fatalf("second rebuild committed: %+v %v", res, err)
	}
	gitStatusClean(t, w2)
	fsckOK(t, w2)
}

// TestWriteCostDoesNotGrowWithWiki checks that a write reads the same
// number of committed blobs in a small and a large wiki.
func TestWriteCostDoesNotGrowWithWiki(t *testing.T) {
	cost := func(folders int) int {
		w := newWiki(t)
		mustUpdate(t, w, func(tx *Tx) error {
			for f := range folders {
				for p := range 10 {
					if _, _, err := tx.New(fmt.Sprintf("f%03d/p%02d", f, p), NewOptions{}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		tx, err := w.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.WriteSlot("f000/p00", "body", "<p>changed</p>"); err != nil {
			t.Fatal(err)
		}
		out := &commitFiles{tx: tx, mem: map[string][]byte{}}
		if err := tx.files(out); err != nil {
			t.Fatal(err)
		}
		// Drop the sum cache: the first write after a clone computes it.
		os.RemoveAll(w.Vault().StatePath("cache"))
		if _, _, err := w.Vault().NodeFingerprints(Node, tx.st.tree); err != nil {
			t.Fatal(err)
		}
		wr, err := w.Vault().WriteNode(context.Background(), Node, out.mem, vault.WriteOptions{Base: tx.st.base})
		if err != nil {
			t.Fatal(err)
		}
		if wr.Receipt == nil {
			t.Fatal("no receipt")
		}
		return wr.BlobsRead
	}
	small, large := cost(2), cost(40)
	if small != large {
		t.Fatalf("a write read %d blobs in a 20-page wiki and %d in a 400-page one", small, large)
	}
}

func TestCancelledRebuildLeavesVaultAsBefore(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/x", "note", nil)
	head, _ := w.Head()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Rebuild(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("rebuild after cancel: %v", err)
	}
	if _, err := w.Lint(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("lint after cancel: %v", err)
	}
	if h, _ := w.Head(); h != head {
		t.Fatal("a cancelled rebuild committed")
	}
	gitStatusClean(t, w)
}

// TestShellAndUpdatedAreImmaterial: the view gives the same truth for a
// page whatever its shell and its updated date.
func TestShellAndUpdatedAreImmaterial(t *testing.T) {
	p := &Page{Meta: Meta{"title": "T", "template": "note", "updated": "2026-01-02"}, Slots: []Slot{{ID: "body", HTML: "<p>x</p>"}}}
	a := renderPage(t, "note", "a.html", p)
	p.Meta["updated"] = "2027-05-06"
	b := renderPage(t, "concept", "a.html", p)
	va, _, _ := pageView{}.Value("a.html", a)
	vb, _, _ := pageView{}.Value("a.html", b)
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("truth differs: %v vs %v", va, vb)
	}
	p.Slots[0].HTML = "<p>y</p>"
	vc, _, _ := pageView{}.Value("a.html", renderPage(t, "note", "a.html", p))
	if reflect.DeepEqual(va, vc) {
		t.Fatal("a slot change is immaterial")
	}
}

func TestGitDeletedPageTakenIn(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/keep", "note", nil)
	newPage(t, w, "a/gone", "note", nil)
	if out, err := exec.Command("git", "-C", w.Vault().Root(), "rm", "-q", "published/wiki/a/gone.html").CombinedOutput(); err != nil {
		t.Skipf("git: %v %s", err, out)
	}
	exec.Command("git", "-C", w.Vault().Root(), "commit", "-qm", "rm").Run()
	res, err := w.CommitHandEdits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt == nil {
		t.Fatal("no receipt for a page deleted with git")
	}
	_, idx, _ := w.ReadFile("a/README")
	if strings.Contains(string(idx), "gone.html") {
		t.Fatal("the folder index still lists the deleted page")
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

func TestFilesAddedByHandAreFound(t *testing.T) {
	for _, rel := range []string{"a/b/new.html", "a/fresh/deep/new.html", "top.html"} {
		w := newWiki(t)
		newPage(t, w, "a/b/page", "note", nil)
		full := filepath.Join(w.Root(), filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("<p>typed</p>"), 0o644)
		if _, err := w.Begin(context.Background()); err == nil || !strings.Contains(err.Error(), rel) {
			t.Errorf("%s added by hand: %v", rel, err)
		}
	}
}

// TestAddedByHandFoundAfterOtherIndexWrites: a file added by hand is found
// even after git rewrote the index (git status, git add of other files).
func TestAddedByHandFoundAfterOtherIndexWrites(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/b/page", "note", nil)
	full := filepath.Join(w.Root(), "a", "b", "new.html")
	os.WriteFile(full, []byte("<p>typed</p>"), 0o644)
	os.WriteFile(filepath.Join(w.Vault().Root(), "other.txt"), []byte("x"), 0o644)
	if out, err := exec.Command("git", "-C", w.Vault().Root(), "add", "other.txt").CombinedOutput(); err != nil {
		t.Skipf("git: %v %s", err, out)
	}
	exec.Command("git", "-C", w.Vault().Root(), "commit", "-qm", "other").Run()
	exec.Command("git", "-C", w.Vault().Root(), "status").Run()
	if _, err := w.Begin(context.Background()); err == nil || !strings.Contains(err.Error(), "a/b/new.html") {
		t.Fatalf("added by hand, then the index rewritten: %v", err)
	}
}

// TestConcurrentWritersQueue runs writers from separate vault handles (as
// separate processes would) at once: every write lands, one receipt each.
func TestConcurrentWritersQueue(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", nil)
	before := receipts(t, w)
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		go func() {
			v, err := vault.Open(w.Vault().Root(), vault.Options{})
			if err != nil {
				errs <- err
				return
			}
			defer v.Close()
			w2, err := Open(v)
			if err != nil {
				errs <- err
				return
			}
			_, err = w2.Update(context.Background(), func(tx *Tx) error {
				_, _, err := tx.New(fmt.Sprintf("a/p%d", i), NewOptions{})
				return err
			})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := receipts(t, w) - before; got != n {
		t.Fatalf("%d receipts for %d writes", got, n)
	}
	ps, _ := w.Find("a/")
	if len(ps) != n+2 {
		t.Fatalf("%d pages after concurrent writes", len(ps))
	}
	gitStatusClean(t, w)
	fsckOK(t, w)
}

// What the sanitizer removed from a page is named once, however many of
// its slots held it.
func TestRemovalsAreNamedOncePerPage(t *testing.T) {
	w := newWiki(t)
	var removed []string
	mustUpdate(t, w, func(tx *Tx) error {
		var err error
		_, removed, err = tx.New("a/new", NewOptions{Template: "concept", Slots: map[string]string{
			"summary": "<p>s</p><script>x()</script>", "body": "<p onclick=\"y()\">b</p><script>y()</script>"}})
		return err
	})
	if want := []string{"onclick event handler on <p>", "<script> element"}; !slices.Equal(removed, want) {
		t.Errorf("New removed %q, want %q", removed, want)
	}
	// What the report names is gone from what is stored, and the rest is
	// kept.
	storedSlots := func(page string, want map[string]string) {
		t.Helper()
		for id, h := range want {
			if got, err := w.SlotOf(page, id); err != nil || got != h {
				t.Errorf("%s slot %s stored %q (%v), want %q", page, id, got, err, h)
			}
		}
	}
	storedSlots("a/new", map[string]string{"summary": "<p>s</p>", "body": "<p>b</p>"})
	newPage(t, w, "a/page", "concept", map[string]string{"summary": "<p>s</p>", "body": "<p>b</p>"})
	file := filepath.Join(w.Root(), "a", "page.html")
	data, _ := os.ReadFile(file)
	edited := strings.Replace(string(data), "<p>s</p>", "<p>s</p><script>x()</script>", 1)
	edited = strings.Replace(edited, "<p>b</p>", "<p>b</p><script>y()</script>", 1)
	os.WriteFile(file, []byte(edited), 0o644)
	res, err := w.CommitHandEdits(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Removed["a/page.html"]; !slices.Equal(got, []string{"<script> element"}) {
		t.Errorf("hand edit removed %q, want one <script> element", got)
	}
	storedSlots("a/page", map[string]string{"summary": "<p>s</p>", "body": "<p>b</p>"})
	if data, _ := os.ReadFile(file); strings.Contains(string(data), "<script>x()") || strings.Contains(string(data), "y()") {
		t.Errorf("the page file still holds the removed script:\n%s", data)
	}
}

// TestOnlyDeclaredSlots: New and WriteSlot refuse a slot id the template
// does not declare, naming it and the template's slots; SetMeta refuses a
// template that does not declare a slot holding text, and allows one
// that declares every non-empty slot.
func TestOnlyDeclaredSlots(t *testing.T) {
	w := newWiki(t)
	_, err := w.Update(context.Background(), func(tx *Tx) error {
		if _, _, err := tx.New("ml/bad", NewOptions{Template: "concept", Slots: map[string]string{"sidebar": "<p>x</p>"}}); err == nil || !strings.Contains(err.Error(), `declares no slot "sidebar"`) {
			t.Errorf("New with an undeclared slot: %v", err)
		}
		if _, ok, _ := tx.Page("ml/bad.html"); ok {
			t.Error("the refused page exists")
		}
		if _, _, err := tx.New("ml/attention", NewOptions{Template: "concept", Slots: map[string]string{"summary": "<p>Weights.</p>"}}); err != nil {
			return err
		}
		if _, err := tx.WriteSlot("ml/attention", "sidebar", "<p>x</p>"); err == nil || !strings.Contains(err.Error(), `declares no slot "sidebar"`) {
			t.Errorf("WriteSlot of an undeclared slot: %v", err)
		}
		if _, err := tx.AppendSlot("ml/attention", "sidebar", "<p>x</p>"); err == nil || !strings.Contains(err.Error(), `declares no slot "sidebar"`) {
			t.Errorf("AppendSlot of an undeclared slot: %v", err)
		}
		if _, p, _ := tx.Read("ml/attention"); len(p.Slots) != 4 {
			t.Errorf("slots after the refused writes: %+v", p.Slots)
		}
		if _, err := tx.SetMeta("ml/attention", map[string]any{KeyTemplate: "note"}, nil); err == nil || !strings.Contains(err.Error(), `declares no slot "summary"`) {
			t.Errorf("concept page with a summary switched to note: %v", err)
		}
		if _, p, _ := tx.Read("ml/attention"); p.Meta.Template() != "concept" {
			t.Errorf("the refused template change stuck: %v", p.Meta)
		}
		// entity declares summary: the change is allowed.
		if _, err := tx.SetMeta("ml/attention", map[string]any{KeyTemplate: "entity"}, nil); err != nil {
			t.Errorf("a template declaring every non-empty slot: %v", err)
		}
		// A page holding an undeclared slot (a hand edit) keeps taking
		// meta that leaves its template as it is.
		_, p, _ := tx.Read("ml/attention")
		p.Slots = append(p.Slots, Slot{ID: "sidebar", HTML: "<p>by hand</p>"})
		tx.put("ml/attention.html", p, "")
		if _, err := tx.SetMeta("ml/attention", map[string]any{"owner": "ml", KeyTemplate: "entity"}, nil); err != nil {
			t.Errorf("meta of a page with an undeclared slot, template unchanged: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHandEditsInEveryFolderAreFound: the hand-edit check stats pages
// folder by folder (one open directory at a time); an edit of the same
// size, a page replaced by a link to the same bytes and a deleted page are
// each found, whichever folder they are in, and the untouched pages are not
// reported.
func TestHandEditsInEveryFolderAreFound(t *testing.T) {
	w := newWiki(t)
	for _, p := range []string{"a/p1", "b/p2", "b/p3", "b/c/p4", "d/p5"} {
		newPage(t, w, p, "note", map[string]string{"body": "<p>old</p>"})
	}
	root := w.Root()
	// b/p3: same length, other bytes.
	f3 := filepath.Join(root, "b", "p3.html")
	data, _ := os.ReadFile(f3)
	if err := os.WriteFile(f3, []byte(strings.Replace(string(data), "<p>old</p>", "<p>new</p>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// b/c/p4: a symbolic link to a copy of its own bytes.
	f4 := filepath.Join(root, "b", "c", "p4.html")
	data, _ = os.ReadFile(f4)
	cp := filepath.Join(t.TempDir(), "p4.html")
	os.WriteFile(cp, data, 0o644)
	os.Remove(f4)
	if err := os.Symlink(cp, f4); err != nil {
		t.Fatal(err)
	}
	// d/p5: deleted.
	os.Remove(filepath.Join(root, "d", "p5.html"))
	edits, err := w.Vault().NodeHandEdits(Node)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range edits {
		got[e.Path[strings.LastIndexByte(e.Path, '/')+1:]] = true
	}
	for _, want := range []string{"p3.html", "p4.html", "p5.html"} {
		if !got[want] {
			t.Errorf("%s edited by hand, not reported: %v", want, edits)
		}
	}
	for _, clean := range []string{"p1.html", "p2.html"} {
		if got[clean] {
			t.Errorf("%s untouched, reported: %v", clean, edits)
		}
	}
}
