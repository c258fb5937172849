package forme

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

func TestIDRoundTrip(t *testing.T) {
	cases := [][16]byte{
		{},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0x7c, 0xde, 0x8f, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd},
	}
	for _, u := range cases {
		s := EncodeID(u)
		if len(s) != IDLen || s != strings.ToUpper(s) {
			t.Fatalf("EncodeID(%x) = %q", u, s)
		}
		back, err := DecodeID(s)
		if err != nil || back != u {
			t.Fatalf("DecodeID(%q) = %x, %v; want %x", s, back, err, u)
		}
	}
	if EncodeID(cases[0]) != "00000000000000000000000000" || EncodeID(cases[1]) != "7ZZZZZZZZZZZZZZZZZZZZZZZZZ" {
		t.Error("extremes encode wrongly")
	}
}

func TestDecodeIDRejects(t *testing.T) {
	for _, s := range []string{"", "067NC4KG01RG50R40M30E2091", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01kdyak348e48s248h248h248h", "01KDYAK348E48S248H248H248U", "01KDYAK348E48S248H248H248I"} {
		if _, err := DecodeID(s); err == nil {
			t.Errorf("DecodeID(%q) accepted", s)
		}
	}
}

func TestNewIDIsCanonicalAndTimeOrdered(t *testing.T) {
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	prev := ""
	for i := 0; i < 100; i++ {
		now := base.Add(time.Duration(i) * time.Millisecond)
		id, err := NewID(now, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !IsCanonicalID(id) {
			t.Fatalf("%s is not canonical", id)
		}
		if got, _ := IDTime(id); !got.Equal(now) {
			t.Fatalf("IDTime(%s) = %v, want %v", id, got, now)
		}
		if id <= prev {
			t.Fatalf("%s does not sort after %s", id, prev)
		}
		prev = id
	}
	if IsCanonicalID("067NC4KG01RG50R40M30E20918") {
		t.Error("a non-v7 id from the reference corpus must not be canonical")
	}
	if _, err := NewID(base, bytes.NewReader([]byte{1, 2})); err == nil {
		t.Error("short randomness must fail")
	}
}

func TestIDGeneratorMonotonic(t *testing.T) {
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := &IDGenerator{Now: func() time.Time { return fixed }, Rand: bytes.NewReader(bytes.Repeat([]byte{0xff}, 10000))}
	seen := map[string]bool{}
	prev := ""
	for i := 0; i < 500; i++ {
		id, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] || id <= prev || !IsCanonicalID(id) {
			t.Fatalf("id %d = %s (prev %s): not unique, ordered and canonical", i, id, prev)
		}
		seen[id] = true
		prev = id
	}
}

func TestInsertID(t *testing.T) {
	const id = "01KDYAK348E48S248H248H248H"
	cases := []struct {
		name, src, want string
		changed         bool
		err             bool
	}{
		{"after kind", "---\nname: a\nkind: responsibility\nversion: 1\n---\n# A\n", "---\nname: a\nkind: responsibility\nid: " + id + "\nversion: 1\n---\n# A\n", true, false},
		{"empty id", "---\nname: a\nid:\nkind: responsibility\n---\n", "---\nname: a\nid: " + id + "\nkind: responsibility\n---\n", true, false},
		{"crlf", "---\r\nname: a\r\nkind: responsibility\r\n---\r\n", "---\r\nname: a\r\nkind: responsibility\r\nid: " + id + "\r\n---\r\n", true, false},
		{"has id", "---\nname: a\nkind: responsibility\nid: X\n---\n", "---\nname: a\nkind: responsibility\nid: X\n---\n", false, false},
		{"function", "---\nname: a\nkind: function\n---\n", "---\nname: a\nkind: function\n---\n", false, false},
		{"no frontmatter", "# A\n", "# A\n", false, true},
		{"bad yaml", "---\nname: [a\nkind: responsibility\n---\n", "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, changed, err := InsertID([]byte(c.src), id)
			if (err != nil) != c.err {
				t.Fatalf("err = %v", err)
			}
			if c.err {
				return
			}
			if changed != c.changed || string(got) != c.want {
				t.Fatalf("got %q (changed %v), want %q (changed %v)", got, changed, c.want, c.changed)
			}
			if changed {
				f := ParseFile("x", got)
				if f.Frontmatter["id"] != id {
					t.Fatalf("re-parsed id = %q", f.Frontmatter["id"])
				}
			}
		})
	}
	out, changed, err := AddMissingID([]byte("---\nname: a\nkind: responsibility\n---\n"))
	if err != nil || !changed || !IsCanonicalID(ParseFile("x", out).Frontmatter["id"]) {
		t.Fatalf("AddMissingID: %q %v %v", out, changed, err)
	}
}

func FuzzIDCodec(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), "01KDYAK348E48S248H248H248H")
	f.Add(make([]byte, 16), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		var u [16]byte
		copy(u[:], raw)
		enc := EncodeID(u)
		back, err := DecodeID(enc)
		if err != nil || back != u {
			t.Fatalf("round trip of %x: %q → %x, %v", u, enc, back, err)
		}
		if d, err := DecodeID(s); err == nil {
			if EncodeID(d) != s {
				t.Fatalf("DecodeID(%q) accepted a non-canonical spelling", s)
			}
		}
		_ = IsCanonicalID(s)
	})
}
