package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/forme"
	"github.com/prose-store/prose/reactor"
	"github.com/prose-store/prose/vault"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "each node of the active manifest: its last receipt and whether prose run would wake it, and why",
		Description: "Reads the active manifest and the ledger; renders nothing and writes nothing.\n" +
			"A node marked dirty is one prose run (without NODE) would wake. See docs/runtime.md.",
		Action: runStatus,
	}
}

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "one node: contract, render, inputs and their fingerprints, recent receipts, why it would or would not render now",
		ArgsUsage: "NODE",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "receipts", Aliases: []string{"n"}, Value: 5, Usage: "show the `N` most recent receipts"},
		},
		Action: runInspect,
	}
}

type statusDoc struct {
	Nodes []*reactor.Explanation `json:"nodes"`
	Dirty int                    `json:"dirty"`
	Notes []string               `json:"notes"`
}

func runStatus(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErrorf("status takes no arguments (prose inspect NODE shows one node)")
	}
	rs, err := loadRuntime(c, "status")
	if err != nil {
		return err
	}
	defer rs.set.close()
	r, err := rs.reconciler()
	if err != nil {
		return err
	}
	doc := statusDoc{Nodes: []*reactor.Explanation{}, Notes: rs.notes}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	ids := rs.graph.IDs()
	width := 4
	for _, id := range ids {
		width = max(width, len(id))
		e, err := r.Explain(id)
		if err != nil {
			return err
		}
		doc.Nodes = append(doc.Nodes, e)
		if e.Dirty {
			doc.Dirty++
		}
	}
	out := newOutput(c)
	if !out.json {
		for _, e := range doc.Nodes {
			last := e.LastStatus
			if last == "" {
				last = "-"
			}
			state := e.Why
			if e.Dirty {
				state = "dirty: " + e.Why
			}
			fmt.Fprintf(c.App.Writer, "%-*s  %-8s  %-8s  %-8s  %s\n", width, e.Node, e.Wake, e.Render, last, state)
		}
		if !out.quiet {
			fmt.Fprintf(c.App.ErrWriter, "status: %s, %d dirty\n", nounCount(len(doc.Nodes), "node"), doc.Dirty)
		}
	}
	return out.emit(doc)
}

type inspectDoc struct {
	*reactor.Explanation
	// Postconditions are checked ones (prose checks them on each render's
	// output before publishing) and unchecked ones (the render's to keep).
	Postconditions reactor.Postconditions `json:"postconditions"`
	Receipts       []inspectReceipt       `json:"receipts"`
}

type inspectReceipt struct {
	Receipt string    `json:"receipt"`
	Status  string    `json:"status"`
	Wake    string    `json:"wake"`
	When    time.Time `json:"when"`
	Reason  string    `json:"failure_reason,omitempty"`
}

var errEnough = errors.New("enough")

func runInspect(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErrorf("inspect needs one NODE (prose status lists them)")
	}
	id := c.Args().First()
	rs, err := loadRuntime(c, "inspect")
	if err != nil {
		return err
	}
	defer rs.set.close()
	if rs.graph.Node(id) == nil {
		return usageErrorf("inspect: no node %q in the active manifest (nodes: %s)", id, strings.Join(rs.graph.IDs(), ", "))
	}
	r, err := rs.reconciler()
	if err != nil {
		return err
	}
	e, err := r.Explain(id)
	if err != nil {
		return err
	}
	doc := inspectDoc{Explanation: e, Postconditions: rs.graph.Node(id).Post, Receipts: []inspectReceipt{}}
	if doc.Postconditions.Checks == nil {
		doc.Postconditions.Checks = []forme.PostCheck{}
	}
	if doc.Postconditions.Unchecked == nil {
		doc.Postconditions.Unchecked = []string{}
	}
	limit := c.Int("receipts")
	err = rs.set.vault.Receipts(func(rec vault.Record) error {
		if rec.Receipt.Node != id {
			return nil
		}
		if len(doc.Receipts) >= limit {
			return errEnough
		}
		reason, _ := rec.Receipt.SemanticDiff["failure_reason"].(string)
		doc.Receipts = append(doc.Receipts, inspectReceipt{Receipt: rec.Receipt.ContentHash, Status: string(rec.Receipt.Status),
			Wake: string(rec.Receipt.Wake.Source), When: rec.When.UTC(), Reason: reason})
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	out := newOutput(c)
	if !out.json {
		w := c.App.Writer
		fmt.Fprintf(w, "node:      %s (height %d, %s-driven", e.Node, e.Height, e.Wake)
		if e.Cadence != "" {
			fmt.Fprintf(w, ", every %s", e.Cadence)
		}
		fmt.Fprintf(w, ")\ncontract:  %s\nrender:    %s", e.ContractFingerprint, e.Render)
		if e.Command != "" {
			fmt.Fprintf(w, " %s", e.Command)
		}
		fmt.Fprintf(w, " (timeout %s)\n", e.Timeout)
		if pc := doc.Postconditions; len(pc.Checks)+len(pc.Unchecked) > 0 {
			fmt.Fprintln(w, "postconditions:")
			for _, c := range pc.Checks {
				fmt.Fprintf(w, "  checked:    %s\n", c.Condition)
			}
			for _, c := range pc.Unchecked {
				fmt.Fprintf(w, "  unchecked:  %s (the render's to keep; prose does not check it)\n", c)
			}
		}
		fmt.Fprintln(w, "inputs:")
		if len(e.Inputs) == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		for _, in := range e.Inputs {
			state := "unmoved since the last receipt"
			if in.Moved {
				state = "moved since the last receipt"
				if in.Recorded == "" {
					state = "not yet consumed"
				}
			}
			fmt.Fprintf(w, "  %s.%s  %s  (%s)\n", in.Producer, in.Facet, in.Token, state)
		}
		fmt.Fprintln(w, "receipts:")
		if len(doc.Receipts) == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		for _, rc := range doc.Receipts {
			line := fmt.Sprintf("  %s  %-8s  %-8s  %s", rc.When.Format("2006-01-02 15:04:05"), rc.Status, rc.Wake, short(rc.Receipt))
			if rc.Reason != "" {
				line += "  " + rc.Reason
			}
			fmt.Fprintln(w, line)
		}
		verdict := "no"
		if e.Dirty {
			verdict = "yes"
		}
		fmt.Fprintf(w, "would render on prose run: %s — %s\n", verdict, e.Why)
	}
	return out.emit(doc)
}
