package wiki

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/prose-store/prose/internal/testknob"
)

// spillPages are pages of every shape the spill form must keep: nil and
// empty meta, slots, lists and maps told apart, every value of the value
// model, text with NULs, line breaks and markers, and large values.
func spillPages() map[string]*Page {
	big := strings.Repeat("<p>long ∑ text\n</p>", 40_000) // 760 KB
	return map[string]*Page{
		"zero":        {},
		"empty":       {Meta: Meta{}, Slots: []Slot{}},
		"nil-slots":   {Meta: Meta{KeyTitle: "T"}},
		"empty-slot":  {Meta: Meta{KeyTitle: ""}, Slots: []Slot{{}}},
		"nul-newline": {Meta: Meta{"k\x00ey": "a\x00b\nc\r\n-->"}, Slots: []Slot{{ID: "a", HTML: "x\x00y\n\n<!-- /prose:slot id=\"a\" -->"}}},
		"values": {Meta: Meta{
			"nil": nil, "t": true, "f": false, "s": "", "zero": 0.0, "negzero": negZero(), "pi": 3.141592653589793, "huge": 1e308, "tiny": 5e-324,
			"nil-list": []any(nil), "empty-list": []any{}, "nil-map": map[string]any(nil), "empty-map": map[string]any{},
			"nested": []any{nil, "x", 1.5, []any{[]any(nil), map[string]any{"a": []any{}}}, map[string]any{"": nil, "m": map[string]any(nil)}},
		}},
		"large": {Meta: Meta{KeyTitle: big[:70_000], "list": manyValues(10_000)}, Slots: []Slot{{ID: "document", HTML: big}, {ID: "nav", HTML: ""}}},
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func manyValues(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = strings.Repeat("v", i%37)
	}
	return out
}

// TestSpillFormRoundTrip: every page decodes from its spill form equal to
// what was encoded, nil told from empty, and a damaged record is an
// error, never a page.
func TestSpillFormRoundTrip(t *testing.T) {
	for name, p := range spillPages() {
		b, err := appendPage(nil, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := decodePage(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("%s: read back %#v, wrote %#v", name, shorten(got), shorten(p))
		}
		if nz, ok := got.Meta["negzero"].(float64); ok && 1/nz > 0 {
			t.Errorf("%s: -0 read back as +0", name)
		}
		for cut := range min(len(b), 64) {
			if _, err := decodePage(b[:cut]); err == nil {
				t.Fatalf("%s: a record cut at %d bytes decoded", name, cut)
			}
		}
		if _, err := decodePage(append(b, 0)); err == nil {
			t.Errorf("%s: a record with a byte more decoded", name)
		}
	}
	if _, err := appendPage(nil, &Page{Meta: Meta{"n": 3}}); !errors.Is(err, errSpillValue) {
		t.Errorf("an int meta value: %v, want errSpillValue", err)
	}
}

func shorten(p *Page) string {
	s := fmt.Sprintf("%#v", *p)
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// TestTxReadsBackSpilledPages: a Tx that spills every page it writes reads
// each back as a Tx that holds them all does, commits the same tree, and
// keeps a page whose meta the spill form cannot hold in memory.
func TestTxReadsBackSpilledPages(t *testing.T) {
	write := func(tx *Tx) error {
		for name, p := range spillPages() {
			if name == "zero" || name == "empty" {
				continue
			}
			rel := "spill/" + name + ".html"
			meta := Meta{}
			for k, v := range p.Meta {
				if k != KeyTitle && checkMetaKey(k) == nil {
					meta[k] = v
				}
			}
			if _, _, err := tx.New(rel, NewOptions{Title: p.Meta.Title() + "x", Meta: meta}); err != nil {
				return err
			}
			if _, err := tx.WriteSlot(rel, "body", "<p>"+name+"</p>\n"+p.Meta.Title()); err != nil {
				return err
			}
			if _, err := tx.SetMeta(rel, map[string]any{"note": name + "\nline"}, nil); err != nil {
				return err
			}
		}
		// Written again after the spill: read back, changed, held again.
		if _, err := tx.AppendSlot("spill/values.html", "body", "<p>more</p>"); err != nil {
			return err
		}
		return nil
	}
	read := func(spill bool) (map[string]*Page, string) {
		t.Helper()
		if spill {
			defer testknob.SetSpillBytes(1)()
		}
		w := newWiki(t)
		before := spilledPages.Load()
		got := map[string]*Page{}
		res, err := w.Update(context.Background(), func(tx *Tx) error {
			if err := write(tx); err != nil {
				return err
			}
			all, err := tx.List()
			if err != nil {
				return err
			}
			for _, rel := range all {
				p, ok, err := tx.Page(rel)
				if err != nil || !ok {
					t.Fatalf("%s: %v %v", rel, ok, err)
				}
				got[rel] = p.Clone()
			}
			if spill {
				if _, in := tx.spilled["spill/large.html"]; !in {
					t.Error("the large page was not spilled")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := spilledPages.Load() - before; spill != (n > 0) {
			t.Fatalf("spill %v: %d pages spilled", spill, n)
		}
		_, tree, err := w.Vault().NodeHead(Node)
		if err != nil {
			t.Fatal(err)
		}
		if res.Commit == "" {
			t.Fatal("nothing committed")
		}
		return got, tree.String()
	}
	held, heldTree := read(false)
	spilled, spilledTree := read(true)
	if len(held) != 5 {
		t.Fatalf("read %d pages", len(held))
	}
	if !reflect.DeepEqual(held, spilled) {
		for rel := range held {
			if !reflect.DeepEqual(held[rel], spilled[rel]) {
				t.Errorf("%s: spilled %s, held %s", rel, shorten(spilled[rel]), shorten(held[rel]))
			}
		}
	}
	if heldTree != spilledTree {
		t.Errorf("spilling changed the committed tree: %s, held %s", spilledTree, heldTree)
	}

	defer testknob.SetSpillBytes(1)()
	tx, err := newWiki(t).Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Discard()
	tx.hold("int.html", &Page{Meta: Meta{KeyTitle: "Int", "n": 3}})
	tx.hold("text.html", &Page{Meta: Meta{KeyTitle: "Text"}})
	if _, in := tx.pages["int.html"]; !in {
		t.Error("a page with an int meta value left memory")
	}
	if _, in := tx.spilled["text.html"]; !in {
		t.Error("a page written after one the spill form cannot hold was not spilled")
	}
}

// FuzzDecodePage: any bytes decode to a page that encodes back to them, or
// to an error.
func FuzzDecodePage(f *testing.F) {
	for _, p := range spillPages() {
		if b, err := appendPage(nil, p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePage(b)
		if err != nil {
			return
		}
		again, err := appendPage(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := decodePage(again)
		if err != nil || !reflect.DeepEqual(p.Slots, q.Slots) || !sameValue(map[string]any(p.Meta), map[string]any(q.Meta)) {
			t.Fatalf("re-encoded page reads back %v, %v", q, err)
		}
	})
}

// sameValue is reflect.DeepEqual with a float compared by its bits (a NaN
// read back is the NaN written).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
