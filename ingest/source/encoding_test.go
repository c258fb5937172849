package source

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 with a byte order mark.
func utf16Bytes(s string, big bool) []byte {
	var b bytes.Buffer
	for _, u := range append([]uint16{0xFEFF}, utf16.Encode([]rune(s))...) {
		if big {
			b.Write([]byte{byte(u >> 8), byte(u)})
		} else {
			b.Write([]byte{byte(u), byte(u >> 8)})
		}
	}
	return b.Bytes()
}

// Sources in Latin-1/Windows-1252 and in UTF-16 with a byte order mark are
// read converted to UTF-8, and say so; UTF-8 (with or without a mark)
// reads as it is.
func TestReadConvertsTextEncodings(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		encoding string
		title    string
		text     string
	}{
		{"latin1.md", []byte("# Caf\xe9 cr\xe8me\n\nNa\xefve r\xe9sum\xe9s at the caf\xe9.\n"), Windows1252, "Café crème", "Naïve résumés at the café."},
		{"cp1252.txt", []byte("Prices\n\n\x93Five \x80\x97 or more\x94, she said.\n"), Windows1252, "Prices", "“Five €— or more”, she said."},
		{"page.html", []byte("<html><head><title>\xc9t\xe9</title></head><body><p>Soleil d\x92\xe9t\xe9.</p></body></html>"), Windows1252, "Été", "Soleil d’été."},
		{"le.txt", utf16Bytes("Notes on naïve\n\nA résumé in UTF-16 — with a dash.\n", false), UTF16LE, "Notes on naïve", "A résumé in UTF-16 — with a dash."},
		{"be.md", utf16Bytes("# Größe\n\nStraße und Maß.\n", true), UTF16BE, "Größe", "Straße und Maß."},
		{"chat.json", utf16Bytes(`[{"role":"user","content":"Qu'est-ce qu'un café ?"}]`, false), UTF16LE, "Qu'est-ce qu'un café ?", "Qu'est-ce qu'un café ?"},
		{"bom.md", []byte("\xEF\xBB\xBF# Café\n\nAlready UTF-8.\n"), "", "Café", "Already UTF-8."},
		{"plain.md", []byte("# Café\n\nAlready UTF-8.\n"), "", "Café", "Already UTF-8."},
	}
	for _, tt := range tests {
		d, err := Read(tt.name, tt.data, "")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if d.Encoding != tt.encoding || d.Title != tt.title || !strings.Contains(d.Prose(), tt.text) {
			t.Errorf("%s: encoding %q title %q prose %q; want %q, %q, %q", tt.name, d.Encoding, d.Title, d.Prose(), tt.encoding, tt.title, tt.text)
		}
		if bytes.HasPrefix(d.Data, []byte("\xEF\xBB\xBF")) || !strings.Contains(string(d.Data), tt.title) {
			t.Errorf("%s: stored bytes %q are not the converted text", tt.name, d.Data)
		}
	}
	// Standard input (no name to say its kind) converts too.
	if d, err := Read("stdin", []byte("Caf\xe9 notes\n\nThe caf\xe9 opens at nine.\n"), ""); err != nil || d.Encoding != Windows1252 || d.Title != "Café notes" {
		t.Errorf("unnamed Windows-1252: %v %+v", err, d)
	}
}

// Bytes that are no text in any encoding read are still refused as
// binary: NUL bytes, bytes Windows-1252 does not define, control bytes, a
// UTF-16 mark over an odd number of bytes or an unpaired surrogate, a
// JSON transcript that is not UTF-8 or UTF-16, a UTF-8 mark over bytes
// that are not UTF-8.
func TestReadStillRefusesBinary(t *testing.T) {
	for name, data := range map[string][]byte{
		"nul.md":      []byte("caf\xe9\x00 au lait"),
		"png.md":      []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
		"noNUL.txt":   []byte("\x89\xab\xcd\x01\x02garbage\xff"),
		"undef.txt":   []byte("caf\x81 \x8d\x8f\x90\x9d"),
		"esc.txt":     []byte("caf\xe9\x1b[31m red"),
		"odd.txt":     append(utf16Bytes("odd", false), 'x'),
		"surr.txt":    append(utf16Bytes("lone", false), 0x00, 0xD8, 'a', 0),
		"utf16nul.md": utf16Bytes("nul\x00inside", false),
		"latin.json":  []byte(`[{"role":"user","content":"caf` + "\xe9" + `"}]`),
		"bom8.md":     []byte("\xEF\xBB\xBF# Caf\xe9\n"),
	} {
		_, err := Read(name, data, "")
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "not text") {
			t.Errorf("%s: err = %v; want it refused as not text", name, err)
		}
	}
}

// The size limit is on the bytes as given: a Windows-1252 source of
// MaxSize bytes reads although its UTF-8 is larger, and a UTF-16 source
// past MaxSize is refused although its UTF-8 would fit.
func TestEncodingLimitIsOnTheRawBytes(t *testing.T) {
	line := []byte("caf\xe9 cr\xe8me \xe0 la fa\xe7on du ch\xe2teau\n\n") // 38 bytes, 44 in UTF-8
	// -short converts a 1 MiB source, which grows past its raw size; the
	// full run takes one of MaxSize raw bytes, whose UTF-8 passes MaxSize.
	size := MaxSize
	if testing.Short() {
		size = MaxSize / 16
	}
	raw := append([]byte("# Men\xfa\n\n"), bytes.Repeat(line, (size-9)/len(line))...)
	d, err := Read("menu.md", raw, "")
	if err != nil {
		t.Fatalf("a %d-byte Windows-1252 source: %v", len(raw), err)
	}
	if len(d.Data) <= size || d.Encoding != Windows1252 {
		t.Fatalf("converted to %d bytes (%s); the test needs more than %d", len(d.Data), d.Encoding, size)
	}
	wide := utf16Bytes("# Wide\n\n"+strings.Repeat("word ", MaxSize/10), false) // 2 bytes a character
	if len(wide) <= MaxSize || len(wide)/2 > MaxSize {
		t.Fatalf("test input of %d bytes", len(wide))
	}
	if _, err := Read("wide.txt", wide, ""); err == nil || !strings.Contains(err.Error(), "split it") {
		t.Fatalf("a %d-byte UTF-16 source: %v; want it refused by its size", len(wide), err)
	}
}
