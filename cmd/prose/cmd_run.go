package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/model"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/receipt"
	"github.com/prose-store/prose/vault"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "reconcile: render what moved, once, in order; print each node's disposition",
		ArgsUsage: "[NODE…]",
		Description: "Without NODE, wakes what is dirty: nodes with no receipt (cold start), whose contract or\n" +
			"inputs moved since their last receipt, whose self-driven cadence has passed, or whose\n" +
			"world-model holds a lapsed valid_until. NODE… wakes the named nodes; --all wakes every node.\n" +
			"Each woken node skips when its memo key (contract fingerprint, input fingerprints) is\n" +
			"unmoved, else renders as its ### Runtime says; what a render moves wakes its subscribers.\n" +
			"Prints one line per disposition (rendered, skipped, failed, pruned, coalesced) with why;\n" +
			"exits 1 when any render failed. Needs the active manifest to be current\n" +
			"(prose compile --activate). PROSE_NOW (RFC 3339) sets the clock of cadences. See docs/runtime.md.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "wake every node (each still skips when its memo key is unmoved)"},
		},
		Action: runRun,
	}
}

// runDoc is prose run --json.
type runDoc struct {
	Outcomes  []reactor.Outcome `json:"outcomes"`
	Rendered  int               `json:"rendered"`
	Skipped   int               `json:"skipped"`
	Failed    int               `json:"failed"`
	Pruned    int               `json:"pruned"`
	Coalesced int               `json:"coalesced"`
	Notes     []string          `json:"notes"`
}

// runtimeSet is a vault's compiled graph, ready to reconcile.
type runtimeSet struct {
	set   *contractSet
	graph *reactor.Graph
	notes []string
	cli   *cli.Context
	// config, when set, is the prose.yaml model renders read (models,
	// model) instead of the vault's: prose test renders in a scratch vault
	// with the project's settings.
	config *vault.Config
}

// loadRuntime compiles the vault's contracts and checks that the active
// manifest is the one they compile to: the runtime serves active intent.
func loadRuntime(c *cli.Context, cmd string) (*runtimeSet, error) {
	set, err := loadContracts(c, cmd, nil)
	if err != nil {
		return nil, err
	}
	m, diags := forme.Compile(set.project)
	if forme.HasErrors(diags) {
		printDiagnostics(c.App.ErrWriter, diags, true)
		set.close()
		return nil, findings("%s: the contracts do not compile (the errors above); fix them, then prose compile --activate", cmd)
	}
	data, err := m.JSON()
	if err != nil {
		set.close()
		return nil, err
	}
	active, ok, err := set.vault.ReadFile(vault.ManifestPath)
	if err != nil {
		set.close()
		return nil, err
	}
	switch {
	case !ok:
		set.close()
		return nil, fmt.Errorf("%s: no manifest is active (%s is not committed): run `prose compile --activate`", cmd, vault.ManifestPath)
	case !bytes.Equal(active, data):
		set.close()
		return nil, fmt.Errorf("%s: %s is stale: the contracts changed since it was activated; run `prose compile --activate`", cmd, vault.ManifestPath)
	}
	g, notes, err := reactor.FromManifest(m, set.project.Contracts())
	if err != nil {
		set.close()
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return &runtimeSet{set: set, graph: g, notes: notes, cli: c}, nil
}

func (rs *runtimeSet) reconciler() (*reactor.Reconciler, error) {
	now, err := model.Now(os.Getenv)
	if err != nil {
		return nil, err
	}
	clock := func() time.Time { return now }
	if os.Getenv("PROSE_NOW") == "" {
		clock = time.Now
	}
	v := rs.set.vault
	return reactor.New(reactor.Options{
		Graph:    rs.graph,
		Store:    reactor.NewVaultStore(v, "prose run", clock),
		Renderer: reactor.RenderersOf(rs.renderSet()),
		Now:      clock,
		WorkDir:  v.StatePath("run"),
	}), nil
}

// renderSet is the renderers of a run: command and replay renders from
// the project directory, model renders through the model layer with the
// run's model (--model, $PROSE_MODEL, prose.yaml) for a node whose
// ### Runtime gives none or a hint without a provider.
func (rs *runtimeSet) renderSet() reactor.RenderSet {
	set := reactor.RenderSet{
		Command: &reactor.CommandRenderer{Dir: rs.set.dir},
		Replay:  &reactor.ReplayRenderer{Dir: rs.set.dir},
	}
	mr := &reactor.ModelRenderer{Open: func(spec string) (model.Model, error) {
		cfg := model.Config{Getenv: os.Getenv}
		if rs.cli != nil {
			var err error
			if cfg, err = modelConfig(rs.cli); err != nil {
				return nil, err
			}
		}
		return model.Open(spec, cfg)
	}}
	cfg := rs.config
	if cfg == nil && rs.set.vault != nil {
		cfg = rs.set.vault.Config()
	}
	if cfg != nil {
		mr.Aliases = cfg.Models
	}
	if rs.cli != nil {
		if ch, err := resolveModel(rs.cli, func() (string, error) {
			if cfg == nil {
				return "", nil
			}
			return cfg.Model, nil
		}); err == nil {
			mr.Default = ch.Spec
		}
	}
	set.Model = mr
	return set
}

func runRun(c *cli.Context) error {
	rs, err := loadRuntime(c, "run")
	if err != nil {
		return err
	}
	defer rs.set.close()
	r, err := rs.reconciler()
	if err != nil {
		return err
	}
	names := c.Args().Slice()
	switch {
	case c.Bool("all") && len(names) > 0:
		return usageErrorf("run: --all wakes every node; drop it or the node names")
	case c.Bool("all"):
		names = rs.graph.IDs()
	}
	if len(names) > 0 {
		for _, n := range names {
			if rs.graph.Node(n) == nil {
				return usageErrorf("run: no node %q in the active manifest (nodes: %s)", n, strings.Join(rs.graph.IDs(), ", "))
			}
			if err := r.Wake(reactor.Seed{Node: n, Source: receipt.WakeExternal, Why: "named"}); err != nil {
				return err
			}
		}
	} else {
		seeds, err := r.Dirty()
		if err != nil {
			return err
		}
		for _, s := range seeds {
			if err := r.Wake(s); err != nil {
				return err
			}
		}
	}
	rep, derr := r.Drain(c.Context)
	return reportRun(c, rep, rs.notes, derr)
}

// reportRun prints a drain's dispositions; exit 1 when one failed.
func reportRun(c *cli.Context, rep *reactor.Report, notes []string, derr error) error {
	out := newOutput(c)
	doc := runDoc{Outcomes: rep.Outcomes, Rendered: rep.Count(reactor.Rendered), Skipped: rep.Count(reactor.Skipped),
		Failed: rep.Count(reactor.Failed), Pruned: rep.Count(reactor.Pruned), Coalesced: rep.Count(reactor.Coalesced), Notes: notes}
	if doc.Outcomes == nil {
		doc.Outcomes = []reactor.Outcome{}
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if !out.json {
		printOutcomes(c.App.Writer, rep.Outcomes)
		if !out.quiet {
			for _, n := range notes {
				fmt.Fprintln(c.App.ErrWriter, "note: "+n)
			}
			if len(rep.Outcomes) == 0 {
				fmt.Fprintln(c.App.ErrWriter, "run: nothing is dirty")
			} else {
				fmt.Fprintf(c.App.ErrWriter, "run: %d rendered, %d skipped, %d failed, %d pruned, %d coalesced\n",
					doc.Rendered, doc.Skipped, doc.Failed, doc.Pruned, doc.Coalesced)
			}
		}
	}
	if derr != nil {
		if errors.Is(derr, c.Context.Err()) && c.Context.Err() != nil {
			return c.Context.Err()
		}
		return fmt.Errorf("run: %w", derr)
	}
	if err := out.emit(doc); err != nil {
		return err
	}
	if doc.Failed > 0 {
		return findings("run: %s failed", nounCount(doc.Failed, "render"))
	}
	return nil
}

func printOutcomes(w io.Writer, outs []reactor.Outcome) {
	width := 4
	for _, o := range outs {
		width = max(width, len(o.Node))
	}
	for _, o := range outs {
		fmt.Fprintf(w, "%-*s  %-9s  %s\n", width, o.Node, o.Disposition, o.Why)
	}
}
