package wiki

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/prose-store/prose/internal/spaces"
)

// A folder index lists its pages in their collection's order, each with
// its first sentence, and below them the terms its pages define (the
// glossary pages that link to them) and its index of names (the headings
// of its pages that name an API). All of it is derived shell, rendered
// from the pages the folder holds.

// GlossaryDir is the folder of term pages: one page per term per wiki.
const GlossaryDir = "glossary"

// How many terms and names a folder index lists; past that it says how
// many more (prose wiki search finds them).
const (
	MaxFolderTerms = 200
	MaxFolderNames = 500
	// MaxFolderListed is how many pages a folder index lists; past that
	// it says how many more (prose wiki find lists them all).
	MaxFolderListed = 1000
)

// folderTerms gathers the glossary pages linking to a folder's pages.
type folderTerms struct {
	tx    *Tx
	dir   string
	seen  map[string]bool
	items []Backlink
}

func (f *folderTerms) add(rel string) error {
	if f.dir == GlossaryDir {
		return nil // the glossary's pages link one another
	}
	bl, err := f.tx.backlinks(rel)
	if err != nil {
		return err
	}
	for _, b := range bl {
		if strings.HasPrefix(b.Path, GlossaryDir+"/") && !f.seen[b.Path] {
			f.seen[b.Path] = true
			f.items = append(f.items, b)
		}
	}
	return nil
}

func (f *folderTerms) list() ([]Link, int) {
	slices.SortFunc(f.items, func(a, b Backlink) int {
		if c := strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title)); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	index := IndexName
	if f.dir != "" {
		index = f.dir + "/" + IndexName
	}
	more := 0
	items := f.items
	if len(items) > MaxFolderTerms {
		items, more = items[:MaxFolderTerms], len(items)-MaxFolderTerms
	}
	var out []Link
	for _, b := range items {
		out = append(out, Link{Href: relLink(index, b.Path), Text: b.Title})
	}
	return out, more
}

// folderNames gathers the API names a folder's pages' headings give.
type folderNames struct{ items []Name }

// add takes the anchored headings of page p (file name in the folder,
// title) that name an API.
func (f *folderNames) add(name, title string, p *Page) {
	for _, s := range p.Slots {
		if !strings.Contains(s.HTML, `id="s-`) {
			continue
		}
		for _, h := range anchoredHeadings(s.HTML) {
			n := APIName(h.text)
			if n == "" && h.code {
				n = h.text
			}
			if n != "" {
				f.items = append(f.items, Name{Name: n, Href: name + "#" + h.id, Page: title})
			}
		}
	}
}

func (f *folderNames) list() ([]Name, int) {
	slices.SortFunc(f.items, func(a, b Name) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Href, b.Href)
	})
	if len(f.items) > MaxFolderNames {
		return f.items[:MaxFolderNames], len(f.items) - MaxFolderNames
	}
	return f.items, 0
}

type heading struct {
	id, text string
	code     bool // the heading is one code span
}

// anchoredHeadings returns the h2–h6 and dt of slot HTML that carry an
// s- anchor.
func anchoredHeadings(s string) []heading {
	var out []heading
	z := html.NewTokenizer(strings.NewReader(s))
	var cur *heading
	var text strings.Builder
	other := false // text outside a code span in the heading
	inCode := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.StartTagToken:
			name, hasAttr := z.TagName()
			n := string(name)
			if n == "dt" || len(n) == 2 && n[0] == 'h' && n[1] >= '2' && n[1] <= '6' {
				id := ""
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "id" {
						id = string(v)
					}
				}
				if strings.HasPrefix(id, "s-") {
					cur, other, inCode = &heading{id: id}, false, 0
					text.Reset()
				}
			} else if cur != nil && n == "code" {
				inCode++
				cur.code = true
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			n := string(name)
			if cur != nil && n == "code" && inCode > 0 {
				inCode--
			}
			if cur != nil && (n == "dt" || len(n) == 2 && n[0] == 'h') {
				cur.text = strings.Join(strings.Fields(text.String()), " ")
				cur.code = cur.code && !other
				if cur.text != "" {
					out = append(out, *cur)
				}
				cur = nil
			}
		case html.TextToken:
			if cur != nil {
				t := string(z.Text())
				text.WriteString(t)
				if inCode == 0 && strings.TrimSpace(t) != "" {
					other = true
				}
			}
		}
	}
}

// APIName returns the name an entry's text gives when it names an API,
// and "" when it is prose: one word joined by _, ., :: or -> (ffi_call,
// std::move), or a word and its argument list (fs.realpath(path[,
// options], callback)); after a label such as "Function:" the last word
// before the arguments (texinfo's "Function: void ffi_call (ffi_cif
// *cif, …)" gives ffi_call). A section number (2.3) or a phrase ("What is
// libffi (and why)?") names nothing.
func APIName(s string) string {
	s = strings.TrimSpace(s)
	labelled := false
	if i := strings.Index(s, ": "); i > 0 && i < 24 && !strings.ContainsAny(s[:i], "(_.") {
		if r, _ := utf8.DecodeRuneInString(s); unicode.IsUpper(r) {
			s, labelled = strings.TrimSpace(s[i+2:]), true
		}
	}
	head, args, call := strings.Cut(s, "(")
	call = call && strings.HasSuffix(strings.TrimRight(args, " ;"), ")")
	fields := strings.Fields(head)
	if len(fields) == 0 || len(fields) > 1 && !labelled {
		return ""
	}
	name := strings.TrimLeft(fields[len(fields)-1], "*&")
	if name == "" || utf8.RuneCountInString(name) > 80 || strings.IndexFunc(name, unicode.IsLetter) < 0 {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if !isWordByte(name[i]) && !strings.ContainsRune(".>", rune(name[i])) {
			return ""
		}
	}
	if call {
		return name
	}
	for i := 1; i < len(name)-1; i++ {
		if strings.ContainsRune("_.:>", rune(name[i])) && isWordByte(name[i-1]) && name[i-1] != ':' && (isWordByte(name[i+1]) || name[i+1] == ':' || name[i+1] == '>') {
			return name
		}
	}
	if strings.HasPrefix(name, "_") && len(name) > 1 {
		return name
	}
	return ""
}

func isWordByte(c byte) bool {
	return c == '_' || c == ':' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// Lead is the first sentence a folder index shows for page p
// (firstSentence).
func Lead(p *Page) string { return firstSentence(p) }

// firstSentence returns the first sentence of a page's first paragraph
// (its citation and navigation aside) that says more than its title,
// shortened at a word to about 160 characters.
func firstSentence(p *Page) string {
	title := strings.ToLower(strings.TrimRight(p.Meta.Title(), ".!?:; "))
	for _, s := range p.Slots {
		if s.ID == "citation" || s.ID == "nav" || !strings.Contains(s.HTML, "<p") {
			continue
		}
		lead, found := "", false
		paragraphs(s.HTML, 3, func(para string) bool {
			if t := strings.ToLower(strings.TrimRight(para, ".!?:; ")); t == "" || t == title {
				return true
			}
			lead, found = sentence(para), true
			return false
		})
		if found {
			return lead
		}
	}
	return ""
}

// paragraphs calls yield with the text of each of the first n <p>
// elements of slot HTML, in order, until yield returns false, leaving out
// a paragraph of links alone (a README's row of badges, "GoDoc codebeat
// Go Report Card"): it says nothing a lead could.
func paragraphs(s string, n int, yield func(string) bool) {
	out := 0
	z := html.NewTokenizer(strings.NewReader(s))
	depth, inLink := 0, 0
	links, loose := false, false // the paragraph has links; text outside them
	var b strings.Builder
	for out < n {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken:
			switch name, _ := z.TagName(); string(name) {
			case "p":
				depth++
				b.Reset()
				links, loose, inLink = false, false, 0
			case "a":
				inLink++
				links = true
			}
		case html.EndTagToken:
			switch name, _ := z.TagName(); string(name) {
			case "p":
				if depth > 0 {
					depth--
					if !links || loose {
						out++
						if !yield(spaces.Collapse(b.String())) { // strings.Join(strings.Fields(…), " ")
							return
						}
					}
				}
			case "a":
				if inLink > 0 {
					inLink--
				}
			}
		case html.TextToken:
			if depth > 0 {
				t := z.Text()
				b.Write(t)
				if inLink == 0 && strings.TrimFunc(string(t), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) != "" {
					loose = true
				}
			}
		}
	}
}

// sentence returns text up to its first full stop, question or
// exclamation mark (or, 20 characters in, colon) followed by a space and
// a capital (or the end), cut at a word past 160 characters.
func sentence(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == '?' || c == '!' || c == ':' && i >= 20 {
			if i+1 == len(s) {
				break
			}
			if s[i+1] == ' ' && i+2 < len(s) {
				r, _ := utf8.DecodeRuneInString(s[i+2:])
				if unicode.IsUpper(r) && !abbreviation(s[:i]) {
					s = s[:i+1]
					break
				}
			}
		}
	}
	if utf8.RuneCountInString(s) > 160 {
		cut := string([]rune(s[:runeOffset(s, 160)])) // string([]rune(s)[:160])
		if j := strings.LastIndexByte(cut, ' '); j > 80 {
			cut = cut[:j]
		}
		s = strings.TrimRight(cut, " ,;:") + "…"
	}
	return s
}

// runeOffset is the byte offset of rune n of s (len(s) when s has no
// more): the first n runes converted alone, without converting the rest.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// abbreviation reports whether the text before a full stop ends in a
// short abbreviation (e.g, i.e, etc, vs, Dr) rather than a sentence.
func abbreviation(before string) bool {
	w := before[strings.LastIndexByte(before, ' ')+1:]
	switch strings.ToLower(w) {
	case "e.g", "i.e", "etc", "vs", "cf", "dr", "mr", "mrs", "no", "fig", "sec":
		return true
	}
	return false
}

// contentsOrder returns the order the page beside folder d (d's namesake,
// the source page whose sections d holds) gives d's pages by linking to
// them: file name → rank. It is nil when there is no such page.
func (tx *Tx) contentsOrder(d string) (map[string]int, error) {
	if d == "." {
		return nil, nil
	}
	owner := d + ".html"
	p, ok, err := tx.page(owner)
	if err != nil || !ok {
		return nil, nil // no page beside the folder (or one prose does not own)
	}
	rank := map[string]int{}
	for _, s := range p.Slots {
		for _, h := range links(s.HTML) {
			if t, ok := resolveLink(owner, h); ok && path.Dir(t) == d {
				if _, seen := rank[path.Base(t)]; !seen {
					rank[path.Base(t)] = len(rank)
				}
			}
		}
	}
	return rank, nil
}

// comparePages orders a folder's pages: those its contents page links to
// in that order; then the pages the pipeline placed (they have an
// origin) in their source's order, which is the collection's own (the
// source directory's paths); then the rest by title.
func comparePages(a, b PageEntry, rank map[string]int) int {
	ra, oka := rank[a.Href]
	rb, okb := rank[b.Href]
	switch {
	case oka && okb:
		return ra - rb
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	if (a.origin != "") != (b.origin != "") {
		if a.origin != "" {
			return -1
		}
		return 1
	}
	if a.origin != "" {
		if c := strings.Compare(strings.ToLower(a.origin), strings.ToLower(b.origin)); c != 0 {
			return c
		}
		if c := strings.Compare(a.origin, b.origin); c != 0 {
			return c
		}
	}
	if c := strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title)); c != 0 {
		return c
	}
	return strings.Compare(a.Href, b.Href)
}
