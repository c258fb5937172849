package ingest_test

import (
	"context"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/prose-store/prose/ingest"
	"github.com/prose-store/prose/ingest/offline"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// A collection's documents link each other: each link between them is a
// link between their pages — at the section the source's own id names,
// on the page that section is on when the target is split —, a link to a
// page that only redirects leads to its target, an in-page link to the
// page's own section, and a link to something no page holds stays text.
// The result is the same whichever order the sources are given in.
func TestLinksBetweenSourcesAreLinksBetweenTheirPages(t *testing.T) {
	long := strings.Repeat("<p>"+strings.Repeat("Words of the long guide. ", 40)+"</p>", 30)
	mk := func(t *testing.T) []*source.Document {
		return []*source.Document{
			htmlDoc(t, "site/a.html", "Alpha", `<h1>Alpha</h1><p>See <a href="b.html#install">installing</a>, <a href="old.html">the old name</a>,
<a href="#later">the part below</a>, <a href="sub/c.md#getting-started">the guide</a>, <a href="pic.png">a picture</a> and <a href="#nowhere">a lost name</a>.</p>
<section id="later"><a class="x" href="b.html">b</a><h2>Later part</h2><p>More.</p></section>`),
			htmlDoc(t, "site/b.html", "Beta", `<h1>Beta</h1><p>Intro.</p><h2>Setup</h2>`+long+`<a name="install"></a><h2>Install it</h2>`+long+`<h2>Use</h2><p>Back to <a href="#install">installing</a>.</p>`+long),
			mdDoc(t, "site/sub/c.md", "# Guide\n\nThe guide.\n\n## Getting started\n\nStart [here](../a.html#later).\n"),
		}
	}
	for _, order := range []string{"given", "reversed"} {
		t.Run(order, func(t *testing.T) {
			_, w := newWiki(t)
			docs := mk(t)
			if order == "reversed" {
				docs[0], docs[2] = docs[2], docs[0]
			}
			opt := opts(offline.Engine{})
			opt.Redirects = map[string]string{"site/old.html": "site/sub/c.md"}
			if _, err := ingest.Ingest(context.Background(), w, docs, opt); err != nil {
				t.Fatal(err)
			}
			a := slotOf(t, w, "site/a.html", render.DocumentSlot)
			for _, want := range []string{`href="b.html#s-install-it">installing`, `href="sub/c.html">the old name`, `href="a.html#s-later-part">the part below`,
				`href="sub/c.html#s-getting-started">the guide`} {
				if !strings.Contains(a, want) {
					t.Errorf("site/a.html lacks %s:\n%s", want, a)
				}
			}
			for _, text := range []string{"a picture", "a lost name"} {
				if regexp.MustCompile(`<a [^>]*>`+text).MatchString(a) || !strings.Contains(a, text) {
					t.Errorf("%q is not plain text on site/a.html:\n%s", text, a)
				}
			}
			if use := slotOf(t, w, "site/b/use.html", render.DocumentSlot); !strings.Contains(use, `href="install-it.html">installing`) {
				t.Errorf("a split source's link to its own section does not lead to that section's page:\n%s", use)
			}
			c := slotOf(t, w, "site/sub/c.html", render.DocumentSlot)
			if !strings.Contains(c, `href="../a.html#s-later-part">here`) {
				t.Errorf("the Markdown guide's link back is lost:\n%s", c)
			}
			// Every link of every page leads to a page, and its anchor to
			// an id there.
			checkLinksResolve(t, w)
		})
	}
}

func mdDoc(t *testing.T, name, text string) *source.Document {
	t.Helper()
	d, err := source.Read(name, []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	d.Collection = true
	return d
}

func checkLinksResolve(t *testing.T, w *wiki.Wiki) {
	t.Helper()
	pages, err := w.Pages()
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, p := range pages {
		text[p.Path] = pageText(t, w, p.Path)
	}
	href := regexp.MustCompile(`<a href="([^"]+)"`)
	for p, h := range text {
		for _, m := range href.FindAllStringSubmatch(h, -1) {
			u := strings.ReplaceAll(m[1], "&amp;", "&")
			if strings.Contains(u, ":") {
				continue
			}
			file, frag, _ := strings.Cut(u, "#")
			target := p
			if file != "" {
				target = path.Join(path.Dir(p), file)
			}
			th, ok := text[target]
			if !ok {
				if _, err := os.Stat(path.Join(w.Root(), target)); err != nil {
					t.Errorf("%s links %s: no page %s", p, u, target)
				}
				continue
			}
			if frag != "" && !strings.Contains(th, `id="`+frag+`"`) {
				t.Errorf("%s links %s: %s has no id %q", p, u, target, frag)
			}
		}
	}
}
