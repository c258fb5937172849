package plan

import "strings"

// fencedJSON returns what jsonFence's first submatch is in text — the body
// of the first fenced block: "```", an optional "json", blanks ending in a
// line end, the body, a line end, blanks and "```" — and whether there is
// one, scanning instead of running the expression (TestFencedJSON and
// FuzzFencedJSON hold the two to the same answer). It takes the
// expression's choices: the leftmost opening fence; the last line end of
// the blanks after it (\s* is greedy) unless only an earlier one lets the
// block close; the nearest close after that (.*? is lazy). Its time is
// linear in text.
func fencedJSON(text string) (string, bool) {
	for i := 0; ; i++ {
		o := strings.Index(text[i:], "```")
		if o < 0 {
			return "", false
		}
		i += o
		p := i + 3
		if strings.HasPrefix(text[p:], "json") {
			p += 4
		}
		e := blanks(text, p)
		k := strings.LastIndexByte(text[p:e], '\n')
		if k < 0 {
			continue // no line end after the fence: not an opening here
		}
		k += p
		if j, ok := closing(text, k+1); ok {
			return text[k+1 : j], true
		}
		// No close after the last line end: an earlier line end of the
		// blanks may open a block the last one closes, if "```" follows
		// the blanks. No later fence can do better (any close it had
		// would be one this fence's search found).
		k2 := strings.LastIndexByte(text[p:k], '\n')
		if k2 >= 0 && strings.HasPrefix(text[e:], "```") {
			return text[p+k2+1 : k], true
		}
		return "", false
	}
}

// closing returns the first j ≥ g where text[j] is a line end followed by
// blanks and "```".
func closing(text string, g int) (int, bool) {
	for j := g; j < len(text); {
		n := strings.IndexByte(text[j:], '\n')
		if n < 0 {
			return 0, false
		}
		j += n
		w := blanks(text, j+1)
		if strings.HasPrefix(text[w:], "```") {
			return j, true
		}
		// Every line end in text[j:w] has the same blanks' end w: none
		// closes the block.
		j = max(w, j+1)
	}
	return 0, false
}

// blanks returns the end of the run of \s characters (tab, LF, FF, CR,
// space) starting at i.
func blanks(text string, i int) int {
	for i < len(text) {
		switch text[i] {
		case '\t', '\n', '\f', '\r', ' ':
			i++
		default:
			return i
		}
	}
	return i
}
