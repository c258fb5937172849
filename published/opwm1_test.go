package published

import (
	"github.com/prose-store/prose/internal/refdata"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frame builds frame bytes by hand, independently of EncodeFrame.
func frame(count uint32, parts ...string) []byte {
	b := []byte(FrameMagic)
	b = le32(b, count)
	for _, p := range parts {
		b = le32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

func le32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func TestEncodeFrame(t *testing.T) {
	tests := []struct {
		name    string
		files   []File
		want    []byte
		wantErr string
	}{
		{name: "empty", want: frame(0)},
		{name: "one", files: []File{{"a.json", []byte("{}")}}, want: frame(1, "a.json", "{}")},
		{name: "empty content", files: []File{{"a", nil}}, want: frame(1, "a", "")},
		{
			name:  "sorted by UTF-8 bytes",
			files: []File{{"é", []byte("3")}, {"b/a", []byte("2")}, {"B", []byte("1")}, {"b.a", []byte("x")}},
			// "B" < "b.a" < "b/a" < "é" in bytes ('.' 0x2E < '/' 0x2F).
			want: frame(4, "B", "1", "b.a", "x", "b/a", "2", "é", "3"),
		},
		{name: "duplicate", files: []File{{"a", nil}, {"a", []byte("x")}}, wantErr: `path "a" appears twice`},
		{name: "not normal", files: []File{{"./a", nil}}, wantErr: `not in normal form`},
		{name: "backslash", files: []File{{`a\b`, nil}}, wantErr: `not in normal form`},
		{name: "dot dot", files: []File{{"../a", nil}}, wantErr: `".." segments are not allowed`},
		{name: "empty path", files: []File{{"", nil}}, wantErr: `the path is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeFrame(tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("EncodeFrame error = %v; want it to contain %q", err, tt.wantErr)
				}
				if _, err := FrameAddress(tt.files); err == nil {
					t.Fatalf("FrameAddress accepted what EncodeFrame rejects")
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("EncodeFrame = %q, %v; want %q", got, err, tt.want)
			}
			addr, err := FrameAddress(tt.files)
			sum := sha256.Sum256(tt.want)
			if err != nil || addr != "sha256:"+hex.EncodeToString(sum[:]) {
				t.Fatalf("FrameAddress = %q, %v; want the sha256 of the frame", addr, err)
			}
		})
	}
}

func TestEncodeFrameKeepsInput(t *testing.T) {
	files := []File{{"b", nil}, {"a", nil}}
	if _, err := EncodeFrame(files); err != nil {
		t.Fatal(err)
	}
	if files[0].Path != "b" {
		t.Fatalf("EncodeFrame reordered its input")
	}
}

func TestEmptyFrameAddress(t *testing.T) {
	const want = "sha256:e59ed80133c208bf8e8264c96c5bbe0d36aa073fb969671ec6b752bffb7b08e6"
	for _, files := range [][]File{nil, {}} {
		if got, err := FrameAddress(files); err != nil || got != want {
			t.Fatalf("FrameAddress(%#v) = %q, %v; want %q", files, got, err, want)
		}
	}
}

func TestDecodeFrameRejects(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{name: "nothing", in: nil, wantErr: "does not start with"},
		{name: "magic only", in: []byte("OPWM1"), wantErr: "does not start with"},
		{name: "wrong magic", in: append([]byte("OPWM2"), 0, 0, 0, 0), wantErr: "does not start with"},
		{name: "huge count", in: frame(0xFFFFFFFF), wantErr: "claims 4294967295 files"},
		{name: "count too high", in: frame(2, "a", "x"), wantErr: "claims 2 files"},
		{name: "path runs past end", in: le32(frame(1), 100)[:9+4+0], wantErr: "claims 1 files"},
		{name: "path length past end", in: append(le32(frame(1), 100), "abcd"...), wantErr: "path length 100 runs past the end"},
		{name: "content length cut off", in: append(frame(1, "abcdefg"), 1), wantErr: "content length cut off"},
		{name: "content past end", in: append(le32(frame(1, "a"), 9), "xy"...), wantErr: "content length 9 runs past the end"},
		{name: "trailing bytes", in: append(frame(1, "a", "x"), 0), wantErr: "1 unexpected bytes"},
		{name: "trailing after empty", in: append(frame(0), "junk"...), wantErr: "4 unexpected bytes"},
		{name: "invalid UTF-8", in: frame(1, "a\xff", ""), wantErr: "not valid UTF-8"},
		{name: "not normal", in: frame(1, "a//b", ""), wantErr: "not in normal form"},
		{name: "dot dot", in: frame(1, "../a", ""), wantErr: `".." segments`},
		{name: "absolute", in: frame(1, "/a", ""), wantErr: "absolute paths"},
		{name: "empty path", in: frame(1, "", ""), wantErr: "the path is empty"},
		{name: "out of order", in: frame(2, "b", "", "a", ""), wantErr: `path "a" does not sort after "b"`},
		{name: "duplicate", in: frame(2, "a", "", "a", ""), wantErr: `path "a" does not sort after "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := DecodeFrame(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("DecodeFrame = %v, %v; want an error containing %q", files, err, tt.wantErr)
			}
		})
	}
}

func TestDecodeFrameCopiesContent(t *testing.T) {
	b := frame(1, "a", "xyz")
	files, err := DecodeFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] = 'Q'
	if string(files[0].Content) != "xyz" {
		t.Fatalf("content aliases the input: %q", files[0].Content)
	}
}

// TestReferenceVersions checks every reference world-model version: it
// decodes, re-encodes byte-identically and hashes to its file name.
func TestReferenceVersions(t *testing.T) {
	root := filepath.Join(refdata.Shared(t), "reference-data", "reactor")
	var n, files int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !strings.HasPrefix(name, "sha256_") || !strings.HasSuffix(name, ".bin") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		decoded, err := DecodeFrame(b)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		again, err := EncodeFrame(decoded)
		if err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: re-encoding differs (err %v)", rel, err)
		}
		want := "sha256:" + strings.TrimSuffix(strings.TrimPrefix(name, "sha256_"), ".bin")
		if addr, err := FrameAddress(decoded); err != nil || addr != want {
			t.Errorf("%s: address %s, %v; want %s", rel, addr, err, want)
		}
		n++
		files += len(decoded)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 576 {
		t.Errorf("verified %d reference versions; want 576", n)
	}
	t.Logf("verified %d reference versions holding %d files", n, files)
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(frame(0))
	f.Add(frame(1, "a.json", "{}"))
	f.Add(frame(2, "state/a.md", "x", "state/b.md", "yy"))
	f.Add(frame(2, "b", "", "a", ""))
	f.Add(frame(0xFFFFFFFF))
	f.Add([]byte("OPWM1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := DecodeFrame(b)
		if err != nil {
			return
		}
		again, err := EncodeFrame(files)
		if err != nil {
			t.Fatalf("decoded frame does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip differs:\n in %q\nout %q", b, again)
		}
	})
}

func BenchmarkFrameAddress(b *testing.B) {
	files := make([]File, 200)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("state/item-%03d.json", i), Content: bytes.Repeat([]byte("x"), 4096)}
	}
	b.SetBytes(200 * 4096)
	for b.Loop() {
		if _, err := FrameAddress(files); err != nil {
			b.Fatal(err)
		}
	}
}
