package receipt

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces each secret RedactSecrets finds.
const Redacted = "[REDACTED]"

// secretPatterns find what looks like a credential: the secret is the
// pattern's first group, or the whole match when it has none.
var secretPatterns = []*regexp.Regexp{
	// Passwords in URLs: scheme://user:password@host. The password runs to
	// the last @ before the path, as git and curl read it.
	regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s]+)@`),
	// Authorization: Bearer <token>.
	regexp.MustCompile(`(?i)\bbearer\s+([a-z0-9._~+/=-]{8,})`),
	// Provider key shapes: OpenAI and Anthropic (sk-…), GitHub, Slack,
	// AWS access key ids, Google API keys.
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`),
	regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),
}

// secretName finds name= and "name": where the name mentions a key, token,
// secret, password or credential; secretValue reads the value after it: runs
// of quoted strings (an unterminated quote runs to the end) and unquoted
// text, up to a separator.
var (
	secretName  = regexp.MustCompile(`(?i)[a-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|credential)[a-z0-9_.-]*["']?\s*[:=]\s*`)
	secretValue = regexp.MustCompile(`^(?:"[^"]*"?|'[^']*'?|[^\s,;&"'}])+`)
)

// secretEnv names the environment variables whose values are secrets
// wherever they appear.
var secretEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}

// maxRedactRounds bounds the rounds RedactSecrets runs to reach a text it
// no longer changes; text that still changes then is redacted whole.
const maxRedactRounds = 8

// RedactSecrets replaces what looks like a credential in s with Redacted:
// passwords in URLs, Bearer tokens, API keys of well-known shapes (sk-…,
// ghp_…, xox…-, AKIA…, AIza…), the value of any name=value or "name": value
// pair whose name contains key, token, secret, password or credential, and
// the values of $OPENAI_API_KEY and $ANTHROPIC_API_KEY. It errs toward
// redacting too much.
//
// Every secret is found in the same text before any is replaced, so one
// secret's replacement never hides the next, and the rounds repeat until the
// text stops changing: RedactSecrets(RedactSecrets(s)) == RedactSecrets(s)
// and no part of a secret a round found is left.
func RedactSecrets(s string) string {
	for range maxRedactRounds {
		next := redactOnce(s)
		if next == s {
			return s
		}
		s = next
	}
	return Redacted
}

// redactOnce replaces every secret span found in s, merging spans that
// overlap.
func redactOnce(s string) string {
	var spans [][2]int
	for _, name := range secretEnv {
		if v := os.Getenv(name); len(v) >= 8 {
			for i := 0; ; {
				j := strings.Index(s[i:], v)
				if j < 0 {
					break
				}
				spans = append(spans, [2]int{i + j, i + j + len(v)})
				i += j + 1
			}
		}
	}
	for _, re := range secretPatterns {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			if len(m) >= 4 && m[2] >= 0 {
				spans = append(spans, [2]int{m[2], m[3]})
			} else {
				spans = append(spans, [2]int{m[0], m[1]})
			}
		}
	}
	for _, m := range secretName.FindAllStringIndex(s, -1) {
		if v := secretValue.FindStringIndex(s[m[1]:]); v != nil {
			spans = append(spans, [2]int{m[1], m[1] + v[1]})
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] < end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[at:max(start, at)])
		b.WriteString(Redacted)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
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
