package ingest

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/wiki"
)

// ReviewLayout is the kind of the review item a run queues for a page the
// earlier engine made that holds a person's words: the page is kept where
// it is, and the item names the page of the new layout beside it.
const ReviewLayout = "old-layout"

// placing is what the placement of a run's pages knows beside the base
// state (run.base): the pages the run's earlier sources planned, by
// origin and by path, and the earlier engine's pages already taken over.
type placing struct {
	origins map[string]string // origin → path, planned this run
	paths   map[string]string // path → origin, planned this run
	claimed map[string]bool   // earlier-layout pages taken over this run
	by      map[string]string // path → the name of the source that planned it
	// moves are the earlier-layout pages moved this run, old path → new:
	// links the model planned to an old path follow.
	moves map[string]string
}

func newPlacing() *placing {
	return &placing{origins: map[string]string{}, paths: map[string]string{}, claimed: map[string]bool{}, moves: map[string]string{}, by: map[string]string{}}
}

// migration is an earlier-layout page a run moves to its place in the
// layout (no person's words on it), or keeps (a person's words) beside a
// new page.
type migration struct {
	from, to string
	keep     bool
}

// place decides where the pages of plan p go; the pipeline, not the
// model, has the last word. A page is found by its origin (plan.MetaOrigin)
// in the wiki as it was when the run started (the base state) or among
// the pages this run's earlier sources planned: found, it is updated
// where it is, whatever its title or path. Not found, it is created where
// the layout puts it: the source's page at its mirrored path
// (plan.SourceHome), a term's page in plan.GlossaryFolder, a page of one of
// the source's sections in a folder beside the source page
// (plan.DerivedPage). A page the earlier engine made (no origin) that the
// source wrote under the same title is moved there when no person changed
// it, else kept, with a review item naming the new page. Links between
// the plan's pages follow. The placement reads nothing the run wrote, so
// --dry-run plans exactly what the run does.
func (r *run) place(d *source.Document, p *plan.Plan, parts []render.Part) ([]migration, []plan.Page) {
	home := plan.SourceHome(d.Name, d.Collection, r.opt.Into)
	ids := r.versionsOf(d)
	moved := map[string]string{}
	var migs []migration
	one := func(pg *plan.Page) {
		if pg.Action == plan.Update && pg.Origin == "" {
			if rec, ok := r.pageAt(pg.Path); ok {
				// The model updates a page it named by path: it stays.
				pg.Origin = rec
				return
			}
		}
		origin := originOf(d, pg)
		pg.Origin = origin
		if at, ok := r.findPage(origin, pg.Template); ok && r.ownedBy(at, origin, ids) {
			if at != pg.Path {
				moved[pg.Path] = at
			}
			pg.Action, pg.Path = plan.Update, at
			if r.placed.by[at] == "" {
				r.placed.by[at] = d.Name // a page of the base state, updated
			}
			return
		}
		want := layoutPath(origin, home, pg)
		if rec, ok := r.base.Pages[want]; ok && rec.Origin == "" && len(rec.Sources) == 0 && !r.placed.claimed[want] {
			// A person made a page at the very place the layout puts
			// this one (wiki new; nothing wrote it since): it is the
			// page, written where its slots are empty.
			if pg.Path != want {
				moved[pg.Path] = want
			}
			r.placed.claimed[want] = true
			pg.Action, pg.Path = plan.Update, want
			r.placed.origins[origin], r.placed.paths[want], r.placed.by[want] = want, origin, d.Name
			return
		}
		to := r.freePath(want, origin)
		if old, ok := r.earlierLayout(pg, origin, ids); ok {
			r.placed.claimed[old] = true
			m := migration{from: old, to: to, keep: r.personWrote(old)}
			migs = append(migs, m)
			if !m.keep {
				// Moved before generation, then updated at its new place.
				r.placed.moves[old] = to
				if pg.Path != to {
					moved[pg.Path] = to
				}
				pg.Action, pg.Path = plan.Update, to
				r.placed.origins[origin], r.placed.paths[to], r.placed.by[to] = to, origin, d.Name
				return
			}
		}
		if pg.Path != to {
			moved[pg.Path] = to
		}
		pg.Action, pg.Path = plan.Create, to
		r.placed.origins[origin], r.placed.paths[to], r.placed.by[to] = to, origin, d.Name
	}
	// The source page first: the pages beside it go in the folder named
	// for where it is. Then the section pages of a split document, which
	// are the document's own outline, then the plan's other pages.
	src := -1
	for i := range p.Pages {
		if src < 0 && originOf(d, &p.Pages[i]) == d.Name {
			src = i
			one(&p.Pages[i])
			home = p.Pages[i].Path
		}
	}
	sections := make([]plan.Page, len(parts)) // an empty part (no page) has no path
	for i, part := range parts {
		if part.Empty {
			continue
		}
		sections[i] = plan.Page{Action: plan.Create, Template: wiki.SectionTemplate, Title: part.Title, Origin: plan.Origin(d.Name, part.Anchor)}
		one(&sections[i])
	}
	for i := range p.Pages {
		if i != src {
			one(&p.Pages[i])
		}
	}
	for i := range p.Pages {
		for j, l := range p.Pages[i].Links {
			if to, ok := moved[l.Path]; ok {
				p.Pages[i].Links[j].Path = to
			} else if to, ok := r.placed.moves[l.Path]; ok {
				p.Pages[i].Links[j].Path = to // a page this run moved to the layout
			}
		}
	}
	return migs, sections
}

// ensureSourcePage adds d's source page to plan p when the plan (a
// model's) has none: every source has one, placed by the layout like any
// other page, so a dry run lists it and the run renders the document
// into it.
func (r *run) ensureSourcePage(d *source.Document, p *plan.Plan) {
	for i := range p.Pages {
		if originOf(d, &p.Pages[i]) == d.Name {
			return
		}
	}
	p.Pages = append([]plan.Page{{Action: plan.Create, Template: "source", Title: d.Title, Origin: d.Name,
		Path: plan.SourceHome(d.Name, d.Collection, r.opt.Into), Why: "every ingested source gets a source page"}}, p.Pages...)
}

// findPage is the page of origin for a planned page of template tmpl.
// A section page and a page derived from the same section (a procedure)
// are told apart by the derived page's qualifier (plan.Derived); a page
// found by the unqualified origin (written before the qualifier) is the
// page only when its template is tmpl.
func (r *run) findPage(origin, tmpl string) (string, bool) {
	if at, ok := r.findOrigin(origin); ok {
		if rec, inBase := r.base.Pages[at]; !inBase || rec.Template == "" || (rec.Template == wiki.SectionTemplate) == (tmpl == wiki.SectionTemplate) {
			return at, true
		}
	}
	if bare := plan.Underived(origin); bare != origin {
		if at, ok := r.base.byOrigin(bare); ok {
			if rec := r.base.Pages[at]; rec != nil && rec.Template == tmpl {
				if _, taken := r.placed.paths[at]; !taken {
					return at, true
				}
			}
		}
	}
	return "", false
}

// originOf is the full origin of planned page pg of source d: the plan's
// when it names d or a term, else derived from the template and title. A
// page of one of d's sections that is not the section's own page (a
// procedure, a note) carries its template as a qualifier (plan.Derived),
// so a long source's section page and the procedure of that section are
// two pages.
func originOf(d *source.Document, pg *plan.Page) string {
	o := pg.Origin
	switch {
	case plan.IsTermOrigin(o):
		return o
	case strings.HasPrefix(o, "#") && len(o) > 1:
		o = plan.Origin(d.Name, o[1:])
	case o == d.Name:
		return o
	case strings.HasPrefix(o, d.Name+"#"):
	default:
		switch pg.Template {
		case "source":
			return d.Name
		case "concept", "entity":
			return plan.TermOrigin(pg.Title)
		}
		o = plan.Origin(d.Name, plan.Anchor(pg.Title))
	}
	return plan.Derived(o, pg.Template)
}

// layoutPath is where the layout puts a new page of origin.
func layoutPath(origin, home string, pg *plan.Page) string {
	switch {
	case plan.IsTermOrigin(origin):
		return plan.TermPage(pg.Title)
	case !strings.Contains(origin, "#"):
		return home
	}
	_, anchor, _ := strings.Cut(plan.Underived(origin), "#")
	return plan.DerivedPage(home, strings.TrimPrefix(anchor, "s-"))
}

// freePath is want, or when a page of another origin has it (two terms of
// one slug, "a-b.md" beside "a_b.md"), want with a suffix made of the
// origin — never a number, which says nothing of what differs.
func (r *run) freePath(want, origin string) string {
	if !r.taken(want) {
		return want
	}
	stem := strings.TrimSuffix(want, ".html")
	if bare := plan.Underived(origin); bare != origin {
		// A procedure beside the section page of its section.
		if to := stem + "-" + plan.Slug(origin[len(bare)+1:]) + ".html"; !r.taken(to) {
			return to
		}
	}
	if ext := path.Ext(strings.SplitN(origin, "#", 2)[0]); ext != "" && !plan.IsTermOrigin(origin) {
		// The source's extension tells "runbook.md" from "runbook.txt".
		if to := stem + "-" + plan.Slug(ext[1:]) + ".html"; !r.taken(to) {
			return to
		}
	}
	return stem + "-" + plan.ShortHash(origin) + ".html"
}

// taken reports whether a page is at rel in the base state or planned
// there this run (case folded: two names that differ only in case are one
// file on some file systems).
func (r *run) taken(rel string) bool {
	if _, ok := r.placed.paths[rel]; ok {
		return true
	}
	if _, ok := r.base.Pages[rel]; ok {
		return true
	}
	low := strings.ToLower(rel)
	if low != rel {
		for p := range r.placed.paths {
			if strings.ToLower(p) == low {
				return true
			}
		}
	}
	return r.base.pages().lower()[low]
}

// findOrigin is the page of origin: planned this run, else in the base
// state.
func (r *run) findOrigin(origin string) (string, bool) {
	if p, ok := r.placed.origins[origin]; ok {
		return p, true
	}
	return r.base.byOrigin(origin)
}

// pageAt is the origin of the page at rel, when there is one there.
func (r *run) pageAt(rel string) (string, bool) {
	if o, ok := r.placed.paths[rel]; ok {
		return o, true
	}
	if rec, ok := r.base.Pages[rel]; ok {
		return rec.Origin, true
	}
	return "", false
}

// versionsOf are the ids of d and of the earlier versions of d (same
// name) in the base state.
func (r *run) versionsOf(d *source.Document) map[string]bool {
	ids := map[string]bool{d.ID: true}
	for id, rec := range r.base.Sources {
		if rec.Name == d.Name && (!r.inRun[id] || r.sameAsEarlier(id, d)) {
			ids[id] = true // bytes of this run under another name are not an earlier version
		}
	}
	return ids
}

// ownedBy reports whether the page at rel is one d may take as its own:
// a term's page is every source's; any other page only when it lists d
// or an earlier version of d (ids) among its sources, or none.
func (r *run) ownedBy(rel, origin string, ids map[string]bool) bool {
	if plan.IsTermOrigin(origin) {
		return true
	}
	if _, ok := r.placed.paths[rel]; ok {
		return true
	}
	rec, ok := r.base.Pages[rel]
	if !ok || len(rec.Sources) == 0 {
		return true
	}
	for _, s := range rec.Sources {
		if ids[s] {
			return true
		}
	}
	return false
}

// earlierLayout finds the page the earlier engine made for planned page
// pg: one with no origin, not taken over yet, of the same title — a term
// whichever source wrote it, any other page only when d (or an earlier
// version of it) did. Of several, the first path.
func (r *run) earlierLayout(pg *plan.Page, origin string, ids map[string]bool) (string, bool) {
	term := plan.IsTermOrigin(origin)
	var found []string
	for _, p := range r.base.pages().byTitle(r.base)[strings.ToLower(pg.Title)] {
		rec := r.base.Pages[p]
		if rec.Origin != "" || r.placed.claimed[p] {
			continue
		}
		if term {
			if (rec.Template == "concept" || rec.Template == "entity") && plan.TermKey(rec.Title) == plan.TermKey(pg.Title) {
				found = append(found, p)
			}
			continue
		}
		if rec.Template != pg.Template {
			continue
		}
		for _, s := range rec.Sources {
			if ids[s] {
				found = append(found, p)
				break
			}
		}
	}
	if len(found) == 0 {
		return "", false
	}
	sort.Strings(found)
	return found[0], true
}

// personWrote reports whether page rel holds a person's words: a slot
// whose HTML is not what the page's provenance record says the pipeline
// wrote, or a page with no record at all.
func (r *run) personWrote(rel string) bool {
	pg, ok, err := r.tx.Page(rel)
	if err != nil || !ok {
		return true
	}
	rec, has := generatedOf(pg.Meta)
	for _, s := range pg.Slots {
		if s.HTML == "" {
			continue
		}
		if !has || rec[s.ID] != slotDigest(s.HTML) {
			return true
		}
	}
	return false
}

// migrate carries out the migrations of an earlier-layout page: an
// unedited page moves to its place in the layout (links to it follow,
// and the move is listed); one with a person's words stays, and a review
// item names the page of the new layout.
func (r *run) migrate(d *source.Document, migs []migration) error {
	for _, m := range migs {
		if r.res.Layout == nil {
			r.res.Layout = &LayoutMoves{}
		}
		if m.keep {
			r.res.Layout.Kept++
		} else {
			r.res.Layout.Moved++
		}
		if m.keep {
			r.review = append(r.review, plan.ReviewItem{Page: m.from, Kind: ReviewLayout, Detail: fmt.Sprintf(
				"made by the earlier engine and changed by a person since, so it is kept where it is; the page of %s is now %s. Move what should stay there, then remove this page (prose wiki rm %s) and resolve this item.",
				d.Name, m.to, m.from)})
			continue
		}
		if r.opt.DryRun {
			continue
		}
		from, to, _, err := r.tx.Move(m.from, m.to)
		if err != nil {
			return fmt.Errorf("move %s to %s: %w", m.from, m.to, err)
		}
		r.guard.moved(from, to)
		r.res.Moved = append(r.res.Moved, Move{from, to})
		r.cat.note(r.tx, from)
		r.cat.note(r.tx, to)
		r.touched[to] = true
	}
	return nil
}

// placementOf is where plan p and the section pages of its source put
// each page, by origin.
func placementOf(p *plan.Plan, sections []plan.Page) map[string]string {
	at := map[string]string{}
	for _, pages := range [][]plan.Page{p.Pages, sections} {
		for _, pg := range pages {
			if pg.Path != "" && pg.Origin != "" {
				at[pg.Origin] = pg.Path
			}
		}
	}
	return at
}

// pathAlias maps each path a source's conversation placed a page at to
// the path the merge placed the same page (the same origin) at, where
// the two differ. A conversation plans against the base state alone, so
// it cannot know that an earlier source of the run (in name order) took
// a path first: "docs/runbook.md" and "docs/runbook.txt" both plan
// docs/runbook.html, and the merge gives the second docs/runbook-txt.html.
// The kept answers' tool calls name the conversation's paths; through
// the alias they write the merge's pages, never the other source's. Nil
// when nothing differs.
func pathAlias(conversation, merged map[string]string) map[string]string {
	var alias map[string]string
	for origin, from := range conversation {
		if to, ok := merged[origin]; ok && to != from {
			if alias == nil {
				alias = map[string]string{}
			}
			alias[from] = to
		}
	}
	return alias
}

// sharedThisRun reports whether a page of d's plan is one an earlier
// source of the run planned (a term both define, new or of the base
// state): d's conversation, against the base state alone, wrote that
// page as if the other did not, and its kept answers would write over
// what the earlier source wrote there.
func (r *run) sharedThisRun(d *source.Document, p *plan.Plan, sections []plan.Page) bool {
	for _, pages := range [][]plan.Page{p.Pages, sections} {
		for _, pg := range pages {
			if by := r.placed.by[pg.Path]; pg.Path != "" && by != "" && by != d.Name {
				return true
			}
		}
	}
	return false
}
