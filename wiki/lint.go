package wiki

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/prose-store/prose/internal/progress"
)

// MaxFolderPages is the most pages a folder holds directly before lint
// calls it crowded: one threshold for lint, the docs and the pipelines
// that file pages.
const MaxFolderPages = 10

// SectionTemplate is the template of the pages prose splits a long source
// into: a folder of them alone is never crowded.
const SectionTemplate = "section"

// Severities of lint findings. "Lint-clean" means no errors and no
// warnings.
const (
	SevError   = "error"
	SevWarning = "warning"
	SevInfo    = "info"
)

// LintKinds lists every lint kind with its severity (docs/wiki-format.md
// documents them).
var LintKinds = []struct{ Kind, Severity, About string }{
	{"meta-missing", SevError, "an .html file in the wiki has no prose meta block"},
	{"meta-invalid", SevError, "the page's format is broken (the meta block or a slot marker)"},
	{"unknown-template", SevError, "the meta block names no template, or one that does not exist"},
	{"undeclared-slot", SevWarning, "the page holds a slot its template does not declare"},
	{"empty-required-slot", SevWarning, "a slot the template marks required is empty"},
	{"broken-link", SevError, "a link in a slot or in related points to a wiki page that does not exist"},
	{"folder-no-readme", SevWarning, "a folder has no README.html index"},
	{"folder-no-description", SevWarning, "a folder's README.html has an empty description slot"},
	{"crowded-folder", SevWarning, fmt.Sprintf("a folder holds more than %d pages directly", MaxFolderPages)},
	{"empty-folder", SevWarning, "a folder holds no pages and no subfolders"},
	{"orphan-page", SevInfo, "no content page and no folder description links to the page"},
}

func severityOf(kind string) string {
	for _, k := range LintKinds {
		if k.Kind == kind {
			return k.Severity
		}
	}
	return SevError
}

// Finding is one lint finding.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Page     string `json:"page"` // wiki path of the page or folder ("" for the root folder)
	Detail   string `json:"detail"`
}

// LintReport is the outcome of a lint.
type LintReport struct {
	Findings []Finding `json:"findings"`
	Pages    int       `json:"pages"`   // pages checked, the folders' README.html not counted
	Folders  int       `json:"folders"` // folders, the root included
}

// Count returns the number of findings of severity sev.
func (r *LintReport) Count(sev string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == sev {
			n++
		}
	}
	return n
}

// Lint checks the wiki's pages as they stand in the working tree (hand
// edits included). Progress goes to progressOut when it is a terminal.
func (w *Wiki) Lint(ctx context.Context, progressOut io.Writer) (*LintReport, error) {
	return w.LintFS(ctx, dirFS(w.Root()), progressOut)
}

type lintPage struct {
	page *Page
	tmpl *Template
}

// LintFS checks the wiki held in fsys (the wiki root).
func (w *Wiki) LintFS(ctx context.Context, fsys fs.FS, progressOut io.Writer) (*LintReport, error) {
	rep := &LintReport{Findings: []Finding{}}
	seen := map[Finding]bool{}
	add := func(kind, page, detail string) {
		// A finding is reported once, however often a page repeats it
		// (the same broken link twice in a slot).
		f := Finding{Kind: kind, Severity: severityOf(kind), Page: page, Detail: detail}
		if !seen[f] {
			seen[f] = true
			rep.Findings = append(rep.Findings, f)
		}
	}
	files := map[string]bool{}
	folders := map[string]bool{".": true}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == "." {
				delete(folders, ".") // no wiki yet: nothing to check
				return fs.SkipAll
			}
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != "." {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if d.IsDir() {
			folders[p] = true
			return nil
		}
		files[p] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	pages := map[string]*lintPage{}
	var names []string
	for p := range files {
		if strings.HasSuffix(p, ".html") {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	bar := progress.New(progressOut, int64(len(names)), "lint", progress.Items)
	defer bar.Finish()
	for i, rel := range names {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		bar.Add(1)
		data, err := fs.ReadFile(fsys, rel)
		if err != nil {
			return nil, err
		}
		p, err := Parse(data)
		if errors.Is(err, ErrNotOwned) {
			add("meta-missing", rel, "no <!-- prose:meta … --> block; add one or move the file out of the wiki")
			continue
		}
		if err != nil {
			add("meta-invalid", rel, err.Error())
			continue
		}
		lp := &lintPage{page: p}
		pages[rel] = lp
		t, err := w.Template(p.Meta.Template())
		if p.Meta.Template() == "" {
			add("unknown-template", rel, "the meta block names no template; add template: NAME")
			continue
		}
		if err != nil {
			add("unknown-template", rel, err.Error())
			continue
		}
		lp.tmpl = t
		for _, s := range p.Slots {
			if !t.Declares(s.ID) {
				add("undeclared-slot", rel, fmt.Sprintf("slot %q is not declared by template %s", s.ID, t.Name))
			}
		}
		for _, sd := range t.Slots {
			if !sd.Required || path.Base(rel) == IndexName && sd.ID == "description" {
				continue // a folder's description has its own kind
			}
			if h, _ := p.Slot(sd.ID); strings.TrimSpace(plainText(h)) == "" && !hasMedia(h) {
				add("empty-required-slot", rel, fmt.Sprintf("required slot %q is empty", sd.ID))
			}
		}
	}
	// Pages counts what prose wiki stats counts: pages, not the folders'
	// README.html indexes.
	for _, rel := range names {
		if path.Base(rel) != IndexName {
			rep.Pages++
		}
	}
	rep.Folders = len(folders)
	// Links: broken ones, and which pages something links to.
	linked := map[string]bool{}
	for _, rel := range names {
		lp := pages[rel]
		if lp == nil {
			continue
		}
		isIndex := path.Base(rel) == IndexName
		for _, s := range lp.page.Slots {
			for _, h := range links(s.HTML) {
				target, ok := resolveLink(rel, h)
				if !ok {
					continue
				}
				if !files[target] && !folders[strings.TrimSuffix(target, "/"+IndexName)] {
					add("broken-link", rel, fmt.Sprintf("slot %s links to %s, which does not exist", s.ID, h))
				}
				if !isIndex || s.ID == "description" {
					linked[target] = true
				}
			}
		}
		for _, r := range lp.page.Meta.Related() {
			target, err := cleanPagePath(r)
			if err != nil || !files[target] {
				add("broken-link", rel, fmt.Sprintf("related names %s, which does not exist", r))
				continue
			}
			linked[target] = true
		}
	}
	// Folders.
	direct := map[string]int{}
	placed := map[string]int{}
	subdirs := map[string]int{}
	for rel := range files {
		if path.Base(rel) == IndexName {
			continue
		}
		if lp := pages[rel]; lp != nil && lp.page.Meta.String(KeyOrigin) != "" {
			// Placed by the layout (a mirrored collection, the glossary):
			// its folder follows its source, and a count says nothing.
			placed[path.Dir(rel)]++
			continue
		}
		direct[path.Dir(rel)]++
	}
	for f := range folders {
		if f != "." {
			subdirs[path.Dir(f)]++
		}
	}
	var flist []string
	for f := range folders {
		flist = append(flist, f)
	}
	slices.Sort(flist)
	for _, f := range flist {
		shown := f
		idx := IndexName
		if f != "." {
			idx = f + "/" + IndexName
			shown = f + "/"
		} else {
			shown = "./"
		}
		switch {
		case !files[idx]:
			add("folder-no-readme", shown, "the folder has no "+IndexName+"; any prose wiki write in it creates one")
		case pages[idx] != nil:
			if d, _ := pages[idx].page.Slot("description"); strings.TrimSpace(plainText(d)) == "" {
				add("folder-no-description", shown, "write one with `prose wiki write-slot "+strings.TrimSuffix(idx, ".html")+" description`")
			}
		}
		if n := direct[f]; n > MaxFolderPages {
			add("crowded-folder", shown, fmt.Sprintf("%d pages directly in the folder (more than %d); group them into subfolders", n, MaxFolderPages))
		}
		if direct[f] == 0 && placed[f] == 0 && subdirs[f] == 0 && (f != "." || len(names) > 0 || len(files) > 0) {
			add("empty-folder", shown, "the folder holds no pages; remove it or file pages into it")
		}
	}
	for _, rel := range names {
		if path.Base(rel) == IndexName || pages[rel] == nil {
			continue
		}
		if !linked[rel] {
			add("orphan-page", rel, "no page links to it (only its folder index lists it)")
		}
	}
	slices.SortFunc(rep.Findings, func(a, b Finding) int {
		if c := strings.Compare(a.Page, b.Page); c != 0 {
			return c
		}
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Detail, b.Detail)
	})
	return rep, nil
}

// hasMedia reports slot HTML that shows something without text (an image).
func hasMedia(h string) bool { return strings.Contains(h, "<img") }
