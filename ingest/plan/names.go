package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/prose-store/prose/published"
)

// MaxSlug is the most characters a slug keeps of a title.
const MaxSlug = 60

// maxSlugBytes bounds a slug's UTF-8 bytes, so that a slug with a
// suffix and ".html" stays well within the 255 bytes file systems allow
// a name.
const maxSlugBytes = 180

// Slug makes a file or folder name of a title: the title in NFC, lower
// case where its script has case, common accented Latin letters folded to
// their base letter, letters (of any script), marks and digits kept, every
// other run of characters a single '-', at most MaxSlug characters, cut
// after a whole word (a single word longer than that is cut). A
// title with no letter or digit — only punctuation or symbols — gets
// "page-" and a short hash of the title, distinct per title; so does a
// slug the world-model path rules refuse. A Windows device name ("con",
// "nul") gets "-page" added.
func Slug(title string) string { return slugOf(title, MaxSlug) }

// MaxFileSlug is the most characters a page keeps of its source file's
// name (FileSlug): a title is cut for reading, a file name is the
// source's own, and generators tell their files apart late in long names
// (Doxygen's "structsigc_1_1bind__functor_3_010_00_01T__functor_…_01_4").
const MaxFileSlug = 160

// slugOf is Slug with at most max characters.
func slugOf(title string, max int) string {
	s := fold(strings.ToLower(norm.NFC.String(title)))
	var b strings.Builder
	dash := false
	cut := false // the limit fell inside a word
	n := 0
	for _, r := range s {
		keep := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && !dash && b.Len() > 0
		if !keep {
			dash = true
			continue
		}
		sep := dash && b.Len() > 0
		chars, size := 1, utf8.RuneLen(r)
		if sep {
			chars, size = 2, size+1
		}
		if n+chars > max || b.Len()+size > maxSlugBytes {
			cut = !sep
			break
		}
		if sep {
			b.WriteByte('-')
		}
		b.WriteRune(r)
		n += chars
		dash = false
	}
	out := b.String()
	if i := strings.LastIndexByte(out, '-'); cut && i > 0 {
		out = out[:i] // never cut a word: end at the last whole one
	}
	out = norm.NFC.String(out)
	if out == "" {
		return "page-" + shortHash(title)
	}
	if published.IsDeviceName(out) {
		out += "-page"
	}
	if _, err := published.NormalizePath(out + ".html"); err != nil {
		return "page-" + shortHash(title)
	}
	return out
}

// shortHash is eight hex digits of the SHA-256 of s.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// ShortHash is eight hex digits naming s: a suffix that tells apart
// names that would otherwise be the same.
func ShortHash(s string) string { return shortHash(s) }

// fold replaces common accented Latin letters by their base letter, as
// slugs always have: a title keeps the slug it had.
func fold(s string) string {
	return folder().Replace(s)
}

var folder = sync.OnceValue(func() *strings.Replacer {
	return strings.NewReplacer("é", "e", "è", "e", "ê", "e", "ë", "e", "á", "a", "à", "a", "â", "a", "ä", "a",
		"ó", "o", "ö", "o", "ô", "o", "ú", "u", "ü", "u", "í", "i", "ï", "i", "ç", "c", "ñ", "n", "ß", "ss")
})

var stopwords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against also among and another any are
		because been before being below between both but can cannot could did does doing down during each
		every from further have having here how into its itself just last more most much must never next
		night nothing once only other our ours out over own same should some such than that the their them
		then there these they this those through time under until very was were what when where which while
		who whom why will with would you your yours guide notes note page introduction overview readme
		untitled using use used make makes made first second third part chapter section example examples
		thing things way ways work works good best new old today week year day days`) {
		m[w] = true
	}
	return m
})

// Words lists the words of a title worth naming a folder after, as slugs,
// in order and once each: words of at least four letters that are not
// common words ("guide", "about", "notes").
func Words(title string) []string {
	var out []string
	seen := map[string]bool{}
	for _, word := range strings.FieldsFunc(strings.ToLower(norm.NFC.String(title)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		r, _ := utf8.DecodeRuneInString(word)
		if !unicode.IsLetter(r) || utf8.RuneCountInString(word) < 4 || stopwords()[word] {
			continue
		}
		s := Slug(word)
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}
