package forme

import (
	"strings"
	"testing"

	"github.com/prose-store/prose/canon"
)

func TestParsePostcondition(t *testing.T) {
	for _, c := range []struct {
		text, kind, path, extra string
	}{
		{"`count` is required", CheckRequired, "count", ""},
		{"`status.open` must be present.", CheckRequired, "status.open", ""},
		{"each `orders` has: `id`, `amount` and `when`", CheckEachHas, "orders", "id,amount,when"},
		{"Each `orders` has `id`", CheckEachHas, "orders", "id"},
		{"`state` is one of `open`, `closed`, or `held`", CheckOneOf, "state", "open,closed,held"},
		{"`orders.*.state` is one of `new`, `paid`", CheckOneOf, "orders.*.state", "new,paid"},
		{"`orders` are unique by `id`.", CheckUnique, "orders", "id"},
		{"`tags` are unique", CheckUnique, "tags", ""},
	} {
		pc, ok := ParsePostcondition(c.text)
		if !ok {
			t.Errorf("%q: not read as checkable", c.text)
			continue
		}
		extra := strings.Join(append(append(pc.Fields, pc.Values...), pc.By), ",")
		extra = strings.TrimSuffix(extra, ",")
		if pc.Kind != c.kind || pc.Path != c.path || extra != c.extra || pc.Condition != c.text {
			t.Errorf("%q: %+v", c.text, pc)
		}
	}
	// Outside the form: left unchecked, never read loosely.
	for _, text := range []string{
		"every competitor cites a corroborating source",
		"each article has: a summary, relevance score, and key claims",
		"`state` is one of open or closed",
		"`count` is required unless the feed is empty",
		"`orders` are unique by id",
		"outreach is specific",
	} {
		if pc, ok := ParsePostcondition(text); ok {
			t.Errorf("%q read as %+v", text, pc)
		}
	}
}

func TestPostCheckOnTruth(t *testing.T) {
	truth, err := canon.Decode([]byte(`{"count": 3, "none": null, "state": "open", "n": 2,
		"orders": [{"id": "a", "state": "new"}, {"id": "b", "state": "paid"}],
		"dup": [{"id": "a"}, {"id": "a"}], "tags": ["x", "y", "x"],
		"byfile": {"a": {"id": 1}, "b": {"other": 2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, broken string }{
		{"`count` is required", ""},
		{"`missing` is required", "missing is missing"},
		{"`none` is required", "none is missing"},
		{"`orders.*.id` is required", ""},
		{"`byfile.*.id` is required", "byfile.b.id is missing"},
		{"each `orders` has: `id`, `state`", ""},
		{"each `byfile` has: `id`", "byfile.b has no id"},
		{"each `tags` has: `id`", `tags[0] is a string, not an object with id`},
		{"each `count` has: `id`", "count is a number, not a list or an object of items"},
		{"each `absent` has: `id`", ""},
		{"`state` is one of `open`, `closed`", ""},
		{"`state` is one of `closed`, `held`", `state is "open", not one of closed, held`},
		{"`n` is one of `1`, `2`", ""},
		{"`orders.*.state` is one of `new`", `orders[1].state is "paid", not one of new`},
		{"`orders` is one of `x`", "orders is a list, not one of x"},
		{"`orders` are unique by `id`", ""},
		{"`dup` are unique by `id`", `dup[1] repeats id "a" of dup[0]`},
		{"`tags` are unique", "tags[2] repeats tags[0]"},
		{"`orders` are unique by `state`", ""},
		{"`byfile` are unique by `id`", "byfile.b has no id"},
	} {
		pc, ok := ParsePostcondition(c.text)
		if !ok {
			t.Fatalf("%q not checkable", c.text)
		}
		if got := pc.Check(truth); got != c.broken {
			t.Errorf("%q: got %q, want %q", c.text, got, c.broken)
		}
	}
}

func TestCompileCarriesChecks(t *testing.T) {
	src := "---\nname: reg\nkind: responsibility\nid: 01KDYAK348E48S248H248H248H\n---\n\n### Maintains\n\n" +
		"- `orders`: the orders\n- each `orders` has: `id`\n- postcondition: `orders` are unique by `id`.\n- postcondition: nothing is dropped.\n"
	m, diags := Compile(ParseSources([]Source{{Path: "reg.prose.md", Data: []byte(src)}}, Options{}))
	if HasErrors(diags) {
		t.Fatal(diags)
	}
	if len(m.Postconditions) != 1 {
		t.Fatalf("%+v", m.Postconditions)
	}
	p := m.Postconditions[0]
	if len(p.Conditions) != 3 || len(p.Checks) != 2 || p.Checks[0].Kind != CheckUnique || p.Checks[1].Kind != CheckEachHas {
		t.Fatalf("%+v", p)
	}
	arts, err := m.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	if a := string(arts[p.Artifact]); !strings.Contains(a, `"kind": "unique"`) || !strings.Contains(a, `"by": "id"`) {
		t.Fatalf("artifact: %s", a)
	}
}
