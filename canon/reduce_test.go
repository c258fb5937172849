package canon

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

func mustSpec(t testing.TB, src string) *Spec {
	t.Helper()
	if src == "" {
		return nil
	}
	s, err := ParseSpec([]byte(src))
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", src, err)
	}
	return s
}

func mustDecode(t testing.TB, src string) any {
	t.Helper()
	v, err := Decode([]byte(src))
	if err != nil {
		t.Fatalf("Decode(%q): %v", src, err)
	}
	return v
}

func mustMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatalf("Marshal(%v): %v", v, err)
	}
	return string(b)
}

// reduceGolden lists spec (YAML or JSON, "" for nil), the path the value
// sits at, the value as JSON, and the canonical JSON of the reduced value
// ("dropped" when Reduce drops it).
var reduceGolden = []struct {
	name, spec, path, in, want string
}{
	{"nil spec keeps everything", ``, ``, `{"a":[1,true,null],"b":{}}`, `{"a":[1,true,null],"b":{}}`},
	{"nil spec collapses whitespace", ``, ``, `{"s":"  a \n\t b  "}`, `{"s":"a b"}`},
	{"NFC", ``, ``, `{"s":"e\u0301"}`, `{"s":"é"}`},
	{"JavaScript whitespace set", ``, ``, `["\u00a0a\u3000\u2028b\ufeff", "a\u0085b", "\u200b"]`, "[\"a b\",\"a\u0085b\",\"\u200b\"]"},
	{"negative zero", ``, ``, `[-0]`, `[0]`},
	{"immaterial field dropped", "fields:\n- {path: meta.updated, material: false}\n", ``,
		`{"meta":{"updated":"2024-01-01","title":"T"}}`, `{"meta":{"title":"T"}}`},
	{"record with all children dropped is dropped", "fields:\n- {path: meta.updated, material: false}\n", ``,
		`{"meta":{"updated":"x"},"k":1}`, `{"k":1}`},
	{"record kept when a rule marks it material", "fields:\n- {path: meta, material: true}\n- {path: meta.updated, material: false}\n", ``,
		`{"meta":{"updated":"x"}}`, `{"meta":{}}`},
	{"record kept when an ancestor rule marks it material", "fields:\n- {path: a, material: true}\n- {path: a.b.c, material: false}\n", ``,
		`{"a":{"b":{"c":1}}}`, `{"a":{"b":{}}}`},
	{"empty record kept when material", ``, ``, `{"meta":{}}`, `{"meta":{}}`},
	{"empty record dropped when immaterial", "fields:\n- {path: meta, material: false}\n", ``, `{"meta":{},"x":1}`, `{"x":1}`},
	{"root kept when all children dropped", "fields:\n- {path: a, material: false}\n", ``, `{"a":1}`, `{}`},
	{"default false keeps explicit material fields", "default_material: false\nfields:\n- {path: a.b, material: true}\n", ``,
		`{"a":{"b":1,"c":2},"d":3}`, `{"a":{"b":1}}`},
	{"default false keeps the root", "default_material: false\n", ``, `{"a":1,"b":{"c":2}}`, `{}`},
	{"default false keeps a scalar root", "default_material: false\n", ``, `" x "`, `"x"`},
	{"root rule immaterial with material child", "fields:\n- {path: '', material: false}\n- {path: keep, material: true}\n", ``,
		`{"keep":[1],"drop":2}`, `{"keep":[1]}`},
	{"nearer rule wins", "fields:\n- {path: a, material: false}\n- {path: a.b, material: true}\n- {path: a.b.c, material: false}\n", ``,
		`{"a":{"b":{"c":1,"d":2},"e":3}}`, `{"a":{"b":{"d":2}}}`},
	{"escaped dot in path", "fields:\n- {path: 'docs.notes\\.md', material: false}\n", ``,
		`{"docs":{"notes.md":"x","a.md":"y"},"notes":{"md":"z"}}`, `{"docs":{"a.md":"y"},"notes":{"md":"z"}}`},
	{"set sorts", "fields:\n- {path: tags, material: true, collection: set}\n", ``,
		`{"tags":["b","a","c","a"]}`, `{"tags":["a","a","b","c"]}`},
	{"set sorts by canonical bytes", "fields:\n- {path: s, material: true, collection: set}\n", ``,
		`{"s":[{"id":2},{"id":10},"x",1,[],null,true]}`, `{"s":["x",1,[],null,true,{"id":10},{"id":2}]}`},
	{"set sorts reduced elements", "fields:\n- {path: s, material: true, collection: set}\n", ``,
		`{"s":[" b","a "]}`, `{"s":["a","b"]}`},
	{"ordered keeps order", "fields:\n- {path: s, material: true, collection: ordered}\n", ``,
		`{"s":["b","a"]}`, `{"s":["b","a"]}`},
	{"set does not reach arrays further down", "fields:\n- {path: items, material: true, collection: set}\n", ``,
		`{"items":[{"steps":[2,1],"n":"b"},{"steps":[3],"n":"a"}]}`, `{"items":[{"n":"a","steps":[3]},{"n":"b","steps":[2,1]}]}`},
	{"set reaches arrays directly inside", "fields:\n- {path: m, material: true, collection: set}\n", ``,
		`{"m":[[2,1],[0]]}`, `{"m":[[0],[1,2]]}`},
	{"quantum", "fields:\n- {path: p, material: true, number: {quantum: 0.01}}\n", ``,
		`{"p":[19.994,19.996,-0.001,0.3,7]}`, `{"p":[19.99,20,0,0.3,7]}`},
	{"quantum tenth rounds decimal halves up", "fields:\n- {path: p, material: true, number: {quantum: 0.1}}\n", ``,
		`{"p":[0.15,0.25,0.31,-0.15]}`, `{"p":[0.2,0.3,0.3,-0.2]}`},
	{"quantum five", "fields:\n- {path: p, material: true, number: {quantum: 5}}\n", ``,
		`{"p":[12,13,-12.5,1e300]}`, `{"p":[10,15,-15,1e+300]}`},
	{"quantum inherited below the rule", "fields:\n- {path: metrics, material: true, number: {quantum: 1}}\n", ``,
		`{"metrics":{"a":{"b":2.4}},"other":2.4}`, `{"metrics":{"a":{"b":2}},"other":2.4}`},
	{"case insensitive", "fields:\n- {path: names, material: true, text: {case_insensitive: true}}\n", ``,
		`{"names":["Hello  World","STRASSE","straße","ΟΔΟΣ","Ὀδός"],"other":"Keep"}`, `{"names":["hello world","strasse","strasse","οδοσ","ὀδόσ"],"other":"Keep"}`},
	{"collapse disabled", "fields:\n- {path: body, material: true, text: {collapse_whitespace: false}}\n", ``,
		`{"body":" a  \n b e\u0301 ","title":" a  b "}`, `{"body":" a  \n b é ","title":"a b"}`},
	{"text rule inherited and overridden", "fields:\n- {path: a, material: true, text: {case_insensitive: true}}\n- {path: a.raw, material: true, text: {collapse_whitespace: false}}\n", ``,
		`{"a":{"x":{"y":"AB"},"raw":" AB "}}`, `{"a":{"raw":" AB ","x":{"y":"ab"}}}`},
	{"array elements inherit the array's path", "fields:\n- {path: items.ts, material: false}\n", ``,
		`{"items":[{"id":1,"ts":2},{"id":2,"ts":3}]}`, `{"items":[{"id":1},{"id":2}]}`},
	{"array element with all fields dropped leaves the array", "fields:\n- {path: items.ts, material: false}\n", ``,
		`{"items":[{"ts":1},{"id":2,"ts":3}]}`, `{"items":[{"id":2}]}`},
	{"material array kept empty", "fields:\n- {path: items.ts, material: false}\n", ``,
		`{"items":[{"ts":1}]}`, `{"items":[]}`},
	{"immaterial array keeps material record fields", "default_material: false\nfields:\n- {path: items.id, material: true}\n", ``,
		`{"items":[{"id":1,"x":2},{"x":3}],"n":4}`, `{"items":[{"id":1}]}`},
	{"immaterial array of scalars dropped", "fields:\n- {path: log, material: false}\n", ``,
		`{"log":["a","b"],"n":1}`, `{"n":1}`},
	{"reduce below the root", "fields:\n- {path: meta.updated, material: false}\n", `meta`,
		`{"updated":"x","title":" T "}`, `{"title":"T"}`},
	{"dropped below the root", "fields:\n- {path: meta.updated, material: false}\n", `meta`,
		`{"updated":"x"}`, `dropped`},
	{"scalar dropped below the root", "fields:\n- {path: meta.updated, material: false}\n", `meta.updated`,
		`"x"`, `dropped`},
	{"empty immaterial record dropped below the root", "default_material: false\n", `a`, `{}`, `dropped`},
	{"set at a non-root path", "fields:\n- {path: a.tags, material: true, collection: set}\n", `a.tags`,
		`[3,1,2]`, `[1,2,3]`},
}

func TestReduceGolden(t *testing.T) {
	for _, tc := range reduceGolden {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSpec(t, tc.spec)
			p, err := ParsePath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			in := mustDecode(t, tc.in)
			before := mustMarshal(t, in)
			got, kept, err := s.Reduce(p, in)
			if err != nil {
				t.Fatalf("Reduce: %v", err)
			}
			if after := mustMarshal(t, in); after != before {
				t.Errorf("Reduce modified its input: %s became %s", before, after)
			}
			if !kept {
				if tc.want != "dropped" {
					t.Fatalf("Reduce dropped the value, want %s", tc.want)
				}
				return
			}
			if tc.want == "dropped" {
				t.Fatalf("Reduce kept %s, want it dropped", mustMarshal(t, got))
			}
			if g := mustMarshal(t, got); g != tc.want {
				t.Errorf("Reduce = %s, want %s", g, tc.want)
			}
		})
	}
}

func TestReduceGoTypes(t *testing.T) {
	got, kept, err := (*Spec)(nil).Reduce(Path{}, map[string]any{
		"i": 3, "u": uint64(1 << 60), "n": json.Number("1.50"), "ss": []string{" a "}, "ms": map[string]string{"k": " v "},
	})
	if err != nil || !kept {
		t.Fatalf("Reduce = %v, %v", kept, err)
	}
	want := `{"i":3,"ms":{"k":"v"},"n":1.5,"ss":["a"],"u":1152921504606847000}`
	if g := mustMarshal(t, got); g != want {
		t.Errorf("Reduce = %s, want %s", g, want)
	}
	// The result is pure value model.
	m := got.(map[string]any)
	if _, ok := m["ms"].(map[string]any); !ok {
		t.Errorf("map[string]string came back as %T", m["ms"])
	}
	if _, ok := m["ss"].([]any); !ok {
		t.Errorf("[]string came back as %T", m["ss"])
	}
	if _, ok := m["i"].(float64); !ok {
		t.Errorf("int came back as %T", m["i"])
	}
}

func TestReduceRejects(t *testing.T) {
	immaterial := mustSpec(t, "fields:\n- {path: x, material: false}\n")
	for _, tc := range []struct {
		name    string
		s       *Spec
		path    Path
		in      any
		wantErr string
	}{
		{"NaN", nil, Path{}, map[string]any{"a": math.NaN()}, "NaN"},
		{"NaN in a dropped part", immaterial, Path{}, map[string]any{"x": math.NaN()}, "NaN"},
		{"invalid UTF-8", nil, Path{}, []any{"\xff"}, "not valid UTF-8"},
		{"invalid UTF-8 key", nil, Path{}, map[string]any{"\xff": 1}, "key"},
		{"unsupported type", nil, Path{"a", "b"}, []any{struct{}{}}, "reduce a.b: cannot reduce a value of Go type struct {}"},
		{"bad json.Number", nil, Path{}, json.Number("x"), "not a valid JSON number"},
		{"invalid spec", &Spec{Fields: []Field{{Path: "a", Collection: "bag"}}}, Path{}, map[string]any{}, "collection"},
		{"too deep", nil, Path{}, deepArray(maxDepth + 5), "nested more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.s.Reduce(tc.path, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Reduce error %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func deepArray(n int) any {
	var v any = []any{}
	for i := 0; i < n; i++ {
		v = []any{v}
	}
	return v
}

func TestQuantize(t *testing.T) {
	for _, tc := range []struct{ x, q, want float64 }{
		{0.3, 0.1, 0.3},
		{1.005, 0.01, 1}, // the double 1.005 is a hair below 1.005
		{2.675, 0.01, 2.68},
		{0.125, 0.01, 0.13},
		{2.5, 1, 3},
		{-2.5, 1, -3},
		{7, 0.3, 6.8999999999999995}, // 23 * 0.3 in doubles: 1/0.3 is not whole
		{1.7976931348623157e308, 1e308, 1.7976931348623157e308},
		{1e300, 1e-300, 1e300},
		{123.456, 1e-10, 123.456},
	} {
		if got := quantize(tc.x, tc.q); got != tc.want {
			t.Errorf("quantize(%v, %v) = %v, want %v", tc.x, tc.q, got, tc.want)
		}
	}
}

func TestSpecChangedAfterUse(t *testing.T) {
	s := &Spec{Fields: []Field{{Path: "a", Material: true}}}
	in := map[string]any{"a": 1.0, "b": 2.0}
	reduce := func() string {
		t.Helper()
		v, _, err := s.Reduce(Path{}, in)
		if err != nil {
			t.Fatal(err)
		}
		return mustMarshal(t, v)
	}
	if got := reduce(); got != `{"a":1,"b":2}` {
		t.Fatalf("Reduce = %s", got)
	}
	s.Fields[0].Material = false // a compiled form must not be served stale
	if got := reduce(); got != `{"b":2}` {
		t.Errorf("after changing a rule, Reduce = %s, want {\"b\":2}", got)
	}
	s.Fields = append(s.Fields, Field{Path: "b", Material: true, Number: &NumberRule{Quantum: 5}})
	if got := reduce(); got != `{"b":0}` {
		t.Errorf("after adding a rule, Reduce = %s, want {\"b\":0}", got)
	}
	s.Fields[1].Number.Quantum = 0
	if _, _, err := s.Reduce(Path{}, in); err == nil {
		t.Error("after making the spec invalid, Reduce succeeded")
	}
}

func TestReduceConcurrent(t *testing.T) {
	specs := make([]*Spec, 40) // more than the compile cache holds
	for i := range specs {
		specs[i] = &Spec{Fields: []Field{{Path: fmt.Sprintf("k%d", i), Material: false}}}
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				i := (g*7 + n) % len(specs)
				key := fmt.Sprintf("k%d", i)
				v, _, err := specs[i].Reduce(Path{}, map[string]any{key: 1.0, "x": 2.0})
				if err != nil {
					t.Error(err)
					return
				}
				if _, dropped := v.(map[string]any)[key]; dropped {
					t.Errorf("spec %d kept %s", i, key)
					return
				}
			}
		}()
	}
	wg.Wait()
}
