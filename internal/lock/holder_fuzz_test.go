package lock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// FuzzReadHolder: whatever a holder file holds, reading it never panics,
// and the message that names the holder stays one printable line.
func FuzzReadHolder(f *testing.F) {
	f.Add([]byte(`{"pid":1234,"who":"prose publish","host":"h","since":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"pid":-1,"who":"a\nb\u001b[31m","host":""}`))
	f.Add([]byte(`{"pid":"x"}`))
	f.Add([]byte("not json"))
	f.Add([]byte(`{"since":"10000-01-01T00:00:00Z"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "lock")
		if err := os.WriteFile(path+HolderSuffix, data, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := ReadHolder(path)
		if err != nil {
			return
		}
		msg := (&HeldError{Path: path, Holder: h}).Error()
		if strings.IndexFunc(msg, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
			t.Fatalf("holder %q gives a message with control characters: %q", data, msg)
		}
		if len(msg) > 400 {
			t.Fatalf("holder %q gives a %d-byte message", data, len(msg))
		}
	})
}
