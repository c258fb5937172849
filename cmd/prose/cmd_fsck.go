package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/cas"
	"github.com/prose-store/prose/published"
	"github.com/prose-store/prose/vault"
)

func fsckCommand() *cli.Command {
	return &cli.Command{
		Name:  "fsck",
		Usage: "verify everything: git objects, receipt chains, published state, hand edits, CAS objects",
		Action: func(c *cli.Context) error {
			v, err := openVault(c)
			if err != nil {
				return err
			}
			defer v.Close()
			bar, stop := spinner(c, "fsck: git objects, receipts, published state")
			rep, err := v.Fsck(c.Context)
			if err != nil {
				stop()
				return err
			}
			st, err := openStore(v)
			if err != nil {
				stop()
				return err
			}
			bar.Describe("fsck: cas objects")
			var casBad []casProblem
			checked, _, err := st.Verify(func(id cas.ID, err error) {
				casBad = append(casBad, casProblem{id.String(), err.Error()})
			})
			stop()
			if err != nil {
				return err
			}
			out := newOutput(c)
			probs := fsckProblems(rep, casBad)
			if !out.json {
				for _, p := range probs {
					fmt.Fprintln(c.App.ErrWriter, p.text())
				}
			}
			receipts := 0
			if rep.Receipts != nil {
				receipts = rep.Receipts.Receipts
			}
			out.printf("checked %s, %s, %s, %s\n", nounCount(rep.Objects, "git object"), nounCount(receipts, "receipt"), nounCount(rep.Nodes, "node"), nounCount(checked, "cas object"))
			ok := rep.OK() && len(casBad) == 0
			if err := out.emit(fsckDocument(rep, ok, checked, probs)); err != nil {
				return err
			}
			if !ok {
				return findings("fsck found problems")
			}
			out.printf("ok\n")
			return nil
		},
	}
}

// fsckProblem is one finding of fsck in its JSON document.
type fsckProblem struct {
	Kind   string `json:"kind"` // vault, receipt, hand_edit or cas
	Where  string `json:"where"`
	Reason string `json:"reason"`
	Fix    string `json:"fix"` // the command that settles it, when the reason does not say
}

// text is how a finding reads on stderr: every finding names the command
// that fixes it, in its reason or after it.
func (p fsckProblem) text() string {
	fix := ""
	if p.Fix != "" {
		fix = " (" + p.Fix + ")"
	}
	switch p.Kind {
	case "receipt":
		return "receipt: " + p.Where + ": " + p.Reason + fix
	case "hand_edit":
		return "hand edit: " + p.Where + ": " + p.Reason + fix
	case "cas":
		return "cas object " + p.Where + ": " + p.Reason + fix
	}
	return "problem: " + p.Where + ": " + p.Reason + fix
}

// namesCommand reports whether a finding's reason already says which
// command fixes it.
func namesCommand(reason string) bool {
	return strings.Contains(reason, "`prose ") || strings.Contains(reason, "`git ") || strings.Contains(reason, "`rm ")
}

// fsckFix is the command that settles a finding whose reason names none.
func fsckFix(kind, where, reason string) string {
	if kind == "hand_edit" {
		return handEditFix(where, reason)
	}
	if namesCommand(reason) {
		return ""
	}
	ledger := "the ledger (" + vault.LedgerRef + ") was changed outside prose: restore it from a clone or a backup with `git fetch CLONE +" + vault.LedgerRef + ":" + vault.LedgerRef + "`, then run `prose fsck`"
	switch {
	case kind == "receipt", strings.HasPrefix(where, "ledger"):
		return ledger
	case kind == "cas":
		return "put the original bytes back with `prose cas put FILE`, or drop it with `prose cas gc --root ID…` naming the objects to keep"
	case strings.HasPrefix(where, "object "), strings.HasPrefix(where, "history from "):
		return "a git object is damaged or missing: restore it from a clone or a backup (move the damaged file under .git/objects aside, then `git fetch CLONE` in the vault), then run `prose fsck`"
	}
	return "see the vault's history with `prose log` and `git log`, restore what the reason names from a clone or a backup, then run `prose fsck`"
}

// handEditFix says how to settle a hand edit: keep it the way its node
// takes changes in (a wiki page with prose wiki commit, a world-model by
// publishing it), or undo it the way git can for that kind of edit.
func handEditFix(where, reason string) string {
	node := "NODE"
	if rest, ok := strings.CutPrefix(where, "published/"); ok {
		esc, _, _ := strings.Cut(rest, "/")
		if n, err := published.UnescapeNode(esc); err == nil {
			node = n
		}
	}
	keep := "keep it by publishing the node again with `prose publish " + node + " DIR`"
	if strings.HasPrefix(where, "published/wiki/") {
		keep = "keep it with `prose wiki commit`"
	}
	switch {
	case strings.Contains(reason, "symlink"):
		return "" // the reason says how to restore it
	case strings.HasPrefix(reason, "added by hand"):
		return keep + ", or remove the file with `rm " + where + "`"
	case strings.Contains(reason, "staged by hand"), strings.Contains(reason, "git rm --cached"):
		return keep + ", or undo it with `git restore --staged -- " + where + "`"
	}
	return keep + ", or restore it with `git checkout -- " + where + "`"
}

// fsckProblems gathers every finding of fsck in one list, in a stable order:
// by kind, then place, then reason.
func fsckProblems(rep *vault.FsckReport, casBad []casProblem) []fsckProblem {
	probs := []fsckProblem{}
	for _, p := range rep.Problems {
		probs = append(probs, fsckProblem{"vault", p.Where, p.Reason, fsckFix("vault", p.Where, p.Reason)})
	}
	if rep.Receipts != nil {
		for _, p := range rep.Receipts.Problems {
			probs = append(probs, fsckProblem{"receipt", p.Where, p.Reason, fsckFix("receipt", p.Where, p.Reason)})
		}
	}
	for _, h := range rep.HandEdits {
		probs = append(probs, fsckProblem{"hand_edit", h.Path, h.Reason, fsckFix("hand_edit", h.Path, h.Reason)})
	}
	for _, p := range casBad {
		probs = append(probs, fsckProblem{"cas", p.id, p.reason, fsckFix("cas", p.id, p.reason)})
	}
	sort.Slice(probs, func(i, j int) bool {
		a, b := probs[i], probs[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Where != b.Where {
			return a.Where < b.Where
		}
		return a.Reason < b.Reason
	})
	return probs
}

// fsckDocument is fsck's --json document: every finding in one list (never
// null) with its count.
func fsckDocument(rep *vault.FsckReport, ok bool, casChecked int, probs []fsckProblem) map[string]any {
	receipts := 0
	if rep.Receipts != nil {
		receipts = rep.Receipts.Receipts
	}
	return map[string]any{
		"ok":          ok,
		"count":       len(probs),
		"problems":    probs,
		"objects":     rep.Objects,
		"receipts":    receipts,
		"nodes":       rep.Nodes,
		"cas_checked": casChecked,
	}
}

// casProblem is one CAS object that failed verification.
type casProblem struct{ id, reason string }
