package forme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds any bytes through parsing, checks, wiring and rendering:
// diagnostics come out, never a panic (ParseFile's safety net counts as a
// failure here), and every diagnostic is documented and positioned.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "fixtures", "contracts", "*", "*.prose.md"))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("---\nname: a\nkind: responsibility\n---\n### Requires\n- `b.x`: y\n## b\n### Maintains\n#### x\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nkind: [\n"))
	f.Add([]byte("\xef\xbb\xbf---\r\nname: x\r\nkind: gateway\r\n---\r\n### Emits\r\n- x.y\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		other := []byte("---\nname: other\nkind: responsibility\nid: 01KDYAK348E48S248H248H248H\n---\n### Requires\n- the x facet of a\n### Maintains\n#### x\n")
		p := ParseSources([]Source{{Path: "f.prose.md", Data: src}, {Path: "o.prose.md", Data: other}}, hermetic())
		m, diags := Compile(p)
		lines := strings.Count(string(src), "\n") + 2
		for _, d := range diags {
			if strings.Contains(d.Message, "the parser failed") {
				t.Fatalf("parser panic: %s", d)
			}
			if !IsDocumentedCode(d.Code) {
				t.Fatalf("undocumented code %q", d.Code)
			}
			if d.File == "f.prose.md" && (d.Line < 0 || d.Line > lines || d.Column < 0) {
				t.Fatalf("position out of range: %s", d)
			}
		}
		if _, err := m.JSON(); err != nil {
			t.Fatal(err)
		}
		for _, format := range GraphFormats {
			if _, err := RenderGraph(m, format); err != nil {
				t.Fatal(err)
			}
		}
		_, _, _ = InsertID(src, "01KDYAK348E48S248H248H248H")
	})
}
