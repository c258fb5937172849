package plan

import (
	"strings"
	"testing"
)

// A source's page mirrors its path within a collection, and goes to
// notes/ (or the folder given) when named on its own; a README is never
// the folder's own index.
func TestSourceHome(t *testing.T) {
	for _, tc := range []struct {
		name       string
		collection bool
		into, want string
	}{
		{"docs/ops/runbook.md", true, "", "docs/ops/runbook.html"},
		{"docs/ops/runbook.md", true, "elsewhere", "docs/ops/runbook.html"},
		{"runbook.md", false, "", "notes/runbook.html"},
		{"a/README.md", false, "", "notes/a/readme-file.html"},
		{"runbook.md", false, "ops/inbox", "ops/inbox/runbook.html"},
		{"libffi/Closure-Example.html", true, "", "libffi/closure-example.html"},
		// A long file name keeps what tells it from its neighbours.
		{"ref/structsigc_1_1bind__functor_3_010_00_01T__functor_00_01T__bound_00_01nil_00_01nil_00_01nil_00_0134a004909681b7eead4388b32fdece62.html", true, "",
			"ref/structsigc-1-1bind-functor-3-010-00-01t-functor-00-01t-bound-00-01nil-00-01nil-00-01nil-00-0134a004909681b7eead4388b32fdece62.html"},
		{"ref/" + strings.Repeat("word_", 40) + "end.html", true, "", "ref/" + strings.TrimSuffix(strings.Repeat("word-", 32), "-") + ".html"},
	} {
		if got := SourceHome(tc.name, tc.collection, tc.into); got != tc.want {
			t.Errorf("SourceHome(%q, %v, %q) = %q, want %q", tc.name, tc.collection, tc.into, got, tc.want)
		}
	}
}

// A slug is cut after a whole word, never inside one.
func TestSlugNeverCutsAWord(t *testing.T) {
	title := "The portable foreign function interface library and its interfaces explained"
	s := Slug(title)
	if len(s) > MaxSlug || strings.HasSuffix(s, "-") {
		t.Fatalf("slug %q", s)
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(title)) {
		words[w] = true
	}
	for _, part := range strings.Split(s, "-") {
		if !words[part] {
			t.Errorf("slug %q holds %q, a cut word", s, part)
		}
	}
	if one := Slug(strings.Repeat("x", 80)); len(one) != MaxSlug {
		t.Errorf("a single long word: %q", one)
	}
}
