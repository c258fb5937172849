package canon

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchTruth builds a deterministic truth of about size bytes of JSON: a
// node with records, tags, timestamps, prose and numbers, the shapes
// world-models hold.
func benchTruth(size int) map[string]any {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu café naïve 😀 über <tag> & \"quoted\"")
	sentence := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	records := map[string]any{}
	truth := map[string]any{
		"name":    "bench",
		"updated": "2024-01-01T00:00:00Z",
		"records": records,
	}
	approx := 0
	for i := 0; approx < size; i++ {
		tags := []any{}
		for j := 0; j < 4; j++ {
			tags = append(tags, words[rng.IntN(len(words))])
		}
		body := sentence(40 + rng.IntN(80))
		rec := map[string]any{
			"id":      float64(i),
			"title":   sentence(6),
			"body":    body,
			"tags":    tags,
			"score":   rng.Float64() * 1000,
			"updated": fmt.Sprintf("2024-01-%02dT00:00:00Z", 1+i%28),
			"meta":    map[string]any{"request_id": fmt.Sprintf("req-%d", rng.Int()), "author": sentence(2), "ok": i%2 == 0, "extra": nil},
			"history": []any{map[string]any{"at": float64(i), "what": sentence(3)}, map[string]any{"at": float64(i + 1), "what": sentence(3)}},
		}
		records[fmt.Sprintf("rec-%06d", i)] = rec
		approx += len(body) + 300
	}
	return truth
}

const benchSpec = `
fields:
  - {path: updated, material: false}
  - {path: records.updated, material: false}
  - {path: records.meta.request_id, material: false}
  - {path: records.tags, material: true, collection: set, text: {case_insensitive: true}}
  - {path: records.score, material: true, number: {quantum: 0.5}}
facets:
  - {facet: scores, paths: [records.score]}
  - {facet: text, paths: [records.title, records.body]}
`

func BenchmarkMarshal(b *testing.B) {
	v := benchTruth(1 << 20)
	data, err := Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	buf := make([]byte, 0, len(data))
	for b.Loop() {
		if buf, err = AppendMarshal(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	data, err := Marshal(benchTruth(1 << 20))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFingerprint10MB measures the whole path from bytes to tokens:
// decode a ~10 MB truth, reduce it and compute @atomic and two facets.
func BenchmarkFingerprint10MB(b *testing.B) {
	data, err := Marshal(benchTruth(10 << 20))
	if err != nil {
		b.Fatal(err)
	}
	spec, err := ParseSpec([]byte(benchSpec))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		fps, err := Fingerprints(BLAKE3, spec, v)
		if err != nil {
			b.Fatal(err)
		}
		if len(fps) != 3 {
			b.Fatalf("fingerprints %v", fps)
		}
	}
}

func BenchmarkDigestValue(b *testing.B) {
	v := benchTruth(1 << 20)
	data, _ := Marshal(v)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		DigestValue(BLAKE3, v)
	}
}

// BenchmarkReduceSmallFile measures the per-file call a directory scan
// makes: a small value reduced at its path under a typical spec.
func BenchmarkReduceSmallFile(b *testing.B) {
	spec, err := ParseSpec([]byte(benchSpec))
	if err != nil {
		b.Fatal(err)
	}
	v := map[string]any{"title": "A title", "score": 3.2, "updated": "2024-01-01", "tags": []any{"b", "a"}}
	p := Path{"records", "rec-000001"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := spec.Reduce(p, v); err != nil {
			b.Fatal(err)
		}
		spec.Materiality(p)
	}
}
