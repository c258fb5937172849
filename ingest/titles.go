package ingest

import (
	"path"
	"slices"
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
//     run and those the catalog knows of it, and cut only at a separator;
//     then, folder by folder, a suffix or a prefix more than half of a
//     folder's titles share ("Span - Rust", "libsigc++: Member List").
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

// minMajority is the fewest titles a folder needs for a suffix most of
// them share, not all, to be cut (mostSuffix).
const minMajority = 5

// mostSuffix is the longest suffix starting at a separator that more than
// half of titles share (each keeping something before it), when titles
// are at least minMajority; "" otherwise. A generator names its kinds of
// page apart ("Span in proc_macro2 - Rust", "lib.rs - source") and leaves
// pages of its own ("Redirection", "List of all items"): no one suffix
// is every title's, yet one is the site's.
func mostSuffix(titles []string) string { return mostAffix(titles, false) }

// mostPrefix is the same for a prefix ending at a separator: Doxygen
// names each page "PROJECT: title" ("libsigc++: Member List") beside
// pages of its own and a hand-written start page.
func mostPrefix(titles []string) string { return mostAffix(titles, true) }

// mostAffix counts, for each title, every suffix that starts at a
// separator (a prefix that ends at one, when prefix is set) and leaves
// the title something else, and returns the longest that more than half
// of titles have (the least in byte order among the longest).
func mostAffix(titles []string, prefix bool) string {
	if len(titles) < minMajority {
		return ""
	}
	count := map[string]int{}
	for _, t := range titles {
		seen := map[string]bool{}
		for _, sep := range separators {
			if prefix && sep == " (" {
				continue
			}
			for i := strings.Index(t, sep); i > 0; {
				cand, rest := t[i:], t[:i]
				if prefix {
					cand, rest = t[:i+len(sep)], t[i+len(sep):]
				}
				if !seen[cand] && strings.TrimSpace(rest) != "" && (sep != " (" || strings.HasSuffix(cand, ")")) {
					seen[cand] = true
					count[cand]++
				}
				j := strings.Index(t[i+1:], sep)
				if j < 0 {
					break
				}
				i += 1 + j
			}
		}
	}
	best := ""
	for cand, n := range count {
		if 2*n > len(titles) && (len(cand) > len(best) || len(cand) == len(best) && cand < best) {
			best = cand
		}
	}
	return best
}

// cutMostSuffixes cuts, folder by folder of a collection (the shallowest
// first), the suffix most of the folder's titles share (mostSuffix) from
// those that have it, then the prefix most of them share (mostPrefix).
// titles are the collection's titles by source name, changed in place;
// the catalog's known titles take part and are cut too.
func cutMostSuffixes(titles map[string]string) {
	folders := map[string][]string{} // folder → the names below it
	for name := range titles {
		for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
			folders[dir] = append(folders[dir], name)
		}
	}
	order := make([]string, 0, len(folders))
	for f := range folders {
		order = append(order, f)
	}
	slices.SortFunc(order, func(a, b string) int {
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, f := range order {
		names := folders[f]
		ts := make([]string, len(names))
		for i, n := range names {
			ts[i] = titles[n]
		}
		if suffix := mostSuffix(ts); suffix != "" {
			for i, n := range names {
				if t := titles[n]; strings.HasSuffix(t, suffix) {
					if cut := strings.TrimSpace(strings.TrimSuffix(t, suffix)); cut != "" {
						titles[n], ts[i] = cut, cut
					}
				}
			}
		}
		if prefix := mostPrefix(ts); prefix != "" {
			for _, n := range names {
				if t := titles[n]; strings.HasPrefix(t, prefix) {
					if cut := strings.TrimSpace(strings.TrimPrefix(t, prefix)); cut != "" {
						titles[n] = cut
					}
				}
			}
		}
	}
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
		cut := func(t string) string {
			c := t
			if suffix != "" {
				c = strings.TrimSpace(strings.TrimSuffix(c, suffix))
			}
			if prefix != "" {
				c = strings.TrimSpace(strings.TrimPrefix(c, prefix))
			}
			if c == "" {
				return t
			}
			return c
		}
		// Then the suffixes most of a folder's titles share, the
		// catalog's titles of the collection taking part as above.
		byName := map[string]string{}
		for name, t := range known {
			if !inRun[name] && strings.HasPrefix(name, c+"/") && path.Ext(name) != "" {
				byName[name] = cut(cleanTitle(t))
			}
		}
		for _, d := range ds {
			byName[d.Name] = cut(d.Title)
		}
		cutMostSuffixes(byName)
		for _, d := range ds {
			d.Title = byName[d.Name]
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
