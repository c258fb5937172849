package receipt

import (
	"github.com/prose-store/prose/internal/lazyre"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces each secret RedactSecrets finds.
const Redacted = "[REDACTED]"

// redactMode says where a secret pattern applies.
type redactMode uint8

const (
	// inMessages: RedactSecrets, for error messages and notes; it errs
	// toward redacting too much.
	inMessages redactMode = 1 << iota
	// inDocuments: RedactText, for documents a person wrote.
	inDocuments

	inBoth = inMessages | inDocuments
)

// secretPattern is one shape of credential.
type secretPattern struct {
	// in says which of RedactSecrets and RedactText look for the shape.
	in redactMode
	// re finds the shape. In a message the secret is re's group named
	// "secret", or the whole match when it has none; in a document each
	// match becomes repl, where ${1} is re's first group.
	re   *regexp.Regexp
	repl string
	// hints are lower-case strings one of which every match contains: a
	// document holding none of them is not searched with re. Without
	// hints, every document is.
	hints []string
	// words says no match of re holds a blank (\s: tab, LF, FF, CR,
	// space; no class of it holds one) and every match holds a hint:
	// RedactText searches only the words (runs without a blank) that
	// hold a hint, with the same matches, as \b reads a blank and the
	// end of a text alike (a URL on every line of an HTML manual, or one
	// in a text of one 16 MiB line, would otherwise make re, which has
	// no literal prefix, read all of it).
	words bool
}

// secretPatterns are the shapes of credentials, in the order RedactText
// replaces them; a new shape is added here, for the modes it applies in.
// Each replacement in a document leaves text the patterns no longer change.
// The values of named pairs (secretName) are found after them, in both
// modes.
var secretPatterns = sync.OnceValue(func() []secretPattern {
	return []secretPattern{
		// PEM private key blocks, whatever the algorithm.
		{inBoth, regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`), Redacted, []string{"private key-----"}, false},
		// Passwords in URLs: scheme://user:password@host. In a message the
		// password runs to the last @ before the path, as git and curl read it;
		// in a document it stops at the first @.
		{inMessages, regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<secret>[^/\s]+)@`), "", []string{"://"}, false},
		{inDocuments, regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@`), "${1}" + Redacted + "@", []string{"://"}, true},
		// Authorization: Bearer <token>.
		{inBoth, regexp.MustCompile(`(?i)\b(bearer)\s+(?P<secret>[a-z0-9._~+/=-]{8,})`), "${1} " + Redacted, []string{"bearer"}, false},
		// Provider key shapes: OpenAI and Anthropic (sk-…), GitHub, Slack,
		// AWS access key ids, Google API keys. A key never spans lines, and
		// "sk-" is in every "disk-" and "task-": searched only in the lines
		// that hold the hint (the expressions start with \b and have no
		// literal prefix, so the whole text was scanned by the matcher).
		{inBoth, regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`), Redacted, []string{"sk-"}, true},
		{inBoth, regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), Redacted, []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, true},
		{inBoth, regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), Redacted, []string{"xox"}, true},
		{inBoth, regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), Redacted, []string{"akia"}, true},
		{inBoth, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), Redacted, []string{"aiza"}, true},
	}
})

// secretNameExpr is the name of a name=value or "name": value pair whose
// name mentions a key, token, secret, password or credential, with what
// joins it to its value; namedHints are the hints of those words.
const secretNameExpr = `[a-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|credential)[a-z0-9_.-]*["']?\s*[:=]\s*`

var namedHints = []string{"key", "token", "secret", "passw", "credential"}

// secretName finds the names of secrets; in a message, secretValue reads
// the value after one: runs of quoted strings (an unterminated quote runs
// to the end) and unquoted text, up to a separator.
//
// namedValue is a name with its value in a document: one quoted string or
// one unquoted word. It counts only when the value looks like a credential:
// "Primary key: the column that…" is a definition. A value never starts
// with a colon: `Aptitude::UI::Keybindings::Search` is a scoped name, not
// the name Keybindings with a value.
var (
	secretName  = lazyre.New(`(?i)` + secretNameExpr)
	secretValue = lazyre.New(`^(?:"[^"]*"?|'[^']*'?|[^\s,;&"'}])+`)
	namedValue  = lazyre.New(`(?i)(` + secretNameExpr + `)("[^"]*"|'[^']*'|[^\s,;&"'}:][^\s,;&"'}]*)`)
)

// secretEnv names the environment variables whose values are secrets
// wherever they appear.
var secretEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}

// maxRedactRounds bounds the rounds RedactSecrets runs to reach a text it
// no longer changes; text that still changes then is redacted whole.
const maxRedactRounds = 8

// RedactSecrets replaces what looks like a credential in s with Redacted:
// private key blocks (PEM), passwords in URLs, Bearer tokens, API keys of
// well-known shapes (sk-…, ghp_…, xox…-, AKIA…, AIza…), the value of any
// name=value or "name": value pair whose name contains key, token, secret,
// password or credential, and the values of $OPENAI_API_KEY and
// $ANTHROPIC_API_KEY. It errs toward redacting too much.
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
	for _, p := range secretPatterns() {
		if p.in&inMessages == 0 {
			continue
		}
		g := p.re.SubexpIndex("secret")
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			if g > 0 && m[2*g] >= 0 {
				spans = append(spans, [2]int{m[2*g], m[2*g+1]})
			} else {
				spans = append(spans, [2]int{m[0], m[1]})
			}
		}
	}
	for _, m := range secretName().FindAllStringIndex(s, -1) {
		if v := secretValue().FindStringIndex(s[m[1]:]); v != nil {
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

// RedactText is RedactSecrets for documents a person wrote — notes, pages,
// transcripts — and reports how many secrets it replaced. A name=value pair
// is redacted only when the value looks like a credential (at least 8
// characters, no spaces, letters mixed with digits or symbols), so a
// glossary line such as "API key: the string a provider issues" survives.
// Private key blocks (PEM), provider key shapes, Bearer tokens, URL
// passwords and the provider keys of the environment are always redacted.
// RedactText(RedactText(s)) returns the same text and a count of zero.
func RedactText(s string) (string, int) {
	n := 0
	for _, name := range secretEnv {
		if v := os.Getenv(name); len(v) >= 8 {
			n += strings.Count(s, v)
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	// The lowered text is made once, and again only after a pattern
	// changed the text: a document is lowered once, not once per pattern.
	// Which hints it holds is found in one reading of it too (and again
	// after a change), not in one search per hint.
	lower := asciiLower(s)
	held := docHints().held(lower)
	for _, p := range secretPatterns() {
		if p.in&inDocuments == 0 {
			continue
		}
		if len(p.hints) > 0 && held&docHints().mask(p.hints) == 0 {
			continue
		}
		before := s
		replace := func(m string) string {
			out := string(p.re.ExpandString(nil, p.repl, m, p.re.FindStringSubmatchIndex(m)))
			if out != m {
				n++
			}
			return out
		}
		if p.words {
			s = replaceInSpans(s, hintWords(lower, p.hints), p.re, replace)
		} else {
			s = p.re.ReplaceAllStringFunc(s, replace)
		}
		if s != before {
			lower = asciiLower(s)
			held = docHints().held(lower)
		}
	}
	if held&docHints().mask(namedHints) == 0 {
		return s, n
	}
	replace := func(m string) string {
		sub := namedValue().FindStringSubmatchIndex(m)
		if !credentialLike(strings.Trim(m[sub[4]:sub[5]], `"'`)) {
			return m
		}
		out := string(namedValue().ExpandString(nil, "${1}"+Redacted, m, sub))
		if out != m {
			n++
		}
		return out
	}
	// Named values are searched for only around the lines that name a key,
	// token, secret, password or credential (and the line after, where a
	// value may continue): prose rarely does, and the pattern is slow on
	// long text.
	return replaceInLinesBy(s, lower, namedHints, func(seg string) string { return namedReplaceAll(seg, replace) }), n
}

// replaceInSpans is re.ReplaceAllStringFunc(s, replace) searched only in
// spans of s (byte ranges, in order, disjoint): the same text when every
// match lies in one of them and searching a span alone finds its matches.
func replaceInSpans(s string, spans [][2]int, re *regexp.Regexp, replace func(string) string) string {
	if len(spans) == 0 {
		return s
	}
	// The text is built only from the first span a replacement changes
	// (most documents have none: s itself is returned, not a copy).
	var b strings.Builder
	started, last := false, 0
	for _, r := range spans {
		seg := s[r[0]:r[1]]
		out := re.ReplaceAllStringFunc(seg, replace)
		if !started {
			if out == seg {
				continue
			}
			started = true
			b.Grow(len(s))
		}
		b.WriteString(s[last:r[0]])
		b.WriteString(out)
		last = r[1]
	}
	if !started {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isBlank is a byte of \s.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// hintWords returns the byte ranges, in order and each once, of the words
// of s (runs without a blank) that hold one of hints (none holding a
// blank). Each byte is read a bounded number of times per hint.
func hintWords(s string, hints []string) [][2]int {
	var out [][2]int
	for _, h := range hints {
		end := 0 // the end of the last word found for h
		for from := 0; ; {
			i := strings.Index(s[from:], h)
			if i < 0 {
				break
			}
			i += from
			if i < end {
				from = end // inside the word found last: skip to its end
				continue
			}
			start := i
			for start > end && !isBlank(s[start-1]) {
				start--
			}
			end = i + len(h)
			for end < len(s) && !isBlank(s[end]) {
				end++
			}
			out = append(out, [2]int{start, end})
			from = end
		}
	}
	if len(hints) > 1 {
		slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
		out = slices.Compact(out)
	}
	return out
}

// replaceInLinesBy is replaceAll(s) (a ReplaceAllStringFunc) done only in
// the lines of s that hold one of hints (lower is s lowered by asciiLower)
// and the line after each: the same text when no match of re crosses a
// line end or begins on a line without a hint.
func replaceInLinesBy(s, lower string, hints []string, replaceAll func(string) string) string {
	// As in replaceInSpans, the text is built only from the first line a
	// replacement changes.
	var b strings.Builder
	started, last := false, 0
	for _, r := range hintLines(lower, hints) {
		if r[0] < last {
			r[0] = last
		}
		seg := s[r[0]:r[1]]
		out := replaceAll(seg)
		if !started {
			if out == seg {
				last = r[1]
				continue
			}
			started = true
			b.Grow(len(s))
			last = 0
		}
		b.WriteString(s[last:r[0]])
		b.WriteString(out)
		last = r[1]
	}
	if !started {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// asciiLower lowers A–Z only, so byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// credentialLike reports whether a value reads as a credential rather than
// a word or a phrase: long, without spaces, and not only letters. A value
// that begins with Redacted is redacted already: what followed the closing
// quote of a redacted quoted value (key="…"tail) reads on as part of it.
func credentialLike(v string) bool {
	if len(v) < 8 || strings.ContainsAny(v, " \t") || strings.HasPrefix(v, Redacted) {
		return false
	}
	letters, others := 0, 0
	for _, r := range v {
		if unicode.IsLetter(r) {
			letters++
		} else {
			others++
		}
	}
	return letters > 0 && others > 0
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// hasHint reports whether lower, lowered by asciiLower, holds one of hints.
// It reads the two letters outside ASCII that (?i) matches to ASCII ones,
// the Kelvin sign K and the long s ſ, as k and s: the patterns find a name
// spelled with them, so its line must hold the hint.
func hasHint(lower string, hints []string) bool {
	if containsAny(lower, hints) {
		return true
	}
	// Two Contains calls, not ContainsAny: a search for one multi-byte
	// sequence runs on the fast byte search.
	return (strings.Contains(lower, "\u212A") || strings.Contains(lower, "\u017F")) && containsAny(foldHints.Replace(lower), hints)
}

var foldHints = strings.NewReplacer("\u212A", "k", "\u017F", "s")

// hintSet finds which of a list of hints a text holds in one reading of
// it: RedactText asks about some twenty hints of every document, and a
// search of a 16 MiB text for each was a twentieth of reading it.
type hintSet struct {
	hints []string
	// pairs are the hints' first two bytes; first lists the hints (their
	// indexes) by their first byte.
	pairs [1 << 16 / 64]uint64
	first [256][]uint8
}

// docHints are the hints of the patterns RedactText uses, and the named
// values' hints.
var docHints = sync.OnceValue(func() *hintSet {
	var hints []string
	for _, p := range secretPatterns() {
		if p.in&inDocuments != 0 {
			hints = append(hints, p.hints...)
		}
	}
	return newHintSet(append(hints, namedHints...))
})

// newHintSet makes the set of hints (at most 64, each of two bytes or
// more).
func newHintSet(hints []string) *hintSet {
	h := &hintSet{}
	for _, x := range hints {
		if slices.Contains(h.hints, x) {
			continue
		}
		if len(x) < 2 || len(h.hints) == 64 {
			panic("receipt: a hint of fewer than two bytes, or more than 64 hints")
		}
		k := uint16(x[0])<<8 | uint16(x[1])
		h.pairs[k/64] |= 1 << (k % 64)
		h.first[x[0]] = append(h.first[x[0]], uint8(len(h.hints)))
		h.hints = append(h.hints, x)
	}
	return h
}

// mask is the bits of hints (which are all of the set's).
func (h *hintSet) mask(hints []string) uint64 {
	var m uint64
	for _, x := range hints {
		m |= 1 << slices.Index(h.hints, x)
	}
	return m
}

// held is the bits of the hints that lower (lowered by asciiLower) holds,
// as hasHint reads it: a hint spelled with the Kelvin sign or the long s
// counts.
func (h *hintSet) held(lower string) uint64 {
	m := h.in(lower)
	if strings.Contains(lower, "\u212A") || strings.Contains(lower, "\u017F") {
		m |= h.in(foldHints.Replace(lower))
	}
	return m
}

// namedHintSet is the set of the named values' hints.
var namedHintSet = sync.OnceValue(func() *hintSet { return newHintSet(namedHints) })

// holds reports whether s holds one of the hints.
func (h *hintSet) holds(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		if h.pairs[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		for _, j := range h.first[s[i]] {
			if strings.HasPrefix(s[i:], h.hints[j]) {
				return true
			}
		}
	}
	return false
}

// in is the bits of the hints that s holds.
func (h *hintSet) in(s string) uint64 {
	var m uint64
	all := uint64(1)<<len(h.hints) - 1
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		if h.pairs[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		for _, j := range h.first[s[i]] {
			if m&(1<<j) == 0 && strings.HasPrefix(s[i:], h.hints[j]) {
				m |= 1 << j
				if m == all {
					return m
				}
			}
		}
	}
	return m
}

// hintLines returns the byte ranges, in order and merged, of each line of
// s holding one of hints, together with the line after it.
func hintLines(s string, hints []string) [][2]int {
	var out [][2]int
	// A text without the Kelvin sign and the long s has none in a line:
	// each line is then read once for all hints (a set of them made
	// once for the named values' hints), not searched once for each.
	lineHint := func(line string) bool { return hasHint(line, hints) }
	if slices.Equal(hints, namedHints) && !strings.Contains(s, "\u212A") && !strings.Contains(s, "\u017F") {
		lineHint = namedHintSet().holds
	}
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start + 1
		}
		if lineHint(s[start:end]) {
			stop := end
			if next := strings.IndexByte(s[end:], '\n'); next >= 0 {
				stop = end + next + 1
			} else {
				stop = len(s)
			}
			if len(out) > 0 && out[len(out)-1][1] >= start {
				out[len(out)-1][1] = max(out[len(out)-1][1], stop)
			} else {
				out = append(out, [2]int{start, stop})
			}
		}
		start = end
	}
	return out
}
