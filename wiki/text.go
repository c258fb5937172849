package wiki

import (
	"strings"

	"golang.org/x/net/html"
)

// plainText returns the text a reader sees in slot HTML: markup stripped,
// entities decoded, block elements ending lines.
func plainText(s string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "p", "br", "li", "div", "h2", "h3", "h4", "h5", "h6", "tr", "pre", "blockquote", "dt", "dd", "section":
				b.WriteByte('\n')
			case "td", "th":
				b.WriteByte(' ')
			}
		}
	}
}

// links returns the href values of the anchors in slot HTML.
func links(s string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "a" {
				continue
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if string(k) == "href" {
					out = append(out, string(v))
				}
			}
		}
	}
}

// PlainText is the text of slot HTML, markup stripped.
func PlainText(s string) string { return plainText(s) }
