package ingest

import (
	"path"
	"strings"
	"unicode"

	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/internal/lazyre"
)

// Titles are the document's own, cleaned of what is not part of it:
//
//   - pilcrows and section signs a generator puts beside headings as
//     links ("Overview ¶", "§ Install"), and a leading section number
//     ("2.1 The Basics", "3. Closures");
//   - a suffix (or prefix) that every document of a collection shares —
//     the site's or the manual's name ("Closures (libffi: the portable
//     foreign function interface library)", "Install — Sphinx docs"),
//     found by comparing the titles of the collection's documents in the
//     run and those the catalog knows of it, and cut only at a separator.
//
// A title left empty keeps the document's own. Titles are display only:
// a page is found by its origin, so a cleaned title moves nothing.

var (
	numbering = lazyre.New(`^(?:\d+(?:\.\d+)*\.?|[A-Z]\.(?:\d+\.)*)\s+`)
	marks     = strings.NewReplacer("¶", " ", "§", " ", "\u00a0", " ")
)

// cleanTitle drops pilcrows, section signs and a leading section number.
func cleanTitle(t string) string {
	s := strings.Join(strings.Fields(marks.Replace(t)), " ")
	if rest := numbering().ReplaceAllString(s, ""); rest != s && hasLetter(rest) {
		s = rest
	}
	if s == "" {
		return t
	}
	return s
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// collectionOf is the collection a source belongs to: the top folder of
// its name when it was found in a directory, "" for a source named on
// its own (it shares no site name with others).
func collectionOf(name string, collection bool) string {
	if !collection {
		return ""
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

// separators start a suffix (or end a prefix) that may be cut.
var separators = []string{" — ", " – ", " - ", " | ", " · ", " :: ", ": ", " ("}

// sharedSuffix is the longest suffix of every title that starts at a
// separator and leaves each title something before it; "" when titles
// are fewer than two or share none.
func sharedSuffix(titles []string) string {
	if len(titles) < 2 {
		return ""
	}
	best := ""
	for _, sep := range separators {
		for i := strings.Index(titles[0], sep); i > 0; {
			cand := titles[0][i:]
			ok := true
			for _, t := range titles[1:] {
				if !strings.HasSuffix(t, cand) || len(t) == len(cand) || strings.TrimSpace(t[:len(t)-len(cand)]) == "" {
					ok = false
					break
				}
			}
			if ok && len(cand) > len(best) && (sep != " (" || strings.HasSuffix(cand, ")")) {
				best = cand
			}
			j := strings.Index(titles[0][i+1:], sep)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return best
}

// sharedPrefix is the same for a prefix ending at a separator ("libffi:
// Closures").
func sharedPrefix(titles []string) string {
	if len(titles) < 2 {
		return ""
	}
	best := ""
	for _, sep := range []string{": ", " — ", " – ", " - ", " | "} {
		i := strings.Index(titles[0], sep)
		if i <= 0 {
			continue
		}
		cand := titles[0][:i+len(sep)]
		ok := true
		for _, t := range titles[1:] {
			if !strings.HasPrefix(t, cand) || strings.TrimSpace(t[len(cand):]) == "" {
				ok = false
				break
			}
		}
		if ok && len(cand) > len(best) {
			best = cand
		}
	}
	return best
}

// cleanTitles sets each document's title to its clean form (cleanTitle,
// then without the suffix or prefix its collection's titles share). The
// titles the catalog holds of a collection's sources (named known, by
// source name) join the comparison, so a re-ingest of one changed file of
// a collection cuts the suffix as an ingest of the whole did.
func cleanTitles(docs []*source.Document, known map[string]string) {
	byColl := map[string][]*source.Document{}
	for _, d := range docs {
		d.Title = cleanTitle(d.Title)
		unmark(d)
		if c := collectionOf(d.Name, d.Collection); c != "" {
			byColl[c] = append(byColl[c], d)
		}
	}
	for c, ds := range byColl {
		var titles []string
		inRun := map[string]bool{}
		for _, d := range ds {
			titles = append(titles, d.Title)
			inRun[d.Name] = true
		}
		for name, t := range known {
			if !inRun[name] && strings.HasPrefix(name, c+"/") && path.Ext(name) != "" {
				titles = append(titles, cleanTitle(t))
			}
		}
		suffix, prefix := sharedSuffix(titles), sharedPrefix(titles)
		for _, d := range ds {
			t := d.Title
			if suffix != "" {
				t = strings.TrimSpace(strings.TrimSuffix(t, suffix))
			}
			if prefix != "" {
				t = strings.TrimSpace(strings.TrimPrefix(t, prefix))
			}
			if t != "" {
				d.Title = t
			}
		}
	}
}

// unmark drops pilcrows and section signs from a document's headings and
// defined terms (a generator's anchor links: "ffi_call¶"), which name the
// term pages and sections prose makes of them.
func unmark(d *source.Document) {
	clean := func(s string) string {
		if !strings.ContainsAny(s, "¶§") {
			return s
		}
		if t := strings.Join(strings.Fields(marks.Replace(s)), " "); t != "" {
			return t
		}
		return s
	}
	for i := range d.Sections {
		sec := &d.Sections[i]
		sec.Heading = clean(sec.Heading)
		for j := range sec.Blocks {
			for k := range sec.Blocks[j].Defs {
				sec.Blocks[j].Defs[k].Term = clean(sec.Blocks[j].Defs[k].Term)
			}
		}
	}
}
