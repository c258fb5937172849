package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how far a Standard Webhooks timestamp may be from the
// server's clock, either way.
const Tolerance = 5 * time.Minute

// Secret is a gateway's webhook secret and the scheme it checks.
type Secret struct {
	// Standard is true for a Standard Webhooks secret (whsec_<base64>),
	// false for a GitHub one (X-Hub-Signature-256).
	Standard bool
	key      []byte
}

// ParseSecret reads a configured secret: "whsec_<base64>" is a Standard
// Webhooks secret, anything else a GitHub webhook secret used as is. The
// error never quotes the secret.
func ParseSecret(s string) (*Secret, error) {
	if s == "" {
		return nil, errors.New("the secret is empty")
	}
	if b64, ok := strings.CutPrefix(s, "whsec_"); ok {
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) == 0 {
			return nil, errors.New("a whsec_ secret must be whsec_ followed by base64 (as Standard Webhooks providers give it)")
		}
		return &Secret{Standard: true, key: key}, nil
	}
	return &Secret{key: []byte(s)}, nil
}

// Scheme names the check, for logs and errors.
func (s *Secret) Scheme() string {
	if s.Standard {
		return "Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)"
	}
	return "GitHub (X-Hub-Signature-256)"
}

// Verify checks a delivery's signature headers against its body. The
// error says what is wrong without quoting any signature or the secret.
func (s *Secret) Verify(h http.Header, body []byte, now time.Time) error {
	if s.Standard {
		return s.verifyStandard(h, body, now)
	}
	return s.verifyGitHub(h, body)
}

func (s *Secret) verifyGitHub(h http.Header, body []byte) error {
	sig := h.Get("X-Hub-Signature-256")
	if sig == "" {
		return errors.New("missing X-Hub-Signature-256 header: this route checks GitHub webhook signatures")
	}
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if !ok {
		return errors.New("X-Hub-Signature-256 must be sha256=<hex>")
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return errors.New("X-Hub-Signature-256 must be sha256=<hex>")
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return errors.New("X-Hub-Signature-256 does not match the body: wrong secret, or the body was changed")
	}
	return nil
}

func (s *Secret) verifyStandard(h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature header: this route checks Standard Webhooks signatures")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("webhook-timestamp must be whole seconds since 1970")
	}
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("webhook-timestamp is %s from the server's clock (tolerance %s): a replay, or a clock to fix", d.Round(time.Second).Abs(), Tolerance)
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, part := range strings.Fields(sigs) {
		v, b64, ok := strings.Cut(part, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no v1 signature in webhook-signature matches the body: wrong secret, or the body was changed")
}

// SignGitHub returns the X-Hub-Signature-256 value of body (for tests and
// for a sender written against prose).
func SignGitHub(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// SignStandard returns the webhook-signature value of a Standard Webhooks
// delivery (secret is whsec_<base64>).
func SignStandard(secret, id string, ts time.Time, body []byte) (string, error) {
	s, err := ParseSecret(secret)
	if err != nil || !s.Standard {
		return "", errors.New("not a whsec_ secret")
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
