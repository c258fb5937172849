package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// relatedOf returns PAGE's related meta, through wiki read --json.
func relatedOf(t *testing.T, dir, page string) []string {
	t.Helper()
	var doc struct {
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal([]byte(mustProse(t, "--vault", dir, "--json", "wiki", "read", page)), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	if l, ok := doc.Meta["related"].([]any); ok {
		for _, e := range l {
			s, _ := e.(string)
			out = append(out, s)
		}
	}
	return out
}

// shellLinks returns the local links of a page file outside its slots,
// as a browser's tokenizer reads them.
func shellLinks(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inSlot := false
	z := html.NewTokenizer(strings.NewReader(string(data)))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.CommentToken:
			raw := string(z.Raw())
			inSlot = inSlot && !strings.HasPrefix(raw, "<!-- /prose:slot") || strings.HasPrefix(raw, "<!-- prose:slot")
		case html.StartTagToken:
			if tok := z.Token(); tok.Data == "a" && !inSlot {
				for _, a := range tok.Attr {
					if a.Key == "href" && !strings.Contains(a.Val, ":") && !strings.HasPrefix(a.Val, "#") {
						out = append(out, a.Val)
					}
				}
			}
		}
	}
}

// TestRelatedFollowsMovesAndRemovals: wiki mv rewrites the related meta
// naming the moved page (and the shell's link follows), rm --unlink drops
// the entry naming the removed page, and lint reports a related entry left
// naming a missing page (wiki rm without --unlink).
func TestRelatedFollowsMovesAndRemovals(t *testing.T) {
	inParallel(t)
	dir := filepath.Join(t.TempDir(), "vault")
	mustProse(t, "init", dir)
	for _, p := range []string{"ml/a", "ml/b", "ml/d"} {
		mustProse(t, "--vault", dir, "wiki", "new", p, "--template", "note")
	}
	mustProse(t, "--vault", dir, "wiki", "write-slot", "ml/b", "body", "--content", `<p>See <a href="a.html">a</a>.</p>`)
	mustProse(t, "--vault", dir, "wiki", "set-meta", "ml/a", `related:=["ml/b","ml/d"]`)
	aFile := filepath.Join(dir, "published", "wiki", "ml", "a.html")
	if l := shellLinks(t, aFile); !slices.Contains(l, "b.html") {
		t.Fatalf("the shell does not link the related page: %v", l)
	}

	mustProse(t, "--vault", dir, "wiki", "mv", "ml/b", "other/c")
	if got := relatedOf(t, dir, "ml/a"); !slices.Equal(got, []string{"other/c", "ml/d"}) {
		t.Fatalf("related after wiki mv ml/b other/c: %q", got)
	}
	if l := shellLinks(t, aFile); !slices.Contains(l, "../other/c.html") || slices.Contains(l, "b.html") {
		t.Fatalf("the shell's related links after the move: %v", l)
	}
	if out, errs, code := prose(t, "--vault", dir, "wiki", "lint"); code != 0 {
		t.Fatalf("lint after the move: exit %d\n%s%s", code, out, errs)
	}

	mustProse(t, "--vault", dir, "wiki", "rm", "--unlink", "other/c")
	if got := relatedOf(t, dir, "ml/a"); !slices.Equal(got, []string{"ml/d"}) {
		t.Fatalf("related after wiki rm --unlink other/c: %q", got)
	}
	if out, errs, code := prose(t, "--vault", dir, "wiki", "lint"); code != 0 {
		t.Fatalf("lint after rm --unlink: exit %d\n%s%s", code, out, errs)
	}

	_, errs, _ := prose(t, "--vault", dir, "wiki", "rm", "--force", "ml/d")
	if !strings.Contains(errs, "ml/a.html links to ml/d.html") {
		t.Errorf("wiki rm does not report the related entry it breaks: %q", errs)
	}
	out, _, code := prose(t, "--vault", dir, "wiki", "lint")
	if code != 1 || !strings.Contains(out, "ml/a.html: error: broken-link: related names ml/d") {
		t.Fatalf("lint of a related entry naming a missing page: exit %d\n%s", code, out)
	}
	cleanAndFsck(t, dir)
}
