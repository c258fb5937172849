package wiki

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// eventHandlers are event-handler attributes in the shapes a browser reads
// them: any case, unquoted, after a slash, on any element.
var eventHandlers = []string{
	`<p onclick="alert(1)">a</p>`,
	`<p ONCLICK="alert(1)">a</p>`,
	`<p OnMouseOver=alert(1)>a</p>`,
	`<img src="x.png" onerror="alert(1)">`,
	`<a href="x.html" onfocus="alert(1)" autofocus>x</a>`,
	`<p/onclick=alert(1)>a</p>`,
	`<div class="note" onpointerdown='alert(1)'>a</div>`,
	`<details open ontoggle="alert(1)"><summary>s</summary>t</details>`,
	`<svg onload="alert(1)"><circle r="1"/></svg>ok`,
	`<body onload="alert(1)">ok</body>`,
	`<span on="x" onx="y">a</span>`,
}

// onAttrs returns the attributes named on… anywhere in an HTML document,
// as a browser's tokenizer reads them.
func onAttrs(doc string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			for _, a := range t.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					out = append(out, "<"+t.Data+" "+a.Key+">")
				}
			}
		}
	}
}

// Event handlers never reach a stored slot, whatever the removal report
// says: each is written, the page file is read back with a browser's
// tokenizer, and neither the file nor what SlotOf returns holds an on…
// attribute; and the report names an event handler for each (the report
// and the policy agree).
func TestNoEventHandlerReachesAStoredSlot(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", nil)
	for _, in := range eventHandlers {
		var res SlotResult
		mustUpdate(t, w, func(tx *Tx) error {
			var err error
			res, err = tx.WriteSlot("a/page", "body", in)
			return err
		})
		named := false
		for _, r := range res.Removed {
			named = named || strings.Contains(r, "event handler") || strings.Contains(r, "element")
		}
		if !named {
			t.Errorf("write of %q: the report names no event handler: %q", in, res.Removed)
		}
		data, err := os.ReadFile(filepath.Join(w.Root(), "a", "page.html"))
		if err != nil {
			t.Fatal(err)
		}
		if got := onAttrs(string(data)); len(got) > 0 {
			t.Errorf("write of %q: the page file holds %v", in, got)
		}
		h, err := w.SlotOf("a/page", "body")
		if err != nil {
			t.Fatal(err)
		}
		if got := onAttrs(h); len(got) > 0 {
			t.Errorf("write of %q: the stored slot holds %v: %q", in, got, h)
		}
	}
}

// A page committed with git and not taken in yet may hold anything; what
// SlotOf (prose wiki slot) returns of it is sanitized all the same.
func TestSlotOfAHandCommittedPageIsSanitized(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", map[string]string{"body": "<p>b</p>"})
	file := filepath.Join(w.Root(), "a", "page.html")
	data, _ := os.ReadFile(file)
	edited := strings.Replace(string(data), "<p>b</p>", `<p onclick="alert(1)">b</p><script>alert(2)</script>`, 1)
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, w, "commit", "-qam", "by hand")
	h, err := w.SlotOf("a/page", "body")
	if err != nil {
		t.Fatal(err)
	}
	if h != "<p>b</p>" {
		t.Fatalf("SlotOf a hand-committed page = %q, want the sanitized <p>b</p>", h)
	}
}

// Parsing refuses a page holding one slot id twice, naming the line: a
// hand edit that duplicates a slot is refused by wiki commit, and nothing
// is written.
func TestParseRefusesASlotTwice(t *testing.T) {
	page := "<!-- prose:meta\ntemplate: note\ntitle: a\n-->\n" +
		`<!-- prose:slot id="body" --><p>one</p><!-- /prose:slot id="body" -->` + "\n" +
		`<!-- prose:slot id="body" --><p>two</p><!-- /prose:slot id="body" -->`
	_, err := Parse([]byte(page))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != 6 || !strings.Contains(err.Error(), `slot "body" appears twice`) || fe.Fix == "" {
		t.Fatalf("Parse of a page with slot body twice: %v", err)
	}
	w := newWiki(t)
	newPage(t, w, "a/page", "note", map[string]string{"body": "<p>one</p>"})
	file := filepath.Join(w.Root(), "a", "page.html")
	data, _ := os.ReadFile(file)
	slot := `<!-- prose:slot id="body" --><p>one</p><!-- /prose:slot id="body" -->`
	edited := strings.Replace(string(data), slot, slot+slot, 1)
	if edited == string(data) {
		t.Fatal("the page holds no body slot to duplicate")
	}
	os.WriteFile(file, []byte(edited), 0o644)
	head, _ := w.Head()
	if _, err := w.CommitHandEdits(context.Background()); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("wiki commit of a page with a slot twice: %v", err)
	}
	if now, _ := w.Head(); now != head {
		t.Fatal("a refused wiki commit wrote something")
	}
}

// metaComments returns the comments of an HTML document, where a
// browser's tokenizer finds them, as written.
func metaComments(doc string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.CommentToken:
			// The raw comment: a browser does not unescape comment text
			// (the tokenizer's Text does).
			raw := strings.TrimPrefix(string(z.Raw()), "<!--")
			out = append(out, strings.TrimSuffix(raw, "-->"))
		}
	}
}

// A meta value holding comment ends or openers never closes the meta
// comment early in a browser: read with a real HTML tokenizer, the page
// holds exactly one comment with the meta block, and that comment holds
// all the meta (decoded, it is the page's meta).
func TestMetaValuesNeverEndTheMetaComment(t *testing.T) {
	w := newWiki(t)
	newPage(t, w, "a/page", "note", map[string]string{"body": "<p>b</p>"})
	for _, v := range []string{"-->", "a --> b", "--!>", "x -- > y", "<!-- prose:meta\ntitle: fake\n-->", "-", "end -", "<!--", `<!-- /prose:slot id="body" -->`, "--", "&gt;-->&lt;"} {
		mustUpdate(t, w, func(tx *Tx) error {
			_, err := tx.SetMeta("a/page", map[string]any{"title": v, "note": v, "list": []any{v, map[string]any{"k": v}}}, nil)
			return err
		})
		_, data, err := w.ReadFile("a/page")
		if err != nil {
			t.Fatal(err)
		}
		var blocks []string
		for _, c := range metaComments(string(data)) {
			if strings.Contains(c, "prose:meta") || strings.Contains(c, "title:") || strings.Contains(c, "note:") {
				blocks = append(blocks, c)
			}
		}
		if len(blocks) != 1 || !strings.HasPrefix(blocks[0], " prose:meta\n") {
			t.Fatalf("value %q: the browser reads %d meta comments: %q", v, len(blocks), blocks)
		}
		m, err := decodeMeta([]byte(strings.TrimPrefix(blocks[0], " prose:meta\n")))
		if err != nil {
			t.Fatalf("value %q: the browser's meta comment does not decode: %v\n%s", v, err, blocks[0])
		}
		_, p, _ := w.Read("a/page")
		if !reflect.DeepEqual(m, p.Meta) || m.Title() != v || m["note"] != v {
			t.Fatalf("value %q: the browser's meta comment holds %v, the page's meta is %v", v, m, p.Meta)
		}
	}
}

// gitRun runs git in the wiki's vault; without git the test is skipped.
func gitRun(t *testing.T, w *Wiki, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if out, err := exec.Command("git", append([]string{"-C", w.Vault().Root()}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
