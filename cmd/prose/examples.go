package main

import (
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// commandExamples are the examples every command's help ends with, keyed by
// the command's path. A comment line ("# …") explains the command after it.
// TestEveryCommandHasAnExample fails when a visible command has none.
var commandExamples = map[string][]string{
	"init":                {"prose init notes", "# make a vault of the current (non-empty) folder", "prose init ."},
	"check":               {"prose check", "prose check src/briefing.prose.md"},
	"compile":             {"prose compile", "prose compile --activate"},
	"run":                 {"prose run", "# render one node (and what it needs), even if nothing moved", "prose run briefing"},
	"trigger":             {"prose trigger inbox --data event.json"},
	"serve":               {"prose serve --addr 127.0.0.1:8080"},
	"status":              {"prose status", "prose status --json"},
	"inspect":             {"prose inspect briefing", "prose inspect briefing -n 10"},
	"test":                {"prose test", "prose test -r src/"},
	"upgrade":             {"# show what would change, write nothing", "prose upgrade --dry-run", "prose upgrade"},
	"graph":               {"prose graph", "prose graph --format mermaid > graph.mmd"},
	"id":                  {"prose id", "prose id --write src/briefing.prose.md"},
	"publish":             {"prose publish briefing out/ --spec src/briefing.prose.md"},
	"log":                 {"prose log", "prose log --node wiki -n 5"},
	"receipts":            {"prose receipts verify"},
	"receipts cost":       {"prose receipts cost", "prose receipts cost --node wiki"},
	"receipts list":       {"prose receipts list", "prose receipts list --node wiki --json"},
	"receipts show":       {"# the last receipt of the wiki node", "prose receipts show wiki"},
	"receipts verify":     {"prose receipts verify"},
	"diff":                {"# what the last commit changed", "prose diff", "prose diff HEAD~3..HEAD --node wiki"},
	"fsck":                {"prose fsck", "prose fsck --json"},
	"cas":                 {"echo hello | prose cas put"},
	"cas put":             {"prose cas put report.pdf", "echo hello | prose cas put -"},
	"cas get":             {"id=$(prose cas put report.pdf)", "prose cas get \"$id\" -o copy.pdf"},
	"cas has":             {"prose cas has \"$(prose cas put report.pdf)\" && echo stored"},
	"cas verify":          {"prose cas verify"},
	"cas gc":              {"# keep only the object of report.pdf", "prose cas gc --root \"$(prose cas put report.pdf)\""},
	"ingest":              {"prose ingest notes/meeting.md", "# a whole folder: its files' pages mirror their paths", "prose ingest handbook/", "# the calls and tokens it would take, asking no model and writing nothing", "prose ingest --estimate handbook/", "# ask for the plans alone (the analysis calls, their tokens printed), write nothing", "prose ingest --dry-run --model openai:gpt-5 handbook/", "curl -s https://example.org/page.html | prose ingest --name \"Example page\" -"},
	"enrich":              {"prose enrich notes/meeting", "prose enrich --all --limit 10", "# eight pages at once with a provider: the same result as one at a time", "prose enrich --all --jobs 8 --model anthropic:claude-sonnet-4-5", "# what enriching every concept page would cost, asking nothing", "prose enrich --template concept --estimate --model openai:gpt-5"},
	"wiki":                {"prose wiki tree", "prose wiki search \"release checklist\""},
	"wiki new":            {"prose wiki new concepts/backpressure --template concept --title Backpressure"},
	"wiki write-slot":     {"prose wiki write-slot concepts/backpressure summary --content \"<p>Slowing a producer to the consumer's pace.</p>\"", "prose wiki write-slot concepts/backpressure body --markdown --file body.md"},
	"wiki append-slot":    {"prose wiki append-slot concepts/backpressure examples --markdown --content \"- TCP flow control\""},
	"wiki set-meta":       {"prose wiki set-meta concepts/backpressure status=draft 'tags:=[\"networking\"]'"},
	"wiki read":           {"prose wiki read concepts/backpressure"},
	"wiki meta":           {"prose wiki meta concepts/backpressure"},
	"wiki slot":           {"prose wiki slot concepts/backpressure summary"},
	"wiki list-slots":     {"prose wiki list-slots concepts/backpressure"},
	"wiki templates":      {"prose wiki templates"},
	"wiki tree":           {"prose wiki tree"},
	"wiki index":          {"prose wiki index concepts"},
	"wiki find":           {"prose wiki find backpressure", "# ** crosses folders; * does not", "prose wiki find '**/*release*'"},
	"wiki backlinks":      {"prose wiki backlinks concepts/backpressure"},
	"wiki search":         {"prose wiki search backpressure", "prose wiki search -n 5 \"flow control\""},
	"wiki lint":           {"prose wiki lint", "prose wiki lint --fix"},
	"wiki rebuild":        {"prose wiki rebuild"},
	"wiki stats":          {"prose wiki stats"},
	"wiki mv":             {"prose wiki mv concepts/backpressure networking/backpressure"},
	"wiki rm":             {"prose wiki rm concepts/old-draft", "prose wiki rm --unlink concepts/old-draft"},
	"wiki commit":         {"$EDITOR published/wiki/concepts/backpressure.html && prose wiki commit"},
	"wiki review":         {"prose wiki review list"},
	"wiki review list":    {"prose wiki review list", "prose wiki review list --all"},
	"wiki review show":    {"prose wiki review show 3"},
	"wiki review take":    {"prose wiki review take 3"},
	"wiki review resolve": {"prose wiki review resolve 3"},
	"prompts":             {"prose prompts list"},
	"prompts list":        {"prose prompts list"},
	"prompts show":        {"prose prompts show generation"},
	"programs":            {"prose programs list"},
	"programs list":       {"prose programs list"},
	"programs show":       {"prose programs show search"},
	"doctor":              {"prose doctor", "prose --model anthropic:claude-sonnet-4-5 doctor", "# register the merge driver where the vault lacks it", "prose doctor --fix"},
	"version":             {"prose version", "prose --version"},
	"completion":          {"source <(prose completion bash)", "prose completion fish > ~/.config/fish/completions/prose.fish"},
	"help":                {"prose help wiki search", "prose wiki help search"},
	"clone":               {"prose clone git@example.org:team/notes.git notes"},
	"push":                {"prose push", "prose push --dry-run origin"},
	"resolve":             {"# a slot both sides changed: take the remote's text of it", "prose resolve ml/attention --slot summary --theirs", "# one meta key a person set differently on both sides (title, tags, …): keep this vault's", "prose resolve ml/attention --key title --ours", "# every conflict of a page (its meta keys too): keep this vault's", "prose resolve ml/attention --ours", "# a whole node, the wiki with its catalog and review queue", "prose resolve wiki --ours", "prose resolve briefing --theirs --remote origin", "# a world-model node: render it again against the merged vault (its producers as merged)", "prose resolve totals --render"},
	"pull":                {"prose pull", "prose pull origin", "# two ingests into one wiki merge page by page; a slot changed on both sides stops the pull and names prose resolve", "# record a merge git made (git pull, git merge): the ledger merge and a merge receipt per node both sides advanced", "git pull --no-rebase origin main", "prose pull --continue"},
	"merge-driver":        {"# git runs it; prose init, clone, remote add and pull register it as", "git config merge.prose.driver 'prose merge-driver %O %A %B %P'", "# merge one page by hand the way git would", "prose merge-driver base.html ours.html theirs.html published/wiki/glossary/canary.html"},
	"remote":              {"prose remote add origin git@example.org:team/notes.git"},
	"remote add":          {"prose remote add origin git@example.org:team/notes.git"},
	"remote list":         {"prose remote list"},
}

// addExamples appends each command's examples to its description as an
// "Examples:" block, which the help prints and the generated reference
// (docs/cli.md, the man pages) shows as examples.
func addExamples(app *cli.App) {
	var walk func(cmds []*cli.Command, path string)
	walk = func(cmds []*cli.Command, path string) {
		for _, c := range cmds {
			p := strings.TrimSpace(path + " " + c.Name)
			addCommandExamples(c, p)
			walk(c.Subcommands, p)
		}
	}
	walk(app.Commands, "")
}

// addCommandExamples appends the examples of the command at path to c's
// description, unless it ends with them already.
func addCommandExamples(c *cli.Command, path string) {
	ex := commandExamples[path]
	if len(ex) == 0 {
		return
	}
	block := "Examples:\n  " + strings.Join(ex, "\n  ")
	if strings.HasSuffix(c.Description, block) {
		return
	}
	desc := strings.TrimRight(c.Description, "\n")
	if desc != "" {
		desc += "\n\n"
	}
	c.Description = desc + block
}

// helpWithExamples is urfave/cli's help printer, adding a command's
// examples to its description first: a command line's tree
// (newCommandTree) has none until its help is printed. urfave/cli has
// named the command "prose PATH" (HelpName) by then.
func helpWithExamples(print func(io.Writer, string, any)) func(io.Writer, string, any) {
	return func(w io.Writer, templ string, data any) {
		if c, ok := data.(*cli.Command); ok {
			if path, ok := strings.CutPrefix(c.HelpName, "prose "); ok {
				addCommandExamples(c, path)
			}
		}
		print(w, templ, data)
	}
}

func init() { cli.HelpPrinter = helpWithExamples(cli.HelpPrinter) }
