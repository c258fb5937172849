package plan

import (
	"path"
	"strings"
)

// MetaOrigin is the page meta key holding a page's identity: where it
// came from (Origin, TermOrigin). A run finds a page by its origin, never
// by its title or path, so a page a person retitled or moved, or whose
// source changed its title, is the same page.
const MetaOrigin = "origin" // wiki.KeyOrigin

// NotesFolder is where a source named on its own (not found in a
// directory) has its page, unless the run names another folder.
const NotesFolder = "notes"

// GlossaryFolder holds the wiki's term pages, one per term, at the wiki
// root: what several sources define is merged there.
const GlossaryFolder = "glossary"

// Origin is the identity of a page made from a source: the source's name
// (stable across versions of the source: a changed source keeps its
// name), and for the page of one of its sections (a long source's
// section page) "#" and the section's anchor; a page derived from a
// section (a procedure) adds its template (Derived).
func Origin(name, anchor string) string {
	if anchor == "" {
		return name
	}
	return name + "#" + anchor
}

// Derived is the origin of a page of template tmpl made from the section
// of origin: a section's own page (template "section", or no template)
// is origin itself; any other page (a procedure, a note) has the template
// after a "/" ("runbook.md#s-deploy/procedure"), so the two are two
// pages. Origins without an anchor (a source page) and origins already
// qualified are returned as they are.
func Derived(origin, tmpl string) string {
	i := strings.LastIndexByte(origin, '#')
	if i < 0 || tmpl == "" || tmpl == "section" || strings.Contains(origin[i:], "/") {
		return origin
	}
	return origin + "/" + tmpl
}

// Underived is origin without the qualifier Derived adds.
func Underived(origin string) string {
	i := strings.LastIndexByte(origin, '#')
	if i < 0 {
		return origin
	}
	if j := strings.IndexByte(origin[i:], '/'); j >= 0 {
		return origin[:i+j]
	}
	return origin
}

// TermOrigin is the identity of the term page of term: one per term and
// wiki, whichever sources define it ("term:" and the term's key).
func TermOrigin(term string) string { return "term:" + TermKey(term) }

// TermKey is what tells terms apart: the term in lower case with its
// white space runs made one space ("Error Budget" and "error  budget"
// are one term).
func TermKey(term string) string {
	return strings.Join(strings.Fields(strings.ToLower(term)), " ")
}

// Anchor is the anchor of a section heading within its source page: "s-"
// and the heading's slug (the prefix keeps a source's ids apart from the
// page's own).
func Anchor(heading string) string { return "s-" + Slug(heading) }

// SourceHome is the wiki path of the page of the source named name.
// A source found in a directory (collection) mirrors its path: the
// directory's folder, its sub-folders kept, the file's stem
// ("docs/ops/runbook.md" → "docs/ops/runbook.html"). A source named on
// its own goes to into, else NotesFolder ("runbook.md" →
// "notes/runbook.html"; a name lengthened to tell two apart keeps its
// folders: "a/README.md" → "notes/a/readme-file.html"). Every component
// is a slug (FileSlug), so a path is valid whatever the source was called.
func SourceHome(name string, collection bool, into string) string {
	name = strings.Trim(strings.ReplaceAll(name, "\\", "/"), "/")
	dir, file := path.Split(name)
	var segs []string
	if !collection {
		if into == "" {
			into = NotesFolder
		}
		for _, s := range strings.Split(into, "/") {
			if s != "" {
				segs = append(segs, FolderSlug(s))
			}
		}
	}
	for _, s := range strings.Split(strings.Trim(dir, "/"), "/") {
		if s != "" && s != "." && s != ".." {
			segs = append(segs, FolderSlug(s))
		}
	}
	segs = append(segs, FileSlug(file)+".html")
	return strings.Join(segs, "/")
}

// FileSlug is the page name of a source file: the slug of its name
// without its extension, of at most MaxFileSlug characters. "README" (a folder's own index is README.html)
// and "index"-like names that would clash with the folder index are
// given "-file".
func FileSlug(file string) string {
	stem := strings.TrimSuffix(file, path.Ext(file))
	if stem == "" {
		stem = file
	}
	s := slugOf(stem, MaxFileSlug)
	if s == "readme" {
		s += "-file"
	}
	return s
}

// FolderSlug is the folder name of a source directory.
func FolderSlug(dir string) string { return Slug(dir) }

// TermPage is the wiki path of the page of term.
func TermPage(term string) string { return GlossaryFolder + "/" + Slug(term) + ".html" }

// DerivedPage is the path of a page a source page has beside it (a
// procedure of one of its sections): in a folder named for the source
// page's file, so a source's pages stay together ("docs/ops/runbook.html"
// → "docs/ops/runbook/deploy.html").
func DerivedPage(home, slug string) string {
	return strings.TrimSuffix(home, ".html") + "/" + slug + ".html"
}

// IsTermOrigin reports an origin made by TermOrigin.
func IsTermOrigin(origin string) bool { return strings.HasPrefix(origin, "term:") }
