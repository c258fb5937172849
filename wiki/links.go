package wiki

import (
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html"

	"github.com/prose-store/prose/canon"
)

// KeyGenerated is the page meta key where the pipeline records what it
// last wrote into each slot: a mapping of slot id to SlotToken of the
// slot's HTML as it left it. A slot whose HTML no longer has that token
// was changed by someone else since. When the wiki itself rewrites a slot
// (the links prose wiki mv and rm --unlink rewrite), a record that matched
// the slot before follows it, so the rewrite does not read as a person's
// edit; one that did not match stays as it was.
const KeyGenerated = "generated"

// KeyOrigin is the meta key of a page's identity, set by the wiki
// pipeline: where the page came from (a source's name, and a section's
// anchor; a term). A page with an origin was placed by the pipeline's
// layout, which mirrors its source: lint's crowded-folder rule does not
// count it.
const KeyOrigin = "origin"

// SlotToken is the token KeyGenerated records for a slot's HTML.
func SlotToken(html string) string { return canon.BLAKE3.Token([]byte(html)) }

// rewriteSlot sets slot i of p to html, rewritten by the wiki, and keeps
// the slot's KeyGenerated record in step when it matched before.
func rewriteSlot(p *Page, i int, html string) {
	before := p.Slots[i].HTML
	if html == before {
		return
	}
	p.Slots[i].HTML = html
	rec, ok := p.Meta[KeyGenerated].(map[string]any)
	if !ok || rec[p.Slots[i].ID] != SlotToken(before) {
		return
	}
	m := make(map[string]any, len(rec))
	for k, v := range rec {
		m[k] = v
	}
	m[p.Slots[i].ID] = SlotToken(html)
	p.Meta[KeyGenerated] = m
}

// RelinkHTML rewrites the local links of slot HTML written for the page at
// oldPage so that it reads right in the page at newPage, after the pages
// named in moved (old path to new) moved and those in removed went: a link
// to a moved page follows it, a link to a removed page becomes its text,
// and every other link keeps pointing where it did. It is how text kept
// outside the wiki for a page (a proposal in the review queue) follows
// prose wiki mv and rm --unlink.
func RelinkHTML(s, oldPage, newPage string, moved map[string]string, removed map[string]bool) string {
	return rewriteLinks(s, oldPage, newPage, func(target string) (string, bool) {
		if removed[target] {
			return "", false
		}
		if to, ok := moved[target]; ok {
			return to, true
		}
		return target, true
	})
}

// resolveLink returns the wiki path a link in the page at from points to,
// and false for links that leave the wiki (a scheme, a host, an absolute
// path) or point into the page itself.
func resolveLink(from, href string) (string, bool) {
	u, err := url.Parse(href)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	p := path.Join(path.Dir(from), u.Path)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	if strings.HasSuffix(u.Path, "/") {
		p += "/" + IndexName
	}
	return p, true
}

// rewriteLinks rewrites the local links of slot HTML that sat in the page
// at oldFrom and now sits at newFrom: each link's target goes through to,
// which gives the new target, or false to turn the link into its text.
func rewriteLinks(s, oldFrom, newFrom string, to func(string) (string, bool)) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	dropped := 0 // open anchors whose tags were dropped, innermost last
	var stack []bool
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := string(z.Raw())
		switch tt {
		case html.StartTagToken:
			t := z.Token()
			if t.Data != "a" {
				break
			}
			keep, changed := true, false
			for i, a := range t.Attr {
				if a.Key != "href" {
					continue
				}
				target, ok := resolveLink(oldFrom, a.Val)
				if !ok {
					continue
				}
				nt, ok := to(target)
				if !ok {
					keep = false
					break
				}
				u, _ := url.Parse(a.Val)
				nh := relLink(newFrom, nt)
				if u != nil && u.Fragment != "" {
					nh += "#" + u.Fragment
				}
				if nh != a.Val {
					t.Attr[i].Val, changed = nh, true
				}
			}
			stack = append(stack, keep)
			if !keep {
				dropped++
				raw = ""
			} else if changed {
				raw = t.String()
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "a" && len(stack) > 0 {
				keep := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if !keep {
					raw = ""
				}
			}
		}
		b.WriteString(raw)
	}
	out, _, err := Sanitize(b.String())
	if err != nil {
		return s
	}
	return out
}
