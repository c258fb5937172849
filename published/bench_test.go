package published

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tree10k writes 10,000 small files in 100 directories (JSON and Markdown)
// and returns their relative paths.
func tree10k(b *testing.B, dir string) []string {
	b.Helper()
	var paths []string
	for d := range 100 {
		for f := range 100 {
			var p, c string
			if f%2 == 0 {
				p = fmt.Sprintf("facet%02d/item%03d.json", d, f)
				c = fmt.Sprintf(`{"id": %d, "title": "item %d of facet %d", "tags": ["a", "b"]}`, f, f, d)
			} else {
				p = fmt.Sprintf("facet%02d/note%03d.md", d, f)
				c = fmt.Sprintf("# Note %d\n\nSome text for note %d in facet %d.\n", f, f, d)
			}
			writeFile(b, dir, p, c)
			paths = append(paths, p)
		}
	}
	return paths
}

// BenchmarkLstatWalk10k is the floor a scan is measured against: a walk
// of the tree with os.ReadDir that lstats every file (os.Lstat on its
// path), as filepath.Walk does.
func BenchmarkLstatWalk10k(b *testing.B) {
	dir := b.TempDir()
	tree10k(b, dir)
	for b.Loop() {
		if lstatWalk(b, dir) != 10000 {
			b.Fatal("wrong count")
		}
	}
}

// lstatWalk walks dir with os.ReadDir, lstats every file and returns the
// number of files.
func lstatWalk(b *testing.B, d string) int {
	es, err := os.ReadDir(d)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range es {
		p := filepath.Join(d, e.Name())
		if e.IsDir() {
			n += lstatWalk(b, p)
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// BenchmarkScanVsWalk10k measures BenchmarkScan10kFullOneEdit,
// BenchmarkLstatWalk10k and BenchmarkLstatWalk10kSerialRaw in the same
// loop, alternating, and reports the ratios: on a shared or busy machine
// the three see the same load.
func BenchmarkScanVsWalk10k(b *testing.B) {
	dir := b.TempDir()
	paths := tree10k(b, dir)
	opt := Options{CachePath: filepath.Join(b.TempDir(), "scan")}
	if _, err := Scan(dir, opt); err != nil {
		b.Fatal(err)
	}
	raw, err := newWalker(dir)
	if err != nil {
		b.Fatal(err)
	}
	raw.spare = make(chan struct{})
	var walkT, rawT, scanT time.Duration
	i := 0
	for b.Loop() {
		p := paths[(i*37)%len(paths)]
		if err := os.WriteFile(filepath.Join(dir, p), fmt.Appendf(nil, `{"edit": %d}`, i), 0o644); err != nil {
			b.Fatal(err)
		}
		i++
		t0 := time.Now()
		if lstatWalk(b, dir) != 10000 {
			b.Fatal("wrong count")
		}
		t1 := time.Now()
		if files, err := raw.walk(); err != nil || len(files) != 10000 {
			b.Fatal(err, len(files))
		}
		t2 := time.Now()
		if _, err := Scan(dir, opt); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		walkT += t1.Sub(t0)
		rawT += t2.Sub(t1)
		scanT += t3.Sub(t2)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(i) }
	b.ReportMetric(ms(walkT), "walk-ms")
	b.ReportMetric(ms(rawT), "rawwalk-ms")
	b.ReportMetric(ms(scanT), "scan-ms")
	b.ReportMetric(float64(scanT)/float64(walkT), "scan/walk")
	b.ReportMetric(float64(scanT)/float64(rawT), "scan/rawwalk")
}

// BenchmarkLstatWalk10kSerialRaw is a stricter floor: the walk Scan itself
// does (directory reads and one lstat per file, relative to the
// directory's descriptor where the platform allows), on one goroutine.
func BenchmarkLstatWalk10kSerialRaw(b *testing.B) {
	dir := b.TempDir()
	tree10k(b, dir)
	w, err := newWalker(dir)
	if err != nil {
		b.Fatal(err)
	}
	w.spare = make(chan struct{}) // no parallelism
	for b.Loop() {
		files, err := w.walk()
		if err != nil || len(files) != 10000 {
			b.Fatal(err, len(files))
		}
	}
}

// BenchmarkWalk10k is Scan's parallel walk alone.
func BenchmarkWalk10k(b *testing.B) {
	dir := b.TempDir()
	tree10k(b, dir)
	w, err := newWalker(dir)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		files, err := w.walk()
		if err != nil || len(files) != 10000 {
			b.Fatal(err, len(files))
		}
	}
}

// BenchmarkScan10kFullOneEdit is a full scan with a warm cache after a
// render rewrote one file (with a fresh mtime, as a render would).
func BenchmarkScan10kFullOneEdit(b *testing.B) {
	benchScanOneEdit(b, false)
}

// BenchmarkScan10kInformed is the same with Options.Changed naming the
// edited file.
func BenchmarkScan10kInformed(b *testing.B) {
	benchScanOneEdit(b, true)
}

func benchScanOneEdit(b *testing.B, informed bool) {
	dir := b.TempDir()
	paths := tree10k(b, dir)
	opt := Options{CachePath: filepath.Join(b.TempDir(), "scan")}
	if _, err := Scan(dir, opt); err != nil {
		b.Fatal(err)
	}
	var hashed, statted int
	i := 0
	for b.Loop() {
		b.StopTimer()
		p := paths[(i*37)%len(paths)]
		if err := os.WriteFile(filepath.Join(dir, p), fmt.Appendf(nil, `{"edit": %d}`, i), 0o644); err != nil {
			b.Fatal(err)
		}
		if informed {
			opt.Changed = []string{p}
		}
		i++
		b.StartTimer()
		s, err := Scan(dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		hashed += s.Stats.Hashed
		statted += s.Stats.Statted
	}
	b.ReportMetric(float64(hashed)/float64(i), "hashed/op")
	b.ReportMetric(float64(statted)/float64(i), "stats/op")
}

// BenchmarkScan10kCold scans without a cache: every file is read.
func BenchmarkScan10kCold(b *testing.B) {
	dir := b.TempDir()
	tree10k(b, dir)
	for b.Loop() {
		if _, err := Scan(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFingerprintFiles fingerprints 1,000 files from memory.
func BenchmarkFingerprintFiles(b *testing.B) {
	files := map[string][]byte{}
	var size int64
	for i := range 1000 {
		c := fmt.Appendf(nil, `{"id": %d, "title": "item %d", "tags": ["a", "b"], "n": %d.5}`, i, i, i)
		files[fmt.Sprintf("facet%02d/item%03d.json", i%10, i)] = c
		size += int64(len(c))
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := FingerprintFiles(files, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
