package wiki

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// removalsBefore is the removals walk as it was before Sanitize named
// removals in its first pass: a tokenizer pass of its own over the input.
// The reference the one-walk naming must match.
func removalsBefore(in string) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	z := html.NewTokenizer(strings.NewReader(in))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.CommentToken:
			add("comment")
		case html.DoctypeToken:
			add("doctype")
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if !slices.Contains(allowedElements, t.Data) {
				add("<" + t.Data + "> element")
				continue
			}
			for _, a := range t.Attr {
				name := strings.ToLower(a.Key)
				ok := slices.Contains(globalAttrs, name) || slices.Contains(elementAttrs[t.Data], name)
				switch {
				case strings.HasPrefix(name, "on"):
					add(name + " event handler on <" + t.Data + ">")
				case !ok:
					add(name + " attribute on <" + t.Data + ">")
				case name == "href" && !hrefPattern().MatchString(strings.TrimSpace(a.Val)):
					add("unsafe link " + shortURL(a.Val) + " on <a>")
				case name == "src" && !srcPattern().MatchString(strings.TrimSpace(a.Val)):
					add("remote or unsafe image " + shortURL(a.Val))
				case name == "id" && !headingID().MatchString(a.Val):
					add("id " + fmt.Sprintf("%q", a.Val) + " on <" + t.Data + "> (an anchor is \"s-\" and a lower-case slug)")
				case name == "class" && !classPattern().MatchString(a.Val):
					add("class " + fmt.Sprintf("%q", a.Val) + " on <" + t.Data + ">")
				}
			}
		}
	}
}

// sanitizeBefore is Sanitize as it was: the removals walk, then passes
// to the fixed point (at most four).
func sanitizeBefore(in string) (string, []string) {
	removed := removalsBefore(in)
	out := strings.ReplaceAll(strings.ReplaceAll(in, "\r\n", "\n"), "\r", "\n")
	for range 4 {
		next := sanitizeOnce(out, nil)
		if next == out {
			return out, removed
		}
		out = next
	}
	return out, removed
}

func checkSanitizeAsBefore(t *testing.T, in string) {
	t.Helper()
	got, gotRemoved, err := Sanitize(in)
	if err != nil {
		return // not UTF-8: refused before either walk
	}
	want, wantRemoved := sanitizeBefore(in)
	if got != want || !slices.Equal(gotRemoved, wantRemoved) {
		t.Fatalf("Sanitize(%q):\n now    %q, removed %q\n before %q, removed %q", in, got, gotRemoved, want, wantRemoved)
	}
}

// TestSanitizeAsBefore: Sanitize, naming the removals in its first pass,
// gives the output and the removals (same names, same order) the separate
// removals walk and passes gave, on every corpus input, with and without
// CR line ends.
func TestSanitizeAsBefore(t *testing.T) {
	for _, in := range corpusInputs(t) {
		checkSanitizeAsBefore(t, in)
		checkSanitizeAsBefore(t, strings.ReplaceAll(in, "\n", "\r\n"))
	}
	if _, removed, _ := Sanitize(`<p onclick="x">a</p><!-- c --><script>y</script>`); len(removed) != 3 {
		t.Fatalf("removed %q, want the handler, the comment and the script named", removed)
	}
}

func FuzzSanitizeAsBefore(f *testing.F) {
	for _, s := range corpusInputs(f) {
		f.Add(s)
	}
	f.Fuzz(checkSanitizeAsBefore)
}

// BenchmarkSanitize is Sanitize over the corpus inputs against the walk
// and passes it replaced (the ratio of the two sub-benchmarks).
func BenchmarkSanitize(b *testing.B) {
	var inputs []string
	for _, s := range corpusInputs(b) {
		inputs = append(inputs, s)
	}
	defer func(p func(string, *[]string) string) { sanitizePass = p }(sanitizePass)
	sanitizePass = sanitizeOnce // not the reference-checking pass of the tests
	for _, side := range []struct {
		name string
		fn   func(string)
	}{
		{"before", func(s string) { sanitizeBefore(s) }},
		{"now", func(s string) { _, _, _ = Sanitize(s) }},
	} {
		b.Run(side.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range inputs {
					side.fn(s)
				}
			}
		})
	}
}
