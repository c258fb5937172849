package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/prose-store/prose/model"
)

// UserAgent names prose to the providers.
const UserAgent = "prose (net/http)"

// Endpoint is one JSON API of a provider: where requests go and what
// every request carries.
type Endpoint struct {
	Provider string      // "openai", "openai-chat", "anthropic": in errors
	URL      string      // the whole URL requests are posted to
	Header   http.Header // credentials and versions, sent on every request
	Key      string      // the key, removed from every error
	Client   *http.Client
}

// BaseURL checks a base URL setting and returns it without a trailing
// slash: it must be an http or https URL with a host. The error names
// the variable and never quotes a password in the URL.
func BaseURL(op, provider, variable, value string) (string, error) {
	base := strings.TrimRight(value, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := ""
		if err == nil {
			shown = fmt.Sprintf(" %q", u.Redacted())
		}
		return "", &model.Error{Op: op, Provider: provider, Kind: model.KindConfig,
			Message: fmt.Sprintf("%s%s is not an http or https URL", variable, shown),
			Hint:    fmt.Sprintf("set %s to the API's address, e.g. %s", variable, example(variable))}
	}
	return base, nil
}

func example(variable string) string {
	if variable == "ANTHROPIC_BASE_URL" {
		return "https://api.anthropic.com"
	}
	return "https://api.openai.com/v1 or http://127.0.0.1:11434/v1"
}

// Post sends body as JSON to the endpoint, through its client (which
// retries, times each attempt and bounds the answer), and decodes a 2xx
// answer into out. Every failure is a *model.Error from Classify: the
// status and the provider's message, or what came back when a 2xx is not
// the API's JSON, with the key removed.
func (e Endpoint) Post(ctx context.Context, op string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return &model.Error{Op: op, Provider: e.Provider, Kind: model.KindSchema, Message: "the request cannot be encoded as JSON: " + Redact(err.Error(), e.Key), Err: err}
	}
	var fail Failure
	req, err := http.NewRequestWithContext(WithFailure(ctx, &fail), http.MethodPost, e.URL, bytes.NewReader(data))
	if err != nil {
		return &model.Error{Op: op, Provider: e.Provider, Kind: model.KindConfig, Message: "the request URL is not valid", Hint: "check the base URL in " + baseVar(e.Provider)}
	}
	for k, v := range e.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	client := e.Client
	if client == nil {
		client = &http.Client{Transport: &Transport{}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Classify(op, e.Provider, err, &fail, e.Key)
	}
	// The transport has read the body already through MaxAnswer; the
	// bound here holds for any client a caller passes.
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	resp.Body.Close()
	if err == nil && len(answer) > MaxAnswer {
		err = &TooLargeError{Limit: MaxAnswer}
	}
	if err != nil {
		return Classify(op, e.Provider, err, &fail, e.Key)
	}
	if resp.StatusCode >= 300 {
		if fail.Status == 0 {
			fail.Status, fail.Body = resp.StatusCode, answer
		}
		return Classify(op, e.Provider, fmt.Errorf("HTTP %d", resp.StatusCode), &fail, e.Key)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		// The call ended with a 2xx: an earlier attempt's failure is not
		// what went wrong.
		fail.Status, fail.Body = 0, nil
		if fail.Answer == nil {
			fail.Answer = &Answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: answer}
		}
		return Classify(op, e.Provider, err, &fail, e.Key)
	}
	return nil
}
