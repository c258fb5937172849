package source

import (
	"bytes"
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxRedirectText is the most text a redirect page may show of its own
// ("Redirecting to …", "This page has moved"): a page saying more is a
// document, whatever its head asks of a browser.
const maxRedirectText = 300

// Redirect reports whether an HTML page is only a redirect — its head
// sends the browser on at once (<meta http-equiv="refresh" content="0;
// URL=…">) and its body says little more than where to — and returns
// where to, as written. Generators leave such pages behind where a page
// moved (rustdoc leaves one for every re-exported item); they are no
// documents, and a link to one means its target.
func Redirect(data []byte) (string, bool) {
	head := data[:min(len(data), 4096)]
	if !bytes.Contains(bytes.ToLower(head), []byte("refresh")) {
		return "", false
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return "", false
	}
	target := ""
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if target != "" {
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Meta && strings.EqualFold(strings.TrimSpace(attr(n, "http-equiv")), "refresh") {
			target = refreshTarget(attr(n, "content"))
			return
		}
		for c := n.FirstChild; c != nil && target == ""; c = c.NextSibling {
			walk(c)
		}
	}
	if h := find(doc, atom.Head); h != nil {
		walk(h)
	}
	if target == "" {
		return "", false
	}
	text := 0
	var count func(*html.Node)
	count = func(n *html.Node) {
		if n.Type == html.TextNode {
			text += len(strings.TrimSpace(n.Data))
			return
		}
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Head || n.DataAtom == atom.Noscript) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			count(c)
		}
	}
	count(doc)
	if text > maxRedirectText {
		return "", false
	}
	return target, true
}

// refreshTarget is the URL of a refresh's content ("0;URL=../x.html",
// "0; url='x.html'"), "" when it names none or waits (a page that shows
// itself for seconds first is read, not followed).
func refreshTarget(content string) string {
	delay, rest, ok := strings.Cut(content, ";")
	if !ok {
		return ""
	}
	if d := strings.TrimSpace(delay); d != "0" && d != "0.0" {
		return ""
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 4 && strings.EqualFold(rest[:3], "url") {
		if r := strings.TrimSpace(rest[3:]); strings.HasPrefix(r, "=") {
			rest = strings.TrimSpace(r[1:])
		}
	}
	return strings.Trim(rest, `'" `)
}

// RelativeTarget is the name a relative link of the source named from
// leads to within its collection (from "doc/a/b.html", "../c.html#x" is
// "doc/c.html" and fragment "x"); ok is false for a link that is absolute,
// has a scheme or host, or leaves the collection's top folder.
func RelativeTarget(from, link string) (name, fragment string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.HasPrefix(u.Path, "/") {
		return "", "", false
	}
	if u.Path == "" {
		return from, u.Fragment, true
	}
	name = path.Join(path.Dir(from), u.Path)
	if strings.HasSuffix(u.Path, "/") {
		name += "/"
	}
	top, _, _ := strings.Cut(from, "/")
	if name == ".." || strings.HasPrefix(name, "../") || !strings.Contains(from, "/") || !strings.HasPrefix(name, top+"/") {
		return "", "", false
	}
	return name, u.Fragment, true
}
