package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/prose-store/prose/ingest/source"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/program"
	"github.com/prose-store/prose/wiki"
)

// WikiOpener opens the wiki a program works on.
type WikiOpener func(ctx context.Context) (*wiki.Wiki, error)

// RegisterPrograms registers the wiki's programs — ingest, enrich, search,
// lint, read, tree — in reg, so an agent can call them through the program
// tool. open finds the wiki when a program runs.
func RegisterPrograms(reg *program.Registry, open WikiOpener) error {
	text := func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}
	str := func(args map[string]any, k string) string { s, _ := args[k].(string); return s }
	num := func(args map[string]any, k string, def int) int {
		if f, ok := args[k].(float64); ok && f > 0 {
			return int(f)
		}
		return def
	}
	strs := func(args map[string]any, k string) []string {
		var out []string
		if l, ok := args[k].([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
		return out
	}
	modelOf := func(args map[string]any) (Options, error) {
		spec := str(args, "model")
		if spec == "" {
			spec = os.Getenv("PROSE_MODEL")
		}
		if spec == "" {
			spec = model.Offline
		}
		m, err := model.Open(spec, model.Config{})
		if err != nil {
			return Options{}, err
		}
		return Options{Model: m, ModelSpec: spec, Purpose: str(args, "purpose"), Audience: str(args, "audience")}, nil
	}
	progs := []program.Program{
		{
			Name: "ingest", Description: "Turn source files or directories into wiki pages, as one receipt.",
			Params: json.RawMessage(`{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"},"description":"files or directories"},"purpose":{"type":"string"},"audience":{"type":"string"},"model":{"type":"string","description":"PROVIDER:NAME (default offline)"}},"required":["paths"]}`),
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				w, err := open(ctx)
				if err != nil {
					return "", err
				}
				inputs, skipped, err := source.Collect(strs(args, "paths"), nil, "")
				if err != nil {
					return "", err
				}
				var docs []*source.Document
				chrome := source.FindBoilerplate(inputs)
				for _, in := range inputs {
					d, err := source.ReadWith(in.Name, in.Data, in.Kind, chrome[in.Collection])
					if err != nil {
						return "", err
					}
					d.Collection = in.Found
					docs = append(docs, d)
				}
				if len(docs) == 0 {
					return "", fmt.Errorf("no source to ingest (%d skipped)", len(skipped))
				}
				opt, err := modelOf(args)
				if err != nil {
					return "", err
				}
				res, err := Ingest(ctx, w, docs, opt)
				if err != nil {
					return "", err
				}
				return text(map[string]any{"status": res.Status, "created": res.Created, "updated": res.Updated, "review": res.Review, "commit": res.Commit})
			},
		},
		{
			Name: "enrich", Description: "Improve the slots of wiki pages with a model, as one receipt.",
			Params: json.RawMessage(`{"type":"object","properties":{"pages":{"type":"array","items":{"type":"string"}},"all":{"type":"boolean"},"template":{"type":"string"},"limit":{"type":"integer"},"model":{"type":"string"}}}`),
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				w, err := open(ctx)
				if err != nil {
					return "", err
				}
				opt, err := modelOf(args)
				if err != nil {
					return "", err
				}
				all, _ := args["all"].(bool)
				pages := strs(args, "pages")
				res, err := Enrich(ctx, w, Selection{Pages: pages, All: all || len(pages) == 0, Template: str(args, "template"), Limit: num(args, "limit", 0)}, opt)
				if err != nil {
					return "", err
				}
				return text(map[string]any{"status": res.Status, "updated": res.Updated, "commit": res.Commit})
			},
		},
		{
			Name: "search", Description: "Search the wiki's pages (BM25 over titles and slot text).",
			Params: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`),
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				w, err := open(ctx)
				if err != nil {
					return "", err
				}
				limit := num(args, "limit", 10)
				if limit <= 0 {
					limit = 10 // a program's search is bounded; Search takes 0 for every hit
				}
				hits, err := w.Search(ctx, str(args, "query"), limit)
				if err != nil {
					return "", err
				}
				return text(hits)
			},
		},
		{
			Name: "lint", Description: "Check the wiki: meta, templates, slots, links, folders.",
			Params: json.RawMessage(`{"type":"object","properties":{}}`),
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				w, err := open(ctx)
				if err != nil {
					return "", err
				}
				rep, err := w.Lint(ctx, nil)
				if err != nil {
					return "", err
				}
				return text(rep)
			},
		},
		{
			Name: "read", Description: "Read one wiki page: its meta and slots.",
			Params: json.RawMessage(`{"type":"object","properties":{"page":{"type":"string"}},"required":["page"]}`),
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				w, err := open(ctx)
				if err != nil {
					return "", err
				}
				rel, p, err := w.Read(str(args, "page"))
				if err != nil {
					return "", err
				}
				slots := map[string]string{}
				for _, s := range p.Slots {
					slots[s.ID] = s.HTML
				}
				return text(map[string]any{"path": rel, "meta": p.Meta, "slots": slots})
			},
		},
		{
			Name: "tree", Description: "The wiki's folders and pages.",
			Params: json.RawMessage(`{"type":"object","properties":{}}`),
			Run: func(ctx context.Context, args map[string]any) (string, error) {
				w, err := open(ctx)
				if err != nil {
					return "", err
				}
				t, err := w.Tree()
				if err != nil {
					return "", err
				}
				return text(t)
			},
		},
	}
	for _, p := range progs {
		if err := reg.Register(p); err != nil {
			return err
		}
	}
	return nil
}
