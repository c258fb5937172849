package wiki

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// searchFixture is a small wiki with distinctive words.
var searchFixture = []struct{ path, title, body string }{
	{"ml/transformers", "Transformers", "<p>Transformer models stack self-attention layers and feed-forward blocks.</p>"},
	{"ml/attention", "Attention", "<p>Attention weighs tokens; scaled dot-product attention divides by the square root of the dimension.</p>"},
	{"ml/rnn", "Recurrent networks", "<p>Recurrent networks carry a hidden state across time steps; LSTM gates help gradients.</p>"},
	{"cooking/bread", "Sourdough bread", "<p>Sourdough needs a starter, flour, water and salt; bake in a hot Dutch oven.</p>"},
	{"cooking/pasta", "Fresh pasta", "<p>Fresh pasta is flour and eggs, kneaded and rolled thin.</p>"},
	{"history/rome", "Roman roads", "<p>Roman roads linked the empire; the Via Appia ran to Brindisi.</p>"},
}

func searchWiki(t *testing.T) *Wiki {
	w := newWiki(t)
	mustUpdate(t, w, func(tx *Tx) error {
		for _, p := range searchFixture {
			if _, _, err := tx.New(p.path, NewOptions{Title: p.title, Tags: []string{"fixture"}, Slots: map[string]string{"body": p.body}}); err != nil {
				return err
			}
		}
		return nil
	})
	return w
}

func topHit(t *testing.T, w *Wiki, q string) string {
	t.Helper()
	hits, err := w.Search(context.Background(), q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Path
}

func hitPaths(t *testing.T, w *Wiki, q string) map[string]bool {
	t.Helper()
	hits, err := w.Search(context.Background(), q, 50)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, h := range hits {
		out[h.Path] = true
	}
	return out
}

func TestSearchFixtureQueries(t *testing.T) {
	w := searchWiki(t)
	cases := map[string]string{
		"attention":          "ml/attention.html",
		"sourdough starter":  "cooking/bread.html",
		"eggs kneaded":       "cooking/pasta.html",
		"Via Appia Brindisi": "history/rome.html",
		"hidden state LSTM":  "ml/rnn.html",
		"transformer":        "ml/transformers.html",
		"roads":              "history/rome.html",
	}
	for q, want := range cases {
		if got := topHit(t, w, q); got != want {
			t.Errorf("search %q: top hit %q, want %q", q, got, want)
		}
	}
	hits, _ := w.Search(context.Background(), "sourdough", 1)
	if len(hits) != 1 || hits[0].Snippet == "" || !strings.Contains(hits[0].Snippet, "<mark>") {
		t.Errorf("snippet without a marked hit: %+v", hits)
	}
}

func TestSearchDropsDeletedAndMovedPages(t *testing.T) {
	w := searchWiki(t)
	if !hitPaths(t, w, "sourdough")["cooking/bread.html"] {
		t.Fatal("bread not found before delete")
	}
	mustUpdate(t, w, func(tx *Tx) error { _, _, err := tx.Remove("cooking/bread", false); return err })
	if hitPaths(t, w, "sourdough")["cooking/bread.html"] {
		t.Error("a deleted page came back from search")
	}
	mustUpdate(t, w, func(tx *Tx) error { _, _, _, err := tx.Move("history/rome", "travel/rome"); return err })
	got := hitPaths(t, w, "Appia")
	if got["history/rome.html"] || !got["travel/rome.html"] {
		t.Errorf("after mv: %v", got)
	}
}

func TestSearchIndexStaleOrCorruptIsRebuilt(t *testing.T) {
	w := searchWiki(t)
	topHit(t, w, "pasta")
	dir, state := w.searchPaths()
	saved := t.TempDir()
	if out, err := exec.Command("cp", "-a", dir, state, saved).CombinedOutput(); err != nil {
		t.Skipf("cp: %v %s", err, out)
	}
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.New("cooking/risotto", NewOptions{Slots: map[string]string{"body": "<p>Arborio rice stirred with broth.</p>"}})
		return err
	})
	// An index from before the write (as after a pull of another clone's
	// commits) catches up on the next search.
	os.RemoveAll(dir)
	exec.Command("cp", "-a", filepath.Join(saved, filepath.Base(dir)), dir).Run()
	exec.Command("cp", "-a", filepath.Join(saved, filepath.Base(state)), state).Run()
	if got := topHit(t, w, "arborio"); got != "cooking/risotto.html" {
		t.Errorf("stale index: top hit %q", got)
	}
	// A damaged index is rebuilt.
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			os.WriteFile(p, []byte("garbage"), 0o644)
		}
		return nil
	})
	if got := topHit(t, w, "arborio"); got != "cooking/risotto.html" {
		t.Errorf("corrupt index: top hit %q", got)
	}
	os.RemoveAll(dir)
	if got := topHit(t, w, "pasta"); got != "cooking/pasta.html" {
		t.Errorf("missing index: top hit %q", got)
	}
}

// A title or text written decomposed (NFD, as some systems write é) is
// found by a query typed composed (NFC), and the reverse, by search and
// by find.
func TestSearchAndFindNormalizeUnicode(t *testing.T) {
	w := newWiki(t)
	nfd, nfc := "Cafe\u0301 Cre\u0300me", "Café Crème"
	mustUpdate(t, w, func(tx *Tx) error {
		if _, _, err := tx.New("food/coffee", NewOptions{Title: nfd, Slots: map[string]string{"body": "<p>The cafe\u0301 serves a cre\u0300me.</p>"}}); err != nil {
			return err
		}
		_, _, err := tx.New("food/tea", NewOptions{Title: "Tea", Slots: map[string]string{"body": "<p>A crème brûlée.</p>"}})
		return err
	})
	for q, want := range map[string]string{nfc: "food/coffee.html", "brûlée": "food/tea.html", "bru\u0302le\u0301e": "food/tea.html"} {
		if got := topHit(t, w, q); got != want {
			t.Errorf("search %q: top hit %q, want %q", q, got, want)
		}
	}
	for _, q := range []string{"café", "cafe\u0301"} {
		found, err := w.Find(q)
		if err != nil || len(found) != 1 || found[0].Path != "food/coffee.html" {
			t.Errorf("find %q: %+v %v", q, found, err)
		}
	}
}

// TestSearchIndexesALargeWriteInBatches: a write of more pages than one
// search batch holds indexes every page (the first batch's, the last's),
// and a search counts each page once.
func TestSearchIndexesALargeWriteInBatches(t *testing.T) {
	w := newWiki(t)
	n := 2*searchBatch + 7
	mustUpdate(t, w, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			body := "<p>Common words on every page.</p>"
			if i == 0 || i == n-1 {
				body = "<p>The marker word zanzibarite is on the first and the last page.</p>"
			}
			if _, _, err := tx.New(fmt.Sprintf("f%d/p%04d", i%40, i), NewOptions{Title: fmt.Sprintf("Page %d", i), Slots: map[string]string{"body": body}}); err != nil {
				return err
			}
		}
		return nil
	})
	got := hitPaths(t, w, "zanzibarite")
	if len(got) != 2 || !got["f0/p0000.html"] || !got[fmt.Sprintf("f%d/p%04d.html", (n-1)%40, n-1)] {
		t.Fatalf("zanzibarite finds %v, want the first and the last page", got)
	}
	hits, err := w.Search(context.Background(), "common", n+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != n-2 {
		t.Fatalf("common finds %d pages, want %d", len(hits), n-2)
	}
}
