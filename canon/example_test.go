package canon_test

import (
	"fmt"

	"github.com/prose-store/prose/canon"
)

func ExampleMarshal() {
	v, err := canon.Decode([]byte(`{"b": [1.0, 1e21, 0.0000001], "a": "</script>", "😀": 1, "\uffff": 2}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := canon.Marshal(v)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output: {"a":"</script>","b":[1,1e+21,1e-7],"😀":1,"￿":2}
}

func ExampleDecode_duplicateKey() {
	_, err := canon.Decode([]byte(`{"id": 1, "id": 2}`))
	fmt.Println(err)
	// Output: canon: invalid JSON at line 1, column 11: duplicate object key "id"
}

func ExampleParsePath() {
	p, err := canon.ParsePath(`docs.notes\.md`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %s\n", []string(p), p)
	// Output: ["docs" "notes.md"] docs.notes\.md
}

func ExampleSpec_Reduce() {
	spec, err := canon.ParseSpec([]byte(`
default_material: true
fields:
  - {path: meta.updated, material: false}
  - {path: tags, material: true, collection: set}
  - {path: price, material: true, number: {quantum: 0.01}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	truth, _ := canon.Decode([]byte(`{"meta": {"updated": "2024-05-01"}, "tags": ["b", "a"], "price": 9.999, "title": "  Caf\u0065\u0301  menu "}`))
	reduced, _, err := spec.Reduce(canon.Path{}, truth)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := canon.Marshal(reduced)
	fmt.Println(string(b))
	// Output: {"price":10,"tags":["a","b"],"title":"Café menu"}
}

func ExampleFingerprints() {
	spec, _ := canon.ParseSpec([]byte(`{"facets": [{"facet": "funding", "paths": ["funding"]}]}`))
	before, _ := canon.Decode([]byte(`{"name": "Acme", "funding": {"round": "A"}}`))
	after, _ := canon.Decode([]byte(`{"name": "Acme Inc", "funding": {"round": "A"}}`))
	a, _ := canon.Fingerprints(canon.BLAKE3, spec, before)
	b, _ := canon.Fingerprints(canon.BLAKE3, spec, after)
	fmt.Println("@atomic moved:", a["@atomic"] != b["@atomic"])
	fmt.Println("funding moved:", a["funding"] != b["funding"])
	// Output:
	// @atomic moved: true
	// funding moved: false
}
