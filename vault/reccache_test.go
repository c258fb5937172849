package vault

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// The sum cache answers every entry it saved after a reload, from its
// table of records; of two records of one key the later good one wins (a
// damaged later one is passed over), as a load of every record did.
func TestSumCacheAnswersFromItsRecords(t *testing.T) {
	v := newVault(t)
	c := v.loadSumCache("n", nil)
	keys := make([]sumKey, 3000)
	for i := range keys {
		keys[i] = newSumKey("d/", plumbing.Hash{byte(i), byte(i >> 8), 7})
		c.put(keys[i], dirSum{files: uint32(i)})
	}
	c.save()
	c = v.loadSumCache("n", nil)
	for i, k := range keys {
		if got, ok := c.get(k); !ok || got.files != uint32(i) {
			t.Fatalf("entry %d: %v %v", i, got, ok)
		}
	}
	if _, ok := c.get(newSumKey("e/", keys[0].id)); ok {
		t.Fatal("an entry of another path answered")
	}
	rec := func(k sumKey, s dirSum, damaged bool) []byte {
		b := sumCodec.enc(nil, k, s)
		sum := crc32.Checksum(b, castagnoli())
		if damaged {
			sum ^= 1
		}
		return binary.LittleEndian.AppendUint32(b, sum)
	}
	data, err := os.ReadFile(c.file)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, rec(keys[1], dirSum{files: 100}, false)...)
	data = append(data, rec(keys[2], dirSum{files: 200}, true)...)
	if err := os.WriteFile(c.file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c = v.loadSumCache("n", nil)
	if got, _ := c.get(keys[1]); got.files != 100 {
		t.Fatalf("the later record of a key: %d, want 100", got.files)
	}
	if got, _ := c.get(keys[2]); got.files != 2 {
		t.Fatalf("a damaged later record: %d, want the earlier 2", got.files)
	}
	if all := c.all(); len(all) != len(keys) || all[keys[1]].files != 100 || all[keys[2]].files != 2 {
		t.Fatalf("all: %d entries, %v %v", len(all), all[keys[1]], all[keys[2]])
	}
}
