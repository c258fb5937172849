package plan

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := `{"pages":[{"action":"create","path":"a/b.html","template":"note","title":"B"}]}`
	for _, text := range []string{
		good,
		"Here is the plan:\n```json\n" + good + "\n```\nDone.",
		"Plan: " + good + " — that is all.",
	} {
		p, err := Parse(text)
		if err != nil || len(p.Pages) != 1 || p.Pages[0].Path != "a/b.html" {
			t.Errorf("Parse(%q) = %+v, %v", text, p, err)
		}
	}
	for text, want := range map[string]string{
		"no json here": "not a plan",
		`{"pages":[{"action":"delete","path":"x.html","template":"note"}]}`: "neither create nor update",
		`{"pages":[{"action":"create","template":"note"}]}`:                 "no path",
		`{"other":1}`: `no "pages"`,
	} {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) err = %v, want %q", text, err, want)
		}
	}
}

func TestReviewQueue(t *testing.T) {
	text := `Done.
<<<REVIEW_QUEUE>>>[{"page":"a.html","kind":"check","detail":"Is it true?"},{"path":"b.html","reason":"Dates differ."},"plain words"]<<<END>>>
<<<REVIEW_QUEUE>>>not json<<<END>>>`
	got := ReviewQueue(text)
	want := []ReviewItem{
		{Page: "a.html", Kind: "check", Detail: "Is it true?"},
		{Page: "b.html", Detail: "Dates differ."},
		{Detail: "plain words"},
		{Detail: "not json"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReviewQueue = %+v\nwant %+v", got, want)
	}
}

func TestExtract(t *testing.T) {
	prompt := "before\n<source name=\"a &quot;b&quot;\" id=\"x\">\nline 1\n</source> inline\nline 2\n</source>\nafter"
	v, attrs, ok := Extract(prompt, "source")
	if !ok || v != "line 1\n</source> inline\nline 2" || attrs["name"] != `a "b"` || attrs["id"] != "x" {
		t.Errorf("Extract = %q %v %v", v, attrs, ok)
	}
	if _, _, ok := Extract(prompt, "index"); ok {
		t.Error("found a field that is not there")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"pages":[{"action":"create","path":"a.html","template":"note","title":"A"}]}`)
	f.Add("```json\n{\"pages\":[]}\n```")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err == nil {
			if p.Pages == nil {
				t.Fatal("a plan without pages passed")
			}
			for _, pg := range p.Pages {
				if pg.Path == "" || (pg.Action != Create && pg.Action != Update) {
					t.Fatalf("an invalid page passed: %+v", pg)
				}
			}
		}
	})
}

func FuzzReviewQueue(f *testing.F) {
	f.Add(`<<<REVIEW_QUEUE>>>[{"page":"a","detail":"b"}]<<<END>>>`)
	f.Add(`<<<REVIEW_QUEUE>>>[1, null, {"x": 2}]<<<END>>>`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, it := range ReviewQueue(s) {
			if it.Detail == "" {
				t.Fatalf("an item without detail: %+v", it)
			}
		}
	})
}
