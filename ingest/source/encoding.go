package source

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// The encodings a source is converted from (Document.Encoding); a source
// in UTF-8 has none.
const (
	UTF16LE     = "UTF-16LE"
	UTF16BE     = "UTF-16BE"
	Windows1252 = "Windows-1252"
)

// decodeText turns a source's raw bytes into UTF-8, in this order: a byte
// order mark (UTF-8, UTF-16LE, UTF-16BE) says the encoding; else valid
// UTF-8 is taken as it is; else, when latin is true (a text kind, not a
// JSON transcript) and the bytes hold no NUL, they are read as
// Windows-1252 (a superset of Latin-1's printable characters). It returns
// the text and the encoding converted from ("" for UTF-8). Bytes that are
// none of these, or whose text holds control characters no text file
// holds, are refused as binary.
func decodeText(name string, data []byte, latin bool) ([]byte, string, error) {
	binary := fmt.Errorf("%s: not text (binary, or in an encoding other than UTF-8, UTF-16 with a byte order mark, or Windows-1252/Latin-1): convert it to UTF-8, or leave it out", name)
	var enc encoding.Encoding
	var label string
	switch {
	case bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")):
		data = data[3:]
		latin = false // the mark says UTF-8
	case bytes.HasPrefix(data, []byte("\xFF\xFE")):
		enc, label = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), UTF16LE
	case bytes.HasPrefix(data, []byte("\xFE\xFF")):
		enc, label = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), UTF16BE
	}
	if enc == nil {
		if utf8.Valid(data) {
			if bytes.IndexByte(data, 0) >= 0 {
				return nil, "", binary
			}
			return data, "", nil
		}
		if !latin || bytes.IndexByte(data, 0) >= 0 {
			return nil, "", binary
		}
		enc, label = charmap.Windows1252, Windows1252
	}
	if label != Windows1252 && len(data)%2 != 0 {
		return nil, "", binary // UTF-16 comes in pairs of bytes
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil || !plausibleText(out) {
		return nil, "", binary
	}
	return out, label, nil
}

// plausibleText reports whether converted text reads as text: no
// replacement character (a byte the encoding does not define, an unpaired
// UTF-16 surrogate) and no control character but tab, newline, carriage
// return and form feed. Binary bytes that happen to convert fail here.
func plausibleText(b []byte) bool {
	return !strings.ContainsFunc(string(b), func(r rune) bool {
		switch {
		case r == utf8.RuneError:
			return true
		case r == '\t' || r == '\n' || r == '\r' || r == '\f':
			return false
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return true
		}
		return false
	})
}
