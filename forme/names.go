package forme

import (
	"strings"
	"unicode"
)

// tokens splits text into lower-case words on anything that is not a letter
// or digit, each reduced to a singular form, so "Decisions Log",
// "decisions-log" and "decision_logs" compare equal.
func tokens(s string) []string {
	out, _ := tokenPairs(s)
	return out
}

// tokenPairs returns the singular tokens and the same words as written
// (lower-cased, not singularized).
func tokenPairs(s string) (norm, raw []string) {
	start := -1
	flush := func(end int) {
		if start >= 0 {
			w := strings.ToLower(s[start:end])
			raw = append(raw, w)
			norm = append(norm, singular(w))
			start = -1
		}
	}
	prevLower := false
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			// camelCase: "CountTrend" is "count trend"
			if unicode.IsUpper(r) && prevLower {
				flush(i)
			}
			if start < 0 {
				start = i
			}
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
			continue
		}
		prevLower = false
		flush(i)
	}
	flush(len(s))
	return norm, raw
}

// singular strips a plural ending: "entries" → "entry", "classes" → "class",
// "signals" → "signal". Short words and words ending in -ss, -us, -is stay.
func singular(w string) string {
	switch {
	case len(w) <= 3:
		return w
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

// normKey is a name's normalized form: singular tokens joined by "-".
func normKey(s string) string {
	return strings.Join(tokens(s), "-")
}

// span is a half-open token range.
type span struct{ start, end int }

func (a span) contains(b span) bool { return a.start <= b.start && b.end <= a.end }
func (a span) overlaps(b span) bool { return a.start < b.end && b.start < a.end }

// findSeq returns every position where seq occurs in toks.
func findSeq(toks, seq []string) []span {
	var out []span
	if len(seq) == 0 {
		return nil
	}
	for i := 0; i+len(seq) <= len(toks); i++ {
		if toks[i] != seq[0] {
			continue
		}
		ok := true
		for j := 1; j < len(seq); j++ {
			if toks[i+j] != seq[j] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, span{i, i + len(seq)})
		}
	}
	return out
}
