package ingest

import (
	"strings"
	"sync"
	"unicode"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
)

// A collection's documents link each other ("../struct.Span.html#method.new",
// "install.md#prerequisites", "#_rollback"). Pages mirror their sources'
// paths, so each such link becomes a link between the pages: to the
// source page of the document it names, at the section holding the name
// after "#" (an id or <a name> of the source, Section.IDs; for Markdown,
// the name a heading gets on GitHub and in most renderers). A link to a
// page that only redirects (Options.Redirects) leads to its target; a
// link to anything the run and the wiki hold no page of (an image, a
// file left out, a name two sources' pages would share) stays text.
//
// Where each source's page is depends only on the run's base state and
// the run's documents — the page a source had (found by its origin), else
// the page its path mirrors — never on the order sources are worked in,
// so a page links the same whichever ran first.
type sourceLinks struct {
	base      *catalog
	into      string
	redirects map[string]string
	same      map[string]string // a duplicate's name → the source whose pages hold it

	once   sync.Once
	docs   []*source.Document
	byName map[string]*source.Document
	home   map[string]string // a source's name → the path it mirrors to
	homes  map[string]int    // a mirrored path → how many of the run's sources it would be

	mu      sync.Mutex
	anchors map[*source.Document]map[string]string
}

func newSourceLinks(docs []*source.Document, base *catalog, opt Options, same map[string]string) *sourceLinks {
	return &sourceLinks{base: base, into: opt.Into, redirects: opt.Redirects, same: same, docs: docs,
		anchors: map[*source.Document]map[string]string{}}
}

func (l *sourceLinks) index() {
	l.once.Do(func() {
		l.byName = make(map[string]*source.Document, len(l.docs))
		l.home = make(map[string]string, len(l.docs))
		l.homes = make(map[string]int, len(l.docs))
		for _, d := range l.docs {
			h := plan.SourceHome(d.Name, d.Collection, l.into)
			l.byName[d.Name], l.home[d.Name] = d, h
			l.homes[strings.ToLower(h)]++
		}
	})
}

// resolver is render.Options.Link for the document d.
func (l *sourceLinks) resolver(d *source.Document) func(string) (string, bool) {
	if l == nil {
		return nil
	}
	return func(u string) (string, bool) {
		name, frag, ok := source.RelativeTarget(d.Name, u)
		if !ok {
			return "", false
		}
		if name == d.Name {
			a := l.anchor(d, frag)
			if a == "" {
				return "", false // an in-page link to a name the page lacks
			}
			return render.LinkScheme + "#" + a, true
		}
		page, target := l.page(name)
		if page == "" {
			return "", false
		}
		href := render.LinkScheme + page
		a := ""
		if target != nil {
			a = l.anchor(target, frag)
		} else if strings.HasPrefix(frag, "s-") {
			a = frag // a page of the wiki's own anchors
		}
		if a != "" {
			href += "#" + a
		}
		return href, true
	}
}

// page is the wiki path of the source page of the source named name, and
// its document when it is one of the run's; "" when there is none.
func (l *sourceLinks) page(name string) (string, *source.Document) {
	l.index()
	for range 4 { // a redirect to a redirect …
		t, ok := l.redirects[name]
		if !ok {
			break
		}
		name = t
	}
	if strings.HasSuffix(name, "/") {
		for _, index := range []string{"index.html", "index.htm", "README.md", "README.html"} {
			if p, d := l.page(name + index); p != "" {
				return p, d
			}
		}
		return "", nil
	}
	if s := l.same[name]; s != "" {
		name = s
	}
	d := l.byName[name]
	if p, ok := l.base.byOrigin(name); ok {
		return p, d
	}
	if d == nil {
		return "", nil
	}
	home := l.home[d.Name]
	if l.homes[strings.ToLower(home)] > 1 {
		return "", nil // two sources would mirror to one path: which is placed there depends on the plan
	}
	if rec, ok := l.base.Pages[home]; ok && rec.Origin != name {
		return "", nil // a page of another origin holds the path: the source's page is placed elsewhere
	}
	return home, d
}

// anchor is the anchor of d's section that the source names frag ("" for
// the page's top: no fragment, a name d lacks, a section with no heading
// shown).
func (l *sourceLinks) anchor(d *source.Document, frag string) string {
	if frag == "" {
		return ""
	}
	return l.anchorsOf(d)[frag]
}

// keep computes the anchors of d's sections, so that d may let go of its
// sections (Document.Release) and the sources linking to it still find
// them.
func (l *sourceLinks) keep(d *source.Document) {
	if l != nil {
		l.anchorsOf(d)
	}
}

// anchorsOf maps the names the source d gives its places (its anchors, a
// Markdown heading's GitHub slug, an HTML id) to the anchors of d's
// sections, computed once.
func (l *sourceLinks) anchorsOf(d *source.Document) map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.anchors[d]
	if !ok {
		m = map[string]string{}
		anchors := render.Anchors(d)
		for i, s := range d.Sections {
			a := anchors[i]
			if a == "" {
				continue
			}
			m[a] = a
			if d.Kind == source.Markdown {
				if g := githubSlug(s.Heading); g != "" {
					if _, dup := m[g]; !dup {
						m[g] = a
					}
				}
			}
			for _, id := range s.IDs {
				if _, dup := m[id]; !dup {
					m[id] = a
				}
			}
		}
		l.anchors[d] = m
	}
	return m
}

// githubSlug is the id GitHub (and most Markdown renderers) give a
// heading: lower case, spaces as "-", punctuation but "-" and "_" left out.
func githubSlug(h string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			sb.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 0x7f && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
