package ingest

import (
	"encoding/json"
	"fmt"
	"html"
	"path"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// document writes the whole text of d, rendered by prose (package render),
// into the document slot of its source page; a long document gets a
// table of contents there and one section page per part (sections,
// placed by the layout beside the source page with the plan's pages),
// linked previous/next/up. It runs after generation whatever the model
// did — a model never copies a source — and writes through the guard
// like every write of a run: a slot a person changed is kept and the text
// goes to review. The source page the plan placed is created there when
// the model did not create it.
func (r *run) document(d *source.Document, p *plan.Plan, res render.Result, sections []plan.Page, tb *toolbox) error {
	rel, err := r.sourcePage(d, p, tb)
	if err != nil || rel == "" {
		return err
	}
	pg, ok, err := r.tx.Page(rel)
	if err != nil || !ok {
		return err
	}
	t, err := r.w.Template(pg.Meta.Template())
	if err != nil || !t.Declares(render.DocumentSlot) {
		return nil // a vault's own source template without the slot
	}
	names := map[int]string{}
	for i := range res.Parts {
		names[i] = sections[i].Path
	}
	links := r.termLinker(tb)
	// The links between the sources' pages, as written from the page at.
	relink := func(h, at string) string {
		return render.Relink(h, func(p, a string) string {
			if p == "" { // this document's own section
				p = rel
				if i := res.PartOf(a); i >= 0 && !res.Parts[i].Empty {
					p = names[i]
					if a == res.Parts[i].Anchor {
						a = "" // the part's own heading is its page's title
					}
				}
			}
			href := relPath(at, p)
			if a != "" {
				href += "#" + a
			}
			return href
		})
	}
	body := links.Link(relink(res.Page(func(i int) string { return relPath(rel, names[i]) }), rel), rel)
	if err := r.put(tb, d, rel, render.DocumentSlot, body); err != nil {
		return err
	}
	for i, part := range res.Parts {
		if part.Empty {
			continue // listed in the contents, no page
		}
		prel := names[i]
		origin := sections[i].Origin
		if ok, err := r.exists(prel); err != nil {
			return err
		} else if !ok {
			if _, _, err := r.tx.New(prel, wiki.NewOptions{Template: wiki.SectionTemplate, Title: part.Title,
				Meta: wiki.Meta{plan.MetaOrigin: origin}}); err != nil {
				return err
			}
			tb.mark(prel, true)
		} else if cur, _, _ := r.tx.Page(prel); cur.Meta.Title() != part.Title || cur.Meta.String(plan.MetaOrigin) != origin {
			if _, err := r.tx.SetMeta(prel, map[string]any{wiki.KeyTitle: part.Title, plan.MetaOrigin: origin}, nil); err != nil {
				return err
			}
		}
		if err := r.put(tb, d, prel, render.NavSlot, navHTML(prel, rel, d.Title, names, res.Parts, i)); err != nil {
			return err
		}
		body := part.HTML
		if strings.TrimSpace(body) == "" {
			// A heading with nothing before its subsections (each a page
			// of its own): its page lists them.
			body = subsections(prel, names, res.Parts, i)
		}
		if err := r.put(tb, d, prel, render.DocumentSlot, links.Link(relink(body, prel), prel)); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) exists(rel string) (bool, error) {
	_, ok, err := r.tx.Page(rel)
	return ok, err
}

// sourcePage is where the plan placed d's source page (ensureSourcePage
// saw that it has one), created there from the template "source" when the
// model did not create it.
func (r *run) sourcePage(d *source.Document, p *plan.Plan, tb *toolbox) (string, error) {
	for _, pg := range p.Pages {
		if originOf(d, &pg) != d.Name {
			continue
		}
		rel := pg.Path
		if ok, err := r.exists(rel); err != nil || ok {
			return rel, err
		}
		if _, _, err := r.tx.New(rel, wiki.NewOptions{Template: "source", Title: d.Title,
			Meta: wiki.Meta{plan.MetaOrigin: d.Name}}); err != nil {
			return "", err
		}
		tb.mark(rel, true)
		return rel, nil
	}
	return "", nil
}

// put writes one slot the pipeline renders itself, as a tool write would
// (kept when a person changed it).
func (r *run) put(tb *toolbox, d *source.Document, rel, slot, h string) error {
	if r.guard.decide(r.tx, rel, slot) {
		if err := r.guard.propose(r.tx, rel, slot, h, false, d.Name); err != nil {
			return err
		}
		tb.mark(rel, false)
		return nil
	}
	if _, err := r.tx.WriteSlot(rel, slot, h); err != nil {
		return err
	}
	tb.mark(rel, false)
	return nil
}

// navHTML links a section page to the one before, the source page (its
// contents) and the one after.
func navHTML(here, src, title string, names map[int]string, parts []render.Part, i int) string {
	link := func(to, text, class string) string {
		return fmt.Sprintf(`<a class="%s" href="%s">%s</a>`, class, html.EscapeString(relPath(here, to)), html.EscapeString(text))
	}
	prev := link(src, "← "+title, "prev")
	for j := i - 1; j >= 0; j-- {
		if !parts[j].Empty {
			prev = link(names[j], "← "+parts[j].Title, "prev")
			break
		}
	}
	out := prev + " " + link(src, "↑ Contents of "+title, "up")
	for j := i + 1; j < len(parts); j++ {
		if !parts[j].Empty {
			out += " " + link(names[j], parts[j].Title+" →", "next")
			break
		}
	}
	return "<p>" + out + "</p>"
}

// relPath is the link from the page at from to the page at to (wiki
// paths).
func relPath(from, to string) string {
	fd := strings.Split(path.Dir(from), "/")
	if path.Dir(from) == "." {
		fd = nil
	}
	tp := strings.Split(to, "/")
	common := 0
	for common < len(fd) && common < len(tp)-1 && fd[common] == tp[common] {
		common++
	}
	return strings.Repeat("../", len(fd)-common) + strings.Join(tp[common:], "/")
}

// termLinker links the first mention of each term the wiki defines (its
// concept and entity pages, this run's included) on a rendered page. It
// is built from the catalog once per run and then grows by the term pages
// each source writes, so a run costs its pages, not sources × pages.
func (r *run) termLinker(tb *toolbox) *render.Linker {
	if r.linker == nil {
		r.linker = render.NewLinker(nil)
		for _, p := range r.cat.paths() {
			if rec := r.cat.Pages[p]; rec.Template == "concept" || rec.Template == "entity" {
				r.linker.Add(render.Term{Title: rec.Title, Path: p})
			}
		}
	}
	for _, p := range append(append([]string{}, tb.created...), tb.updated...) {
		if pg, ok, err := r.tx.Page(p); err == nil && ok {
			if t := pg.Meta.Template(); t == "concept" || t == "entity" {
				r.linker.Add(render.Term{Title: pg.Meta.Title(), Path: p})
			}
		}
	}
	return r.linker
}

// CollectionsDir holds, per collection, the boilerplate its documents were
// read without (source.Boilerplate as JSON): what was found by comparing
// them, kept beside the catalog.
const CollectionsDir = "sources/collections"

// memoOf is d's memo key: the boilerplate its collection's documents
// repeat is part of it, so when that changes the source is read again,
// and a changed file of a collection gives the pages the whole would.
//
// A model that names a revision of its own (the offline engine: how it
// derives pages) has it in the key too.
func (r *run) memoOf(d *source.Document) string {
	rev := ""
	if m, ok := r.opt.Model.(interface{ Revision() string }); ok {
		rev = "|" + m.Revision()
	}
	return MemoKey(d.ID, r.opt, r.prompts.version()+d.Boilerplate.Token()+source.Revision+render.Revision+rev)
}

// keepBoilerplate records the boilerplate d was read without.
func (r *run) keepBoilerplate(d *source.Document) {
	b := d.Boilerplate
	if b == nil || len(b.Blocks) == 0 {
		return
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return
	}
	r.files[CollectionsDir+"/"+plan.Slug(b.Collection)+".json"] = append(data, '\n')
}

// subsections links, from part i's page, the parts under it (those after
// it of a deeper level, up to the next of its level or above).
func subsections(here string, names map[int]string, parts []render.Part, i int) string {
	var sb strings.Builder
	for j := i + 1; j < len(parts) && parts[j].Level > parts[i].Level; j++ {
		if parts[j].Empty {
			fmt.Fprintf(&sb, `<li>%s</li>`, html.EscapeString(parts[j].Title)) // no page
			continue
		}
		fmt.Fprintf(&sb, `<li><a href="%s">%s</a></li>`, html.EscapeString(relPath(here, names[j])), html.EscapeString(parts[j].Title))
	}
	if sb.Len() == 0 {
		return ""
	}
	return `<ul class="toc">` + sb.String() + "</ul>"
}
