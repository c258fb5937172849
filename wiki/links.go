package wiki

import (
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html"
)

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
