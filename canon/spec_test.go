package canon

import (
	"slices"
	"strings"
	"testing"
)

const specJSON = `{
  "node": "competitor-monitor",
  "default_material": true,
  "fields": [
    {"path": "meta.updated", "material": false},
    {"path": "tags", "material": true, "collection": "set"},
    {"path": "funding.amount", "material": true, "number": {"quantum": 0.01}},
    {"path": "names", "material": true, "text": {"collapse_whitespace": false, "case_insensitive": true}},
    {"path": "docs.notes\\.md", "material": false}
  ],
  "facets": [
    {"facet": "funding", "paths": ["funding"]},
    {"facet": "hiring", "paths": ["hiring", "meta.team"]}
  ]
}`

const specYAML = `
node: competitor-monitor
default_material: true
fields:
  - path: meta.updated
    material: false
  - {path: tags, material: true, collection: set}
  - path: funding.amount
    material: true
    number: {quantum: 0.01}
  - path: names
    material: true
    text:
      collapse_whitespace: false
      case_insensitive: true
  - path: 'docs.notes\.md'
    material: false
facets:
  - facet: funding
    paths: [funding]
  - facet: hiring
    paths: [hiring, meta.team]
`

func TestParseSpecJSONAndYAML(t *testing.T) {
	js, err := ParseSpec([]byte(specJSON))
	if err != nil {
		t.Fatalf("ParseSpec(JSON): %v", err)
	}
	ys, err := ParseSpec([]byte(specYAML))
	if err != nil {
		t.Fatalf("ParseSpec(YAML): %v", err)
	}
	if js.Hash() != ys.Hash() {
		t.Errorf("JSON and YAML forms hash differently: %s vs %s", js.Hash(), ys.Hash())
	}
	if js.Node != "competitor-monitor" || len(js.Fields) != 5 || len(js.Facets) != 2 {
		t.Fatalf("parsed %+v", js)
	}
	f := js.Fields[3]
	if f.Path != "names" || !f.Material || f.Text == nil || f.Text.CollapseWhitespace == nil || *f.Text.CollapseWhitespace || !f.Text.CaseInsensitive {
		t.Errorf("names field parsed as %+v", f)
	}
	if q := js.Fields[2].Number; q == nil || q.Quantum != 0.01 {
		t.Errorf("quantum parsed as %+v", q)
	}
	if js.Fields[1].Collection != "set" || js.Fields[4].Path != `docs.notes\.md` {
		t.Errorf("fields parsed as %+v", js.Fields)
	}
	if got := FacetNames(js); !slices.Equal(got, []string{"funding", "hiring"}) {
		t.Errorf("FacetNames = %q", got)
	}
	if FacetNames(nil) != nil {
		t.Error("FacetNames(nil) is not nil")
	}
	// A flow-style YAML document that starts with '{' but is not JSON.
	if _, err := ParseSpec([]byte(`{node: x, fields: [{path: a, material: true}]}`)); err != nil {
		t.Errorf("ParseSpec(YAML flow mapping): %v", err)
	}
	// Absent and null keys are the defaults.
	for _, in := range []string{"{}", "node: n\nfields: null\nfacets: []\ndefault_material: null\n"} {
		s, err := ParseSpec([]byte(in))
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", in, err)
		} else if s.Hash() != (*Spec)(nil).Hash() {
			t.Errorf("ParseSpec(%q) does not hash like the nil spec", in)
		}
	}
}

func TestParseSpecRejects(t *testing.T) {
	for _, tc := range []struct{ name, in, wantErr string }{
		{"unknown top key", `{"node":"n","feilds":[]}`, `unknown key "feilds"`},
		{"unknown yaml key", "node: n\nfacet: []\n", `unknown key "facet"`},
		{"unknown field key", `{"fields":[{"path":"a","material":true,"materal":false}]}`, `fields[0]: unknown key "materal"`},
		{"unknown text key", `{"fields":[{"path":"a","material":true,"text":{"colapse_whitespace":true}}]}`, `unknown key "colapse_whitespace"`},
		{"unknown number key", `{"fields":[{"path":"a","material":true,"number":{"quantum":1,"step":2}}]}`, `unknown key "step"`},
		{"unknown facet key", `{"facets":[{"facet":"x","paths":["a"],"path":"a"}]}`, `unknown key "path"`},
		{"missing material", `{"fields":[{"path":"a"}]}`, `missing "material"`},
		{"missing path", `{"fields":[{"material":true}]}`, `fields[0]: missing "path"`},
		{"material not bool", `{"fields":[{"path":"a","material":"yes"}]}`, `material must be true or false, not the string "yes"`},
		{"fields not list", `{"fields":{}}`, "fields must be a list"},
		{"spec not object", `[1]`, "the spec must be an object"},
		{"default_material string", `{"default_material":"false"}`, "default_material must be true or false"},
		{"redeclared atomic", `{"facets":[{"facet":"@atomic","paths":["a"]}]}`, `"@atomic" is reserved`},
		{"facet twice", `{"facets":[{"facet":"x","paths":["a"]},{"facet":"x","paths":["b"]}]}`, `facets[1] (facet "x"): facet declared twice`},
		{"facet without paths", `{"facets":[{"facet":"x","paths":[]}]}`, "at least one path"},
		{"facet unnamed", `{"facets":[{"facet":"","paths":["a"]}]}`, "facet name is empty"},
		{"facet bad path", `{"facets":[{"facet":"x","paths":["a..b"]}]}`, "paths[0]: path \"a..b\" has an empty segment"},
		{"bad collection", `{"fields":[{"path":"a","material":true,"collection":"bag"}]}`, `collection must be "ordered" or "set", not "bag"`},
		{"zero quantum", `{"fields":[{"path":"a","material":true,"number":{"quantum":0}}]}`, "quantum must be a positive finite number, not 0"},
		{"negative quantum", "fields:\n  - {path: a, material: true, number: {quantum: -1}}\n", "quantum must be a positive"},
		{"quantum string", `{"fields":[{"path":"a","material":true,"number":{"quantum":"1"}}]}`, "number.quantum must be a number"},
		{"yaml infinite quantum", "fields:\n  - {path: a, material: true, number: {quantum: .inf}}\n", "not finite"},
		{"bad field path", `{"fields":[{"path":"a\\x","material":true}]}`, `fields[0] (path "a\\x"): path "a\\x" has an invalid escape`},
		{"same path twice", `{"fields":[{"path":"a.b","material":true},{"path":"a.b","material":false}]}`, `fields[1] (path "a.b"): a rule for path "a.b" is declared twice`},
		{"duplicate json key", `{"node":"a","node":"b"}`, `duplicate object key "node"`},
		{"duplicate yaml key", "node: a\nnode: b\n", `duplicate key "node"`},
		{"yaml alias", "fields:\n  - &f {path: a, material: true}\n  - *f\n", "anchors are not supported"},
		{"bad json", `{"node": "a",,}`, "not valid JSON"},
		{"empty", "", "spec is empty"},
		{"empty yaml document", "---\n", "spec is empty"},
		{"only a comment", "# nothing\n", "spec is empty"},
		{"two yaml documents", "node: a\n---\nnode: b\n", "more than one YAML document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.in))
			if err == nil {
				t.Fatalf("ParseSpec = %+v, want an error containing %q", s, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseSpec error %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestSpecHash(t *testing.T) {
	yes, no := true, false
	base := &Spec{
		Node:   "a",
		Fields: []Field{{Path: "x", Material: false}, {Path: "y", Material: true, Collection: "set"}},
		Facets: []Facet{{Facet: "f", Paths: []string{"y", "x"}}},
	}
	same := []*Spec{
		{Node: "other", Fields: []Field{{Path: "y", Material: true, Collection: "set"}, {Path: "x"}}, DefaultMaterial: &yes,
			Facets: []Facet{{Facet: "f", Paths: []string{"x", "y"}}}},
	}
	for _, s := range same {
		if s.Hash() != base.Hash() {
			t.Errorf("equivalent spec %+v hashes differently", s)
		}
	}
	different := []*Spec{
		{Fields: base.Fields, Facets: base.Facets, DefaultMaterial: &no},
		{Fields: []Field{{Path: "x", Material: true}, base.Fields[1]}, Facets: base.Facets},
		{Fields: []Field{base.Fields[0], {Path: "y", Material: true}}, Facets: base.Facets},
		{Fields: []Field{base.Fields[0], {Path: "y", Material: true, Collection: "set", Text: &TextRule{}}}, Facets: base.Facets},
		{Fields: []Field{base.Fields[0], {Path: "y", Material: true, Collection: "set", Number: &NumberRule{Quantum: 1}}}, Facets: base.Facets},
		{Fields: base.Fields, Facets: []Facet{{Facet: "g", Paths: []string{"x", "y"}}}},
		{Fields: base.Fields, Facets: []Facet{{Facet: "f", Paths: []string{"y"}}}},
		{Fields: base.Fields},
		nil,
	}
	seen := map[string]int{base.Hash(): -1}
	for i, s := range different {
		h := s.Hash()
		if j, dup := seen[h]; dup {
			t.Errorf("spec %d hashes like spec %d", i, j)
		}
		seen[h] = i
	}
	if !strings.HasPrefix(base.Hash(), "blake3:") {
		t.Errorf("Hash = %s, want a blake3 token", base.Hash())
	}
	// "ordered" is the default collection; an omitted text collapse is true.
	a := &Spec{Fields: []Field{{Path: "p", Material: true, Collection: "ordered", Text: &TextRule{}}}}
	b := &Spec{Fields: []Field{{Path: "p", Material: true, Text: &TextRule{CollapseWhitespace: &yes}}}}
	if a.Hash() != b.Hash() {
		t.Error("defaults are not normalized in Hash")
	}
	if (&Spec{}).Hash() != (*Spec)(nil).Hash() {
		t.Error("empty and nil specs hash differently")
	}
}

func TestNilSpec(t *testing.T) {
	var s *Spec
	if err := s.Validate(); err != nil {
		t.Errorf("nil Validate: %v", err)
	}
	if m, r := s.Materiality(Path{"a", "b"}); !m || r {
		t.Errorf("nil Materiality = %v, %v; want true, false", m, r)
	}
	v, kept, err := s.Reduce(Path{"a"}, " x ")
	if err != nil || !kept || v != "x" {
		t.Errorf("nil Reduce = %v, %v, %v", v, kept, err)
	}
}

func TestMateriality(t *testing.T) {
	no := false
	s := &Spec{DefaultMaterial: &no, Fields: []Field{
		{Path: "a", Material: true},
		{Path: "a.b", Material: false},
		{Path: "c.d", Material: true},
	}}
	for _, tc := range []struct {
		path            string
		material, ruled bool
	}{
		{"", true, false},
		{"a", true, true},
		{"a.x", true, true},
		{"a.b", false, true},
		{"a.b.c", false, true},
		{"c", false, false},
		{"c.d", true, true},
		{"c.e", false, false},
		{"z", false, false},
	} {
		p, _ := ParsePath(tc.path)
		m, r := s.Materiality(p)
		if m != tc.material || r != tc.ruled {
			t.Errorf("Materiality(%q) = %v, %v; want %v, %v", tc.path, m, r, tc.material, tc.ruled)
		}
	}
}
