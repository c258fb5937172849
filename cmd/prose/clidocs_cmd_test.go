package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/internal/clidocs"
)

// `prose X help Y` shows what `prose help X Y` does, at every level.
func TestSubcommandHelp(t *testing.T) {
	inParallel(t)
	for _, c := range []struct{ sub, top []string }{
		{[]string{"wiki", "help", "search"}, []string{"help", "wiki", "search"}},
		{[]string{"wiki", "review", "help", "take"}, []string{"help", "wiki", "review", "take"}},
		{[]string{"wiki", "help", "review", "take"}, []string{"help", "wiki", "review", "take"}},
		{[]string{"receipts", "help"}, []string{"help", "receipts"}},
		{[]string{"cas", "help", "get"}, []string{"cas", "get", "--help"}},
	} {
		got := mustProse(t, c.sub...)
		want := mustProse(t, c.top...)
		if got != want || !strings.Contains(got, "USAGE:") {
			t.Errorf("prose %s printed\n%s\nwant what prose %s prints:\n%s", strings.Join(c.sub, " "), got, strings.Join(c.top, " "), want)
		}
	}
	_, errs, code := prose(t, "wiki", "help", "nosuch")
	if code != 2 || !strings.Contains(errs, `no command "wiki nosuch"`) || !strings.Contains(errs, "prose wiki --help") {
		t.Errorf("prose wiki help nosuch: exit %d, stderr %q; want exit 2 naming the command and prose wiki --help", code, errs)
	}
}

// Every visible command's help ends with examples, and each example names a
// command that exists with flags it has.
func TestEveryCommandHasAnExample(t *testing.T) {
	inParallel(t)
	app := newApp(io.Discard, io.Discard)
	global := map[string]bool{"--help": true, "-h": true, "--version": true}
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			global[dashed(n)] = true
		}
	}
	nodes := clidocs.Walk(app)
	if len(nodes) < 60 {
		t.Fatalf("walked %d commands; the tree has more", len(nodes))
	}
	for _, n := range nodes {
		name := strings.Join(n.Path, " ")
		_, examples := clidocs.SplitDescription(n.Cmd.Description)
		var runs int
		for _, e := range examples {
			if strings.HasPrefix(e, "#") {
				continue
			}
			for _, part := range strings.Split(e, "|") {
				if i := strings.Index(part, "prose "); i >= 0 && (i == 0 || strings.ContainsAny(part[i-1:i], " (")) {
					runs++
					if err := exampleNames(app, strings.Fields(part[i:])[1:], global); err != "" {
						t.Errorf("prose %s: example %q: %s", name, e, err)
					}
				}
			}
		}
		if runs == 0 {
			t.Errorf("prose %s has no example running prose: add one to commandExamples in cmd/prose/examples.go", name)
		}
	}
	for path := range commandExamples {
		if findCommand(app, strings.Fields(path)) == nil {
			t.Errorf("commandExamples has examples for %q, which is no command", path)
		}
	}
}

func dashed(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// exampleNames checks that words name a command and only flags it (or the
// program) has; it returns what is wrong, or "".
func exampleNames(app *cli.App, words []string, global map[string]bool) string {
	cmds := app.Commands
	var cmd *cli.Command
	i := 0
	for ; i < len(words) && strings.HasPrefix(words[i], "-"); i++ {
		if words[i] == "--model" || words[i] == "--vault" {
			i++
		}
	}
	for ; i < len(words); i++ {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(words[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
	}
	if cmd == nil && strings.Join(words, " ") == "--version" {
		return ""
	}
	if cmd == nil {
		return "names no command"
	}
	if len(cmd.Subcommands) > 0 && cmd.Name != "help" {
		return "stops at a command that needs a subcommand"
	}
	own := map[string]bool{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			own[dashed(n)] = true
		}
	}
	for _, w := range words {
		name, _, _ := strings.Cut(w, "=")
		if strings.HasPrefix(w, "-") && w != "-" && !own[name] && !global[name] {
			return "prose " + cmd.Name + " has no flag " + name
		}
	}
	return ""
}

func findCommand(app *cli.App, path []string) *cli.Command {
	cmds := app.Commands
	var found *cli.Command
	for _, name := range path {
		found = nil
		for _, c := range cmds {
			if c.Name == name {
				found = c
			}
		}
		if found == nil {
			return nil
		}
		cmds = found.Subcommands
	}
	return found
}

// The wiki examples run, in order, in a new vault: they are real commands.
func TestWikiExamplesRun(t *testing.T) {
	inParallel(t)
	needGit(t)
	dir := filepath.Join(t.TempDir(), "v")
	mustProse(t, "init", dir)
	body := filepath.Join(dir, "body.md")
	if err := os.WriteFile(body, []byte("Producers slow down when **consumers** lag.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"wiki new", "wiki write-slot", "wiki append-slot", "wiki set-meta", "wiki read", "wiki meta",
		"wiki slot", "wiki list-slots", "wiki templates", "wiki tree", "wiki index", "wiki find", "wiki backlinks",
		"wiki search", "wiki lint", "wiki rebuild", "wiki stats", "wiki mv", "prompts show", "programs show", "log", "fsck", "help"} {
		for _, e := range commandExamples[path] {
			if strings.HasPrefix(e, "#") {
				continue
			}
			args, err := shellWords(e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			for i, a := range args {
				if a == "body.md" {
					args[i] = body
				}
			}
			args = append([]string{"--vault", dir}, args[1:]...)
			mustProse(t, args...)
		}
	}
	out := mustProse(t, "--vault", dir, "wiki", "slot", "networking/backpressure", "body")
	if !strings.Contains(out, "<strong>consumers</strong>") {
		t.Errorf("the write-slot example's Markdown did not land:\n%s", out)
	}
}

// shellWords splits a simple command line: words, "double" and 'single'
// quotes.
func shellWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		case ch == '"' || ch == '\'':
			quote, in = ch, true
		case ch == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// The committed reference (docs/cli.md, docs/man, docs/completions) is what
// the command tree generates now.
func TestGeneratedDocsCurrent(t *testing.T) {
	inParallel(t)
	files, err := generatedDocs(newApp(io.Discard, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := generatedDocs(newApp(io.Discard, io.Discard))
	for name, want := range files {
		if again[name] != want {
			t.Errorf("%s differs between two generations: not deterministic", name)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "docs", filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("docs/%s is not what the command tree generates: run %s", name, regenDocs)
		}
	}
	man, _ := filepath.Glob(filepath.Join("..", "..", "docs", "man", "*.1"))
	for _, m := range man {
		if _, ok := files["man/"+filepath.Base(m)]; !ok {
			t.Errorf("docs/man/%s is of no command: run %s", filepath.Base(m), regenDocs)
		}
	}
	for _, n := range clidocs.Walk(newApp(io.Discard, io.Discard)) {
		if !strings.Contains(files["cli.md"], "\n## prose "+strings.Join(n.Path, " ")+"\n") {
			t.Errorf("docs/cli.md has no section for prose %s", strings.Join(n.Path, " "))
		}
	}
}

// `prose completion SHELL` prints a script the shell loads and that
// completes commands, subcommands and flags.
func TestCompletionScripts(t *testing.T) {
	inParallel(t)
	_, errs, code := prose(t, "completion", "tcsh")
	if code != 2 || !strings.Contains(errs, "bash, fish, zsh") {
		t.Errorf("completion tcsh: exit %d, %q; want exit 2 naming the shells", code, errs)
	}
	dir := t.TempDir()
	for _, sh := range clidocs.Shells {
		if err := os.WriteFile(filepath.Join(dir, sh), []byte(mustProse(t, "completion", sh)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bash := func(line string) []string {
		t.Helper()
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		script := "source " + filepath.Join(dir, "bash") + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_prose\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command("bash", "--norc", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		got := strings.Fields(string(out))
		sort.Strings(got)
		return got
	}
	for line, want := range map[string][]string{
		"prose wi":                {"wiki"},
		"prose wiki se":           {"search", "set-meta"},
		"prose wiki review t":     {"take"},
		"prose --json wiki se":    {"search", "set-meta"},
		"prose wiki search --li":  {"--limit"},
		"prose wiki search --js":  {"--json"},
		"prose ingest --est":      {"--estimate"},
		"prose completion ":       nil, // an argument: file names, from bash itself
		"prose wiki search --lim": {"--limit"},
	} {
		if got := bash(line); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("bash completes %q to %q, want %q", line, got, want)
		}
	}
	if fish, err := exec.LookPath("fish"); err == nil {
		for line, want := range map[string]string{"prose wiki se": "search", "prose wiki review t": "take", "prose ingest --est": "--estimate"} {
			out, err := exec.Command(fish, "--no-config", "-c", "source "+filepath.Join(dir, "fish")+"; complete -C '"+line+"'").CombinedOutput()
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("fish completes %q to %q (%v), want %q among them", line, out, err, want)
			}
		}
	} else if os.Getenv("CI") == "true" {
		t.Error("fish is required under CI")
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		// Outside a completion widget words and CURRENT are plain
		// parameters: stand in for _describe and _files, and look at what
		// the script offers.
		stub := "compdef() { :; }; _describe() { print -l -- ${(P)4}; }; _files() { print FILES; }; source " + filepath.Join(dir, "zsh") + "; "
		for line, want := range map[string]string{
			"prose wiki review t":    "take:write the slot text",
			"prose wiki search --li": "--limit:at most N results",
			"prose --vault x":        "FILES",
			"prose wi":               "wiki:the deterministic wiki operations",
		} {
			words := strings.Fields(line)
			script := stub + "words=(" + strings.Join(words, " ") + "); CURRENT=" + strconv.Itoa(len(words)) + "; _prose"
			out, err := exec.Command(zsh, "-f", "-c", script).CombinedOutput()
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("zsh completes %q to %q (%v), want %q among them", line, out, err, want)
			}
		}
	} else if os.Getenv("CI") == "true" {
		t.Error("zsh is required under CI")
	}
}

// Every flag that takes a value names what the value is, in `prose … --help`
// and in the generated docs alike: never urfave/cli's bare "value" nor the
// docs' "VALUE" (the placeholder is the backquoted word of its Usage).
func TestEveryFlagNamesItsValue(t *testing.T) {
	inParallel(t)
	app := newApp(io.Discard, io.Discard)
	type owner struct {
		name  string
		flags []cli.Flag
	}
	owners := []owner{{"prose", app.Flags}}
	for _, n := range clidocs.Walk(app) {
		owners = append(owners, owner{n.Name("prose"), n.Cmd.Flags})
	}
	checked := 0
	for _, o := range owners {
		docs := clidocs.Flags(o.flags)
		for _, f := range o.flags {
			df, ok := f.(cli.DocGenerationFlag)
			if !ok || !df.TakesValue() || f == cli.HelpFlag {
				continue
			}
			checked++
			// The help line urfave/cli prints: "--name PLACEHOLDER\tusage".
			spelled, _, _ := strings.Cut(f.String(), "\t")
			if fields := strings.Fields(spelled); strings.EqualFold(fields[len(fields)-1], "value") {
				t.Errorf("%s --%s: help shows %q; name its value with a backquoted word in its usage (e.g. \"use `PROVIDER:NAME`\")", o.name, f.Names()[0], spelled)
			}
		}
		for _, d := range docs {
			if d.Value == "VALUE" {
				t.Errorf("%s: docs show %q; name its value with a backquoted word in its usage", o.name, d.Spelled())
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d flags that take a value; the walk over the command tree found too few", checked)
	}
}
