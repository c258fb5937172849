package offline

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/lazyre"
)

// The engine cannot understand text, so it makes a page only of what a
// source declares: a procedure of an ordered list the document presents
// as steps (under a heading that says so), a term page of an explicit
// definition (a glossary entry, a definition list, a list of "Term:
// meaning" items, a Term/Definition table) of a term that is a name, not a
// common word or a piece of a sentence. Everything else stays on the
// source page, where prose renders the whole document.

// stepsHeading is a heading that presents what follows as steps: "Steps",
// "Deploy steps", "How to …", "Installation", "Getting started", a
// runbook, or an activity named by a gerund and its object ("Opening an
// incident"; "Terminating statements" is no procedure).
var stepsHeading = lazyre.New(`(?i)^(how\b|steps?\b|procedures?\b|instructions?\b|install|setup\b|set[ -]up\b|getting started|quick ?start|tutorial|walk-?through|runbook|checklist|[a-z]+ing\s+(a|an|the|your|our|my|this|that|new|up|to|it)\b)|\b(steps|procedure|instructions|runbook|how to|how do i|checklist)\b`)

// presentsSteps reports whether the ordered list b of section s is a
// procedure the document presents as such: a numbered list (two steps or
// more) under a heading that says so, in a document that is not a
// conversation (whose answers stay turns).
func presentsSteps(doc *source.Document, s *source.Section, b *source.Block) bool {
	if doc.Kind == source.Conversation || b.Kind != source.Steps || len(b.Items) < 2 {
		return false
	}
	h := s.Heading
	if h == "" {
		h = doc.Title
	}
	return stepsHeading().MatchString(strings.TrimSpace(h))
}

// glossaryHeading names a section of definitions: the word that says so
// opens the heading (after its number) or closes it — "Glossary of
// terms", "2.1 Terms and definitions", "Key concepts", "Severity
// levels" —, not a word in the middle of a heading about something else
// ("1.8 OR-Connected Terms In The WHERE Clause" is about a query's WHERE
// clause, and its figure captions are no terms).
var glossaryHeading = lazyre.New(`(?i)^[\s\d.]*(glossary|terms|terminology|definitions?|vocabulary|concepts|roles|severity levels?|levels)\b|\b(glossary|terms|terminology|definitions?|vocabulary|concepts|roles|levels)[\s.:?!]*$`)

// interfaceHeading names a section that lists an interface rather than
// defining terms: a command's options, subcommands, arguments and exit
// codes, a program's environment variables and configuration keys, a
// format's fields and records; a manual page's examples (a command line
// and what it does); a writer's styles and an editor's key bindings. Its
// definition list is reference, not a
// glossary: "add" under a manual page's SUBCOMMANDS, "0x2" under "ref
// record". Its entries stay on the source page, anchored.
var interfaceHeading = lazyre.New(`(?i)\b(sub-?commands?|commands?|options?|flags|switches|arguments?|parameters?|actions?|fields?|records?|environment|variables|configuration|config keys|settings|keys|messages|exit (status|codes?)|return values?|directives?|examples?|styles|(key )?bindings)\b`)

// declaresTerm reports whether definition d of block b is declared as
// one: in a list of two definitions or more (a definition list, a list of
// "Term: meaning" items, a Term/Definition table), or alone under a
// heading naming a glossary or the term itself ("What is a feature
// flag?"). A lone "Implementation restriction: …" line in running text is
// not, nor a list under a heading naming an interface (options,
// subcommands, fields …: its own or one it stands under) unless a
// heading nearer names a glossary.
// trail is the headings the section stands under, its own last.
func declaresTerm(hm *headingMemo, s *source.Section, trail []string, b *source.Block, d source.Definition) bool {
	if b.Kind != source.Definitions {
		return false
	}
	for _, h := range trail {
		if hm.match(glossaryHeading(), h) {
			break // a glossary of an interface's terms is a glossary
		}
		if hm.match(interfaceHeading(), h) {
			return false
		}
	}
	return len(b.Defs) >= 2 || hm.match(glossaryHeading(), s.Heading) ||
		containsPhrase(strings.ToLower(s.Heading), strings.ToLower(d.Term))
}

// isTerm reports whether a defined term deserves a page of its own: a
// name, not a stop word, a single common word (or a type keyword) or a
// fragment of a sentence ("only present when `bigint", "pointer to
// above").
func isTerm(term string) bool {
	term = strings.TrimSpace(term)
	words := strings.Fields(term)
	if len(words) == 0 || len(words) > 6 || len([]rune(term)) < 2 {
		return false
	}
	if strings.Count(term, "`")%2 == 1 || strings.Count(term, "(") != strings.Count(term, ")") ||
		strings.Count(term, "[") != strings.Count(term, "]") || strings.Count(term, "\"")%2 == 1 {
		return false // cut in the middle of code or a quotation
	}
	if unicode.IsDigit([]rune(term)[0]) {
		return false // a value or a size ("0x2", "4-byte signature"), not a name
	}
	if letters, digits := countLettersDigits(term); digits > letters {
		return false // an identifier ("R-00013-61831-22423", "E1234"): a code, not a name
	}
	if caption().MatchString(term) {
		return false // a caption's label ("Figure 15", "Table 2.1"), not a term
	}
	if codeLine(words) {
		// A command line ("git sparse-checkout add SOME/DIR"), a
		// declaration ("show_commit_fn show_commit"): an entry of the
		// source's interface, which stays a section of its page.
		return false
	}
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(strings.Trim(w, ".,;:!?`"))
	}
	if len(words) == 2 && lower[0] == lower[1] {
		return false // "`nonce` nonce": a field and its value's placeholder
	}
	if len(words) == 2 && ordinal().MatchString(lower[1]) && (commonWord()[lower[0]] || labelNoun()[lower[0]]) {
		return false // "Case 2", "Merge 1", "Step 3": a numbered label of what follows
	}
	if len(words) == 1 {
		return !commonWord()[lower[0]]
	}
	// A fragment starts or ends with a word that joins a sentence.
	if joinWord()[lower[0]] || joinWord()[lower[len(lower)-1]] {
		return false
	}
	// "There are three frame types": a sentence has a verb; a name has
	// none of these.
	for _, w := range lower[1 : len(lower)-1] {
		if sentenceVerb()[w] {
			return false
		}
	}
	// "Note to Windows users", "Another example": a label of what
	// follows, not a name.
	if labelWord()[lower[0]] {
		return false
	}
	// "only present when …": a lower-case adverb or verb starts it.
	r := []rune(words[0])[0]
	if unicode.IsLower(r) && commonWord()[lower[0]] {
		return false
	}
	return true
}

// plainOrLabel reports whether term is one plain lower-case word ("abort",
// "resolve": a command's interactive keys, a merge strategy) or a short
// label (two capitals, a letter and a digit: "AB", "M1", "W6"). A list
// elsewhere defines such words and labels by the dozen — they are the
// text's vocabulary, not its terms — so they get a page only from a
// glossary (inGlossary) or from a heading that names them ("Sprocket
// parts" over the definition of "sprocket").
func plainOrLabel(term string) bool {
	term = strings.TrimSpace(term)
	rs := []rune(term)
	if len(rs) == 0 {
		return false
	}
	lower, upperOrDigit, digit := true, true, false
	for _, r := range rs {
		lower = lower && unicode.IsLower(r)
		upperOrDigit = upperOrDigit && (unicode.IsUpper(r) || unicode.IsDigit(r))
		digit = digit || unicode.IsDigit(r)
	}
	return lower || upperOrDigit && len(rs) <= 3 && (digit || len(rs) <= 2)
}

// glossaryWord names a glossary anywhere in a heading or a title
// ("gitglossary(7)", "Terminology used here").
var glossaryWord = lazyre.New(`(?i)glossary|terminolog|vocabular`)

// inGlossary reports whether a section stands in a glossary: under a
// heading that names one (glossaryHeading or glossaryWord), or in a
// document whose title does.
func inGlossary(hm *headingMemo, doc *source.Document, trail []string) bool {
	if glossaryWord().MatchString(doc.Title) {
		return true
	}
	for _, h := range trail {
		if hm.match(glossaryHeading(), h) || hm.match(glossaryWord(), h) {
			return true
		}
	}
	return false
}

// caption is a figure's, table's or listing's label: its kind and its
// number.
var caption = lazyre.New(`(?i)^(figure|fig\.?|table|tab\.|listing|example|exhibit|diagram|chart|plate|illustration|equation|eq\.)\s+[a-z]?[\d.\-]+[a-z]?$`)

// codeLine reports whether the words of a term are code: every one an
// identifier with an underscore (a declaration: "show_commit_fn
// show_commit"), or three or more with a path or an option among them
// (a command line: "git sparse-checkout set MY/DIR1 SUB/DIR2").
func codeLine(words []string) bool {
	if len(words) < 2 {
		return false
	}
	declared := true
	for _, w := range words {
		declared = declared && strings.Contains(strings.Trim(w, "_"), "_")
	}
	if declared {
		return true
	}
	if len(words) < 3 {
		return false
	}
	for _, w := range words {
		if strings.HasPrefix(w, "--") || pathWord().MatchString(w) {
			return true
		}
	}
	return false
}

// pathWord is a word holding a path: letters on both sides of a slash.
var pathWord = lazyre.New(`\pL/\pL`)

// ordinal is the number of a numbered label: 2, 2a, 1/2, iv.
var ordinal = lazyre.New(`^(\d+[a-z]?(/\d+)?|[ivx]{1,5})$`)

// labelNoun are the nouns a text numbers its cases, steps and examples
// with ("Case 2", "Merge 1").
var labelNoun = sync.OnceValue(func() map[string]bool {
	return set("case cases step steps stage phase part round pass level option scenario rule run mode method " +
		"approach variant merge test attempt iteration item point question answer problem solution exercise lesson chapter section appendix")
})

// countLettersDigits counts the letters and the digits of s.
func countLettersDigits(s string) (letters, digits int) {
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		}
	}
	return letters, digits
}

// joinWord are the words a sentence joins its parts with: a term never
// starts or ends with one.
var joinWord = sync.OnceValue(func() map[string]bool {
	return set("a an the and or but nor of to in on at by for with from into onto over under above below " +
		"as than that which who whom whose when where while if then else so not no only also just very is are was were be " +
		"been being has have had do does did can could may might must shall should will would this these those it its")
})

// sentenceVerb are the verbs that make a run of words a sentence
// ("There are three frame types") rather than a name.
var sentenceVerb = sync.OnceValue(func() map[string]bool {
	return set("is are was were isn't aren't wasn't weren't")
})

// labelWord are the words that open a label of the text after it ("Note
// to Windows users:", "Another example:", "See also:").
var labelWord = sync.OnceValue(func() map[string]bool {
	return set("note notes warning caution tip hint important another example examples see")
})

// commonWord are words too common to be a term on their own: the join
// words, common English words a manual's option tables define ("on",
// "off", "yes"), and type keywords.
var commonWord = sync.OnceValue(func() map[string]bool {
	m := set("on off yes no true false none all any some each every other more most less least many much few " +
		"here there now new old same own next previous prev up down back top bottom home index contents " +
		"first last only one two three see note notes example examples default value values type types name names " +
		"bool boolean int integer char float double long short void struct union enum string byte bytes " +
		"null nil undefined object array list map set function method class interface")
	for w := range joinWord() {
		m[w] = true
	}
	return m
})

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// definedOnce counts, per term (lower case), how often doc defines it: a
// label the text repeats ("Implementation restriction: …" before each of
// ten restrictions) is no term, and gets no page.
func definedOnce(doc *source.Document) map[string]bool {
	n := map[string]int{}
	for _, d := range doc.Definitions() {
		n[strings.ToLower(d.Term)]++
	}
	once := map[string]bool{}
	for t, c := range n {
		if c == 1 {
			once[t] = true
		}
	}
	return once
}

// headingTrails gives each section of doc the headings it stands under,
// nearest last, its own heading the last of all: a section stands under
// each earlier section of a lower level that no section between outranks.
func headingTrails(doc *source.Document) [][]string {
	trails := make([][]string, len(doc.Sections))
	var open []*source.Section
	for i := range doc.Sections {
		s := &doc.Sections[i]
		for len(open) > 0 && open[len(open)-1].Level >= s.Level {
			open = open[:len(open)-1]
		}
		open = append(open, s)
		t := make([]string, 0, len(open))
		for j := len(open) - 1; j >= 0; j-- {
			if open[j].Heading != "" {
				t = append(t, open[j].Heading)
			}
		}
		trails[i] = t
	}
	return trails
}

// headingMemo keeps whether a heading matched one of the heading
// expressions, for one derivation: a heading stands over every definition
// of its sections, and each is tested once, not once per definition.
type headingMemo struct {
	m map[headingTest]bool
}

type headingTest struct {
	re *regexp.Regexp
	h  string
}

func (hm *headingMemo) match(re *regexp.Regexp, h string) bool {
	k := headingTest{re, h}
	if v, ok := hm.m[k]; ok {
		return v
	}
	if hm.m == nil {
		hm.m = map[headingTest]bool{}
	}
	v := re.MatchString(h)
	hm.m[k] = v
	return v
}
