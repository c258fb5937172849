package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
	"github.com/prose-store/prose/wiki"
)

// renderFlag is prose resolve's --render.
var renderFlag = &cli.BoolFlag{Name: "render", Usage: "render a world-model node again against the merged vault (its producers as merged), with its own ### Runtime render as prose run would, instead of keeping one side; not with --ours/--theirs, not for the wiki"}

// resolveRender is prose resolve NODE --render: the node, advanced on both
// sides, is rendered again against the vault as the merge would land it,
// and the merge lands with its merge receipt taken "rendered". A failing
// render changes nothing.
func resolveRender(c *cli.Context) error {
	node := c.Args().First()
	switch {
	case c.Bool("ours") || c.Bool("theirs"):
		return usageErrorf("resolve --render renders the node again instead of keeping a side: drop --ours/--theirs, or drop --render")
	case c.String("slot") != "":
		return usageErrorf("resolve --render settles a whole world-model node, not a slot: use --slot with --ours or --theirs")
	case node == wiki.Node:
		return usageErrorf("resolve --render: the wiki is not rendered by the runtime; settle it page by page or with `prose resolve wiki --ours|--theirs`")
	}
	if _, ok := resolvePageArg(node, ""); ok {
		return usageErrorf("resolve --render settles a world-model node; %s names a page or a file: use --ours or --theirs", node)
	}
	rs, err := loadRuntime(c, "resolve")
	if err != nil {
		return err
	}
	defer rs.set.close()
	n := rs.graph.Node(node)
	if n == nil {
		return usageErrorf("resolve --render: no node %q in the active manifest, so it has no render (settle it with --ours or --theirs)", node)
	}
	rend, err := reactor.RenderersOf(rs.renderSet())(n)
	if err != nil {
		return err
	}
	var producers []string
	for _, e := range rs.graph.Inputs(node) {
		producers = append(producers, e.Producer)
	}
	now, err := model.Now(os.Getenv)
	if err != nil {
		return err
	}
	if os.Getenv("PROSE_NOW") == "" {
		now = time.Now()
	}
	v := rs.set.vault
	remote := c.String("remote")
	res, err := v.ResolveRender(c.Context, remote, node, producers, nil, func(ctx context.Context, view *vault.MergedView) (*vault.RenderedMerge, error) {
		out, err := reactor.RenderAgainst(ctx, rs.graph, node, rend, view, v.StatePath("run"), "", now, receipt.Wake{Source: receipt.WakeExternal, Refs: []string{}})
		if err != nil {
			return nil, err
		}
		return &vault.RenderedMerge{Files: out.Files, ContractFingerprint: n.ContractFingerprint, InputFingerprints: out.InputFingerprints,
			Provider: out.Provider, Model: out.Model, Tokens: out.Tokens}, nil
	})
	if err != nil {
		return err
	}
	out := newOutput(c)
	out.printf("resolved node %s (--render: rendered again against the merged vault); merged %s from %s (branch now %s)\n%s", node, nounCount(res.Receipts, "receipt"), remote, res.Branch.String()[:12], indent(res.Summary))
	rerenderMerged(c, v, out, res)
	return out.emit(map[string]any{"remote": remote, "node": node, "taken": vault.TakeRendered, "receipts": res.Receipts, "summary": res.Summary, "branch": res.Branch.String(), "ledger": res.Ledger.String()})
}
