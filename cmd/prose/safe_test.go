package main

import (
	"bytes"
	"testing"
)

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\twith tabs":       "plain text\n\twith tabs",
		"crlf\r\nkept":                  "crlf\r\nkept",
		"alone\rover":                   `alone\x0dover`,
		"\x1b]0;pwned\x07":              `\x1b]0;pwned\x07`,
		"del\x7f":                       `del\x7f`,
		"c1 \u009b31m":                  `c1 \u009b31m`,
		"bidi \u202e \u2066 \u200f":     `bidi \u202e \u2066 \u200f`,
		"lone byte \x9b and \xff":       `lone byte \x9b and \xff`,
		"café — “quoted” 日本 \U0001F600": "café — “quoted” 日本 \U0001F600",
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := jsonSafe("\"a\u202eb\x7f\u0085\""); got != `"a\u202eb\u007f\u0085"` {
		t.Errorf("jsonSafe = %q", got)
	}
}

// A character cut between two writes is written whole, not escaped as two
// invalid bytes.
func TestSafeWriterJoinsACutCharacter(t *testing.T) {
	var b bytes.Buffer
	w := &safeWriter{w: &b}
	s := []byte("é\u202e日")
	for i := range s {
		w.Write(s[i : i+1])
	}
	if got := b.String(); got != `é\u202e日` {
		t.Fatalf("got %q", got)
	}
}
