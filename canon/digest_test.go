package canon

import (
	"crypto/sha256"
	"math"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

func TestDigestFormat(t *testing.T) {
	// Recompute the documented construction by hand.
	leaf := blake3.Sum256([]byte(`v"a"`))
	var obj []byte
	obj = append(obj, 'o', 1, 'k')
	obj = append(obj, leaf[:]...)
	want := blake3.Sum256(obj)
	if got := DigestValue(BLAKE3, map[string]any{"k": "a"}); got != Digest(want) {
		t.Errorf("DigestValue({k:a}) = %x, want %x", got, want)
	}
	if got := DigestValue(BLAKE3, "a"); got != Digest(leaf) {
		t.Errorf("DigestValue(a) = %x, want %x", got, leaf)
	}
	arr := sha256.Sum256([]byte(`v[1,{"a":"<"}]`))
	if got := DigestValue(SHA256, []any{1.0, map[string]any{"a": "<"}}); got != Digest(arr) {
		t.Errorf("DigestValue(array) = %x, want %x", got, arr)
	}
	empty := blake3.Sum256([]byte("o"))
	if got := DigestValue(BLAKE3, map[string]any{}); got != Digest(empty) {
		t.Errorf("DigestValue({}) = %x, want %x", got, empty)
	}
	// Keys longer than 127 bytes take a two-byte uvarint.
	long := strings.Repeat("k", 200)
	obj = append([]byte{'o', 0xc8, 0x01}, long...)
	obj = append(obj, leaf[:]...)
	if got, want := DigestValue(BLAKE3, map[string]any{long: "a"}), blake3.Sum256(obj); got != Digest(want) {
		t.Errorf("DigestValue(long key) = %x, want %x", got, want)
	}
	if tok := BLAKE3.DigestToken(Digest(leaf)); tok != "blake3:"+Digest(leaf).String() {
		t.Errorf("DigestToken = %s", tok)
	}
}

func TestDigestObjectMatchesDigestValue(t *testing.T) {
	v := mustDecode(t, `{"b":{"x":[1,2]},"a":"s","😀":null,"\uffff":{},"ab":true}`)
	m := v.(map[string]any)
	for _, a := range []Algorithm{BLAKE3, SHA256} {
		var children []Child
		for _, k := range []string{"\uffff", "ab", "b", "😀", "a"} { // deliberately unsorted
			children = append(children, Child{k, DigestValue(a, m[k])})
		}
		orig := append([]Child(nil), children...)
		if got, want := DigestObject(a, children), DigestValue(a, v); got != want {
			t.Errorf("%s: DigestObject = %x, DigestValue = %x", a, got, want)
		}
		for i := range children {
			if children[i] != orig[i] {
				t.Fatal("DigestObject reordered its argument")
			}
		}
	}
	// Splitting truth across "files" does not change the digest.
	inner := DigestObject(BLAKE3, []Child{{"x", DigestValue(BLAKE3, []any{1.0, 2.0})}})
	if inner != DigestValue(BLAKE3, m["b"]) {
		t.Error("nested DigestObject differs from DigestValue")
	}
	if DigestValue(BLAKE3, map[string]string{"k": "v"}) != DigestValue(BLAKE3, map[string]any{"k": "v"}) {
		t.Error("map[string]string digests differently from map[string]any")
	}
}

func TestDigestDistinguishes(t *testing.T) {
	values := []string{`{}`, `[]`, `null`, `""`, `0`, `"o"`, `{"a":1}`, `{"a":"1"}`, `{"a":[1]}`, `[{"a":1}]`,
		`{"ab":1}`, `{"a":{"b":1}}`, `{"a":1,"b":1}`, `"{}"`}
	seen := map[Digest]string{}
	for _, src := range values {
		d := DigestValue(BLAKE3, mustDecode(t, src))
		if prev, dup := seen[d]; dup {
			t.Errorf("%s and %s share a digest", src, prev)
		}
		seen[d] = src
	}
	for _, bad := range []any{math.NaN(), "\xff", map[string]any{"\xff": 1}, struct{}{}, deepArray(maxDepth + 5)} {
		if d := DigestValue(BLAKE3, bad); d != (Digest{}) {
			t.Errorf("DigestValue(%T) = %x, want the zero Digest", bad, d)
		}
	}
	if d := DigestObject(BLAKE3, []Child{{Key: "\xff"}}); d != (Digest{}) {
		t.Errorf("DigestObject(invalid key) = %x, want the zero Digest", d)
	}
}

func TestProject(t *testing.T) {
	v := mustDecode(t, `{"a":{"b":1,"c":2},"d":3,"items":[{"id":1,"x":2},{"x":3},"s"],"e":{"f":{"g":4}}}`)
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{""}, mustMarshal(t, v)},
		{[]string{"a"}, `{"a":{"b":1,"c":2}}`},
		{[]string{"a.b", "d"}, `{"a":{"b":1},"d":3}`},
		{[]string{"a.b", "a"}, `{"a":{"b":1,"c":2}}`},
		{[]string{"a.z", "zz"}, `{}`},
		{[]string{"d.x"}, `{}`},
		{[]string{"items.id"}, `{"items":[{"id":1}]}`},
		{[]string{"items"}, `{"items":[{"id":1,"x":2},{"x":3},"s"]}`},
		{[]string{"e.f.g"}, `{"e":{"f":{"g":4}}}`},
		{nil, `{}`},
	} {
		var ps []Path
		for _, s := range tc.paths {
			p, err := ParsePath(s)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		if got := mustMarshal(t, Project(v, ps)); got != tc.want {
			t.Errorf("Project(%q) = %s, want %s", tc.paths, got, tc.want)
		}
	}
	if got := mustMarshal(t, Project("scalar", []Path{{"a"}})); got != `{}` {
		t.Errorf("Project(scalar) = %s", got)
	}
}

func TestMemoKey(t *testing.T) {
	k := MemoKey(BLAKE3, "sha256:c", []string{"blake3:x", "cold-start"})
	if want := BLAKE3.Token([]byte(`["sha256:c",["blake3:x","cold-start"]]`)); k != want {
		t.Errorf("MemoKey = %s, want %s", k, want)
	}
	if MemoKey(BLAKE3, "c", nil) != BLAKE3.Token([]byte(`["c",[]]`)) {
		t.Error("MemoKey with no inputs is not over an empty list")
	}
	if MemoKey(BLAKE3, "c", []string{"a", "b"}) == MemoKey(BLAKE3, "c", []string{"b", "a"}) {
		t.Error("MemoKey ignores edge order")
	}
	if MemoKey(BLAKE3, "c", []string{"a,b"}) == MemoKey(BLAKE3, "c", []string{"a", "b"}) {
		t.Error("MemoKey is ambiguous")
	}
	if !strings.HasPrefix(MemoKey(SHA256, "c\xff", []string{"\xfe"}), "sha256:") {
		t.Error("MemoKey with invalid UTF-8 failed")
	}
}

// fingerprintSpec declares two facets over a truth with immaterial churn.
const fingerprintSpec = `
fields:
  - {path: updated, material: false}
  - {path: funding.request_id, material: false}
  - {path: funding.amount, material: true, number: {quantum: 1000}}
  - {path: tags, material: true, collection: set}
  - {path: hiring.roles, material: true, text: {case_insensitive: true}}
facets:
  - {facet: funding, paths: [funding]}
  - {facet: hiring, paths: [hiring, tags]}
`

const fingerprintBase = `{
  "name": "Acme",
  "updated": "2024-01-01T00:00:00Z",
  "tags": ["ai", "b2b"],
  "funding": {"amount": 1200000, "round": "A", "request_id": "r1"},
  "hiring": {"roles": ["Engineer"], "open": 3}
}`

func TestFingerprintGolden(t *testing.T) {
	spec := mustSpec(t, fingerprintSpec)
	base, err := Fingerprints(BLAKE3, spec, mustDecode(t, fingerprintBase))
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 3 || base[Atomic] == "" || base["funding"] == "" || base["hiring"] == "" {
		t.Fatalf("Fingerprints = %v, want @atomic, funding and hiring", base)
	}
	all := []string{Atomic, "funding", "hiring"}
	for _, tc := range []struct {
		name  string
		edit  func(m map[string]any)
		moved []string // the tokens that must move; all others must stay
	}{
		{"nothing", func(m map[string]any) {}, nil},
		{"immaterial timestamp", func(m map[string]any) { m["updated"] = "2025-06-01T00:00:00Z" }, nil},
		{"immaterial field inside a facet", func(m map[string]any) { fund(m)["request_id"] = "r2" }, nil},
		{"immaterial field removed", func(m map[string]any) { delete(m, "updated") }, nil},
		{"set reordered", func(m map[string]any) { m["tags"] = []any{"b2b", "ai"} }, nil},
		{"number within its quantum", func(m map[string]any) { fund(m)["amount"] = 1200400.0 }, nil},
		{"number past its quantum", func(m map[string]any) { fund(m)["amount"] = 1200600.0 }, []string{Atomic, "funding"}},
		{"whitespace", func(m map[string]any) { m["name"] = "  Acme\n" }, nil},
		{"NFC", func(m map[string]any) { m["name"] = "Acme\u0301" }, []string{Atomic}},
		{"case in a case-insensitive field", func(m map[string]any) { hire(m)["roles"] = []any{"ENGINEER"} }, nil},
		{"case in an ordinary field", func(m map[string]any) { fund(m)["round"] = "a" }, []string{Atomic, "funding"}},
		{"change inside funding", func(m map[string]any) { fund(m)["round"] = "B" }, []string{Atomic, "funding"}},
		{"change inside hiring", func(m map[string]any) { hire(m)["open"] = 4.0 }, []string{Atomic, "hiring"}},
		{"set member added", func(m map[string]any) { m["tags"] = []any{"ai", "b2b", "ml"} }, []string{Atomic, "hiring"}},
		{"change outside every facet", func(m map[string]any) { m["name"] = "Acme Inc" }, []string{Atomic}},
		{"new material key", func(m map[string]any) { m["extra"] = map[string]any{} }, []string{Atomic}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustDecode(t, fingerprintBase).(map[string]any)
			tc.edit(m)
			got, err := Fingerprints(BLAKE3, spec, m)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range all {
				moved := got[f] != base[f]
				want := false
				for _, w := range tc.moved {
					want = want || w == f
				}
				if moved != want {
					t.Errorf("facet %s moved=%v, want moved=%v", f, moved, want)
				}
			}
		})
	}
	// The NFC case: composed and decomposed é give one token.
	a, _ := Fingerprints(BLAKE3, nil, map[string]any{"n": "caf\u00e9"})
	b, _ := Fingerprints(BLAKE3, nil, map[string]any{"n": "cafe\u0301"})
	if a[Atomic] != b[Atomic] {
		t.Error("composed and decomposed é fingerprint differently")
	}
}

func fund(m map[string]any) map[string]any { return m["funding"].(map[string]any) }
func hire(m map[string]any) map[string]any { return m["hiring"].(map[string]any) }

func TestFingerprintDefaultMaterialFalse(t *testing.T) {
	spec := mustSpec(t, "default_material: false\nfields:\n- {path: status, material: true}\n- {path: items.id, material: true}\n")
	fp := func(src string) string {
		t.Helper()
		m, err := Fingerprints(BLAKE3, spec, mustDecode(t, src))
		if err != nil {
			t.Fatal(err)
		}
		return m[Atomic]
	}
	base := fp(`{"status":"ok","items":[{"id":1,"note":"x"}],"noise":1}`)
	if base == fp(`{"status":"down","items":[{"id":1,"note":"x"}],"noise":1}`) {
		t.Error("a change to an explicitly material field did not move the token (the reference bug)")
	}
	if base == fp(`{"status":"ok","items":[{"id":2,"note":"x"}],"noise":1}`) {
		t.Error("a change to a material field inside array records did not move the token")
	}
	if base != fp(`{"status":"ok","items":[{"id":1,"note":"y"}],"noise":2}`) {
		t.Error("a change to immaterial fields moved the token")
	}
	empty := fp(`{"noise":1}`)
	if empty != BLAKE3.DigestToken(DigestValue(BLAKE3, map[string]any{})) {
		t.Error("a truth with nothing material is not the token of {}")
	}
	if empty == ColdStart || strings.HasPrefix(empty, ColdStart) {
		t.Errorf("empty material truth token %s collides with %s", empty, ColdStart)
	}
}

func TestFingerprintsNoSpec(t *testing.T) {
	m, err := Fingerprints(SHA256, nil, map[string]any{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || !strings.HasPrefix(m[Atomic], "sha256:") {
		t.Errorf("Fingerprints(nil spec) = %v", m)
	}
	if _, err := Fingerprints(BLAKE3, &Spec{Facets: []Facet{{Facet: Atomic, Paths: []string{"a"}}}}, map[string]any{}); err == nil {
		t.Error("Fingerprints accepted a spec that redeclares @atomic")
	}
	if _, err := Fingerprints("md5", nil, map[string]any{}); err == nil || !strings.Contains(err.Error(), "unknown hash algorithm") {
		t.Errorf("Fingerprints with algorithm md5: error %v", err)
	}
	if _, err := Fingerprints(BLAKE3, nil, map[string]any{"a": math.Inf(1)}); err == nil {
		t.Error("Fingerprints accepted an infinite number")
	}
	// A facet that selects nothing has the token of {}.
	s := &Spec{Facets: []Facet{{Facet: "f", Paths: []string{"missing"}}}}
	m, err = Fingerprints(BLAKE3, s, map[string]any{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if m["f"] != BLAKE3.DigestToken(DigestValue(BLAKE3, map[string]any{})) {
		t.Errorf("empty facet token %s", m["f"])
	}
}
