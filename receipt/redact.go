package receipt

import (
	"os"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces each secret RedactSecrets finds.
const Redacted = "[REDACTED]"

// secretPatterns find what looks like a credential. Each replacement leaves
// text the patterns no longer change, so redaction is idempotent.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Passwords in URLs: scheme://user:password@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@`), "${1}" + Redacted + "@"},
	// Authorization: Bearer <token>.
	{regexp.MustCompile(`(?i)\b(bearer)\s+[a-z0-9._~+/=-]{8,}`), "${1} " + Redacted},
	// Provider key shapes: OpenAI and Anthropic (sk-…), GitHub, Slack,
	// AWS access key ids, Google API keys.
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`), Redacted},
	{regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), Redacted},
	{regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), Redacted},
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), Redacted},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), Redacted},
	// name=value and "name": "value" where the name mentions a key, token,
	// secret, password or credential.
	{regexp.MustCompile(`(?i)([a-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|credential)[a-z0-9_.-]*["']?\s*[:=]\s*)(?:"[^"]*"|'[^']*'|[^\s,;&"'}]+)`), "${1}" + Redacted},
}

// secretEnv names the environment variables whose values are secrets
// wherever they appear.
var secretEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}

// RedactSecrets replaces what looks like a credential in s with Redacted:
// passwords in URLs, Bearer tokens, API keys of well-known shapes (sk-…,
// ghp_…, xox…-, AKIA…, AIza…), the value of any name=value or "name": value
// pair whose name contains key, token, secret, password or credential, and
// the values of $OPENAI_API_KEY and $ANTHROPIC_API_KEY. It errs toward
// redacting too much. RedactSecrets(RedactSecrets(s)) == RedactSecrets(s).
func RedactSecrets(s string) string {
	for _, name := range secretEnv {
		if v := os.Getenv(name); len(v) >= 8 {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// FailureReason turns an error into the failure_reason of a failed receipt:
// the first line of its message, with control characters turned into spaces,
// invalid UTF-8 replaced, secrets redacted (RedactSecrets) and the result cut
// to at most MaxFailureReason characters, ending in "…" when cut. It returns
// "" for a nil error or an empty message; leave failure_reason out then.
func FailureReason(err error) string {
	if err == nil {
		return ""
	}
	line := err.Error()
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	line = strings.ToValidUTF8(line, "\uFFFD")
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, line)
	line = RedactSecrets(strings.TrimSpace(line))
	// Cutting can split a redacted value so that redacting again changes it
	// (and may lengthen it); cut shorter each round until the text is short
	// enough and already redacted.
	for limit := MaxFailureReason - 1; utf8.RuneCountInString(line) > MaxFailureReason; limit -= 16 {
		line = RedactSecrets(cutRunes(line, max(limit, 0)) + "…")
	}
	return line
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
