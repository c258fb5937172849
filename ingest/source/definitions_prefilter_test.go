package source

import (
	"os"
	"strings"
	"testing"
)

// separatorSeeds are lines around every separator of definitionLine.
var separatorSeeds = []string{
	"Term: a meaning here", "Term — a meaning here", "Term – a meaning here", "Term - a meaning here",
	"Term\t-\ta meaning", "  x:  y z", "a:b c", "no separator in this line at all", "`Env: \"X\"` to y",
	"Term —  a meaning here", "Term –  a meaning here", "Term -  a meaning here", "Term—a meaning", "Term -a meaning", "- **X**: y z", "", ":", "—", "–", "-",
	// terms of 60 runes and of 61, white space on both sides of them
	strings.Repeat("é", 60) + ": a meaning here", strings.Repeat("é", 61) + ": a meaning here",
	"  " + strings.Repeat("x", 60) + "   \t :  a meaning", " \t" + strings.Repeat("x", 59) + " -  a b",
	strings.Repeat("w ", 30) + "—  a b", strings.Repeat("w ", 31) + "—  a b", "x\xff\xfe: a b", "x: —  a b", "x —: a b",
	"a long paragraph's line of many words, more than sixty runes before its first colon: a meaning",
}

// checkPrefilter: a line definitionLine matches is one maySeparate keeps,
// so parseDefinition's early refusal of lines without one changes no
// answer.
func checkPrefilter(t *testing.T, line string) {
	t.Helper()
	if definitionLine().MatchString(line) && !maySeparate(line) {
		t.Fatalf("definitionLine matches %q, which maySeparate refuses", line)
	}
}

func TestDefinitionLineNeedsASeparator(t *testing.T) {
	for _, l := range separatorSeeds {
		checkPrefilter(t, l)
	}
	// (definitionLine wants a blank after a dash's own: "Term – a
	// meaning" is no definition, "Term –  a meaning" is.)
	for _, l := range []string{"Term: a meaning here", "Term —  a meaning here", "Term –  a meaning here", "Term -  a meaning here"} {
		if _, ok := parseDefinition(l); !ok {
			t.Fatalf("the definition %q is not read", l)
		}
	}
}

func FuzzDefinitionLineNeedsASeparator(f *testing.F) {
	for _, l := range separatorSeeds {
		f.Add(l)
	}
	f.Fuzz(checkPrefilter)
}

// TestPrefilterOnRealLines holds maySeparate to definitionLine on every
// line of the fixtures and of testdata.
func TestPrefilterOnRealLines(t *testing.T) {
	lines, kept := 0, 0
	for _, f := range quotedSources(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			checkPrefilter(t, l)
			lines++
			if maySeparate(l) {
				kept++
			}
		}
	}
	t.Logf("%d lines, %d kept", lines, kept)
}
