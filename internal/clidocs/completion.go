package clidocs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Shells are the shells Completion writes scripts for.
var Shells = []string{"bash", "fish", "zsh"}

// Completion renders the completion script of the tree for shell: command
// and subcommand names, and each command's flags after a "-". Where no
// command or flag is due (a command's arguments, a flag's value), the shell
// completes file names.
func Completion(app *cli.App, shell string) (string, error) {
	t := tree(app)
	switch shell {
	case "bash":
		return bash(app.Name, t), nil
	case "zsh":
		return zsh(app.Name, t), nil
	case "fish":
		return fish(app.Name, t), nil
	}
	return "", fmt.Errorf("no completion for shell %q (choose one of %s)", shell, strings.Join(Shells, ", "))
}

// level is what may follow one command path ("" is the program itself).
type level struct {
	path  string
	subs  []entry // subcommand names (aliases too) and their usage
	flags []Flag
}

type entry struct{ name, usage string }

func tree(app *cli.App) []level {
	root := level{path: "", flags: Flags(app.Flags)}
	for _, c := range Visible(app.Commands) {
		root.subs = append(root.subs, names(c)...)
	}
	out := []level{root}
	var known = map[string]bool{}
	for _, n := range Walk(app) {
		for _, p := range aliasPaths(app, n) {
			if known[p] {
				continue
			}
			known[p] = true
			l := level{path: p, flags: Flags(n.Cmd.Flags)}
			for _, s := range Visible(n.Cmd.Subcommands) {
				l.subs = append(l.subs, names(s)...)
			}
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func names(c *cli.Command) []entry {
	out := []entry{{c.Name, firstSentence(c.Usage)}}
	for _, a := range c.Aliases {
		out = append(out, entry{a, firstSentence(c.Usage)})
	}
	return out
}

// aliasPaths is every spelling of a command's path, aliases included.
func aliasPaths(app *cli.App, n Node) []string {
	paths := []string{""}
	cmds := app.Commands
	for _, name := range n.Path {
		var c *cli.Command
		for _, x := range cmds {
			if x.Name == name {
				c = x
			}
		}
		var next []string
		for _, p := range paths {
			for _, e := range names(c) {
				next = append(next, strings.TrimSpace(p+" "+e.name))
			}
		}
		paths, cmds = next, c.Subcommands
	}
	return paths
}

func flagWords(fl []Flag, valued bool) []string {
	var out []string
	for _, f := range fl {
		if valued && f.Value == "" {
			continue
		}
		for _, n := range f.Names {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	return out
}

func bash(app string, t []level) string {
	var b strings.Builder
	fn := "_" + strings.ReplaceAll(app, "-", "_")
	must(&b, "# bash completion for %s; generated from the command tree, do not edit.\n", app)
	must(&b, "# Load it with: source <(%s completion bash)\n\n", app)
	must(&b, "%s_commands() {\n\tcase \"$1\" in\n", fn)
	for _, l := range t {
		if len(l.subs) > 0 {
			var ws []string
			for _, e := range l.subs {
				ws = append(ws, e.name)
			}
			must(&b, "\t%q) echo %q ;;\n", l.path, strings.Join(ws, " "))
		}
	}
	b.WriteString("\tesac\n}\n\n")
	must(&b, "%s_flags() {\n\tcase \"$1\" in\n", fn)
	for _, l := range t {
		if len(l.flags) > 0 {
			must(&b, "\t%q) echo %q ;;\n", l.path, strings.Join(flagWords(l.flags, false), " "))
		}
	}
	b.WriteString("\tesac\n}\n\n")
	must(&b, "%s_valued() {\n\tcase \"$1\" in\n", fn)
	for _, l := range t {
		if v := flagWords(l.flags, true); len(v) > 0 {
			must(&b, "\t%q) echo %q ;;\n", l.path, strings.Join(v, " "))
		}
	}
	b.WriteString("\tesac\n}\n\n")
	must(&b, `%[1]s() {
	local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" w i
	(( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
	for ((i = 1; i < COMP_CWORD; i++)); do
		w="${COMP_WORDS[i]}"
		[[ $w == -* ]] && continue
		[[ " $(%[1]s_commands "$path") " == *" $w "* ]] && path="${path:+$path }$w"
	done
	COMPREPLY=()
	if [[ " $(%[1]s_valued "$path") $(%[1]s_valued "") " == *" $prev "* && $cur != -* ]]; then
		return # a flag's value: file names
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(%[1]s_flags "$path") $(%[1]s_flags "") --help" -- "$cur"))
	else
		local subs
		subs="$(%[1]s_commands "$path")"
		[[ -n $subs ]] && COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	fi
}
complete -o default -o bashdefault -F %[1]s %[2]s
`, fn, app)
	return b.String()
}

// zsh keys its tables by path, "." for the program itself.
func zshKey(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func zsh(app string, t []level) string {
	var b strings.Builder
	fn := "_" + strings.ReplaceAll(app, "-", "_")
	must(&b, "#compdef %s\n# zsh completion for %s; generated from the command tree, do not edit.\n", app, app)
	must(&b, "# Install it as _%s in a directory of $fpath, or load it with: source <(%s completion zsh)\n\n", app, app)
	must(&b, "typeset -gA %[1]s_subs %[1]s_flags %[1]s_valued\n", fn)
	for _, l := range t {
		k := zshQuote(zshKey(l.path))
		if len(l.subs) > 0 {
			var ws []string
			for _, e := range l.subs {
				ws = append(ws, strings.ReplaceAll(e.name, ":", `\:`)+":"+e.usage)
			}
			must(&b, "%s_subs+=(%s %s)\n", fn, k, zshQuote(strings.Join(ws, "\n")))
		}
		if len(l.flags) > 0 {
			var ws []string
			for _, f := range l.flags {
				for _, n := range flagWords([]Flag{{Names: f.Names[:1]}}, false) {
					ws = append(ws, n+":"+firstSentence(f.Usage))
				}
				for _, n := range flagWords([]Flag{{Names: f.Names[1:]}}, false) {
					ws = append(ws, n+":"+firstSentence(f.Usage))
				}
			}
			must(&b, "%s_flags+=(%s %s)\n", fn, k, zshQuote(strings.Join(ws, "\n")))
		}
		if v := flagWords(l.flags, true); len(v) > 0 {
			must(&b, "%s_valued+=(%s %s)\n", fn, k, zshQuote(" "+strings.Join(v, " ")+" "))
		}
	}
	must(&b, `
%[1]s() {
	local p="" w i
	local -a items
	for ((i = 2; i < CURRENT; i++)); do
		w=${words[i]}
		[[ $w == -* ]] && continue
		if [[ -n ${%[1]s_subs[${p:-.}]} ]]; then
			items=(${(f)%[1]s_subs[${p:-.}]})
			(( ${items[(I)${w}:*]} )) && p="${p:+$p }$w"
		fi
	done
	if [[ ${%[1]s_valued[${p:-.}]}${%[1]s_valued[.]} == *" ${words[CURRENT-1]} "* && ${words[CURRENT]} != -* ]]; then
		_files
		return
	fi
	if [[ ${words[CURRENT]} == -* ]]; then
		items=(${(f)%[1]s_flags[${p:-.}]})
		[[ -n $p ]] && items+=(${(f)%[1]s_flags[.]})
		items+=('--help:show help')
		_describe -t flags flag items
	elif [[ -n ${%[1]s_subs[${p:-.}]} ]]; then
		items=(${(f)%[1]s_subs[${p:-.}]})
		_describe -t commands command items
	else
		_files
	fi
}

if [[ "${funcstack[1]}" == %[1]s ]]; then
	%[1]s "$@"
else
	compdef %[1]s %[2]s
fi
`, fn, app)
	return b.String()
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func fish(app string, t []level) string {
	var b strings.Builder
	fn := "__" + strings.ReplaceAll(app, "-", "_")
	must(&b, "# fish completion for %s; generated from the command tree, do not edit.\n", app)
	must(&b, "# Install it as ~/.config/fish/completions/%s.fish, or load it with: %s completion fish | source\n\n", app, app)
	var paths []string
	for _, l := range t {
		if l.path != "" {
			paths = append(paths, fishQuote(l.path))
		}
	}
	must(&b, "set -g %s_paths %s\n\n", fn, strings.Join(paths, " "))
	must(&b, `function %[1]s_path
	set -l path
	set -l toks (commandline -opc)
	for t in $toks[2..-1]
		string match -q -- '-*' $t; and continue
		set -l cand (string join ' ' $path $t)
		contains -- "$cand" $%[1]s_paths; and set path $path $t
	end
	string join ' ' $path
end

function %[1]s_at
	set -l p (%[1]s_path)
	test "$p" = "$argv[1]"
end

complete -c %[2]s -l help -d 'show help'
`, fn, app)
	for _, l := range t {
		cond := fishQuote(fn + "_at " + fishQuote(l.path))
		for _, e := range l.subs {
			must(&b, "complete -c %s -f -n %s -a %s -d %s\n", app, cond, fishQuote(e.name), fishQuote(e.usage))
		}
		for _, f := range l.flags {
			line := "complete -c " + app
			if l.path != "" {
				line += " -n " + cond
			}
			for _, n := range f.Names {
				if len(n) == 1 {
					line += " -s " + n
				} else {
					line += " -l " + n
				}
			}
			if f.Value != "" {
				line += " -r"
			}
			line += " -d " + fishQuote(firstSentence(f.Usage))
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
