package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/prose-store/prose/internal/lazyre"
	"net/http"
	"regexp"
	"strings"
	"unicode"

	"github.com/prose-store/prose/model"
)

// keyLike matches strings shaped like provider keys, so a provider message
// that echoes part of a key (as 401 answers do) never carries it on.
var keyLike = lazyre.New(`\b(sk|key|pk)-[A-Za-z0-9_\-*.]{6,}`)

// Redact removes the key, and anything shaped like a key, from s. A key
// of no known shape (a compatible server's own token) is removed as it
// is, and so is any word that starts as it does (a provider echoing it
// masked, "ZZTOKEN1*****456"): its first keyPrefix characters, when the
// key is long enough for them to be its own.
func Redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
		if len(key) >= 2*keyPrefix {
			masked := regexp.MustCompile(regexp.QuoteMeta(key[:keyPrefix]) + `[^\s"'<>,;]*`)
			s = masked.ReplaceAllString(s, "[redacted]")
		}
	}
	return keyLike().ReplaceAllString(s, "[redacted]")
}

// keyPrefix is how many leading characters of the key mark a word as an
// echo of it.
const keyPrefix = 6

// ProviderMessage pulls the human message out of an error body: OpenAI
// and Anthropic nest it as {"error":{"message":…}}, compatible servers
// often send {"error":"…"} or {"message":"…"}.
func ProviderMessage(body []byte) string {
	return truncate(providerMessage(body), 300)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func providerMessage(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(doc.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(doc.Error, &flat) == nil && flat != "":
			return flat
		case doc.Message != "":
			return doc.Message
		case doc.Detail != "":
			return doc.Detail
		}
	}
	return strings.TrimSpace(string(body))
}

// Classify turns the error of a provider call into a *model.Error whose
// text names the operation, quotes the provider and never holds key.
func Classify(op, provider string, err error, fail *Failure, key string) error {
	if err == nil {
		return nil
	}
	e := &model.Error{Op: op, Provider: provider}
	var te *TimeoutError
	var tl *TooLargeError
	switch {
	case errors.Is(err, context.Canceled):
		e.Kind, e.Message = model.KindCanceled, "canceled"
	case errors.As(err, &te):
		e.Kind, e.Message = model.KindTimeout, te.Error()
		e.Hint = fmt.Sprintf("the provider is slow or unreachable; try again, or give each attempt longer than %s with --model-timeout DURATION (or $PROSE_MODEL_TIMEOUT), e.g. --model-timeout 30m", te.After)
	case errors.As(err, &tl):
		e.Kind, e.Message = model.KindResponse, tl.Error()
		e.Hint = "the provider or the base URL answered more than a model answer can be; check the base URL"
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = model.KindTimeout, "the deadline passed before an answer came"
	case fail != nil && fail.Status != 0:
		e.Status = fail.Status
		msg := ProviderMessage(fail.Body)
		if msg == "" {
			msg = http.StatusText(fail.Status)
		}
		e.Message = fmt.Sprintf("%s said: %q", provider, Redact(msg, key))
		switch {
		case fail.Status == 401 || fail.Status == 403:
			e.Kind, e.Hint = model.KindAuth, "check the API key in "+keyVar(provider)+" and its permissions"
		case fail.Status == 404:
			e.Kind, e.Hint = model.KindNotFound, "check the model name and the base URL"
		case fail.Status == 429:
			e.Kind, e.Hint = model.KindRateLimit, fmt.Sprintf("rate limited after %d attempts; wait and try again", fail.Attempts)
		case fail.Status >= 500:
			e.Kind, e.Hint = model.KindServer, fmt.Sprintf("the provider failed %d times; try again later", fail.Attempts)
		default:
			e.Kind, e.Hint = model.KindBadRequest, "the provider refused the request"
		}
	case fail != nil && fail.Answer != nil:
		// The answer came, and the provider could not read it.
		a := fail.Answer
		e.Kind, e.Status = model.KindResponse, a.Status
		ctype := a.ContentType
		if ctype == "" {
			ctype = "no content type"
		}
		what := "a body that is not JSON"
		if json.Valid(a.Body) {
			what = "JSON that is not the API's answer"
		}
		e.Message = fmt.Sprintf("%s answered with %s (%s, %d bytes): %q", provider, what, ctype, len(a.Body), bodyPrefix(a.Body, key))
		e.Hint = "check the base URL in " + baseVar(provider) + ": it must name the provider's API (for a compatible server, the URL ending in /v1), not a web page or a proxy's login"
	default:
		e.Kind = model.KindNetwork
		attempts := 1
		if fail != nil && fail.Attempts > 0 {
			attempts = fail.Attempts
		}
		e.Message = fmt.Sprintf("the connection failed after %d attempts: %s", attempts, Redact(rootMessage(err), key))
		e.Hint = "check the base URL and the network"
	}
	return e
}

// bodyPrefix is the start of an answer's body as an error quotes it: the
// key and anything shaped like one removed (before it is cut, so no part
// of a key survives the cut), control characters and runs of white space
// made one space, at most 120 characters.
func bodyPrefix(body []byte, key string) string {
	s := Redact(string(body[:min(len(body), 4096)]), key)
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	return truncate(s, 120)
}

func baseVar(provider string) string {
	if strings.HasPrefix(provider, "anthropic") {
		return "ANTHROPIC_BASE_URL"
	}
	return "OPENAI_BASE_URL"
}

func keyVar(provider string) string {
	if strings.HasPrefix(provider, "anthropic") {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

// rootMessage is the innermost error text, which names the failure
// without the wrapping of net/http (the URL, the method).
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
