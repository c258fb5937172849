package wiki

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// token is one word or identifier of a text, by byte offsets.
type token struct {
	term       string   // the term it is indexed and looked up by
	parts      []string // an identifier's words, indexed as words too
	start, end int
}

// tokenize calls fn for each token of s (which is NFC). A token is a run
// of letters, digits and marks; '_' belongs to it anywhere, and '.', '-',
// an apostrophe and ':' between two of its characters (ffi_call,
// fs.realpath, dpkg-source, std::move, the canary's), so an identifier
// stays whole while a sentence's final full stop does not join the word.
// Trailing '+' and '#' join a token that ends a word (C++, C#, g++).
//
// A plain word's term is its lowercase Porter stem, an apostrophe's "s"
// dropped (canary's → canari); an identifier's term is itself in
// lowercase, and its parts are its words' terms.
func tokenize(s string, fn func(token)) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		start := i
		i += size
		ident := r == '_'
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if isWordRune(r) {
				ident = ident || r == '_'
				i += size
				continue
			}
			if isJoiner(r) && i+size < len(s) {
				// ':' joins as "::" only.
				next := i + size
				if r == ':' {
					if s[next] != ':' || next+1 >= len(s) {
						break
					}
					next++
				}
				if n, _ := utf8.DecodeRuneInString(s[next:]); isWordRune(n) {
					if r != '\'' && r != '’' {
						ident = true
					}
					i = next
					continue
				}
			}
			break
		}
		// C++, C#, g++: up to two '+' or '#' ending the word.
		if j := i; j < len(s) && (s[j] == '+' || s[j] == '#') {
			k := j
			for k < len(s) && k-j < 2 && s[k] == s[j] {
				k++
			}
			if n, _ := utf8.DecodeRuneInString(s[k:]); k == len(s) || !isWordRune(n) && n != '+' && n != '#' {
				i = k
				ident = true
			}
		}
		word := strings.ToLower(s[start:i])
		tok := token{start: start, end: i}
		if ident {
			tok.term = word
			tok.parts = identParts(word)
		} else {
			tok.term = stem(word)
		}
		fn(tok)
	}
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isJoiner(r rune) bool {
	return r == '.' || r == '-' || r == ':' || r == '\'' || r == '’'
}

// identParts splits an identifier into its words' terms (ffi_call →
// ffi, call), leaving out the identifier itself.
func identParts(word string) []string {
	var parts []string
	for _, p := range strings.FieldsFunc(word, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) }) {
		if t := stem(p); t != word && t != "" {
			parts = append(parts, t)
		}
	}
	return parts
}

// apostrophes removes the apostrophes of a word.
var apostrophes = strings.NewReplacer("'", "", "’", "")

// stem is a word's Porter stem, for words of ASCII letters; other words
// are their own stem. A possessive "'s" is dropped first.
func stem(word string) string {
	word = strings.TrimSuffix(strings.TrimSuffix(word, "'s"), "’s")
	word = apostrophes.Replace(word)
	for i := 0; i < len(word); i++ {
		if c := word[i]; c < 'a' || c > 'z' {
			return word
		}
	}
	return porterstemmer.StemString(word)
}

// queryTerms returns the distinct terms of a query, in order. The words
// that say nothing on their own (the, of, and…) are left out when the
// query has any other.
func queryTerms(q string) []string {
	var all, kept []string
	seen := map[string]bool{}
	tokenize(q, func(tok token) {
		if seen[tok.term] {
			return
		}
		seen[tok.term] = true
		all = append(all, tok.term)
		if !stopWords()[tok.term] {
			kept = append(kept, tok.term)
		}
	})
	if len(kept) > 0 {
		return kept
	}
	return all
}

// stopWords are English words that tell pages apart hardly at all, as
// their stems.
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be but by for from has have if in into is it its no not of on or such that the their then there these they this to was were will with") {
		m[stem(w)] = true
	}
	return m
})
