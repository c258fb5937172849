package canon

import (
	"bytes"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		a    Algorithm
		data string
		want string
	}{
		{BLAKE3, "", "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
		{BLAKE3, "abc", "blake3:6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"},
		{"", "abc", "blake3:6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"},
		{SHA256, "abc", "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		if got := tc.a.Token([]byte(tc.data)); got != tc.want {
			t.Errorf("%q.Token(%q) = %s, want %s", tc.a, tc.data, got, tc.want)
		}
		h := tc.a.New()
		h.Write([]byte(tc.data))
		if got := tc.a.TokenOf(h.Sum(nil)); got != tc.want {
			t.Errorf("%q.TokenOf(New().Sum) = %s, want %s", tc.a, got, tc.want)
		}
		a, sum, err := ParseToken(tc.want)
		if err != nil {
			t.Fatalf("ParseToken(%s): %v", tc.want, err)
		}
		if a.TokenOf(sum) != tc.want || !bytes.Equal(sum, h.Sum(nil)) {
			t.Errorf("ParseToken(%s) = %s, %x", tc.want, a, sum)
		}
	}
}

func TestParseAlgorithm(t *testing.T) {
	for in, want := range map[string]Algorithm{"": BLAKE3, "blake3": BLAKE3, "sha256": SHA256} {
		got, err := ParseAlgorithm(in)
		if err != nil || got != want {
			t.Errorf("ParseAlgorithm(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"BLAKE3", "md5", "sha-256", " blake3"} {
		if _, err := ParseAlgorithm(in); err == nil || !strings.Contains(err.Error(), "unknown hash algorithm") {
			t.Errorf("ParseAlgorithm(%q) error = %v, want unknown hash algorithm", in, err)
		}
	}
}

func TestParseTokenRejects(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	for _, tc := range []struct{ in, wantErr string }{
		{"", "no algorithm prefix"},
		{hex64, "no algorithm prefix"},
		{":" + hex64, "empty algorithm name"},
		{"md5:" + hex64, "unknown hash algorithm"},
		{"blake3:" + hex64[:62], "want 64 hex digits"},
		{"blake3:" + hex64 + "00", "want 64 hex digits"},
		{"blake3:" + strings.ToUpper(hex64), "not a lowercase hex digit"},
		{"blake3:" + hex64[:63] + "g", "not a lowercase hex digit"},
		{"cold-start", "no algorithm prefix"},
		{"cold-start:empty", "unknown hash algorithm"},
	} {
		if _, _, err := ParseToken(tc.in); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseToken(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
		}
	}
}
