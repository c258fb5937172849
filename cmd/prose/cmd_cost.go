package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/reactor"
)

func receiptsCostCommand() *cli.Command {
	return &cli.Command{
		Name:  "cost",
		Usage: "what the receipts spent: renders, skips, failures and tokens per node and per run, and the skip ratio",
		Description: "Reads the ledger; writes nothing. A run is an outside wake (a trigger, a publish, a named\n" +
			"or cold-start wake, a self-driven tick) and every receipt it caused through input wakes\n" +
			"(linked by the receipts' wake refs); runs that meet at a node are one. The skip ratio is\n" +
			"skipped receipts over all receipts. See docs/runtime.md §Cost.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "runs", Value: 10, Usage: "list the latest `N` runs (0: all; --json lists all)"},
			&cli.StringFlag{Name: "node", Usage: "only receipts of `NODE`"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("receipts cost takes no arguments (--node NODE for one node)")
			}
			if c.Int("runs") < 0 {
				return usageErrorf("receipts cost: --runs must be 0 or more")
			}
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			recs, err := v.AllReceipts()
			if err != nil {
				return err
			}
			timed := make([]reactor.Timed, 0, len(recs))
			for _, r := range recs {
				timed = append(timed, reactor.Timed{Receipt: r.Receipt, When: r.When})
			}
			rep := reactor.Cost(timed)
			if n := c.String("node"); n != "" {
				rep = onlyNode(rep, n)
				if rep.Total.Receipts == 0 {
					return fmt.Errorf("receipts cost: node %q has no receipts (prose receipts list shows them)", n)
				}
			}
			out := newOutput(c)
			if !out.json {
				printCost(c.App.Writer, rep, c.Int("runs"))
			}
			return out.emit(rep)
		},
	}
}

// onlyNode keeps node's spend: its line, and the runs it took part in
// with only its share.
func onlyNode(rep *reactor.CostReport, node string) *reactor.CostReport {
	out := &reactor.CostReport{Nodes: []reactor.NodeSpend{}, Runs: []reactor.RunSpend{}}
	for _, n := range rep.Nodes {
		if n.Node == node {
			out.Nodes = append(out.Nodes, n)
			out.Total = n.Spend
		}
	}
	for _, r := range rep.Runs {
		for _, n := range r.Nodes {
			if n.Node == node {
				out.Runs = append(out.Runs, reactor.RunSpend{Start: r.Start, StartedBy: r.StartedBy, Spend: n.Spend, Nodes: []reactor.NodeSpend{n}})
			}
		}
	}
	return out
}

func printCost(w io.Writer, rep *reactor.CostReport, last int) {
	width := len("total")
	for _, n := range rep.Nodes {
		width = max(width, len(n.Node))
	}
	fmt.Fprintf(w, "%-*s  %8s  %6s  %8s  %12s  %13s  %10s\n", width, "node", "renders", "skips", "failures", "fresh tokens", "reused tokens", "skip ratio")
	line := func(name string, s reactor.Spend) {
		fmt.Fprintf(w, "%-*s  %8d  %6d  %8d  %12d  %13d  %9.1f%%\n", width, name, s.Renders, s.Skips, s.Failures, s.Fresh, s.Reused, 100*s.SkipRatio)
	}
	for _, n := range rep.Nodes {
		line(n.Node, n.Spend)
	}
	line("total", rep.Total)
	runs := rep.Runs
	if last > 0 && len(runs) > last {
		runs = runs[len(runs)-last:]
	}
	fmt.Fprintf(w, "\nruns: %d", len(rep.Runs))
	if len(runs) < len(rep.Runs) {
		fmt.Fprintf(w, " (the last %d; --runs 0 lists all)", len(runs))
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		started := "input"
		if len(r.StartedBy) > 0 {
			started = r.StartedBy[0]
			if len(r.StartedBy) > 1 {
				started += fmt.Sprintf(" +%d", len(r.StartedBy)-1)
			}
		}
		fmt.Fprintf(w, "  %s  %-24s  %s, %s, %s, %d fresh tokens, skip ratio %.1f%%\n", r.Start.UTC().Format("2006-01-02 15:04:05"), started,
			nounCount(r.Renders, "render"), nounCount(r.Skips, "skip"), nounCount(r.Failures, "failure"), r.Fresh, 100*r.SkipRatio)
		for _, n := range r.Nodes {
			fmt.Fprintf(w, "      %-*s  %d rendered, %d skipped, %d failed, %d fresh tokens\n", width, n.Node, n.Renders, n.Skips, n.Failures, n.Fresh)
		}
	}
}
