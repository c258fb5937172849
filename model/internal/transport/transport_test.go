package transport

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		h    map[string]string
		want time.Duration
		ok   bool
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(10 * time.Second).Format(http.TimeFormat)}, 10 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After": "86400"}, MaxBackoff, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-1"}, 0, false},
		{nil, 0, false},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		got, ok := retryAfter(h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%v: %v %v, want %v %v", c.h, got, ok, c.want, c.ok)
		}
	}
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	tr := &Transport{Backoff: time.Second}
	var got []time.Duration
	for i := 0; i < 8; i++ {
		got = append(got, tr.backoff(i))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoffs %v", got)
		}
	}
}

func TestRedactAndProviderMessage(t *testing.T) {
	key := "sk-live-abcdefghijkl"
	msg := ProviderMessage([]byte(`{"error":{"message":"Incorrect API key provided: ` + key + `; also sk-ab**********wxyz"}}`))
	if got := Redact(msg, key); strings.Contains(got, "abcdefghijkl") || strings.Contains(got, "wxyz") || !strings.Contains(got, "Incorrect API key provided") {
		t.Fatalf("redacted: %q", got)
	}
	for body, want := range map[string]string{
		`{"error":"model not found"}`:               "model not found",
		`{"message":"flat"}`:                        "flat",
		`{"detail":"fastapi style"}`:                "fastapi style",
		`<html>bad gateway</html>`:                  "<html>bad gateway</html>",
		`{"error":{"type":"x","message":"nested"}}`: "nested",
	} {
		if got := ProviderMessage([]byte(body)); got != want {
			t.Errorf("%s: %q", body, got)
		}
	}
}

// FuzzProviderMessage: any error body yields a short message, never a panic.
func FuzzProviderMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len([]rune(ProviderMessage(body))) > 301 {
			t.Fatal("unbounded message")
		}
	})
}
