package mergefile

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prose-store/prose/wiki"
)

const pagePath = "published/wiki/ml/attention.html"

// page writes a page file as the renderer lays one out: shell around a
// meta block and slot markers. meta is YAML lines.
func page(meta string, slots ...string) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><title>t</title></head>\n<body>\n<!-- prose:meta\n")
	b.WriteString(meta)
	b.WriteString("-->\n<nav>Wiki</nav>\n")
	for i := 0; i+1 < len(slots); i += 2 {
		fmt.Fprintf(&b, "<section id=\"slot-%s\"><!-- prose:slot id=\"%s\" -->%s<!-- /prose:slot id=\"%s\" --></section>\n", slots[i], slots[i], slots[i+1], slots[i])
	}
	b.WriteString("<aside class=\"backlinks\"></aside>\n</body>\n</html>\n")
	return []byte(b.String())
}

func gen(pairs ...string) string {
	var b strings.Builder
	b.WriteString("generated:\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, "  %s: %q\n", pairs[i], wiki.SlotToken(pairs[i+1]))
	}
	return b.String()
}

func parsed(t *testing.T, b []byte) *wiki.Page {
	t.Helper()
	p, err := wiki.Parse(b)
	if err != nil {
		t.Fatalf("merged page does not parse: %v\n%s", err, b)
	}
	return p
}

func slotOf(t *testing.T, b []byte, id string) string {
	t.Helper()
	s, _ := parsed(t, b).Slot(id)
	return s
}

func TestMergePageSlots(t *testing.T) {
	// summary: prose rewrote it here; body: prose rewrote it there;
	// examples: a person edited it there (the record keeps the old token).
	base := page("template: concept\ntitle: Attention\n"+gen("summary", "<p>S</p>", "body", "<p>B</p>", "examples", "<p>E</p>"), "summary", "<p>S</p>", "body", "<p>B</p>", "examples", "<p>E</p>")
	ours := page("template: concept\ntitle: Attention\n"+gen("summary", "<p>S2</p>", "body", "<p>B</p>", "examples", "<p>E</p>"), "summary", "<p>S2</p>", "body", "<p>B</p>", "examples", "<p>E</p>")
	theirs := page("template: concept\ntitle: Attention\n"+gen("summary", "<p>S</p>", "body", "<p>B2</p>", "examples", "<p>E</p>"), "summary", "<p>S</p>", "body", "<p>B2</p>", "examples", "<p>E by hand</p>")
	r, err := Merge(pagePath, base, ours, theirs)
	if err != nil || !r.Handled || len(r.Conflicts) != 0 {
		t.Fatalf("Merge = %+v, %v; want a clean merge", r, err)
	}
	for id, want := range map[string]string{"summary": "<p>S2</p>", "body": "<p>B2</p>", "examples": "<p>E by hand</p>"} {
		if got := slotOf(t, r.Merged, id); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	g := parsed(t, r.Merged).Meta[wiki.KeyGenerated].(map[string]any)
	if g["summary"] != wiki.SlotToken("<p>S2</p>") || g["body"] != wiki.SlotToken("<p>B2</p>") {
		t.Errorf("generated = %v, want each slot's record from the side it was taken from", g)
	}
	// The merged examples slot is still a person's: its record does not
	// match its text.
	if g["examples"] == wiki.SlotToken("<p>E by hand</p>") {
		t.Errorf("generated.examples names the hand edit as prose's")
	}
	if !bytes.Contains(r.Merged, []byte("<nav>Wiki</nav>")) {
		t.Errorf("the shell was not kept:\n%s", r.Merged)
	}
}

func TestMergePageSameSlotConflicts(t *testing.T) {
	base := page("title: A\n", "summary", "<p>S</p>")
	ours := page("title: A\n", "summary", "<p>ours</p>")
	theirs := page("title: A\n", "summary", "<p>theirs</p>")
	r, err := Merge(pagePath, base, ours, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Slot != "summary" || r.Conflicts[0].Kind != "slot" || r.Conflicts[0].Path != pagePath {
		t.Fatalf("conflicts = %+v, want one on slot summary", r.Conflicts)
	}
	for side, want := range map[string]string{Ours: "<p>ours</p>", Theirs: "<p>theirs</p>"} {
		r, err := MergeChoosing(pagePath, base, ours, theirs, func(c Conflict) string {
			if c.ID() == "slot:summary" {
				return side
			}
			return ""
		})
		if err != nil || len(r.Conflicts) != 0 {
			t.Fatalf("%s: %+v %v", side, r.Conflicts, err)
		}
		if got := slotOf(t, r.Merged, "summary"); got != want {
			t.Errorf("--%s: summary = %q, want %q", side, got, want)
		}
	}
}

func TestMergePageMeta(t *testing.T) {
	base := page("created: \"2026-01-02\"\nsources:\n  - a\n  - b\ntags:\n  - x\ntitle: A\nupdated: \"2026-01-02\"\n", "summary", "<p>S</p>")
	ours := page("created: \"2026-01-02\"\nsources:\n  - a\n  - c\ntags:\n  - x\ntitle: A\nupdated: \"2026-03-01\"\n", "summary", "<p>S</p>")
	theirs := page("created: \"2026-01-01\"\nsources:\n  - a\n  - b\n  - d\ntags:\n  - y\ntitle: A\nupdated: \"2026-02-01\"\n", "summary", "<p>S</p>")
	r, err := Merge(pagePath, base, ours, theirs)
	if err != nil || len(r.Conflicts) != 0 {
		t.Fatalf("Merge = %+v %v", r.Conflicts, err)
	}
	m := parsed(t, r.Merged).Meta
	if got := m.Strings("sources"); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("sources = %v, want a, c, d (b removed here, c and d added)", got)
	}
	if m.String("created") != "2026-01-01" || m.String("updated") != "2026-03-01" {
		t.Errorf("created %q updated %q, want the earlier and the later", m.String("created"), m.String("updated"))
	}
	if got := m.Tags(); !slices.Equal(got, []string{"y"}) {
		t.Errorf("tags = %v, want theirs' change", got)
	}
	// The same person-set key changed differently is a conflict.
	ours2 := page("tags:\n  - z\ntitle: A\n", "summary", "<p>S</p>")
	r, _ = Merge(pagePath, base, ours2, theirs)
	var keys []string
	for _, c := range r.Conflicts {
		keys = append(keys, c.Key)
	}
	if !slices.Equal(keys, []string{"tags"}) {
		t.Errorf("conflicts on keys %v, want tags only (dates and sources merge by rule)", keys)
	}
}

func TestMergePageSourceMark(t *testing.T) {
	base := page("source_mark: m0\ntitle: A\n", "summary", "<p>S</p>")
	ours := page("source_mark: m1\ntitle: A\n", "summary", "<p>S</p>")
	theirs := page("source_mark: m2\ntitle: A\n", "summary", "<p>S</p>")
	r, err := Merge(pagePath, base, ours, theirs)
	if err != nil || len(r.Conflicts) != 0 {
		t.Fatalf("%+v %v", r.Conflicts, err)
	}
	if _, ok := parsed(t, r.Merged).Meta["source_mark"]; ok {
		t.Errorf("a source_mark both sides moved differently stays")
	}
}

func TestMergeWholeFiles(t *testing.T) {
	a := page("title: A\n", "summary", "<p>A</p>")
	b := page("title: A\n", "summary", "<p>B</p>")
	c := page("title: A\n", "summary", "<p>C</p>")
	cases := []struct {
		name               string
		base, ours, theirs []byte
		removed            bool
		want               []byte
		conflict           string
	}{
		{"only theirs added", nil, nil, a, false, a, ""},
		{"only ours added", nil, a, nil, false, a, ""},
		{"removed here, unchanged there", a, nil, a, true, nil, ""},
		{"removed there, unchanged here", a, a, nil, true, nil, ""},
		{"removed on both", a, nil, nil, true, nil, ""},
		{"removed here, changed there", a, nil, b, true, nil, "removed"}, // ours' side of the conflict
		{"changed here, removed there", a, b, nil, false, b, "removed"},
		{"added on both, the same", nil, b, b, false, b, ""},
		{"added on both, different", nil, b, c, false, b, "slot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Merge(pagePath, tc.base, tc.ours, tc.theirs)
			if err != nil || !r.Handled {
				t.Fatalf("%+v %v", r, err)
			}
			var kinds []string
			for _, c := range r.Conflicts {
				kinds = append(kinds, c.Kind)
			}
			if strings.Join(kinds, ",") != tc.conflict {
				t.Errorf("conflicts %v, want %q", kinds, tc.conflict)
			}
			if r.Removed != tc.removed {
				t.Errorf("removed = %v, want %v", r.Removed, tc.removed)
			}
			if tc.conflict == "" && !tc.removed && !bytes.Equal(r.Merged, tc.want) {
				t.Errorf("merged\n%s\nwant\n%s", r.Merged, tc.want)
			}
		})
	}
}

func TestMergeUnknownPaths(t *testing.T) {
	for _, p := range []string{"src/x.go", "prose.yaml", "published/notes/a.html", "published/wiki/style.css", "sources/pages/x/y.tsv"} {
		r, err := Merge(p, []byte("a"), []byte("b"), []byte("c"))
		if err != nil || r.Handled {
			t.Errorf("%s: handled %v (%v), want not handled", p, r.Handled, err)
		}
	}
	// An HTML file under the wiki prose does not own.
	r, _ := Merge(pagePath, []byte("<p>a</p>"), []byte("<p>b</p>"), []byte("<p>c</p>"))
	if r.Handled {
		t.Errorf("a file without a meta block was handled")
	}
}

func TestMergeReviewQueue(t *testing.T) {
	q := func(items ...string) []byte { return []byte(`{"items":[` + strings.Join(items, ",") + "]}\n") }
	a := `{"id":"ra","detail":"A","added":"2026-01-01"}`
	aDone := `{"id":"ra","detail":"A","added":"2026-01-01","resolved":"2026-01-05"}`
	aEdit := `{"id":"ra","detail":"A","added":"2026-01-01","proposed":"<p>x</p>"}`
	b := `{"id":"rb","detail":"B","added":"2026-01-02"}`
	c := `{"id":"rc","detail":"C","added":"2026-01-03"}`
	r, err := Merge(ReviewFile, q(a), q(aEdit, b), q(aDone, c))
	if err != nil || len(r.Conflicts) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	got := string(r.Merged)
	for _, want := range []string{`"id": "rb"`, `"id": "rc"`, `"resolved": "2026-01-05"`} {
		if !strings.Contains(got, want) {
			t.Errorf("merged queue lacks %s:\n%s", want, got)
		}
	}
	if strings.Count(got, `"id": "ra"`) != 1 {
		t.Errorf("item ra not once:\n%s", got)
	}
	// Symmetric: the other way round gives the same items.
	r2, _ := Merge(ReviewFile, q(a), q(aDone, c), q(aEdit, b))
	if ids(t, r2.Merged) != ids(t, r.Merged) {
		t.Errorf("the merge depends on the side:\n%s\n%s", r.Merged, r2.Merged)
	}
}

func ids(t *testing.T, queue []byte) string {
	items, _, err := readQueue(queue)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range items.keys {
		out = append(out, k+"="+string(items.recs[k]))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func TestMergeCatalog(t *testing.T) {
	cat := func(srcs string) []byte {
		return []byte("{\n  \"version\": 2,\n  \"sources\": {" + srcs + "}\n}\n")
	}
	s1 := `"s1": {"name": "a.md", "memo": "m1"}`
	s1b := `"s1": {"name": "b.md", "memo": "m1"}`
	s1c := `"s1": {"name": "c.md", "memo": "m1"}`
	s2 := `"s2": {"name": "two.md", "memo": "m2"}`
	s3 := `"s3": {"name": "three.md", "memo": "m3"}`
	r, err := Merge(CatalogFile, cat(s1), cat(s1c+","+s2), cat(s1b+","+s3))
	if err != nil || len(r.Conflicts) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	got := string(r.Merged)
	for _, want := range []string{`"s2"`, `"s3"`, `"name": "b.md"`, `"version": 2`} {
		if !strings.Contains(got, want) {
			t.Errorf("merged catalog lacks %s:\n%s", want, got)
		}
	}
	r2, _ := Merge(CatalogFile, cat(s1), cat(s1b+","+s3), cat(s1c+","+s2))
	if !bytes.Equal(r.Merged, r2.Merged) {
		t.Errorf("the catalog merge depends on the side:\n%s\n%s", r.Merged, r2.Merged)
	}
}

func TestMergePageTable(t *testing.T) {
	const h = "# path\ttitle\ttemplate\tsources\torigin\n"
	base := h + "ml/a.html\tA\tconcept\ts1\t\n"
	ours := h + "ml/a.html\tA\tconcept\ts1,s2\t\nml/b.html\tB\tnote\ts2\t\n"
	theirs := h + "ml/a.html\tA\tconcept\ts1,s3\t\nml/c.html\tC\tnote\ts3\t\n"
	r, err := Merge("sources/pages/ml.tsv", []byte(base), []byte(ours), []byte(theirs))
	if err != nil {
		t.Fatal(err)
	}
	want := h + "ml/a.html\tA\tconcept\ts1,s2,s3\t\nml/b.html\tB\tnote\ts2\t\nml/c.html\tC\tnote\ts3\t\n"
	if string(r.Merged) != want {
		t.Errorf("merged\n%q\nwant\n%q", r.Merged, want)
	}
}

// FuzzMergePage: a merge never panics; merge(base, x, x) = x and
// merge(base, base, x) = x byte for byte; and a clean merge of pages is
// a page whose slots each come from one of the sides.
func FuzzMergePage(f *testing.F) {
	f.Add("<p>S</p>", "<p>S2</p>", "<p>S3</p>", "A", "B", []byte("<p>x</p>"))
	f.Add("", "<p>a</p>", "", "t", "t", []byte("<!-- prose:meta\ntitle: x\n-->"))
	f.Add("<b>x", "", "y", "", "-->", []byte(`<!-- prose:slot id="summary" -->`))
	f.Fuzz(func(t *testing.T, s0, s1, s2, t1, t2 string, raw []byte) {
		mk := func(title, summary, body string) []byte {
			return page(fmt.Sprintf("title: %q\n", title), "summary", summary, "body", body)
		}
		base := mk("T", s0, "<p>b</p>")
		x := mk(t1, s1, "<p>b</p>")
		y := mk(t2, s0, s2)
		for _, files := range [][3][]byte{{base, x, y}, {raw, x, y}, {base, raw, y}, {base, x, raw}, {raw, raw, x}, {nil, raw, x}} {
			r, err := Merge(pagePath, files[0], files[1], files[2])
			if err != nil {
				continue // an error is a refusal, never a panic
			}
			if len(r.Conflicts) == 0 && r.Merged != nil {
				if _, err := wiki.Parse(r.Merged); err != nil && isPage(files[1]) && isPage(files[2]) {
					t.Fatalf("a clean merge of two pages is no page: %v", err)
				}
			}
		}
		for _, b := range [][]byte{base, raw, nil} {
			for _, v := range [][]byte{x, y, raw} {
				r, err := Merge(pagePath, b, v, v)
				if err != nil {
					t.Fatalf("merge(b, x, x): %v", err)
				}
				if r.Handled && (!bytes.Equal(r.Merged, v) || len(r.Conflicts) > 0) {
					t.Fatalf("merge(b, x, x) != x")
				}
				r, err = Merge(pagePath, b, b, v)
				if err != nil {
					t.Fatalf("merge(b, b, x): %v", err)
				}
				if r.Handled && (!bytes.Equal(r.Merged, v) || len(r.Conflicts) > 0) {
					t.Fatalf("merge(b, b, x) != x")
				}
			}
		}
		// Different slots changed on the two sides: a clean merge with
		// ours' summary and theirs' body, whatever the texts.
		{
			xo, errX := wiki.Parse(x)
			yo, errY := wiki.Parse(y)
			if errX == nil && errY == nil {
				r, err := Merge(pagePath, base, x, y)
				if err != nil {
					return
				}
				xs, _ := xo.Slot("summary")
				yb, _ := yo.Slot("body")
				for _, c := range r.Conflicts {
					if c.Slot != "" {
						t.Fatalf("a conflict on slot %s, changed on one side only", c.Slot)
					}
				}
				m := parsed(t, r.Merged)
				if got, _ := m.Slot("summary"); got != xs {
					t.Fatalf("summary %q, want ours' %q", got, xs)
				}
				if got, _ := m.Slot("body"); got != yb {
					t.Fatalf("body %q, want theirs' %q", got, yb)
				}
			}
		}
	})
}
