package wiki

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/microcosm-cc/bluemonday"
)

// The reference for prose's slot sanitizer is bluemonday with the slot
// policy, as prose used it before its own sanitizer (sanitizer.go). It is
// imported by this test file only, so it is not linked into prose.
var reference = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements(allowedElements...)
	p.AllowAttrs("class").Matching(classPattern()).Globally()
	p.AllowAttrs("title", "lang", "dir").Globally()
	p.AllowAttrs("href").Matching(hrefPattern()).OnElements("a")
	p.AllowAttrs("src").Matching(srcPattern()).OnElements("img")
	p.AllowAttrs("alt").OnElements("img")
	p.AllowAttrs("width", "height").Matching(numPattern()).OnElements("img")
	p.AllowAttrs("colspan", "rowspan").Matching(numPattern()).OnElements("td", "th")
	p.AllowAttrs("scope").Matching(regexp.MustCompile(`^(row|col|rowgroup|colgroup)$`)).OnElements("th")
	p.AllowAttrs("span").Matching(numPattern()).OnElements("col")
	p.AllowAttrs("start").Matching(numPattern()).OnElements("ol")
	p.AllowAttrs("reversed").OnElements("ol")
	p.AllowAttrs("datetime").OnElements("time")
	p.AllowAttrs("open").OnElements("details")
	p.AllowAttrs("cite").Matching(hrefPattern()).OnElements("q")
	p.AllowAttrs("id").Matching(headingID()).OnElements(headingElements...)
	p.AllowURLSchemes("http", "https", "mailto", "data")
	p.AllowRelativeURLs(true)
	p.RequireParseableURLs(true)
	p.AllowDataURIImages()
	p.SkipElementsContent("script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math")
	return p
})

// compareWithReference returns how sanitizeOnce's output differs from the
// reference's on in ("" when it does not).
func compareWithReference(in string) string {
	ours, theirs := sanitizeOnce(in, nil), reference().Sanitize(in)
	if ours == theirs {
		return ""
	}
	return fmt.Sprintf("input     %q\nprose     %q\nreference %q", in, ours, theirs)
}

// Every sanitizer pass any test of this package makes (the sanitizer,
// XSS, anchor, round-trip and fuzz tests, the templates' and the lint
// fixtures' pages) is compared with the reference: a difference panics,
// failing that test (and, under -fuzz, recording the input).
func init() {
	sanitizePass = func(in string, rem *[]string) string {
		if d := compareWithReference(in); d != "" {
			panic("the slot sanitizer differs from the reference (bluemonday):\n" + d)
		}
		return sanitizeOnce(in, rem)
	}
}

// Inputs written to reach every branch of the sanitizer: stray and nested
// end tags, elements that lose every attribute, skipped content, URLs of
// every scheme and shape.
var sanitizerEdgeCases = []string{
	``, ` `, "\n\t", `plain text & <b>bold</b>`, `a < b > c & d " e ' f`,
	`<a>x</a>`, `<a href="">x</a>`, `<a href=" ">x</a>`, `<a><a href="y">x</a></a>`, `<a><img></a>`, `<a><img/></a>y</img>`,
	`<img>`, `<img/>`, `<img alt="">`, `<img src="a.png"/>`, `<img src=a.png width=10 height=99999>`,
	`</a>`, `</div>`, `</svg><svg>x</svg>after`, `<svg><svg>x</svg>y</svg>z`, `<math><mi>x</mi></math>ok`,
	`<script>alert(1)</script>after`, `<script/>x`, `<style>p{}</style><p>x</p>`, `<p>a</script>b</p>`,
	`<b>x</b></style>y`, `<title>t</title>x`, `<textarea><b>x</b></textarea>`, `<xmp><b>x</b></xmp>`,
	`<plaintext><b>x</b>`, `<noscript><p>x</p></noscript>y`, `<template><p>x</p></template>y`,
	`<iframe src="x"><p>x</p></iframe>y`, `<object><embed src=x></object>y`, `<frameset><frame></frameset>z`,
	`<!DOCTYPE html><html><head><title>x</title></head><body><p>y</p></body></html>`,
	`<!-- c --><p>x<!-- d -->y</p>`, `<![CDATA[x]]>`, `<?xml version="1.0"?>`,
	`<p class="A">x</p>`, `<p class="a b-c_d">x</p>`, `<p class="a" class="b">x</p>`, `<P CLASS="x" TITLE="t">y</P>`,
	`<p title='a"b' lang=en dir=rtl>x</p>`, `<p onclick="x" onmouseover=y>z</p>`, `<p style="color:red">x</p>`,
	`<h2 id="s-a">x</h2>`, `<h2 id="s-a" id="s-b">x</h2>`, `<dt id="s-ffi_call">x</dt>`, `<dt id="s-ffi-call">x</dt>`,
	`<th scope=row colspan=2 rowspan=x>a</th><td scope=row>b</td>`, `<col span=3><colgroup span=2>`,
	`<ol start=3 reversed type=a><li value=2>x</li></ol>`, `<time datetime="2024-01-01">x</time>`, `<details open><summary>s</summary>d</details>`,
	`<q cite="https://example.com/x?a=1&b=2">q</q>`, `<q cite="javascript:x">q</q>`, `<blockquote cite="https://x">b</blockquote>`,
	`<del cite="x">d</del><ins cite="y">i</ins>`, `<abbr title="t">a</abbr>`,
	`<a href="https://example.com/a b">x</a>`, `<a href="https://example.com/a%20b?q=1&amp;r=<2>#f">x</a>`,
	`<a href="HTTPS://EXAMPLE.COM/X">x</a>`, `<a href="mailto:a@b.c">x</a>`, `<a href="MailTo:a@b.c?subject=hi there">x</a>`,
	`<a href="javascript:alert(1)">x</a>`, `<a href="JaVaScRiPt:alert(1)">x</a>`, `<a href="java&#x09;script:alert(1)">x</a>`,
	`<a href="  javascript:x">x</a>`, `<a href="data:text/html,x">x</a>`, `<a href="vbscript:x">x</a>`, `<a href="ftp://x/y">x</a>`,
	`<a href="#frag">x</a>`, `<a href="?q=1">x</a>`, `<a href="../a/b.html#s-x">x</a>`, `<a href="/abs">x</a>`, `<a href="//host/x">x</a>`,
	`<a href="a:b/c">x</a>`, `<a href="a/b:c">x</a>`, `<a href="%zz">x</a>`, `<a href="http://[::1">x</a>`, `<a href="http://a b/">x</a>`,
	`<a href="x` + "\u00e9" + `">x</a>`, `<a href="https://ex.com/` + "\u00e9\u4e2d" + `">x</a>`, `<a href="x y">x</a>`, `<a href="x\ty">x</a>`,
	`<img src="data:image/png;base64,iVBORw0KGgo=">`, `<img src="data:image/png;base64,iVBOR w0KGgo=">`,
	"<img src=\"data:image/png;base64,iVBOR\nw0KGgo=\">", "<img src=\"data:image/png;base64,iVBOR\r\nw0KGgo=\">",
	`<img src="data:image/png;base64,!!!">`, `<img src="data:image/svg+xml;base64,PHN2Zz4=">`, `<img src="DATA:IMAGE/PNG;BASE64,AAAA">`,
	`<img src="data:image/gif;base64,R0lGOD==">`, `<img src="data:image/png;base64,AAAA#x">`, `<img src="data:image/png;base64,AAAA?x">`,
	`<img src="data:text/plain;base64,AAAA">`, `<img src="https://example.com/t.png">`, `<img src="a.png" onerror="x">`,
	`<img src="javascript:x" alt="a">`, `<img src="x.png" name="body">`, `<img src="" alt="">`,
	`<p>` + strings.Repeat(`<b>`, 50) + `x` + strings.Repeat(`</b>`, 50) + `</p>`,
	"<p>\u0000x</p>", "<p a\u0000b=1>x</p>", `<scr<script>ipt>alert(1)</script>`, `<<script>script>x</script>`,
	`<a href="x"/>y`, `<p/>x`, `<br/><br><hr/>`, `<div><span><section><article><aside><figure><figcaption>c</figcaption></figure></aside></article></section></span></div>`,
	`<table><caption>c</caption><thead><tr><th>h</th></tr></thead><tbody><tr><td>d</td></tr></tbody><tfoot></tfoot></table>`,
	`<ul><li>a<li>b</ul><dl><dt>t<dd>d</dl>`, `<pre><code>x &lt;y&gt;</code></pre>`, `<kbd>k</kbd><samp>s</samp><var>v</var><sub>1</sub><sup>2</sup><small>s</small><mark>m</mark><cite>c</cite><s>s</s><u>u</u><i>i</i><em>e</em><strong>s</strong>`,
	`<h1>x</h1><h7>y</h7>`, `<button>b</button><input value=x><form><select><option>o</option></select></form>`,
	`<a href="x" title="t" class="c" lang="en" dir="ltr" rel="nofollow" target="_blank">x</a>`,
	`<img src="a.png" crossorigin="use-credentials">`, `<span data-x="1">y</span>`,
}

// corpusInputs are the fixtures' pages and sources, the wiki's templates
// and golden pages, and the seeds of the slot fuzz target.
func corpusInputs(t testing.TB) map[string]string {
	t.Helper()
	in := map[string]string{}
	for i, s := range sanitizerEdgeCases {
		in[fmt.Sprintf("edge case %d", i)] = s
	}
	for _, m := range markers {
		in["marker "+m] = "<p>" + m + "</p>" + m
	}
	for _, h := range eventHandlers {
		in["event handler "+h] = h
	}
	for _, root := range []string{"testdata", "templates", "shell", "../ingest/source/testdata", "../fixtures/sources", "../cmd/prose/testdata/markup"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.HasPrefix(string(data), "go test fuzz v1\n") {
				for _, line := range strings.Split(string(data), "\n")[1:] {
					if v, ok := strings.CutPrefix(line, "string("); ok {
						if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
							in[path+" "+line] = s
						}
					}
				}
				return nil
			}
			if ext := filepath.Ext(path); ext == ".html" || ext == ".md" || ext == ".json" || ext == ".tmpl" {
				in[path] = string(data)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(in) < len(sanitizerEdgeCases)+50 {
		t.Fatalf("the corpus has only %d inputs; the fixtures moved?", len(in))
	}
	return in
}

// TestSanitizerMatchesReference: on the whole corpus, one pass of prose's
// sanitizer and of bluemonday give the same bytes, and so does Sanitize
// (the passes to a fixed point).
func TestSanitizerMatchesReference(t *testing.T) {
	for name, s := range corpusInputs(t) {
		if d := compareWithReference(s); d != "" {
			t.Errorf("%s:\n%s", name, d)
		}
		out := strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
		for range 4 {
			out = reference().Sanitize(out)
		}
		if got, _, err := Sanitize(s); err == nil && got != out {
			t.Errorf("%s: Sanitize gives %q, the reference's passes %q", name, got, out)
		}
	}
}

func FuzzSanitizerMatchesReference(f *testing.F) {
	for _, s := range corpusInputs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if d := compareWithReference(in); d != "" {
			t.Fatal(d)
		}
	})
}

// BenchmarkSanitizePass: one pass of prose's sanitizer against the
// reference's over the corpus (the ratio of the two sub-benchmarks).
func BenchmarkSanitizePass(b *testing.B) {
	corpus := corpusInputs(b)
	var inputs []string
	for _, s := range corpus {
		inputs = append(inputs, s)
	}
	for _, side := range []struct {
		name string
		pass func(string) string
	}{{"prose", func(s string) string { return sanitizeOnce(s, nil) }}, {"bluemonday", reference().Sanitize}} {
		b.Run(side.name, func(b *testing.B) {
			for b.Loop() {
				for _, s := range inputs {
					side.pass(s)
				}
			}
		})
	}
}

// TestSanitizerKeepsTheReferenceWays pins the two safe oddities kept from
// bluemonday (sanitizer.go): they remove more, or leave an end tag with
// no start, and Sanitize stays a fixed point on them.
func TestSanitizerKeepsTheReferenceWays(t *testing.T) {
	for in, want := range map[string]string{
		`</svg><svg>x</svg>after`:             ``,
		`<p>a</p></svg>b<svg>c</svg>d</svg>e`: `<p>a</p>b`,
		`<a><img></a>y`:                       `</a>y`,
		`<a>x</a>`:                            `x`,
	} {
		got, _, err := Sanitize(in)
		if err != nil || got != want {
			t.Errorf("Sanitize(%q) = %q, %v; want %q", in, got, err, want)
		}
		if again, _, _ := Sanitize(got); again != got {
			t.Errorf("Sanitize(%q) is not a fixed point: %q", got, again)
		}
	}
}
