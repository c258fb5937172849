package wiki

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"sort"
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
	idx := w.searchPath()
	saved, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, w, func(tx *Tx) error {
		_, _, err := tx.New("cooking/risotto", NewOptions{Slots: map[string]string{"body": "<p>Arborio rice stirred with broth.</p>"}})
		return err
	})
	// An index from before the write (as after a pull of another clone's
	// commits) catches up on the next search.
	if err := os.WriteFile(idx, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := topHit(t, w, "arborio"); got != "cooking/risotto.html" {
		t.Errorf("stale index: top hit %q", got)
	}
	// A damaged index is rebuilt.
	os.WriteFile(idx, []byte("garbage"), 0o644)
	if got := topHit(t, w, "arborio"); got != "cooking/risotto.html" {
		t.Errorf("corrupt index: top hit %q", got)
	}
	os.Remove(idx)
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

// Search reads the full text of every slot and keeps identifiers whole:
// `ffi_call` returns every page that says it — in any slot, however deep
// in the text — and no page that only says "ffi" and "call" apart; with
// no limit it returns them all. fs.realpath, dpkg-source, std::move and
// C++ are found the same way, while an identifier's parts still match as
// words and a sentence's last word is found without its full stop.
func TestSearchFindsIdentifiersInTheFullText(t *testing.T) {
	w := newWiki(t)
	long := strings.Repeat("<p>Filler words about closures and types. </p>", 3000) // ≈ 130 KB before the identifier
	says := map[string]bool{}
	mustUpdate(t, w, func(tx *Tx) error {
		for i := range 25 {
			path := fmt.Sprintf("libffi/call-%02d", i)
			slots := map[string]string{"body": "<p>Calling conventions.</p>"}
			switch i % 3 {
			case 0:
				slots["body"] = "<p>Use <code>ffi_call</code> to call the function.</p>"
			case 1:
				slots["summary"] = "<p>See ffi_call.</p>"
			case 2:
				slots["body"] = long + "<p>At last: ffi_call(cif, fn, rvalue, avalue).</p>"
			}
			if _, _, err := tx.New(path, NewOptions{Template: "concept", Slots: slots}); err != nil {
				return err
			}
			says[path+".html"] = true
		}
		for path, body := range map[string]string{
			"libffi/apart":  "<p>The ffi library has a call that prepares a cif.</p>",
			"node/fs":       "<p>fs.realpath resolves symbolic links; see also fs.stat.</p>",
			"debian/source": "<p>Run dpkg-source to unpack; dpkg alone installs.</p>",
			"lang/cpp":      "<p>C++ templates and std::move differ from C.</p>",
			"lang/c":        "<p>C is small. Unpack the tarball and build the realpath.</p>",
		} {
			if _, _, err := tx.New(path, NewOptions{Slots: map[string]string{"body": body}}); err != nil {
				return err
			}
		}
		return nil
	})
	hits, err := w.Search(context.Background(), "ffi_call", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, h := range hits {
		got[h.Path] = true
		if !strings.Contains(h.Snippet, "<mark>ffi_call</mark>") {
			t.Errorf("%s: snippet %q does not mark ffi_call", h.Path, h.Snippet)
		}
	}
	if len(hits) != len(says) || !reflect.DeepEqual(got, says) {
		t.Errorf("ffi_call with no limit: %d hits %v, want the %d pages that say it", len(hits), got, len(says))
	}
	if hits, _ := w.Search(context.Background(), "ffi_call", 10); len(hits) != 10 {
		t.Errorf("limit 10: %d hits", len(hits))
	}
	for q, want := range map[string][]string{
		"fs.realpath": {"node/fs.html"},
		"dpkg-source": {"debian/source.html"},
		"std::move":   {"lang/cpp.html"},
		"C++":         {"lang/cpp.html"},
		"realpath":    {"lang/c.html", "node/fs.html"},
		"unpack":      {"debian/source.html", "lang/c.html"},
		"dpkg":        {"debian/source.html"},
		"tarball":     {"lang/c.html"},
	} {
		hits, err := w.Search(context.Background(), q, 0)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		sort.Strings(paths)
		if !reflect.DeepEqual(paths, want) {
			t.Errorf("search %q: %v, want %v", q, paths, want)
		}
	}
}

// TestSearchFindsAQualifiedNameItsPageWritesApart: an identifier no page
// writes whole ("BuildEnvironment.srcdir": the page heads the class and
// lists its member alone) finds the pages that hold every one of its
// words, and only those; one a page writes whole finds that page alone.
func TestSearchFindsAQualifiedNameItsPageWritesApart(t *testing.T) {
	w := newWiki(t)
	mustUpdate(t, w, func(tx *Tx) error {
		for path, body := range map[string]string{
			"api/env":     "<h2>class BuildEnvironment</h2><p>Attributes</p><dl><dt>srcdir</dt><dd>Source directory.</dd></dl>",
			"api/project": "<p>The project keeps a srcdir of its own.</p>",
			"api/other":   "<p>A BuildEnvironment is made per build.</p>",
			"api/whole":   "<p>Read config.srcdir first.</p>",
		} {
			if _, _, err := tx.New(path, NewOptions{Slots: map[string]string{"body": body}}); err != nil {
				return err
			}
		}
		return nil
	})
	for q, want := range map[string][]string{
		"BuildEnvironment.srcdir": {"api/env.html"},
		"config.srcdir":           {"api/whole.html"},
		"Nosuch.srcdir":           nil,
	} {
		hits, err := w.Search(context.Background(), q, 0)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		if !reflect.DeepEqual(paths, want) {
			t.Errorf("search %q: %v, want %v", q, paths, want)
		}
	}
}

// Any damage to the index file — a flipped byte anywhere, a cut end —
// is noticed and the index rebuilt, with the same results.
func TestSearchIndexDamageAnywhereIsRebuilt(t *testing.T) {
	w := searchWiki(t)
	want := topHit(t, w, "sourdough")
	idx := w.searchPath()
	good, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, len(searchVersion) + 3, len(good) / 2, len(good) - 1} {
		bad := append([]byte(nil), good...)
		bad[at] ^= 0x40
		os.WriteFile(idx, bad, 0o644)
		if got := topHit(t, w, "sourdough"); got != want {
			t.Errorf("byte %d flipped: top hit %q, want %q", at, got, want)
		}
	}
	os.WriteFile(idx, good[:len(good)-7], 0o644)
	if got := topHit(t, w, "sourdough"); got != want {
		t.Errorf("cut index: top hit %q, want %q", got, want)
	}
	if now, _ := os.ReadFile(idx); !bytes.Equal(now, good) {
		t.Error("the rebuilt index differs from the one built before")
	}
}

// The index of the earlier format (a bleve directory and its state
// file) is removed when the new one is written.
func TestSearchRemovesTheEarlierIndex(t *testing.T) {
	w := searchWiki(t)
	dir := filepath.Dir(w.searchPath())
	os.MkdirAll(filepath.Join(dir, "wiki.bleve", "store"), 0o755)
	os.WriteFile(filepath.Join(dir, "wiki.bleve", "store", "root.bolt"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(dir, "wiki.state"), []byte("wiki-search-v2\n"), 0o644)
	if got := topHit(t, w, "pasta"); got != "cooking/pasta.html" {
		t.Fatalf("top hit %q", got)
	}
	for _, old := range []string{"wiki.bleve", "wiki.state"} {
		if _, err := os.Lstat(filepath.Join(dir, old)); err == nil {
			t.Errorf("%s is still there", old)
		}
	}
}

// An index whose bytes were changed but whose checksum still matches (a
// writer's bug) is read without a panic and without reading past its
// end: every record and posting is bounds-checked.
func TestSearchIndexReaderIsBoundsChecked(t *testing.T) {
	w := searchWiki(t)
	topHit(t, w, "pasta")
	good, err := os.ReadFile(w.searchPath())
	if err != nil {
		t.Fatal(err)
	}
	for at := len(searchVersion); at < len(good)-4; at++ {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte(nil), good[:len(good)-4]...)
			bad[at] ^= x
			bad = binary.LittleEndian.AppendUint32(bad, crc32.Checksum(bad, castagnoli()))
			d, err := parseIndex(bad)
			if err != nil {
				continue
			}
			for _, term := range []string{"pasta", "flour", "sourdough", "fixtur", "zzz"} {
				d.postings(term)
			}
			for i := range min(d.ndocs, 64) {
				d.doc(i)
			}
			d.decode(context.Background())
		}
	}
}
