package canon

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Path
	}{
		{"", Path{}},
		{"a", Path{"a"}},
		{"meta.title", Path{"meta", "title"}},
		{`docs.notes\.md`, Path{"docs", "notes.md"}},
		{`a\\b.c`, Path{`a\b`, "c"}},
		{`a\\.b`, Path{`a\`, "b"}},
		{`\.\.\.`, Path{"..."}},
		{"é.😀", Path{"é", "😀"}},
		{"a b. c", Path{"a b", " c"}},
	} {
		got, err := ParsePath(tc.in)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParsePath(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if s := got.String(); s != tc.in {
			t.Errorf("ParsePath(%q).String() = %q", tc.in, s)
		}
	}
}

func TestParsePathRejects(t *testing.T) {
	for _, tc := range []struct{ in, wantErr string }{
		{".", "empty segment"},
		{"a..b", "empty segment"},
		{".a", "empty segment"},
		{"a.", "ends with a dot"},
		{`a\`, "lone backslash"},
		{`a\b`, `invalid escape \b`},
		{`a\n`, `invalid escape \n`},
	} {
		if p, err := ParsePath(tc.in); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParsePath(%q) = %q, %v; want an error containing %q", tc.in, p, err, tc.wantErr)
		}
	}
}

func TestPathHelpers(t *testing.T) {
	p := Path{"a"}
	b, c := p.Child("b"), p.Child("c")
	if b.String() != "a.b" || c.String() != "a.c" {
		t.Errorf("Child gave %q and %q", b, c)
	}
	if !b.HasPrefix(p) || !b.HasPrefix(Path{}) || !b.HasPrefix(b) || b.HasPrefix(c) || p.HasPrefix(b) {
		t.Error("HasPrefix is wrong")
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"", "a", "a.b", `a\.b`, `a\\.b`, `\\\\`, "a..b", `a\`, "é.😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		for _, seg := range p {
			if seg == "" {
				t.Fatalf("ParsePath(%q) has an empty segment", s)
			}
		}
		back, err := ParsePath(p.String())
		if err != nil {
			t.Fatalf("ParsePath(%q) = %q, but its String %q does not parse: %v", s, p, p.String(), err)
		}
		if !slices.Equal(back, p) {
			t.Fatalf("round trip of %q: %q, then %q", s, p, back)
		}
		if p.String() != s {
			t.Fatalf("ParsePath(%q).String() = %q: the dotted form is not unique", s, p.String())
		}
	})
}
