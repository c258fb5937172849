package wiki

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/prose-store/prose/published"
)

// oddTexts are texts near every rule of plain YAML: indicators, comment
// and mapping-value marks, words YAML reads as other types, dates real
// and not, spaces, non-ASCII and control characters, the comment
// escapes of the meta block.
var oddTexts = []string{
	"", " ", "a", "ab", "a b", " a", "a ", "a:", "a: b", "a:b", "a :b", "a #b", "a#b", "#a", "a # b",
	"-", "-a", "- a", "--- a", "---", "...", "?", "? a", "?a", ":", ":a", ",a", "a,b", "[a]", "a[b]", "{a}", "a{b}",
	"&a", "*a", "!a", "|a", ">a", "'a", "a'b", "\"a", "a\"b", "%a", "@a", "`a", "a\\b", "a\tb", "a\nb", "a\n",
	"true", "True", "TRUE", "tRUE", "false", "False", "null", "Null", "NULL", "nULL", "~", "y", "yes", "no", "on", "off", "Off",
	"truer", "nullish", ".inf", ".nan", "+.inf", "1", "-1", "1.5", "1e3", "0x1f", "0o17", "0b101", "1_000", "12:30", "1:2:3",
	"2026-01-31", "2026-1-31", "2026-13-01", "2026-02-30", "2026-01-31T10:00:00Z", "2026-01-31 10:00", "0000-00-00", "9999-12-31",
	"<<", "<", "a<b", "a>b", "a&b", "&amp;", "-->", "a --> b", "<!--", "_a", "/a/b", "/", "_", "a/b.c", "blake3:0123abcdef",
	"term:alerts rule 147-1", "from-6194566a", "alerts part 1", "meta.template", "é", "aé", "a\u00a0b", "a\u2028b", "\ufeffa",
	"a\x7fb", "a\x01b", "a\x85b", "\xff", "a\xffb", "A very long title " + string(bytes.Repeat([]byte("word "), 40)) + "end",
	string(bytes.Repeat([]byte("k"), 128)), string(bytes.Repeat([]byte("k"), 129)),
	"2. How to use bzip2", "1. Introduction", "1.2 Foo", "1 2", "0x1F", "0X1f", "1e5", "+1", "-1 a", "-a b", "0o17x", "12:30:45",
	"2026-01-31 10:00:00", "2026-01-31t10:00:00z", "2026-01-31T10:00:00+01:00", ".5", ".5x", "+.5", "-.inf", "+.INF", ".NaN", "1_000x",
	"0b2", "0b101g", "Examples: Code Blocks", "a'b: c", "' a", "~a", "<<a", "'", "''", "a''b", "--", "--a", "-- a", "...a", "a...",
	"Chapter 3: queue part 3", "x: ", "x :", "#", "a #", "- ", "?a", "?", "@home", "`code`", "%x", "!x", "|x", ">x", "*x", "&x",
	"{a: b}", "[1, 2]", "a, b", "a ,b", "key: value: more", "a\\b c", "\"q\" x", "x \"q\"", " lead", "trail ", "  ", "a  b",
}

// metaShapes builds the metas one text can appear in: as a key, a value,
// a list element, a nested key and value, beside other kinds of values.
func metaShapes(a, b string) []Meta {
	return []Meta{
		{a: b},
		{"title": a, "template": "note", "updated": "2026-01-31"},
		{"tags": []any{a, b}, "k": a},
		{"generated": map[string]any{a: b, "body": "blake3:00"}, "z": true, "n": nil},
		{"g": map[string]any{"x": a}, a: []any{b}},
		{"list": []any{}, "t": a},
		{"m": map[string]any{}, "t": a},
		{"num": 1.5, "t": a},
		{"nested": []any{[]any{a}}, "x": map[string]any{"y": map[string]any{"z": b}}},
		{"b": false, a: nil},
		{},
		nil,
	}
}

func checkMetaYAML(t *testing.T, m Meta) {
	t.Helper()
	want, werr := m.yamlv3()
	got, gerr := m.yaml()
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("meta %#v:\ndirect %q (%v)\nyaml.v3 %q (%v)", m, got, gerr, want, werr)
	}
}

// TestMetaYAMLMatchesYAMLv3: the direct encoder writes the bytes yaml.v3
// writes for every meta built from the odd texts, and it does cover the
// meta of an ingested page (else the check would hold vacuously).
func TestMetaYAMLMatchesYAMLv3(t *testing.T) {
	for _, a := range oddTexts {
		for _, b := range []string{"x", "2026-01-31", a} {
			for _, m := range metaShapes(a, b) {
				checkMetaYAML(t, m)
			}
		}
	}
	page := Meta{
		"created": "2026-01-31", "updated": "2026-01-31", "template": "concept", "title": "alerts rule 147-1",
		"origin": "term:alerts rule 147-1", "source_kind": "markdown", "source_mark": "from-6194566a",
		"source_section": "alerts part 1", "sources": []any{"blake3:e662f007e0e19a7a01f1"}, "tags": []any{"glossary", "definition"},
		"generated": map[string]any{"body": "blake3:14d2c7d0", "meta.title": "blake3:166b5a74"},
	}
	checkMetaYAML(t, page)
	if _, ok := appendMetaYAML(nil, page); !ok {
		t.Fatal("the direct encoder does not cover an ingested page's meta")
	}
	covered := 0
	for _, a := range oddTexts {
		if _, ok := appendMetaYAML(nil, Meta{"k": a}); ok {
			covered++
		}
	}
	if covered < 20 {
		t.Fatalf("the direct encoder covers only %d of the odd texts", covered)
	}
}

func FuzzMetaYAMLMatchesYAMLv3(f *testing.F) {
	for i, a := range oddTexts {
		f.Add(a, oddTexts[(i*7+3)%len(oddTexts)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, m := range metaShapes(a, b) {
			checkMetaYAML(t, m)
		}
	})
}

func BenchmarkMetaYAML(b *testing.B) {
	m := Meta{
		"created": "2026-01-31", "updated": "2026-01-31", "template": "concept", "title": "alerts rule 147-1",
		"origin": "term:alerts rule 147-1", "source_kind": "markdown", "source_mark": "from-6194566a",
		"source_section": "alerts part 1", "sources": []any{"blake3:e662f007e0e19a7a01f194635cf43047500c8facb0ead3094d62e5069c6fca31"},
		"tags": []any{"glossary", "definition"},
		"generated": map[string]any{"body": "blake3:14d2c7d03b7492dbb63f5b0b4c3e485f1d56937892457aaef3f4ec6b5c935add",
			"meta.title": "blake3:166b5a741a1933e60d3be085ea03746558cb342f668e00ac79930d5f820dba17"},
	}
	// A section page's: a title yaml.v3 single-quotes, a numbered one.
	sec := m.Clone()
	sec["title"], sec["source_section"] = "Chapter 3: queue part 3", "2. How to use bzip2"
	for _, side := range []struct {
		name string
		enc  func() ([]byte, error)
	}{{"yamlv3", m.yamlv3}, {"direct", m.yaml}, {"section-yamlv3", sec.yamlv3}, {"section-direct", sec.yaml}} {
		b.Run(side.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := side.enc(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// checkParseMeta holds parseMetaYAML to yaml.v3: what it reads it reads
// as yaml.v3 does (through published.YAMLValue, as decodeMeta).
func checkParseMeta(t *testing.T, text []byte) {
	t.Helper()
	got, ok := parseMetaYAML(text)
	if !ok {
		return
	}
	v, err := published.YAMLValue(text)
	if err != nil {
		t.Fatalf("%q: read directly as %#v, yaml.v3 refuses it: %v", text, got, err)
	}
	want, _ := v.(map[string]any)
	if !reflect.DeepEqual(map[string]any(got), want) {
		t.Fatalf("%q: read directly as %#v, yaml.v3 reads %#v", text, got, v)
	}
}

// TestParseMetaYAMLMatchesYAMLv3: the direct reader reads every meta the
// direct writer writes from the odd texts as yaml.v3 reads it, covers an
// ingested page's meta, and leaves texts near the shape to yaml.v3.
func TestParseMetaYAMLMatchesYAMLv3(t *testing.T) {
	for _, a := range oddTexts {
		for _, b := range []string{"x", "2026-01-31", a} {
			for _, m := range metaShapes(a, b) {
				if y, ok := appendMetaYAML(nil, m); ok {
					checkParseMeta(t, y)
				}
				if y, err := m.yamlv3(); err == nil {
					checkParseMeta(t, y)
				}
			}
			for _, text := range []string{a + ": " + b + "\n", "k: " + a + "\n", "k:\n  - " + a + "\n", "k:\n  " + a + ": " + b + "\n", a + "\n"} {
				checkParseMeta(t, []byte(text))
			}
		}
	}
	page := Meta{
		"created": "2026-01-31", "updated": "2026-01-31", "template": "concept", "title": "Chapter 3: queue part 3",
		"origin": "term:alerts rule 147-1", "source_kind": "markdown", "source_mark": "from-6194566a", "draft": true, "gone": nil,
		"source_section": "2. How to use bzip2", "sources": []any{"blake3:e662f007e0e19a7a01f1"}, "tags": []any{"glossary", "it's"},
		"generated": map[string]any{"body": "blake3:14d2c7d0", "meta.title": "blake3:166b5a74"},
	}
	y, ok := appendMetaYAML(nil, page)
	if !ok {
		t.Fatal("the direct encoder does not cover the page's meta")
	}
	got, ok := parseMetaYAML(y)
	if !ok || !reflect.DeepEqual(got, page) {
		t.Fatalf("the direct reader reads %q as %#v (%v)", y, got, ok)
	}
	checkParseMeta(t, y)
}

func FuzzParseMetaYAMLMatchesYAMLv3(f *testing.F) {
	for i, a := range oddTexts {
		f.Add("k: "+a+"\n", a, oddTexts[(i*7+3)%len(oddTexts)])
	}
	f.Add("a: x\nb:\n  - y\n  - 'z'''\nc:\n  d: \"e f\"\n", "", "")
	f.Fuzz(func(t *testing.T, text, a, b string) {
		checkParseMeta(t, []byte(text))
		for _, m := range metaShapes(a, b) {
			if y, ok := appendMetaYAML(nil, m); ok {
				checkParseMeta(t, y)
			}
		}
	})
}
