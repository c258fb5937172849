// Package diffview turns the material change between two vault states into
// what a reviewer reads: wiki pages created, changed, moved and removed,
// with word-level diffs of their slots around each change; world-model
// changes per node, facet and path; and the review items a change opened
// or resolved. Markdown fits a pull-request comment.
package diffview

import (
	"strings"
	"unicode/utf8"
)

// Span kinds.
const (
	Same = "="   // words both sides hold
	Del  = "-"   // words only the old side holds
	Ins  = "+"   // words only the new side holds
	Gap  = "..." // unchanged words left out of the window
)

// Span is a run of words of one kind. Text holds the words joined by
// single spaces; for a Gap it is empty and Words counts what was left out.
type Span struct {
	Kind  string `json:"kind"`
	Text  string `json:"text,omitempty"`
	Words int    `json:"words"`
}

// WordDiff is a word-level diff, cut to a window around each change.
type WordDiff struct {
	Spans   []Span `json:"spans"`
	Removed int    `json:"removed"` // words removed
	Added   int    `json:"added"`   // words added
	// Coarse is set when the changed stretch was too long to compare word
	// by word: it is shown as one removal and one addition.
	Coarse bool `json:"coarse,omitempty"`
	// More counts the changes past the first maxHunks, left out of Spans.
	More int `json:"more,omitempty"`
}

// Limits of a word diff. The common head and tail are trimmed first
// (linear); the LCS table over what remains is bounded by maxCells, so
// memory stays under a few megabytes whatever the input. A span longer
// than maxSpanWords shows its first and last words around a count.
const (
	maxWords     = 200_000 // words read from one side; more counts only
	maxCells     = 1 << 20 // LCS table cells (n*m) of the changed middle
	contextWords = 12      // unchanged words kept on each side of a change
	maxSpanWords = 60      // words shown of one added or removed run
	maxHunks     = 6       // separate changes shown of one text
)

// Words splits text at white space.
func Words(s string) []string {
	return strings.Fields(s)
}

// Diff compares two texts word by word.
func Diff(a, b string) WordDiff {
	return DiffTokens(Words(a), Words(b))
}

// DiffTokens compares two token lists and keeps contextWords unchanged
// tokens around each change.
func DiffTokens(a, b []string) WordDiff {
	var d WordDiff
	if len(a) > maxWords {
		a = a[:maxWords]
	}
	if len(b) > maxWords {
		b = b[:maxWords]
	}
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var ops []op
	if len(ma)*len(mb) > maxCells {
		d.Coarse = true
		ops = []op{{Del, ma}, {Ins, mb}}
	} else {
		ops = lcs(ma, mb)
	}
	all := make([]op, 0, len(ops)+2)
	all = append(all, op{Same, a[:pre]})
	all = append(all, ops...)
	all = append(all, op{Same, a[len(a)-suf:]})
	all = merge(all)
	hunks := 0
	for i, o := range all {
		if o.kind != Same && (i == 0 || all[i-1].kind == Same) {
			hunks++
			if hunks > maxHunks {
				d.More++
			}
		}
		if hunks > maxHunks {
			switch o.kind {
			case Del:
				d.Removed += len(o.words)
			case Ins:
				d.Added += len(o.words)
			}
			continue
		}
		switch o.kind {
		case Del:
			d.Removed += len(o.words)
			d.Spans = append(d.Spans, clip(o.kind, o.words))
		case Ins:
			d.Added += len(o.words)
			d.Spans = append(d.Spans, clip(o.kind, o.words))
		default:
			d.Spans = append(d.Spans, window(o.words, i == 0, i == len(all)-1 || hunks >= maxHunks)...)
		}
	}
	return d
}

type op struct {
	kind  string
	words []string
}

// lcs returns the edit of a into b through a longest common subsequence.
// The caller bounds len(a)*len(b).
func lcs(a, b []string) []op {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return []op{{Del, a}, {Ins, b}}
	}
	// t[i][j]: the LCS length of a[i:] and b[j:], in one flat table.
	w := m + 1
	t := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i*w+j] = t[(i+1)*w+j+1] + 1
			} else if x, y := t[(i+1)*w+j], t[i*w+j+1]; x >= y {
				t[i*w+j] = x
			} else {
				t[i*w+j] = y
			}
		}
	}
	var out []op
	add := func(kind, word string) {
		if k := len(out) - 1; k >= 0 && out[k].kind == kind {
			out[k].words = append(out[k].words, word)
			return
		}
		out = append(out, op{kind, []string{word}})
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			add(Same, a[i])
			i++
			j++
		case t[(i+1)*w+j] >= t[i*w+j+1]:
			add(Del, a[i])
			i++
		default:
			add(Ins, b[j])
			j++
		}
	}
	for ; i < n; i++ {
		add(Del, a[i])
	}
	for ; j < m; j++ {
		add(Ins, b[j])
	}
	return out
}

// merge drops empty runs and joins neighbours of one kind, and puts a
// removal before the addition that replaces it.
func merge(ops []op) []op {
	var out []op
	for _, o := range ops {
		if len(o.words) == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].kind == o.kind {
			out[k].words = append(append([]string{}, out[k].words...), o.words...)
			continue
		}
		out = append(out, o)
	}
	return out
}

// window keeps the unchanged words next to a change: the last
// contextWords of a leading run, the first of a trailing one, both ends of
// a run between two changes.
func window(words []string, first, last bool) []Span {
	n := len(words)
	switch {
	case first && last:
		// No change at all.
		if n <= 2*contextWords {
			return []Span{{Kind: Same, Text: strings.Join(words, " "), Words: n}}
		}
		return []Span{{Kind: Same, Text: strings.Join(words[:contextWords], " "), Words: contextWords}, {Kind: Gap, Words: n - contextWords}}
	case first:
		if n <= contextWords {
			return []Span{{Kind: Same, Text: strings.Join(words, " "), Words: n}}
		}
		return []Span{{Kind: Gap, Words: n - contextWords}, {Kind: Same, Text: strings.Join(words[n-contextWords:], " "), Words: contextWords}}
	case last:
		if n <= contextWords {
			return []Span{{Kind: Same, Text: strings.Join(words, " "), Words: n}}
		}
		return []Span{{Kind: Same, Text: strings.Join(words[:contextWords], " "), Words: contextWords}, {Kind: Gap, Words: n - contextWords}}
	default:
		if n <= 2*contextWords+2 {
			return []Span{{Kind: Same, Text: strings.Join(words, " "), Words: n}}
		}
		return []Span{
			{Kind: Same, Text: strings.Join(words[:contextWords], " "), Words: contextWords},
			{Kind: Gap, Words: n - 2*contextWords},
			{Kind: Same, Text: strings.Join(words[n-contextWords:], " "), Words: contextWords},
		}
	}
}

// clip shows an added or removed run whole when short, else its first and
// last words around the count of those left out.
func clip(kind string, words []string) Span {
	n := len(words)
	if n <= maxSpanWords {
		return Span{Kind: kind, Text: strings.Join(words, " "), Words: n}
	}
	head, tail := maxSpanWords*2/3, maxSpanWords/3
	return Span{Kind: kind, Words: n, Text: strings.Join(words[:head], " ") + " … (" + itoa(n-head-tail) + " more words) … " + strings.Join(words[n-tail:], " ")}
}

// Excerpt is the first words of a text, at most n, with "…" when cut.
func Excerpt(s string, n int) string {
	w := Words(s)
	if len(w) <= n {
		return strings.Join(w, " ")
	}
	return strings.Join(w[:n], " ") + " …"
}

// Cut shortens s to at most n bytes on a rune boundary, marking the cut.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
