package vault

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prose-store/prose/canon"
	"github.com/prose-store/prose/receipt"
)

// FuzzParseIndex: any bytes either parse as a git index or are refused with
// an error; what parses encodes back to an index that parses to the same
// entries.
func FuzzParseIndex(f *testing.F) {
	idx := &gitIndex{ver: 2}
	for _, n := range []string{"a/b", "b", "published/n/x.json"} {
		idx.put(indexEntry{Name: n, Mode: 0o100644, Size: 3, OID: plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")})
	}
	f.Add(idx.encode())
	f.Add(rawIndex(idx, 3, nil))
	f.Add(rawIndex(idx, 2, []byte("TREE\x00\x00\x00\x00")))
	f.Add((&gitIndex{ver: 2}).encode())
	f.Add([]byte("DIRC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := parseIndex(data)
		if err != nil {
			return
		}
		back, err := parseIndex(idx.encode())
		if err != nil {
			t.Fatalf("an index that parsed does not parse once encoded: %v", err)
		}
		if back.len() != idx.len() {
			t.Fatalf("%d entries became %d", idx.len(), back.len())
		}
		for i := 0; i < idx.len(); i++ {
			if a, b := idx.entry(i), back.entry(i); !reflect.DeepEqual(a, b) {
				t.Fatalf("entry %d: %+v became %+v", i, a, b)
			}
		}
	})
}

// FuzzParseConfig: any prose.yaml either loads or is refused with an error
// naming the file; what loads encodes to settings that load the same.
func FuzzParseConfig(f *testing.F) {
	f.Add(defaultConfig().encode())
	f.Add([]byte("format: 1\nhash: sha256\nbranch: trunk\nidentity:\n  name: a\n  email: b@c\n"))
	f.Add([]byte("format: 99\n"))
	f.Add([]byte("format: 1\nunknown: x\n"))
	f.Add([]byte("{format: 1, hash: md5}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConfig("prose.yaml", data)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte("prose.yaml")) {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		back, err := parseConfig("prose.yaml", c.encode())
		if err != nil {
			t.Fatalf("settings that loaded do not load once written: %v\n%s", err, c.encode())
		}
		if !reflect.DeepEqual(c, back) {
			t.Fatalf("%+v became %+v", c, back)
		}
	})
}

// FuzzParseReceiptMessage: any commit message either carries no receipt,
// a receipt that is refused, or one that writes back to a message that
// parses to the same receipt.
func FuzzParseReceiptMessage(f *testing.F) {
	r := &receipt.Receipt{
		Schema:              receipt.Schema,
		HashAlgorithm:       canon.BLAKE3,
		Node:                "n",
		ContractFingerprint: "none",
		Wake:                receipt.Wake{Source: receipt.WakeInput, Refs: []string{}},
		InputFingerprints:   []string{"cold-start"},
		Fingerprints:        map[string]string{receipt.AtomicFacet: "blake3:" + strings.Repeat("ab", 32)},
		SemanticDiff:        map[string]any{"moved": []any{"@atomic"}},
		Status:              receipt.Rendered,
		Cost:                receipt.Cost{Provider: "offline", Model: "offline", SurpriseCause: receipt.WakeInput},
		Sig:                 receipt.UnsignedSig(),
	}
	if err := r.Seal(); err != nil {
		f.Fatal(err)
	}
	msg, err := receiptMessage(r, []string{"@atomic"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(msg))
	f.Add("publish n\n\n{}")
	f.Add("a user commit\n\nwith a body")
	f.Add("x\n\n{\"node\": 1}")
	f.Fuzz(func(t *testing.T, msg string) {
		got, ok, err := parseReceiptMessage(msg)
		if !ok || err != nil {
			if got != nil {
				t.Fatal("a receipt returned with an error or none found")
			}
			return
		}
		again, err := receiptMessage(got, nil)
		if err != nil {
			return // what parses leniently may not be what prose writes
		}
		back, ok, err := parseReceiptMessage(string(again))
		if !ok || err != nil || back.ContentHash != got.ContentHash || back.Node != got.Node {
			t.Fatalf("receipt %+v did not survive its message: %v", got, err)
		}
	})
}

// FuzzIdxContains: the pack-index lookup reads any bytes without failing,
// and finds an object only where the index's name table lists it: at the
// place its fan-out bucket says.
func FuzzIdxContains(f *testing.F) {
	// A valid index of three objects, one in the first bucket, one in the
	// last.
	names := []plumbing.Hash{{0x00, 1}, {0x7f, 2}, {0xff, 3}}
	valid := []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}
	for b := 0; b < 256; b++ {
		n := 0
		for _, h := range names {
			if int(h[0]) <= b {
				n++
			}
		}
		valid = binary.BigEndian.AppendUint32(valid, uint32(n))
	}
	for _, h := range names {
		valid = append(valid, h[:]...)
	}
	valid = append(valid, make([]byte, 3*8+40)...)
	for _, h := range names {
		f.Add(valid, h[:])
	}
	f.Add(valid[:100], names[0][:])
	f.Add([]byte{}, []byte{})
	path := filepath.Join(f.TempDir(), "pack.idx")
	f.Fuzz(func(t *testing.T, data, id []byte) {
		var h plumbing.Hash
		copy(h[:], id)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		found := idxContains(path, h)
		if bytes.Equal(data, valid) {
			for _, name := range names {
				if name == h && !found {
					t.Fatalf("%s is listed by a valid index and was not found", h)
				}
			}
		}
		if !found {
			return
		}
		// Found: the name sits in the name table inside h's bucket.
		lo := uint32(0)
		if h[0] > 0 {
			lo = binary.BigEndian.Uint32(data[8+4*(int(h[0])-1):])
		}
		hi := binary.BigEndian.Uint32(data[8+4*int(h[0]):])
		for i := lo; i < hi; i++ {
			if bytes.Equal(data[8+1024+20*int(i):8+1024+20*int(i)+20], h[:]) {
				return
			}
		}
		t.Fatalf("found %s, which its bucket [%d, %d) does not list", h, lo, hi)
	})
}

// FuzzSumCacheLoad: any file content loads without a panic, and only
// records that pass their checksum are used; a record put and saved over
// it loads back.
func FuzzSumCacheLoad(f *testing.F) {
	v, err := Init(filepath.Join(f.TempDir(), "vault"), InitOptions{})
	if err != nil {
		f.Fatal(err)
	}
	good := v.loadSumCache("seed", nil)
	good.put(newSumKey("", plumbing.Hash{1}), dirSum{files: 2, kept: true})
	good.save()
	seed, _ := os.ReadFile(good.file)
	f.Add(seed)
	f.Add(append(seed, seed[len(good.id):]...))
	f.Add([]byte("dirsum-v2 blake3\nshort"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := v.loadSumCache("n", nil)
		if err := os.WriteFile(c.file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c = v.loadSumCache("n", nil)
		for h, s := range c.all() {
			rec := sumCodec.enc(nil, h, s)
			rec = binary.LittleEndian.AppendUint32(rec, crc32.Checksum(rec, castagnoli()))
			if !bytes.Contains(data, rec) {
				t.Fatalf("record %v loaded that is not in the file with its checksum", h.id)
			}
		}
		h := newSumKey("d/", plumbing.Hash{0xfe, 0xed})
		c.put(h, dirSum{files: 9})
		c.save()
		if got, ok := v.loadSumCache("n", nil).get(h); !ok || got.files != 9 {
			t.Fatalf("a saved record did not load back: %v %v", got, ok)
		}
	})
}
