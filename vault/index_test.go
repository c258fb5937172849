package vault

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func indexNames(idx *gitIndex) string {
	var names []string
	for i := 0; i < idx.len(); i++ {
		names = append(names, string(idx.name(i)))
	}
	return strings.Join(names, ",")
}

func TestIndexPutDelKeepsOrderAndRoundTrips(t *testing.T) {
	idx := &gitIndex{ver: 2}
	for _, n := range []string{"m", "a/b", "z", "a/c-long-name-that-needs-more-padding", "b"} {
		idx.put(indexEntry{Name: n, Mode: 0o100644})
	}
	if got := indexNames(idx); got != "a/b,a/c-long-name-that-needs-more-padding,b,m,z" {
		t.Fatalf("order: %s", got)
	}
	oid := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	idx.put(indexEntry{Name: "b", Mode: 0o100755, Size: 7, OID: oid})
	if e := idx.get("b"); e == nil || e.Size != 7 || e.OID != oid || e.Mode != 0o100755 {
		t.Fatalf("patched entry: %+v", e)
	}
	idx.del("m")
	idx.del("not-there")
	back, err := parseIndex(idx.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got := indexNames(back); got != "a/b,a/c-long-name-that-needs-more-padding,b,z" {
		t.Fatalf("after delete and round trip: %s", got)
	}
	if e := back.get("b"); e == nil || e.OID != oid {
		t.Fatal("patched entry lost in the round trip")
	}
	data := idx.encode()
	data[20] ^= 1
	if _, err := parseIndex(data); err == nil {
		t.Fatal("a damaged index parsed")
	}
}
