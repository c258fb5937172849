package source

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// generatorChrome are the classes documentation generators give their
// navigation: texinfo's node header and panel ("Next: … Previous: … Up:
// …"), DocBook's navigation header and footer tables, Sphinx's sidebar,
// related bar and footer, Doxygen's navigation path and header, and the
// header links every heading of Sphinx and MkDocs carries (the ¶), and
// Sphinx's links between an API entry and its code ("[source]" after
// a signature, "[docs]" in the listing of a module's code).
var generatorChrome = map[string]bool{
	"viewcode-link": true, "viewcode-back": true,
	"header": true, "nav-panel": true, "navheader": true, "navfooter": true,
	"sphinxsidebar": true, "sphinxsidebarwrapper": true, "related": true, "footer": true,
	"navpath": true, "headerlink": true, "anchorjs-link": true, "header-anchor": true,
	"skip": true, "skiplink": true, "skip-to-content": true, "visually-hidden": true, "sr-only": true,
}

// marks are the characters a heading's own link shows (¶ § #): never
// text of the heading.
const marks = "¶§#"

// isLinkChrome reports an element that is navigation by what it says: a
// "skip to content" link, a heading's own link (only ¶, § or #), a
// breadcrumb trail (aria-label naming one), or a generator's navigation.
func isLinkChrome(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "aria-label":
			if strings.Contains(strings.ToLower(a.Val), "breadcrumb") {
				return true
			}
		case "class":
			for _, c := range strings.Fields(strings.ToLower(a.Val)) {
				if generatorChrome[c] {
					return true
				}
			}
		}
	}
	if n.DataAtom != atom.A {
		return false
	}
	t := strings.TrimSpace(textOf(n))
	if t != "" && strings.Trim(t, marks+" ") == "" {
		return true
	}
	lower := strings.ToLower(t)
	return strings.HasPrefix(lower, "skip to ") || strings.HasPrefix(lower, "jump to ") && strings.Contains(lower, "content")
}

// trimMarks drops the ¶ or § a heading's text ends with.
func trimMarks(s string) string {
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), "¶§"))
}
