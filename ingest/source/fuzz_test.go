package source

import "testing"

func fuzzKind(f *testing.F, name string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Read(name, data, "")
		if err != nil {
			return
		}
		if d.Title == "" || d.ID == "" {
			t.Fatalf("document without title or id: %+v", d)
		}
		_ = d.Prose()
		_ = d.Definitions()
		// Its quotation reads, and the reading quotes again.
		if back, err := ReadQuoted("source.md", []byte(d.Markdown())); err == nil {
			_ = back.Markdown()
		}
		for _, b := range blockTexts(d) {
			checkInlineHTML(t, b, InlineHTML(b))
		}
	})
}

func FuzzMarkdown(f *testing.F) {
	fuzzKind(f, "f.md", "# T\n\n1. a\n2. b\n\n- **X**: y z\n\n| Term | Meaning |\n|--|--|\n|a|b c|\n", "---\ntitle: x\n---\n```go\nx\n```\n", "A\n: b c\n", "- **-b**: x y\n\n  more words\n\n  ```\n  code\n  ```\n\n  - **in**: a b\n- **c**: d e\n", "A List<String> and ![alt *x*](i.png) <b>b</b><br><script>x</script>\n\n<div>\n<name> <p>t</p>\n</div>\n\n- a\n\n  <p>x</p>\n")
}

func FuzzText(f *testing.F) {
	fuzzKind(f, "f.txt", "Title\n=====\n\n1. a\n2. b\n\nTERMS\n\nX: y z\n", "- a\n  b\n")
}

func FuzzHTML(f *testing.F) {
	fuzzKind(f, "f.html", "<title>T</title><main><h2>x</h2><dl><dt>a</dt><dd>b</dd></dl><table><tr><th>Term</th><th>Meaning</th></tr><tr><td>a</td><td>b</td></tr></table></main>", "<pre class=language-go>x</pre><a href=x>y</a>", "<dl><dt>-b</dt><dd><p>a b</p><pre>\tx\n\n y</pre><dl><dt>in</dt><dd><p>c d</p><ul><li>e</li></ul></dd></dl></dd></dl><table><tr><td>x</td><td></td></tr><tr><td>y</td></tr></table>")
}

func FuzzConversation(f *testing.F) {
	fuzzKind(f, "f.json", `[{"role":"user","content":"hi. there"},{"role":"assistant","content":[{"type":"text","text":"1. a\n2. b"}]}]`, "{\"role\":\"user\",\"content\":\"x\"}\n", `{"messages":[{"role":"user","content":["a"]}]}`)
}
