package source

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// itemByExpression is the item of line as matchAll read it before the
// items were read without the expressions: re's first submatch.
func itemByExpression(re *regexp.Regexp, line string) (string, bool) {
	m := re.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func checkItems(t *testing.T, line string) {
	t.Helper()
	for _, c := range []struct {
		name string
		item func(string) (string, bool)
		re   *regexp.Regexp
	}{{"bulletedItem", bulletedItem, bulleted()}, {"numberedItem", numberedItem, numbered()}} {
		got, ok := c.item(line)
		want, wantOK := itemByExpression(c.re, line)
		if got != want || ok != wantOK {
			t.Fatalf("%s(%q) = %q, %v; the expression reads %q, %v", c.name, line, got, ok, want, wantOK)
		}
	}
}

func TestItemsAsTheExpressions(t *testing.T) {
	parts := []string{" ", "  ", "\t", "\v", "\f", "\r", "\n", "\u00a0", "-", "*", "+", "•", "·", "1", "12", "123", "1234", "a", "z", "A", "é", ".", ")", "(", "x", "word", "\xff", "\xe2\x80", "\u2003"}
	r := rand.New(rand.NewSource(7))
	for n := 0; n < 200000; n++ {
		var sb strings.Builder
		for k := r.Intn(8); k > 0; k-- {
			sb.WriteString(parts[r.Intn(len(parts))])
		}
		checkItems(t, sb.String())
	}
}

func FuzzItemsAsTheExpressions(f *testing.F) {
	for _, s := range []string{"- a", "  * item", "• x", "12. step", "a) b", "1234. x", "-", "- ", "-  \n x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { checkItems(t, line) })
}
