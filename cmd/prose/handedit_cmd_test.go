package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editPage rewrites PAGE's file in the working tree through fn.
func editPage(t *testing.T, dir, page string, fn func(string) string) {
	t.Helper()
	file := filepath.Join(dir, "published", "wiki", filepath.FromSlash(page))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	next := fn(string(data))
	if next == string(data) {
		t.Fatalf("the edit of %s changed nothing", page)
	}
	if err := os.WriteFile(file, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHandEditsOfTheShellAndLineEnds: wiki commit says what of a hand
// edit it discards — text outside the slots — and where that text goes
// (the title, a slot), and says nothing when the edit kept to the slots;
// a page saved with CRLF line ends is read as it is; a meta comment bent
// out of its form, and a slot given twice, are refused naming the line,
// and nothing is written.
func TestHandEditsOfTheShellAndLineEnds(t *testing.T) {
	inParallel(t)
	dir := filepath.Join(t.TempDir(), "vault")
	mustProse(t, "init", dir)
	mustProse(t, "--vault", dir, "wiki", "new", "ml/attention", "--template", "note", "--title", "Attention")
	mustProse(t, "--vault", dir, "wiki", "write-slot", "ml/attention", "body", "--content", "<p>Body.</p>")
	page := "ml/attention.html"

	editPage(t, dir, page, func(s string) string { return strings.Replace(s, "<p>Body.</p>", "<p>Body, edited.</p>", 1) })
	if _, errs, code := prose(t, "--vault", dir, "wiki", "commit"); code != 0 || strings.Contains(errs, "discarded") {
		t.Fatalf("wiki commit of a slot edit: exit %d %q", code, errs)
	}

	// A retitle in the meta block leaves the shell stale: nothing of the
	// person's is discarded.
	editPage(t, dir, page, func(s string) string { return strings.Replace(s, "title: Attention", "title: Focus", 1) })
	if _, errs, code := prose(t, "--vault", dir, "wiki", "commit"); code != 0 || strings.Contains(errs, "discarded") {
		t.Fatalf("wiki commit of a retitle in the meta block: exit %d %q", code, errs)
	}
	mustProse(t, "--vault", dir, "wiki", "set-meta", "ml/attention", "title=Attention")

	editPage(t, dir, page, func(s string) string {
		s = strings.Replace(s, "<h1>Attention</h1>", "<h1>Attention (draft)</h1><p>A loose note.</p>", 1)
		return strings.Replace(s, "<p>Body, edited.</p>", "<p>Body, again.</p>", 1)
	})
	_, errs, code := prose(t, "--vault", dir, "wiki", "commit")
	if code != 0 {
		t.Fatalf("wiki commit: exit %d %q", code, errs)
	}
	for _, want := range []string{
		page + `: discarded "Attention (draft)" in <h1>`, "set-meta ml/attention title=",
		page + `: discarded "A loose note." in <p>`, "write-slot ml/attention",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("wiki commit does not say %q:\n%s", want, errs)
		}
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "ml/attention", "body"); got != "<p>Body, again.</p>" {
		t.Errorf("the slot edit beside the shell edit: %q", got)
	}

	// CRLF line ends, with a slot edit: read, and the edit taken in.
	editPage(t, dir, page, func(s string) string {
		return strings.ReplaceAll(strings.Replace(s, "<p>Body, again.</p>", "<p>Body, CRLF.</p>", 1), "\n", "\r\n")
	})
	if out, errs, code := prose(t, "--vault", dir, "wiki", "commit"); code != 0 || strings.Contains(errs, "discarded") {
		t.Fatalf("wiki commit of a CRLF page: exit %d\n%s%s", code, out, errs)
	}
	if got := mustProse(t, "--vault", dir, "wiki", "slot", "ml/attention", "body"); got != "<p>Body, CRLF.</p>" {
		t.Errorf("the slot of the CRLF page: %q", got)
	}
	cleanAndFsck(t, dir)

	// Refused, naming the line and the fix; nothing written.
	head := headOf(t, dir)
	for _, c := range []struct {
		edit func(string) string
		want string
	}{
		{func(s string) string { return strings.Replace(s, "<!-- prose:meta", "<!--prose:meta", 1) }, "prose:meta comment is not in its form"},
		{func(s string) string {
			slot := `<!-- prose:slot id="body" --><p>Body, CRLF.</p><!-- /prose:slot id="body" -->`
			return strings.Replace(s, slot, slot+"\n"+slot, 1)
		}, `slot "body" appears twice`},
	} {
		editPage(t, dir, page, c.edit)
		_, errs, code := prose(t, "--vault", dir, "wiki", "commit")
		if code != 1 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "line ") {
			t.Errorf("wiki commit of a broken page: exit %d %q, want %q and the line", code, errs, c.want)
		}
		if headOf(t, dir) != head {
			t.Fatal("a refused wiki commit wrote something")
		}
		mustProse(t, "--vault", dir, "wiki", "slot", "ml/attention", "body")
		gitIn(t, dir, "checkout", "--", "published")
	}
}
