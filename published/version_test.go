package published

import (
	"encoding/hex"
	"io/fs"
	"testing"

	"github.com/zeebo/blake3"
)

func TestVersionOf(t *testing.T) {
	empty := blake3.Sum256([]byte("tree 0\x00"))
	if got, want := VersionOf(nil), "blake3:"+hex.EncodeToString(empty[:]); got != want {
		t.Errorf("empty version = %s, want %s", got, want)
	}
	entry := func(p string, mode uint32, content string) Entry {
		return Entry{Path: p, Mode: 0o644 | fsMode(mode), Size: int64(len(content)), Sum: blake3.Sum256([]byte(content))}
	}
	// One file in one directory, by hand.
	sum := blake3.Sum256([]byte("x"))
	inner := []byte("100644 b\x00")
	inner = append(inner, sum[:]...)
	innerSum := blake3.Sum256(append([]byte("tree 41\x00"), inner...))
	outer := append([]byte("40000 a\x00"), innerSum[:]...)
	want := blake3.Sum256(append([]byte("tree 40\x00"), outer...))
	if got := VersionOf([]Entry{entry("a/b", 0, "x")}); got != "blake3:"+hex.EncodeToString(want[:]) {
		t.Errorf("version of a/b = %s, want %x", got, want)
	}

	base := []Entry{entry("a-b/c", 0, "1"), entry("a.txt", 0, "2"), entry("a/b", 0, "3"), entry("z", 0, "4")}
	v := VersionOf(base)
	shuffled := []Entry{base[3], base[1], base[0], base[2]}
	if VersionOf(shuffled) != v {
		t.Error("version depends on entry order")
	}
	variants := map[string][]Entry{
		"content":    {base[0], base[1], entry("a/b", 0, "3!"), base[3]},
		"mode":       {base[0], base[1], entry("a/b", 0o111, "3"), base[3]},
		"moved":      {base[0], base[1], entry("a/c", 0, "3"), base[3]},
		"deeper":     {base[0], base[1], entry("a/b/b", 0, "3"), base[3]},
		"removed":    {base[0], base[1], base[3]},
		"file->dir":  {base[0], base[1], base[2], entry("z/z", 0, "4")},
		"dir rename": {entry("a-c/c", 0, "1"), base[1], base[2], base[3]},
	}
	for name, es := range variants {
		if VersionOf(es) == v {
			t.Errorf("%s: version did not change", name)
		}
	}
}

func fsMode(m uint32) fs.FileMode { return fs.FileMode(m) }
