//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/receipt"
)

// peakRSSGoal is the most memory any single input may make prose hold.
const peakRSSGoal = 256 << 20

// addressMB caps the children's address space beyond what they map at
// start: generous next to peakRSSGoal (the runtime reserves more than it
// touches) but far below what a regression would take.
const addressMB = 1536

// sparseFile makes a file of size bytes that takes no disk space, with head
// written at its start.
func sparseFile(t *testing.T, path string, size int64, head []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryStaysBounded runs prose on inputs of gigabytes in a child
// process under an address-space cap and checks each one's peak RSS stays
// under the goal, whether prose takes the input or refuses it naming the
// limit.
func TestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads several gigabytes")
	}
	tmp := t.TempDir()
	vdir := filepath.Join(tmp, "v")
	mustProse(t, "init", vdir)

	jsonArray := filepath.Join(tmp, "json", "items.json")
	os.MkdirAll(filepath.Dir(jsonArray), 0o755)
	f, err := os.Create(jsonArray)
	if err != nil {
		t.Fatal(err)
	}
	row := []byte("[" + strings.Repeat("0,", 1<<20))
	for written := 0; written < 200<<20; written += len(row) {
		f.Write(row)
		row[0] = ','
	}
	f.WriteString("0]")
	f.Close()

	sparseFile(t, filepath.Join(tmp, "binary", "blob.bin"), 2<<30, []byte{0xff, 0xfe})
	sparseFile(t, filepath.Join(tmp, "zeros", "zeros.dat"), 200<<20, nil)
	sparseFile(t, filepath.Join(tmp, "sparse", "sparse.dat"), 2<<30, nil)
	reactor := filepath.Join(tmp, "reactor.json")
	sparseFile(t, reactor, 2200<<20, []byte("["))

	// The worst case each limit allows: values that parse to many times
	// their size.
	writeLimit := func(dir, name string, data []byte) string {
		d := filepath.Join(tmp, dir)
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	n := (published.MaxJSONFile - 2) / 3
	jsonLimit := writeLimit("json-limit", "a.json", []byte("["+strings.Repeat("{},", n-1)+"{}]"))
	yamlLimit := writeLimit("yaml-limit", "a.yaml", []byte(strings.Repeat("- 0\n", published.MaxYAMLFile/4)))
	textLimit := writeLimit("text-limit", "a.md", make([]byte, published.MaxTextFile))
	reactorLimit := filepath.Join(writeLimit("reactor-limit", "receipts.json", nil), "receipts.json")
	var rb strings.Builder
	rb.WriteString("[")
	elem := "[" + strings.Repeat("0,", 9998) + "0]"
	for rb.Len()+len(elem)+2 < receipt.MaxReactorLedger {
		if rb.Len() > 1 {
			rb.WriteString(",")
		}
		rb.WriteString(elem)
	}
	rb.WriteString("]")
	os.WriteFile(reactorLimit, []byte(rb.String()), 0o644)

	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr (refusals) or stdout
	}{
		{"2 GiB binary file", []string{"--vault", vdir, "publish", "bin", filepath.Join(tmp, "binary")}, 0, "rendered"},
		{"fsck of a 2 GiB file", []string{"--vault", vdir, "fsck"}, 0, "ok"},
		{"200 MiB of zero bytes", []string{"--vault", vdir, "publish", "zeros", filepath.Join(tmp, "zeros")}, 1, "limit"},
		{"2 GiB sparse file", []string{"--vault", vdir, "publish", "sparse", filepath.Join(tmp, "sparse")}, 1, "limit"},
		{"200 MiB JSON array", []string{"--vault", vdir, "publish", "json", filepath.Join(tmp, "json")}, 1, "limit"},
		{"2.2 GB reactor ledger", []string{"receipts", "verify", "--reactor", reactor}, 2, "limit"},
		{"reactor /dev/zero", []string{"receipts", "verify", "--reactor", "/dev/zero"}, 2, "not a regular file"},
		{"JSON at the limit", []string{"--vault", vdir, "publish", "jl", jsonLimit}, 0, "rendered"},
		{"YAML at the limit", []string{"--vault", vdir, "publish", "yl", yamlLimit}, 0, "rendered"},
		{"text at the limit", []string{"--vault", vdir, "publish", "tl", textLimit}, 0, "rendered"},
		{"fsck of every limit", []string{"--vault", vdir, "fsck"}, 0, "ok"},
		{"diff of every limit", []string{"--vault", vdir, "diff"}, 0, ""},
		{"reactor ledger at the limit", []string{"receipts", "verify", "--reactor", reactorLimit}, 1, "problems"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runChild(t, addressMB, tt.args...)
			t.Logf("%s: exit %d, peak RSS %.1f MB", tt.name, res.code, float64(res.peakRSS)/1e6)
			if res.code != tt.code || !strings.Contains(res.stdout+res.stderr, tt.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s%.2000s", res.code, tt.code, tt.want, res.stdout, res.stderr)
			}
			if res.peakRSS <= 0 || res.peakRSS > peakRSSGoal {
				t.Fatalf("peak RSS %d bytes; the goal is under %d", res.peakRSS, peakRSSGoal)
			}
		})
	}
}
