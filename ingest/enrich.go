package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/prose-store/prose/ingest/plan"
	"github.com/prose-store/prose/ingest/render"
	"github.com/prose-store/prose/internal/progress"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// Selection says which pages an enrich improves.
type Selection struct {
	Pages    []string // page names (paths or unique stems); empty with All
	All      bool
	Template string // only pages of this template
	Limit    int    // at most this many pages; 0 means no limit
}

// Enrich asks the model to improve each selected page — it sees every slot
// and rewrites slots through the same tools as ingest, limited to that
// page — and lands the run as one receipt. Pages whose slots come back
// unchanged change nothing; a run that changes nothing commits nothing
// and records a skipped receipt.
func Enrich(ctx context.Context, w *wiki.Wiki, sel Selection, opt Options) (*Result, error) {
	opt.defaults()
	return runQueued(ctx, w, opt, []string{}, func(r *run) (*Result, error) {
		res, err := r.enrich(ctx, sel)
		if res != nil {
			res.Usage = r.usage
		}
		return res, err
	})
}

func (r *run) enrich(ctx context.Context, sel Selection) (*Result, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	pages, err := r.selectPages(sel)
	if err != nil {
		return nil, &StepError{"select pages", err}
	}
	switch {
	case r.opt.DryRun:
		// Nothing is asked: the pages the run would ask about, in the
		// order it would ask.
		r.res.Asked = nonNilStrings(pages)
		r.res.Status = "dry-run"
		r.tx.Discard()
		return r.res, nil
	case r.opt.Estimate:
		r.res.Estimates = []Estimate{}
		for _, rel := range pages {
			e, err := r.enrichEstimate(ctx, rel)
			if err != nil {
				return nil, &StepError{"estimate of " + rel, err}
			}
			r.res.Estimates = append(r.res.Estimates, e)
		}
		r.res.Status = "estimate"
		r.tx.Discard()
		return r.res, nil
	case r.opt.MaxTokens > 0:
		// Admission by estimate alone, in name order, as ingest admits
		// its sources: the pages past the budget are left for a later run.
		var admitted []string
		var spent int64
		for _, rel := range pages {
			e, err := r.enrichEstimate(ctx, rel)
			if err != nil {
				return nil, &StepError{"estimate of " + rel, err}
			}
			if len(r.res.Left) == 0 && spent+e.Input+e.Output <= r.opt.MaxTokens {
				spent += e.Input + e.Output
				admitted = append(admitted, rel)
				continue
			}
			r.res.Left = append(r.res.Left, rel)
		}
		pages = admitted
	}
	if len(pages) > 0 && r.converses() {
		// Every page is enriched against the run's base state, at most
		// Jobs at once, then merged in name order (pool.go): the result
		// is the same at any number of jobs.
		if err := r.pool(ctx, pages, func(ctx context.Context, i int, m model.Model) (model.Usage, error) {
			return r.enrichment(ctx, pages[i], m)
		}); err != nil {
			return nil, err
		}
	}
	bar := progress.New(r.opt.Progress, int64(len(pages)), "enrich", progress.Items)
	defer bar.Finish()
	r.bar = bar
	for _, rel := range pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bar.Describe(rel)
		if err := r.fail("enrichment:" + rel); err != nil {
			return nil, err
		}
		if err := r.enrichPage(ctx, rel); err != nil {
			return nil, &StepError{"enrichment of " + rel, err}
		}
		bar.Add(1)
	}
	if err := r.fail("bookkeeping"); err != nil {
		return nil, err
	}
	if err := r.settle(); err != nil {
		return nil, &StepError{"bookkeeping", err}
	}
	if len(r.review) > 0 || len(r.kept) > 0 {
		if err := r.fileReview(); err != nil {
			return nil, &StepError{"bookkeeping", err}
		}
	}
	r.files[CatalogFile] = r.cat.encode()
	for name, data := range r.cat.encodePages() {
		r.files[name] = data
	}
	if err := r.fail("commit"); err != nil {
		return nil, err
	}
	provider, name := providerOf(r.opt.ModelSpec)
	cost := &receipt.Cost{Provider: provider, Model: name, Tokens: tokens(r.usage)}
	body := fmt.Sprintf("prose enrich: %d pages asked, %d updated\n", len(pages), len(r.res.Updated))
	if len(r.res.Updated) > 0 {
		body += "\nUpdated:\n"
		for _, p := range r.res.Updated {
			body += "  " + p + "\n"
		}
	}
	diff := map[string]any{"pages_created": []any{}, "pages_updated": anyList(r.res.Updated), "pages_moved": []any{}, "review_items": float64(len(r.res.Review))}
	cr, err := r.tx.CommitWith(wiki.CommitOptions{Who: "prose enrich", Body: body, Diff: diff, Refs: []string{}, Cost: cost, Files: r.files})
	if err != nil {
		return nil, &StepError{"commit", err}
	}
	if cr.Receipt == nil {
		if err := r.commitReview(ctx, "prose enrich"); err != nil {
			return nil, err
		}
		rc, err := r.w.Vault().RecordReceipt(context.Background(), wiki.Node, receipt.Skipped,
			vault.ReceiptOptions{Who: "prose enrich", Refs: []string{}, Provider: provider, Model: name, Tokens: receipt.Tokens{Reused: cost.Tokens.Reused}})
		if err != nil {
			return nil, &StepError{"record the skipped receipt", err}
		}
		r.res.Status, r.res.Receipt, r.res.Updated = "skipped", rc, []string{}
		return r.res, nil
	}
	// Only the pages whose files changed count as updated.
	changed := map[string]bool{}
	for _, c := range cr.Changed {
		changed[c] = true
	}
	var updated []string
	for _, p := range r.res.Updated {
		if changed[p] {
			updated = append(updated, p)
		}
	}
	r.res.Updated = nonNilStrings(updated)
	r.res.Status, r.res.Receipt, r.res.Commit, r.res.Tokens = "rendered", cr.Receipt, cr.Commit, cost.Tokens
	return r.res, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// selectPages resolves the selection to wiki paths, folder indexes left
// out (their descriptions belong to people).
func (r *run) selectPages(sel Selection) ([]string, error) {
	var pages []string
	if sel.All {
		all, err := r.tx.List()
		if err != nil {
			return nil, err
		}
		for _, rel := range all {
			if path.Base(rel) != wiki.IndexName {
				pages = append(pages, rel)
			}
		}
	}
	for _, name := range sel.Pages {
		rel, err := r.tx.Resolve(name)
		if err != nil {
			return nil, err
		}
		if !contains(pages, rel) {
			pages = append(pages, rel)
		}
	}
	if sel.Template != "" {
		if _, err := r.w.Template(sel.Template); err != nil {
			return nil, err
		}
		var keep []string
		for _, rel := range pages {
			if p, ok, err := r.tx.Page(rel); err == nil && ok && p.Meta.Template() == sel.Template {
				keep = append(keep, rel)
			}
		}
		pages = keep
	}
	sort.Strings(pages)
	if sel.Limit > 0 && len(pages) > sel.Limit {
		pages = pages[:sel.Limit]
	}
	return pages, nil
}

// enrichmentPrompt is the prompt that asks the model to improve page rel,
// and how many bytes of slots it shows.
func (r *run) enrichmentPrompt(rel string) (text string, slotBytes int, err error) {
	p, ok, err := r.tx.Page(rel)
	if err != nil {
		return "", 0, err
	}
	if !ok {
		return "", 0, fmt.Errorf("%w: %s", wiki.ErrNotFound, rel)
	}
	t, err := r.w.Template(p.Meta.Template())
	if err != nil {
		return "", 0, err
	}
	slots := map[string]string{}
	for _, sd := range t.Slots {
		if sd.ID == render.DocumentSlot || sd.ID == render.NavSlot {
			continue // the source's own text, prose's to render: no model reads or writes it
		}
		h, _ := p.Slot(sd.ID)
		slots[sd.ID] = h
	}
	dump, _ := json.MarshalIndent(slots, "", "  ")
	field := fmt.Sprintf("<slots path=\"%s\" template=\"%s\" title=\"%s\">\n%s\n</slots>", plan.Attr(rel), plan.Attr(t.Name), plan.Attr(p.Meta.Title()), dump)
	text, err = r.prompts.enrichment.Render(map[string]string{
		"audience": r.opt.Audience, "page_path": rel, "template": t.Name, "slots_dump": field,
		"component_palette": wiki.ComponentPalette(),
	})
	return text, len(dump), err
}

// enrichEstimate is what improving page rel is expected to cost, from the
// prompt the run would send (nothing is asked), by ingest's rule
// (estimate.go): estTurns calls, the tool calls rewriting about as many
// bytes as the page's slots hold (at most estWriteBytes), the later turn
// re-sending the conversation with them.
func (r *run) enrichEstimate(ctx context.Context, rel string) (Estimate, error) {
	e := Estimate{Page: rel, Calls: estTurns}
	text, slots, err := r.enrichmentPrompt(rel)
	if err != nil {
		return e, err
	}
	tb := r.toolbox()
	tb.only = rel
	prompt := len(text) + toolBytes(tb.tools(true))
	written := min(slots, estWriteBytes)
	e.Input = estTokens(prompt) + estTokens(prompt+written)
	e.Output = estTokens(written) + estTokens(200)
	return e, ctx.Err()
}

// enrichPage runs the enrichment prompt for one page.
func (r *run) enrichPage(ctx context.Context, rel string) error {
	text, _, err := r.enrichmentPrompt(rel)
	if err != nil {
		return err
	}
	tb := r.toolbox()
	tb.only = rel
	if err := r.loop(ctx, tb, "", text); err != nil {
		return err
	}
	for _, u := range append(tb.created, tb.updated...) {
		r.addOnce(&r.res.Updated, u)
		r.cat.note(r.tx, u)
	}
	return nil
}
