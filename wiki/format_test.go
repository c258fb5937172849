package wiki

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// markers are the format's own markers and near-misses: fuzz seeds and
// table cases that content must never break a page with.
var markers = []string{
	"<!-- prose:meta\ntitle: fake\n-->",
	`<!-- prose:slot id="body" -->`,
	`<!-- /prose:slot id="body" -->`,
	`<!-- /prose:slot id="summary" -->`,
	"-->", "<!--", "--!>", "<!-", "&lt;!-- prose:slot id=&#34;x&#34; --&gt;",
	"{{.Slot \"body\"}}", "{braces} alert-{info|warning|success|error}",
	"\u2028\u00e9\U0001F600 é", "<script>alert(1)</script>", `<img src=x onerror=alert(1)>`,
	"</section></main><h1>x", "\x00", "&amp;&lt;&gt;", "]]>", "<![CDATA[x]]>",
}

func renderPage(t testing.TB, tmpl, rel string, p *Page) []byte {
	t.Helper()
	ts, err := loadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	data, err := render(ts[tmpl], rel, p, shell{})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkRoundTrip renders a page and checks it parses back to the same meta
// and slots.
func checkRoundTrip(t testing.TB, p *Page) {
	t.Helper()
	data := renderPage(t, "note", "a/b.html", p)
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("rendered page does not parse: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(map[string]any(got.Meta), map[string]any(p.Meta)) {
		t.Fatalf("meta did not round-trip:\nwant %#v\ngot  %#v", p.Meta, got.Meta)
	}
	want := map[string]string{}
	for _, s := range p.Slots {
		want[s.ID] = s.HTML
	}
	have := map[string]string{}
	for _, s := range got.Slots {
		have[s.ID] = s.HTML
	}
	for id, h := range want {
		if have[id] != h {
			t.Fatalf("slot %s did not round-trip:\nwant %q\ngot  %q", id, h, have[id])
		}
	}
}

func TestMarkersInContentDoNotCorruptPages(t *testing.T) {
	for _, m := range markers {
		clean, _, err := Sanitize("<p>" + m + "</p>" + m)
		if err != nil {
			continue // invalid UTF-8 is refused, not stored
		}
		p := &Page{Meta: Meta{"title": m, "template": "note", "x": m, "list": []any{m, 1.5, true, nil}}, Slots: []Slot{{ID: "body", HTML: clean}, {ID: "extra", HTML: clean}}}
		checkRoundTrip(t, p)
	}
}

func TestSanitizeRemovesAndReports(t *testing.T) {
	cases := []struct{ in, want, removed string }{
		{`<p>a<script>alert(1)</script></p>`, `<p>a</p>`, "<script> element"},
		{`<img src="x.png" onerror="alert(1)">`, `<img src="x.png">`, "onerror event handler on <img>"},
		{`<a href="javascript:alert(1)">x</a>`, `x`, "unsafe link"},
		{`<img src="https://example.com/t.png">`, ``, "remote or unsafe image"},
		{`<iframe src="https://example.com"></iframe>ok`, `ok`, "<iframe> element"},
		{`<p>a<!-- hidden -->b</p>`, `<p>ab</p>`, "comment"},
		{`<div class="alert alert-info">ok</div>`, `<div class="alert alert-info">ok</div>`, ""},
		{`<p style="color:red">x</p>`, `<p>x</p>`, "style attribute on <p>"},
	}
	for _, c := range cases {
		got, removed, err := Sanitize(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		joined := strings.Join(removed, "; ")
		if c.removed == "" && joined != "" || !strings.Contains(joined, c.removed) {
			t.Errorf("Sanitize(%q) removed %q, want it to mention %q", c.in, joined, c.removed)
		}
	}
}

func TestParseErrorsNameTheLineAndFix(t *testing.T) {
	cases := map[string]string{
		"<p>no meta</p>":                 "no prose meta block",
		"<!-- prose:meta\ntitle: a\n":    "not closed",
		"<!-- prose:meta\ntitle: [\n-->": "not valid",
		"<!-- prose:meta\ntitle: a\n-->\n<!-- prose:slot id=\"b\" -->x":                         "has no end marker",
		"<!-- prose:meta\ntitle: a\n-->\n<!-- prose:meta\ntitle: b\n-->":                        "second prose meta block",
		"<!-- prose:meta\ntitle: a\n-->\n<!-- /prose:slot id=\"b\" -->":                         "without its start",
		"<!-- prose:meta\na: 1\n-->\n<!-- prose:slot id=\"B\" --><!-- /prose:slot id=\"B\" -->": "not valid",
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

// TestGoldenTemplates renders one page per built-in template; -update
// rewrites testdata/golden/.
func TestGoldenTemplates(t *testing.T) {
	ts, err := loadTemplates("")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 12 {
		t.Fatalf("%d built-in templates, want 12", len(ts))
	}
	for name, tm := range ts {
		p := &Page{Meta: Meta{"title": "A " + name + " page", "template": name, "tags": []any{"demo", "golden"}, "updated": "2026-01-02", "related": []any{"other/page"}}}
		for _, sd := range tm.Slots {
			p.SetSlot(sd.ID, `<p>Slot <b>`+sd.ID+`</b>.</p><div class="alert alert-info">Note.</div>`)
		}
		rel := "topic/" + name + ".html"
		var listing *FolderListing
		if name == "folder" {
			rel = "topic/README.html"
			listing = &FolderListing{Folders: []FolderEntry{{Name: "sub", Href: "sub/README.html", Note: "Below."}}, Pages: []PageEntry{{Title: "One", Href: "one.html", Template: "note", Updated: "2026-01-02", Lead: "The first sentence."}},
				Terms: []Link{{Href: "../glossary/cif.html", Text: "ffi_cif"}}, Names: []Name{{Name: "ffi_call", Href: "one.html#s-ffi-call", Page: "One"}}}
		}
		data, err := render(tm, rel, p, shell{Folder: listing})
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name+".html")
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./wiki -run TestGoldenTemplates -update)", err)
		}
		if string(want) != string(data) {
			t.Errorf("template %s renders differently from %s (run with -update if intended)", name, golden)
		}
		got, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, sd := range tm.Slots {
			if h, ok := got.Slot(sd.ID); !ok || h == "" {
				t.Errorf("template %s: slot %s is not rendered", name, sd.ID)
			}
		}
		for _, must := range []string{"Content-Security-Policy", "default-src 'none'", "<title>A " + name + " page</title>", "name=\"viewport\"", ".alert-info{"} {
			if !strings.Contains(string(data), must) {
				t.Errorf("template %s: page lacks %q", name, must)
			}
		}
		if strings.Contains(string(data), "http://") || strings.Contains(string(data), "https://") || strings.Contains(string(data), "<script") {
			t.Errorf("template %s: the shell loads something from the network or holds a script", name)
		}
	}
}

func FuzzSlotRoundTrip(f *testing.F) {
	for _, m := range markers {
		f.Add(m)
		f.Add("<p>" + m + "</p>")
	}
	for _, h := range eventHandlers {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, in string) {
		clean, _, err := Sanitize(in)
		if err != nil {
			return
		}
		again, removed, err := Sanitize(clean)
		if err != nil || again != clean {
			t.Fatalf("sanitizing is not a fixed point: %q → %q → %q", in, clean, again)
		}
		if len(removed) > 0 {
			t.Fatalf("sanitized content still had things to remove: %q: %v", clean, removed)
		}
		if on := onAttrs(clean); len(on) > 0 {
			t.Fatalf("sanitized content holds event handlers %v: %q → %q", on, in, clean)
		}
		checkRoundTrip(t, &Page{Meta: Meta{"title": "t", "template": "note"}, Slots: []Slot{{ID: "body", HTML: clean}}})
	})
}

func FuzzMetaRoundTrip(f *testing.F) {
	for _, m := range markers {
		f.Add(m, m)
	}
	f.Add("key", "2026-01-02")
	f.Add("k", "yes")
	f.Add("k", "1e+21")
	f.Add("k", "null")
	f.Add("k", " lead")
	f.Add("k", "a\nb\n")
	f.Fuzz(func(t *testing.T, key, val string) {
		if checkMetaValue(key, val) != nil {
			return
		}
		checkRoundTrip(t, &Page{Meta: Meta{"title": val, "template": "note", key: val}})
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(renderPageForSeed()))
	for _, m := range markers {
		f.Add([]byte("<!-- prose:meta\ntitle: x\n-->\n" + m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		// What parses must survive a sanitize and re-render.
		for i, s := range p.Slots {
			if p.Slots[i].HTML, _, err = Sanitize(s.HTML); err != nil {
				return
			}
			if published := checkIdentOK(s.ID); !published {
				t.Fatalf("parsed an invalid slot id %q", s.ID)
			}
		}
		for k, v := range p.Meta {
			if checkMetaValue(k, v) != nil {
				return
			}
		}
		checkRoundTrip(t, p)
	})
}

func renderPageForSeed() string {
	ts, _ := loadTemplates("")
	data, _ := render(ts["concept"], "a.html", &Page{Meta: Meta{"title": "x", "template": "concept"}, Slots: []Slot{{ID: "summary", HTML: "<p>s</p>"}}}, shell{})
	return string(data)
}

func checkIdentOK(s string) bool { return len(s) > 0 && s[0] >= 'a' && s[0] <= 'z' }
