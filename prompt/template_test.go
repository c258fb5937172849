package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantFields are the fields each built-in prompt declares, exactly.
var wantFields = map[string][]string{
	"analysis":   {"templates", "purpose", "audience", "index", "tree", "template_details", "source_title", "source"},
	"generation": {"vault_root", "source_slug", "today", "audience", "template_details", "component_palette", "analysis", "source"},
	"enrichment": {"page_path", "template", "audience", "component_palette", "slots_dump"},
}

const alertLiteral = "alert alert-{info|warning|success|error}"

func TestBuiltinsDeclareAndUseTheirFields(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "analysis,enrichment,generation" {
		t.Fatalf("built-ins = %s", got)
	}
	for name, want := range wantFields {
		tpl, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(tpl.Fields, ",") != strings.Join(want, ",") {
			t.Errorf("%s declares %v, want %v", name, tpl.Fields, want)
		}
		if u := tpl.Unused(); len(u) > 0 {
			t.Errorf("%s never uses declared fields %v", name, u)
		}
		if name != "analysis" && !strings.Contains(tpl.Text, alertLiteral) {
			t.Errorf("%s lacks the literal %s", name, alertLiteral)
		}
	}
}

// adversarial values: braces, look-alikes of every field, format syntax.
func adversarial(fields []string) map[string]string {
	v := map[string]string{}
	for i, f := range fields {
		var b strings.Builder
		b.WriteString("<<" + f + ">> {" + f + "} {{" + f + "}} {")
		for _, g := range fields {
			b.WriteString("{" + g + "}")
		}
		b.WriteString(`} {"a":{"b":1}} alert-{info|warning} {0} {} {` + strings.Repeat("}", i) + ` %s %(x)s ${x}`)
		v[f] = b.String()
	}
	return v
}

// TestRenderAdversarial renders every built-in with values full of braces
// and field look-alikes. An independent rendering (sentinels swapped in
// with plain string replacement) must agree, every literal brace text of
// the template must survive, and every value must appear verbatim.
func TestRenderAdversarial(t *testing.T) {
	for _, name := range Names() {
		tpl, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		values := adversarial(tpl.Fields)
		got, err := tpl.Render(values)
		if err != nil {
			t.Fatal(err)
		}
		want := tpl.Text
		for i, f := range tpl.Fields {
			want = strings.ReplaceAll(want, "{"+f+"}", "\x00"+string(rune('A'+i))+"\x00")
		}
		literals := strings.FieldsFunc(want, func(r rune) bool { return r == 0 })
		for i, f := range tpl.Fields {
			want = strings.ReplaceAll(want, "\x00"+string(rune('A'+i))+"\x00", values[f])
		}
		if got != want {
			t.Fatalf("%s: rendering differs from the independent one", name)
		}
		rest := got
		for _, lit := range literals {
			if len(lit) == 1 && lit[0] >= 'A' && lit[0] <= 'Z' {
				continue // a sentinel letter, not template text
			}
			i := strings.Index(rest, lit)
			if i < 0 {
				t.Fatalf("%s: literal text %q lost or changed", name, lit)
			}
			rest = rest[i+len(lit):]
		}
		for _, lit := range []string{alertLiteral, `{"summary"`, `[{"path": "…", "reason": "…"}]`, `{"status": "draft", "tags": ["x"]}`} {
			if strings.Contains(tpl.Text, lit) && !strings.Contains(got, lit) {
				t.Errorf("%s: %q lost", name, lit)
			}
		}
	}
}

func TestRenderRules(t *testing.T) {
	tpl, err := Parse("t", "test", []byte("---\nfields: [a, b]\n---\n{a} {c} {{b}} {a:>3} { a } {\"a\":{\"b\":1}} {b}"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(map[string]string{"a": "{b}", "b": "B"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{b} {c} {B} {a:>3} { a } {"a":{"b":1}} B`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := tpl.Render(map[string]string{"a": "x"}); err == nil || !strings.Contains(err.Error(), "no value for field b") {
		t.Fatalf("missing field: %v", err)
	}
	if _, err := tpl.Render(map[string]string{"a": "x", "b": "y", "zz": "z"}); err == nil || !strings.Contains(err.Error(), `"zz" is not one of its fields`) {
		t.Fatalf("extra field: %v", err)
	}
	py, err := Parse("t", "test", []byte("---\nfields: [a]\ndialect: str.format\n---\n{{a}} {a} alert-{{info|warning}} {{\"k\": 1}} {x} }}{{"))
	if err != nil {
		t.Fatal(err)
	}
	got, err = py.Render(map[string]string{"a": "{{A}}"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{a} {{A}} alert-{info|warning} {"k": 1} {x} }{`; got != want {
		t.Fatalf("str.format: got %s, want %s", got, want)
	}
}

func TestParseRefusals(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"---\nfields: [a]\n", "never closed"},
		{"---\nfield: [a]\n---\nx", "not valid"},
		{"---\ndialect: jinja\n---\nx", "unknown dialect"},
		{"---\nfields: [\"a b\"]\n---\nx", "not a name"},
	} {
		if _, err := Parse("t", "test.md", []byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.text, err, c.want)
		}
	}
}

func TestOverride(t *testing.T) {
	root := t.TempDir()
	if tpl, err := Load(root, "enrichment"); err != nil || tpl.Source != "built-in" {
		t.Fatalf("no override: %v %v", tpl, err)
	}
	os.MkdirAll(filepath.Join(root, OverrideDir), 0o755)
	write := func(s string) {
		os.WriteFile(filepath.Join(root, OverrideDir, "enrichment.md"), []byte(s), 0o644)
	}
	write("---\ndialect: str.format\n---\nPage {page_path} ({template}) for {audience}: {slots_dump} using {component_palette}; <div class=\"alert alert-{{info|warning}}\">")
	tpl, err := Load(root, "enrichment")
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Source != "prompts/enrichment.md" || len(tpl.Fields) != 5 {
		t.Fatalf("override: %+v", tpl)
	}
	got, err := tpl.Render(map[string]string{"page_path": "a.html", "template": "note", "audience": "devs", "slots_dump": "{body}", "component_palette": "alert"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `Page a.html (note) for devs: {body} using alert; <div class="alert alert-{info|warning}">`; got != want {
		t.Fatalf("got %s", got)
	}
	write("---\nfields: [page_path]\n---\n{page_path}")
	if _, err := Load(root, "enrichment"); err == nil || !strings.Contains(err.Error(), "declares fields page_path") {
		t.Fatalf("wrong fields accepted: %v", err)
	}
	if _, err := Load(root, "nosuch"); err == nil || !strings.Contains(err.Error(), "analysis, enrichment, generation") {
		t.Fatalf("unknown prompt: %v", err)
	}
}

// FuzzRender: any template text and value renders without panicking; a
// text that refers to no declared field comes out unchanged.
func FuzzRender(f *testing.F) {
	f.Add("alert-{info|warning} {a} {{a}} }{", "{a}")
	f.Add("{", "}")
	f.Fuzz(func(t *testing.T, text, value string) {
		for _, d := range []Dialect{Fields, StrFormat} {
			tpl := &Template{Name: "f", Fields: []string{"a"}, Dialect: d, Text: text}
			got, err := tpl.Render(map[string]string{"a": value})
			if err != nil {
				t.Fatal(err)
			}
			if d == Fields && !strings.Contains(text, "{a}") && got != text {
				t.Fatalf("text without fields changed: %q -> %q", text, got)
			}
		}
	})
}

// FuzzParse: any file parses or is refused with an error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nfields: [a]\ndialect: str.format\n---\n{a}"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tpl, err := Parse("f", "fuzz", data); err == nil {
			_ = tpl.Unused()
		}
	})
}

func BenchmarkRenderGeneration(b *testing.B) {
	tpl, err := Builtin("generation")
	if err != nil {
		b.Fatal(err)
	}
	values := adversarial(tpl.Fields)
	values["source"] = strings.Repeat("A paragraph of source text with {braces} and alert-{info}. ", 2000)
	b.SetBytes(int64(len(tpl.Text) + len(values["source"])))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(values); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRenderParts: the fixed part is the text above the first PerCall
// line (its trailing line ends trimmed), the variable part the text
// below, each rendered as Render renders; a text without the line is
// all variable part; a missing or extra value is refused as by Render.
func TestRenderParts(t *testing.T) {
	tpl, err := Parse("t", "test", []byte("---\nfields: [a, b]\n---\nfixed {a}\n\n"+PerCall+"\nvar {b} {a}\n"+PerCall+"\nmore {b}"))
	if err != nil {
		t.Fatal(err)
	}
	fixed, variable, err := tpl.RenderParts(map[string]string{"a": "A", "b": "{a}"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "fixed A"; fixed != want {
		t.Fatalf("fixed part %q, want %q", fixed, want)
	}
	if want := "var {a} A\n" + PerCall + "\nmore {a}"; variable != want {
		t.Fatalf("variable part %q, want %q", variable, want)
	}
	if _, _, err := tpl.RenderParts(map[string]string{"a": "x"}); err == nil || !strings.Contains(err.Error(), "no value for field b") {
		t.Fatalf("missing field: %v", err)
	}
	if _, _, err := tpl.RenderParts(map[string]string{"a": "x", "b": "y", "zz": "z"}); err == nil || !strings.Contains(err.Error(), `"zz" is not one of its fields`) {
		t.Fatalf("extra field: %v", err)
	}
	whole, err := Parse("t", "test", []byte("---\nfields: [a]\n---\nall {a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fixed, variable, err := whole.RenderParts(map[string]string{"a": "A"}); err != nil || fixed != "" || variable != "all A\n" {
		t.Fatalf("no PerCall line: %q, %q, %v; want \"\", \"all A\\n\"", fixed, variable, err)
	}
}

// BenchmarkRenderPartsGeneration is the generation prompt of a source of
// about 120 kB split into its two parts, as each generation call renders it.
func BenchmarkRenderPartsGeneration(b *testing.B) {
	tpl, err := Builtin("generation")
	if err != nil {
		b.Fatal(err)
	}
	values := adversarial(tpl.Fields)
	values["source"] = strings.Repeat("A paragraph of source text with {braces} and alert-{info}. ", 2000)
	b.SetBytes(int64(len(tpl.Text) + len(values["source"])))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := tpl.RenderParts(values); err != nil {
			b.Fatal(err)
		}
	}
}
