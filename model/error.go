package model

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies a model error so callers can choose an exit code and a
// hint without parsing text.
type Kind string

// Error kinds.
const (
	KindConfig      Kind = "config"      // a bad spec, a missing key or base URL
	KindUnavailable Kind = "unavailable" // the provider is not in this build
	KindAuth        Kind = "auth"        // 401 or 403
	KindBadRequest  Kind = "bad_request" // 400 or 422
	KindNotFound    Kind = "not_found"   // 404: usually an unknown model name
	KindRateLimit   Kind = "rate_limit"  // 429 after every retry
	KindServer      Kind = "server"      // 5xx after every retry
	KindNetwork     Kind = "network"     // the connection failed after every retry
	KindTimeout     Kind = "timeout"     // an attempt took longer than the timeout
	KindCanceled    Kind = "canceled"    // the caller's context ended
	KindSchema      Kind = "schema"      // a tool schema cannot be sent without losing meaning
	KindResponse    Kind = "response"    // the provider answered something unreadable
	KindReplay      Kind = "replay"      // a request does not match its recording
	KindLimit       Kind = "limit"       // the agent loop reached its iteration limit
)

// Error is a failure of a model operation. Its text is one sentence with a
// hint; it never holds a credential (providers redact the provider's own
// message before putting it here).
type Error struct {
	Op       string // what was being done, e.g. "call openai:gpt-5"
	Provider string
	Kind     Kind
	Status   int    // the HTTP status, when there was one
	Message  string // what went wrong, the provider's message quoted
	Hint     string // how to fix it
	Err      error  // the underlying error, if any (never printed raw)
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d: ", e.Status)
	}
	b.WriteString(e.Message)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the first *Error in err's chain, or "".
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
