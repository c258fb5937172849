package forme

import "testing"

// Frontmatter positions are the file's lines and columns: YAML also breaks
// lines at a lone \r, the file only at \n.
func TestFrontmatterPositionsCountOnlyNewlines(t *testing.T) {
	cases := []struct {
		src       string
		code      string
		line, col int
	}{
		// "kind" starts YAML's line 2 but sits on the file's line 2, after "name: a\r".
		{"---\nname: a\rkind: [x]\n---\n", CodeFrontmatterInvalid, 2, 9},
		// A non-mapping document after three lone \r: still the file's line 2.
		{"---\n \r\r\r#0\n0\n---", CodeFrontmatterInvalid, 3, 1},
		// Plain lines: unchanged.
		{"---\nname: a\nkind: [x]\n---\n", CodeFrontmatterInvalid, 3, 1},
		{"---\nname: a\n  kind: [x\n---\n", CodeFrontmatterInvalid, 3, 1},
	}
	for _, c := range cases {
		p := ParseSources([]Source{{Path: "f.prose.md", Data: []byte(c.src)}}, hermetic())
		_, diags := Compile(p)
		found := false
		for _, d := range diags {
			if d.Code == c.code && d.File == "f.prose.md" {
				found = true
				if d.Line != c.line || d.Column != c.col {
					t.Errorf("%q: %s at %d:%d, want %d:%d", c.src, d.Code, d.Line, d.Column, c.line, c.col)
				}
			}
		}
		if !found {
			t.Errorf("%q: no %s in %v", c.src, c.code, diags)
		}
	}
}
