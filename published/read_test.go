package published

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zeebo/blake3"

	"github.com/prose-store/prose/canon"
)

// TestLoadStreamsLargeFiles: files above the streaming size give the same
// hashes and values as reading them whole would; text beyond MaxTextFile and
// JSON or YAML beyond MaxJSONFile or MaxYAMLFile are refused naming the file and the
// limit.
func TestLoadStreamsLargeFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	binary := make([]byte, 3*chunkSize+12345)
	for i := range binary {
		binary[i] = byte(rng.IntN(256))
	}
	// Text with multi-byte runes straddling every chunk boundary.
	text := []byte(strings.Repeat("ü€𝄞a", (2*chunkSize)/10+7))
	lateBinary := append(bytes.Repeat([]byte("x"), 2*chunkSize), 0xff)
	tests := []struct {
		name    string
		data    []byte
		text    bool // the value is the content as a string
		tooLarg string
	}{
		{"binary.bin", binary, false, ""},
		{"text.md", text, true, ""},
		{"late-binary.dat", lateBinary, false, ""},
		{"cut-rune.md", append(bytes.Repeat([]byte("y"), bigFile+1), 0xe2, 0x82), false, ""},
		{"huge.md", make([]byte, MaxTextFile+1), false, "text"},
		{"huge.json", append(append([]byte("["), bytes.Repeat([]byte("0,"), MaxJSONFile/2)...), '0', ']'), false, "JSON"},
		{"huge.yaml", bytes.Repeat([]byte("- 0\n"), MaxYAMLFile/4+1), false, "YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.name), tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			snap, err := Scan(dir, Options{})
			if tt.tooLarg != "" {
				var se *SizeError
				if !errors.As(err, &se) || se.Kind != tt.tooLarg || !strings.Contains(err.Error(), tt.name) || !strings.Contains(err.Error(), "limit") {
					t.Fatalf("Scan: %v; want a SizeError for a %s file", err, tt.tooLarg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e := snap.Entries[0]
			if e.Size != int64(len(tt.data)) || e.Sum != blake3.Sum256(tt.data) || e.GitOID != gitBlobID(tt.data) {
				t.Fatalf("entry %+v does not match the content", e)
			}
			truth, err := ReadTruth(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := truth.(map[string]any)[tt.name]
			want := any(canon.BLAKE3.Token(tt.data))
			if tt.text {
				want = string(tt.data)
			}
			if got != want {
				t.Fatalf("value of %s: %.40q…; want %.40q…", tt.name, got, want)
			}
			if tt.text != utf8.Valid(tt.data) {
				t.Fatal("test case is wrong about its content")
			}
		})
	}
}

// TestLoadStopsWhenCancelled: a cancelled context stops a scan before it
// reads a file.
func TestLoadStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "b/c.txt": "c"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ScanContext(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ScanContext with a cancelled context: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 3*chunkSize), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := newWalker(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	f := walkedFile{path: "big.bin", st: fileStat{size: 3 * chunkSize}}
	if _, err := w.load(ctx, &f); !errors.Is(err, context.Canceled) {
		t.Fatalf("load of a large file with a cancelled context: %v", err)
	}
}

// FuzzUTF8Stream: checking a stream chunk by chunk agrees with utf8.Valid
// on the whole, wherever the chunks are cut.
func FuzzUTF8Stream(f *testing.F) {
	f.Add([]byte("héllo €𝄞"), uint8(1))
	f.Add([]byte{0xe2, 0x82, 0xac, 0xff}, uint8(2))
	f.Add([]byte{0xf0, 0x9d, 0x84}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		n := int(step%7) + 1
		u := utf8Stream{valid: true}
		for i := 0; i < len(data); i += n {
			u.write(data[i:min(i+n, len(data))])
		}
		if got, want := u.close(), utf8.Valid(data); got != want {
			t.Fatalf("stream of %x in chunks of %d: valid %v, want %v", data, n, got, want)
		}
	})
}
