package receipt

import "strings"

// namedReplaceAll is namedValue().ReplaceAllStringFunc(t, replace), found
// by a scan that takes the expression's choices instead of running it at
// every byte of t (the expression has no literal prefix: on a text of one
// 16 MiB line that says "key" somewhere, that was half of reading it).
// TestNamedReplaceAllMatchesTheExpression and FuzzNamedReplaceAll hold
// the two to the same text and calls. A text holding the Kelvin sign or
// the long s, which (?i) folds into "k" and "s", is left to the
// expression. Its time is linear in t.
//
// What the scan rests on: a match is a name (a run of [a-z0-9_.-] that
// holds key, token, secret, passwd, password or credential, ASCII case
// folded), an optional quote, blanks, ':' or '=', blanks and a value (a
// quoted text, or a word that does not start with ':'). The name is the
// whole run from where the search stands (the character after a name's
// end is no name character, and nothing else may follow a name), so a
// run either starts a match at its first character (or at the search's
// position, inside one) or none of its characters does; the blanks are
// taken whole (a value never starts with one); a quote after the
// separator must be closed, or nothing matches there.
func namedReplaceAll(t string, replace func(string) string) string {
	if strings.Contains(t, "\u212A") || strings.Contains(t, "\u017F") {
		return namedValue().ReplaceAllStringFunc(t, replace)
	}
	lower := asciiLower(t)
	var b strings.Builder
	last := 0
	next := make([]int, len(namedHints)) // next occurrence of each hint at or after its search point
	for i := range next {
		next[i] = -2 // not searched yet
	}
	var dq, sq quoteFinder
	for pos := 0; pos < len(t); {
		h := -1
		for i, hint := range namedHints {
			if next[i] == -2 || next[i] >= 0 && next[i] < pos {
				if j := strings.Index(lower[pos:], hint); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (h < 0 || next[i] < h) {
				h = next[i]
			}
		}
		if h < 0 {
			break
		}
		start := h
		for start > pos && nameByte(t[start-1]) {
			start--
		}
		end := h
		for end < len(t) && nameByte(t[end]) {
			end++
		}
		if m := namedMatchEnd(t, lower, start, end, &dq, &sq); m > 0 {
			b.WriteString(t[last:start])
			b.WriteString(replace(t[start:m]))
			last, pos = m, m
			continue
		}
		pos = end // no character of the run starts a match
	}
	if last == 0 {
		return t
	}
	b.WriteString(t[last:])
	return b.String()
}

// nameByte is a byte of [a-z0-9_.-] as (?i) reads it (ASCII).
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// namedMatchEnd returns the end of the match whose name is t[start:end],
// or 0 when there is none.
func namedMatchEnd(t, lower string, start, end int, dq, sq *quoteFinder) int {
	name := lower[start:end]
	if !strings.Contains(name, "key") && !strings.Contains(name, "token") && !strings.Contains(name, "secret") &&
		!strings.Contains(name, "passwd") && !strings.Contains(name, "password") && !strings.Contains(name, "credential") {
		return 0
	}
	i := end
	if i < len(t) && (t[i] == '"' || t[i] == '\'') {
		i++
	}
	i = skipBlanks(t, i)
	if i >= len(t) || t[i] != ':' && t[i] != '=' {
		return 0
	}
	i = skipBlanks(t, i+1)
	if i >= len(t) {
		return 0
	}
	switch c := t[i]; {
	case c == '"':
		if j := dq.next(t, '"', i+1); j >= 0 {
			return j + 1
		}
		return 0
	case c == '\'':
		if j := sq.next(t, '\'', i+1); j >= 0 {
			return j + 1
		}
		return 0
	case valueStop(c) || c == ':':
		return 0
	}
	j := i + 1
	for j < len(t) && !valueStop(t[j]) {
		j++
	}
	return j
}

// valueStop is a byte an unquoted value stops at: \s , ; & " ' }.
func valueStop(c byte) bool {
	switch c {
	case '\t', '\n', '\f', '\r', ' ', ',', ';', '&', '"', '\'', '}':
		return true
	}
	return false
}

func skipBlanks(t string, i int) int {
	for i < len(t) && isBlank(t[i]) {
		i++
	}
	return i
}

// quoteFinder finds the next quote character at or after a position,
// remembering the last answer, so that searches moving forward read each
// byte of the text once.
type quoteFinder struct {
	searched bool
	from     int // the position of the last search
	at       int // its answer: the quote's position, or -1
}

func (q *quoteFinder) next(t string, quote byte, from int) int {
	if q.searched && from >= q.from && (q.at < 0 || from <= q.at) {
		return q.at
	}
	q.searched, q.from = true, from
	if j := strings.IndexByte(t[from:], quote); j >= 0 {
		q.at = from + j
	} else {
		q.at = -1
	}
	return q.at
}
