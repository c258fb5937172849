package wiki

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prose-store/prose/internal/lazyre"
	"golang.org/x/net/html"
)

// The one allowlist of slot markup. It builds the sanitizer's policy and
// also names what a write removed, so the two never disagree.
var (
	allowedElements = []string{
		"p", "br", "hr", "h2", "h3", "h4", "h5", "h6",
		"strong", "em", "b", "i", "u", "s", "code", "pre", "kbd", "samp", "var",
		"sub", "sup", "small", "mark", "abbr", "blockquote", "q", "cite", "del", "ins",
		"ul", "ol", "li", "dl", "dt", "dd",
		"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col",
		"div", "span", "section", "article", "aside", "figure", "figcaption",
		"details", "summary", "time", "a", "img",
	}
	// Attributes allowed on every element.
	globalAttrs = []string{"class", "title", "lang", "dir"}
	// Attributes allowed on some elements.
	elementAttrs = map[string][]string{
		"a":       {"href"},
		"img":     {"src", "alt", "width", "height"},
		"td":      {"colspan", "rowspan"},
		"th":      {"colspan", "rowspan", "scope"},
		"col":     {"span"},
		"ol":      {"start", "reversed"},
		"time":    {"datetime"},
		"details": {"open"},
		"abbr":    {"title"},
		"q":       {"cite"},
		// Headings may carry an anchor in the source's namespace (see
		// headingID), so a page links into a rendered source.
		"h2": {"id"}, "h3": {"id"}, "h4": {"id"}, "h5": {"id"}, "h6": {"id"},
		// as may an entry of a split source's contents, where a link to
		// a section now on a page of its own lands.
		"li": {"id"},
		// as may the term of a definition that names an API (ffi_call),
		// which a folder's index of names links to.
		"dt": {"id"},
	}
	// class values: words of lowercase letters, digits, '-' and '_' (the
	// palette's names and any plain class a page wants).
	classPattern = lazyre.New(`^[a-z0-9_ -]*$`)
	// Links may be relative, in-page, http(s) or mailto; never javascript:
	// or data:.
	hrefPattern = lazyre.New(`^(?i:(https?:|mailto:)|[^:]*$|[^:/?#]*[/?#])`)
	// Images load only from inside the wiki (relative paths) or inline
	// data: images; a remote image would be a network fetch a reader did
	// not ask for.
	srcPattern = lazyre.New(`^(?i:data:image/(png|gif|jpeg|webp);base64,[a-z0-9+/=]+$|[^:]*$|[^:/?#]*[/?#])`)
	numPattern = lazyre.New(`^[0-9]{1,4}$`)
	// headingID is the one id a slot may hold: "s-" and a slug (lower-case
	// letters of any script, their marks, digits, '-'), on h2–h6 and dt only. The
	// page's own ids ("slot-…", the shell's) never start with "s-", so a
	// source's anchors cannot clobber them (DOM clobbering through id or
	// name is refused for every other id and element).
	headingID = lazyre.New(`^s-[\p{Ll}\p{Lo}\p{Lm}\p{M}\p{Nd}][\p{Ll}\p{Lo}\p{Lm}\p{M}\p{Nd}-]{0,95}$`)
)

// headingElements are the elements an anchor (headingID) may sit on.
var headingElements = []string{"h2", "h3", "h4", "h5", "h6", "dt", "li"}

// Sanitize returns html with everything outside the slot allowlist
// removed, and a description of what was removed (empty when nothing
// was). Sanitize is idempotent: sanitizing its output changes nothing.
func Sanitize(in string) (out string, removed []string, err error) {
	if !utf8.ValidString(in) {
		return "", nil, fmt.Errorf("slot content is not valid UTF-8; save it as UTF-8")
	}
	if !strings.ContainsRune(in, '\r') {
		// The first pass reads the tokens removals would read (the same
		// text) and names what it drops as removals does, in one walk.
		out = sanitizePass(in, &removed)
	} else {
		removed = removals(in)
		// Line ends are LF, as an HTML parser reads CR LF and a lone CR,
		// and as a page file is read back (a page saved with CR LF is
		// read).
		in = strings.ReplaceAll(strings.ReplaceAll(in, "\r\n", "\n"), "\r", "\n")
		out = sanitizePass(in, nil)
	}
	// The sanitizer's output is stable after one pass for everything seen
	// so far; a few more passes make the fixed point certain.
	for range 3 {
		if out == in {
			return out, removed, nil
		}
		in, out = out, sanitizePass(out, nil)
	}
	return out, removed, nil
}

// removals names what the policy drops from in: comments, elements outside
// the allowlist, event handlers and other attributes, and unsafe URLs.
// (Sanitize names them in its first pass; removals is for a text with CR
// line ends, which that pass does not read as written.)
func removals(in string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(in))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			t := z.Token()
			out = noteRemovals(out, &t)
		} else {
			out = noteRemovals(out, &html.Token{Type: tt})
		}
	}
}

// noteRemovals adds to out what the policy drops of token t (a comment,
// a doctype, an element or its attributes), each once.
func noteRemovals(out []string, t *html.Token) []string {
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch t.Type {
	case html.CommentToken:
		add("comment")
	case html.DoctypeToken:
		add("doctype")
	case html.StartTagToken, html.SelfClosingTagToken:
		if !slices.Contains(allowedElements, t.Data) {
			add("<" + t.Data + "> element")
			return out
		}
		for _, a := range t.Attr {
			name := strings.ToLower(a.Key)
			ok := slices.Contains(globalAttrs, name) || slices.Contains(elementAttrs[t.Data], name)
			switch {
			case strings.HasPrefix(name, "on"):
				add(name + " event handler on <" + t.Data + ">")
			case !ok:
				add(name + " attribute on <" + t.Data + ">")
			case name == "href" && !hrefPattern().MatchString(strings.TrimSpace(a.Val)):
				add("unsafe link " + shortURL(a.Val) + " on <a>")
			case name == "src" && !srcPattern().MatchString(strings.TrimSpace(a.Val)):
				add("remote or unsafe image " + shortURL(a.Val))
			case name == "id" && !headingID().MatchString(a.Val):
				add("id " + fmt.Sprintf("%q", a.Val) + " on <" + t.Data + "> (an anchor is \"s-\" and a lower-case slug)")
			case name == "class" && !classPattern().MatchString(a.Val):
				add("class " + fmt.Sprintf("%q", a.Val) + " on <" + t.Data + ">")
			}
		}
	}
	return out
}

// appendRemoved adds to a list of removals (one page's, over its slots)
// those it does not hold yet: each removal is named once.
func appendRemoved(list []string, more ...string) []string {
	for _, m := range more {
		if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}

func shortURL(u string) string {
	if len(u) > 40 {
		u = u[:40] + "…"
	}
	return fmt.Sprintf("%q", u)
}
