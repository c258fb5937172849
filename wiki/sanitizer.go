package wiki

import (
	"encoding/base64"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/html"
)

// The slot sanitizer: one pass over the tokens of golang.org/x/net/html,
// keeping what the allowlist in sanitize.go allows. It is prose's own
// (it replaced bluemonday, whose package-level regular expressions and CSS
// tables cost every command ≈ 1.4 ms of start-up) and gives, for the slot
// policy, the output bluemonday gave byte for byte; sanitizer_diff_test.go
// compares the two on every test input, the fixtures' pages and fuzz input.
//
// One pass, token by token:
//   - text is written escaped, except inside <script> and <style> (dropped);
//   - comments and doctypes are dropped;
//   - an allowed element is written with the attributes its policy keeps;
//     <a> and <img> left with no attribute are dropped, and so is the end
//     tag of such an <a>;
//   - any other element is dropped and its text kept, except for the
//     elements in skipContent, whose whole content is dropped too;
//   - a kept URL (a href, img src, q cite) must parse as a URL and have an
//     allowed scheme (http, https, mailto, data: for images) or none, and
//     is written as net/url writes it back.
//
// Two of bluemonday's ways are kept, being safe, so the output stays its
// own byte for byte (TestSanitizerKeepsTheReferenceWays): an end tag of a
// skipped element with none open counts below zero, so the content after
// the next such element is dropped too (`</svg><svg>x</svg>after` gives
// nothing: more removed, never less), and an <a> dropped for having no
// attribute while an <img> dropped the same way is still unclosed keeps
// its end tag (`<a><img></a>` gives `</a>`, which a browser ignores).

// sanitizePass is one pass of the sanitizer (a variable so the package's
// tests can compare every pass with the reference sanitizer).
var sanitizePass = sanitizeOnce

// attrRule is an attribute allowed on an element, with the test its
// value must pass (nil: any value).
type attrRule struct {
	name string
	ok   func(string) bool
}

type slotRules struct {
	elements     map[string]bool
	elementAttrs map[string][]attrRule
	globalAttrs  []attrRule
}

var rules = sync.OnceValue(func() *slotRules {
	class := func(v string) bool { return classPattern().MatchString(v) }
	href := func(v string) bool { return hrefPattern().MatchString(v) }
	src := func(v string) bool { return srcPattern().MatchString(v) }
	num := func(v string) bool { return numPattern().MatchString(v) }
	id := func(v string) bool { return headingID().MatchString(v) }
	scope := func(v string) bool { return v == "row" || v == "col" || v == "rowgroup" || v == "colgroup" }
	r := &slotRules{
		elements: map[string]bool{},
		elementAttrs: map[string][]attrRule{
			"a":       {{"href", href}},
			"img":     {{"src", src}, {"alt", nil}, {"width", num}, {"height", num}},
			"td":      {{"colspan", num}, {"rowspan", num}},
			"th":      {{"colspan", num}, {"rowspan", num}, {"scope", scope}},
			"col":     {{"span", num}},
			"ol":      {{"start", num}, {"reversed", nil}},
			"time":    {{"datetime", nil}},
			"details": {{"open", nil}},
			"q":       {{"cite", href}},
		},
		globalAttrs: []attrRule{{"class", class}, {"title", nil}, {"lang", nil}, {"dir", nil}},
	}
	for _, e := range headingElements {
		r.elementAttrs[e] = append(r.elementAttrs[e], attrRule{"id", id})
	}
	for _, e := range allowedElements {
		r.elements[e] = true
	}
	return r
})

// needAttrs are the allowed elements dropped when none of their
// attributes is kept (an <a> without href, an <img> without src or alt).
func needAttrs(element string) bool { return element == "a" || element == "img" }

// skipContent are the elements dropped with everything inside them.
func skipContent(element string) bool {
	switch element {
	case "script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math",
		"frame", "frameset", "noembed", "noframes", "nostyle", "title":
		return true
	}
	return false
}

// sanitizeOnce is one pass of the slot sanitizer over s. With rem, it
// also adds to *rem what it drops, named as removals names it.
func sanitizeOnce(s string, rem *[]string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	r := rules()
	var b strings.Builder
	b.Grow(len(s))
	var (
		skipping  bool     // inside an element whose content is dropped
		skipDepth int      // how many of those are open (may go below 0 on stray end tags)
		dropEnds  []string // end tags to drop: of <a>/<img> left with no attribute
		lastStart string   // the most recent start tag not yet closed by its end tag
	)
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		if z.Next() == html.ErrorToken {
			if z.Err() == io.EOF {
				return b.String()
			}
			return ""
		}
		t := z.Token()
		if rem != nil {
			*rem = noteRemovals(*rem, &t)
		}
		switch t.Type {
		case html.DoctypeToken, html.CommentToken:
			// dropped
		case html.StartTagToken:
			lastStart = t.Data
			if t.Data == "script" || t.Data == "style" {
				continue
			}
			if !r.elements[t.Data] {
				if skipContent(t.Data) {
					skipping = true
					skipDepth++
				}
				continue
			}
			if len(t.Attr) != 0 {
				t.Attr = r.keepAttrs(t.Data, t.Attr)
			}
			if len(t.Attr) == 0 && needAttrs(t.Data) {
				dropEnds = append(dropEnds, t.Data)
				continue
			}
			if !skipping {
				writeToken(&b, &t)
			}
		case html.EndTagToken:
			if lastStart == t.Data {
				lastStart = ""
			}
			if t.Data == "script" || t.Data == "style" {
				continue
			}
			if len(dropEnds) > 0 && dropEnds[len(dropEnds)-1] == t.Data {
				dropEnds = dropEnds[:len(dropEnds)-1]
				continue
			}
			if !r.elements[t.Data] {
				if skipContent(t.Data) {
					skipDepth--
					if skipDepth == 0 {
						skipping = false
					}
				}
				continue
			}
			if !skipping {
				writeToken(&b, &t)
			}
		case html.SelfClosingTagToken:
			if t.Data == "script" || t.Data == "style" || !r.elements[t.Data] {
				continue
			}
			if len(t.Attr) != 0 {
				t.Attr = r.keepAttrs(t.Data, t.Attr)
			}
			if len(t.Attr) == 0 && needAttrs(t.Data) {
				continue
			}
			if !skipping {
				writeToken(&b, &t)
			}
		case html.TextToken:
			if !skipping && lastStart != "script" && lastStart != "style" {
				writeToken(&b, &t)
			}
		}
	}
}

// keepAttrs returns the attributes of element the rules keep, in their
// order, with URLs written back as parsed.
func (r *slotRules) keepAttrs(element string, attrs []html.Attribute) []html.Attribute {
	kept := []html.Attribute{}
	for _, a := range attrs {
		if allows(r.elementAttrs[element], a) || allows(r.globalAttrs, a) {
			kept = append(kept, a)
		}
	}
	urlAttr := map[string]string{"a": "href", "q": "cite", "img": "src"}[element]
	if urlAttr == "" || len(kept) == 0 {
		return kept
	}
	out := kept[:0:0]
	for _, a := range kept {
		if a.Key == urlAttr {
			u, ok := safeURL(a.Val)
			if !ok {
				continue
			}
			a.Val = u
		}
		out = append(out, a)
	}
	return out
}

func allows(list []attrRule, a html.Attribute) bool {
	i := slices.IndexFunc(list, func(r attrRule) bool { return r.name == a.Key })
	return i >= 0 && (list[i].ok == nil || list[i].ok(a.Val))
}

// writeToken writes t as t.String() does (a start, end or self-closing
// tag, or text), without making the string first.
func writeToken(b *strings.Builder, t *html.Token) {
	switch t.Type {
	case html.TextToken:
		b.WriteString(html.EscapeString(t.Data))
		return
	case html.StartTagToken, html.SelfClosingTagToken:
		b.WriteByte('<')
	case html.EndTagToken:
		b.WriteString("</")
	default:
		b.WriteString(t.String())
		return
	}
	b.WriteString(t.Data)
	for _, a := range t.Attr {
		b.WriteByte(' ')
		b.WriteString(a.Key)
		b.WriteString(`="`)
		b.WriteString(html.EscapeString(a.Val))
		b.WriteByte('"')
	}
	if t.Type == html.SelfClosingTagToken {
		b.WriteByte('/')
	}
	b.WriteByte('>')
}

// lineEnds removes the line ends of a text.
var lineEnds = strings.NewReplacer("\r", "", "\n", "")

// safeURL returns raw as net/url writes it back, and whether it may stay:
// it parses, and its scheme is http, https, mailto or an image's data:, or
// it has none (a relative URL).
func safeURL(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if strings.ContainsAny(raw, " \t\n") {
		if !strings.HasPrefix(raw, "data:") {
			return "", false
		}
		// A data: URL's base64 may be wrapped over lines.
		if i := strings.IndexByte(raw, ','); i >= 0 && strings.HasSuffix(raw[:i], ";base64") {
			raw = raw[:i+1] + lineEnds.Replace(raw[i+1:])
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch u.Scheme {
	case "":
		s := u.String()
		return s, s != ""
	case "http", "https", "mailto":
		return u.String(), true
	case "data":
		if dataImage(u) {
			return u.String(), true
		}
	}
	return "", false
}

// dataImage: a data: URL of an image (gif, jpeg, png, svg+xml, webp) in
// base64 that decodes, with no query or fragment.
func dataImage(u *url.URL) bool {
	if u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	rest, ok := strings.CutPrefix(u.Opaque, "image/")
	if !ok {
		return false
	}
	for _, kind := range []string{"gif", "jpeg", "png", "svg+xml", "webp"} {
		if data, ok := strings.CutPrefix(rest, kind+";base64,"); ok {
			_, err := base64.StdEncoding.DecodeString(data)
			return err == nil
		}
	}
	return false
}
