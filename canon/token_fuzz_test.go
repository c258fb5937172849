package canon

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseToken: a token either parses and prints back exactly as given,
// or is refused with one short line that quotes it safely.
func FuzzParseToken(f *testing.F) {
	f.Add(BLAKE3.Token([]byte("x")))
	f.Add(SHA256.Token([]byte("x")))
	f.Add("blake3:" + strings.Repeat("A", 64))
	f.Add("md5:00")
	f.Add(":" + strings.Repeat("0", 64))
	f.Add("no colon")
	f.Fuzz(func(t *testing.T, tok string) {
		a, sum, err := ParseToken(tok)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) || len(msg) > 400 {
				t.Fatalf("error for %q is not one short line: %q", tok, msg)
			}
			return
		}
		if back := a.TokenOf(sum); back != tok {
			t.Fatalf("%q parsed and printed back as %q", tok, back)
		}
	})
}
