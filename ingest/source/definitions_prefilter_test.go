package source

import "testing"

// separatorSeeds are lines around every separator of definitionLine.
var separatorSeeds = []string{
	"Term: a meaning here", "Term — a meaning here", "Term – a meaning here", "Term - a meaning here",
	"Term\t-\ta meaning", "  x:  y z", "a:b c", "no separator in this line at all", "`Env: \"X\"` to y",
	"Term —  a meaning here", "Term –  a meaning here", "Term -  a meaning here", "Term—a meaning", "Term -a meaning", "- **X**: y z", "", ":", "—", "–", "-",
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
