# bash completion for prose; generated from the command tree, do not edit.
# Load it with: source <(prose completion bash)

_prose_commands() {
	case "$1" in
	"") echo "init check lint compile run trigger serve status inspect test upgrade graph id publish log receipts diff fsck cas ingest enrich wiki prompts programs doctor version completion help h clone push pull resolve remote merge-driver" ;;
	"cas") echo "put get has verify gc" ;;
	"programs") echo "list show" ;;
	"prompts") echo "list show" ;;
	"receipts") echo "cost list show verify" ;;
	"remote") echo "add list" ;;
	"wiki") echo "new write-slot append-slot set-meta read meta slot list-slots templates tree ls index find backlinks search lint rebuild stats mv rm commit review" ;;
	"wiki review") echo "list show take resolve" ;;
	esac
}

_prose_flags() {
	case "$1" in
	"") echo "--vault --json --quiet -q --no-color --model --record --lock-timeout" ;;
	"cas gc") echo "--root --everything" ;;
	"cas get") echo "--output -o" ;;
	"clone") echo "--origin" ;;
	"compile") echo "--activate --check --out" ;;
	"diff") echo "--node --facet --format --verbose" ;;
	"doctor") echo "--fix" ;;
	"enrich") echo "--model --purpose --audience --budget --record --model-timeout --all --template --limit --dry-run --estimate --max-tokens --jobs" ;;
	"graph") echo "--format" ;;
	"id") echo "--write -w --count -n" ;;
	"ingest") echo "--model --purpose --audience --budget --record --model-timeout --name --dry-run --into --force --max-tokens --estimate --jobs" ;;
	"init") echo "--hash --branch" ;;
	"inspect") echo "--receipts -n" ;;
	"log") echo "--node --rendered --limit -n" ;;
	"publish") echo "--spec --contract-fingerprint --changed --changed-from --allow-empty --verbose" ;;
	"pull") echo "--continue" ;;
	"push") echo "--dry-run -n" ;;
	"receipts cost") echo "--runs --node" ;;
	"receipts list") echo "--node" ;;
	"receipts verify") echo "--reactor" ;;
	"resolve") echo "--ours --theirs --slot --key --remote --render" ;;
	"run") echo "--all" ;;
	"serve") echo "--addr --queue" ;;
	"test") echo "--recursive -r" ;;
	"trigger") echo "--data" ;;
	"upgrade") echo "--dry-run -n" ;;
	"wiki append-slot") echo "--content -c --file -f --markdown -m" ;;
	"wiki lint") echo "--fix" ;;
	"wiki new") echo "--template -t --title --tag --meta" ;;
	"wiki read") echo "--html" ;;
	"wiki rebuild") echo "--search" ;;
	"wiki review list") echo "--all" ;;
	"wiki review take") echo "--force" ;;
	"wiki rm") echo "--unlink --force" ;;
	"wiki search") echo "--limit -n" ;;
	"wiki templates") echo "--palette" ;;
	"wiki write-slot") echo "--content -c --file -f --markdown -m" ;;
	esac
}

_prose_valued() {
	case "$1" in
	"") echo "--vault --model --record --lock-timeout" ;;
	"cas gc") echo "--root" ;;
	"cas get") echo "--output -o" ;;
	"clone") echo "--origin" ;;
	"compile") echo "--out" ;;
	"diff") echo "--node --facet --format" ;;
	"enrich") echo "--model --purpose --audience --budget --record --model-timeout --template --limit --max-tokens --jobs" ;;
	"graph") echo "--format" ;;
	"id") echo "--count -n" ;;
	"ingest") echo "--model --purpose --audience --budget --record --model-timeout --name --into --max-tokens --jobs" ;;
	"init") echo "--hash --branch" ;;
	"inspect") echo "--receipts -n" ;;
	"log") echo "--node --limit -n" ;;
	"publish") echo "--spec --contract-fingerprint --changed --changed-from" ;;
	"receipts cost") echo "--runs --node" ;;
	"receipts list") echo "--node" ;;
	"receipts verify") echo "--reactor" ;;
	"resolve") echo "--slot --key --remote" ;;
	"serve") echo "--addr --queue" ;;
	"trigger") echo "--data" ;;
	"wiki append-slot") echo "--content -c --file -f" ;;
	"wiki new") echo "--template -t --title --tag --meta" ;;
	"wiki search") echo "--limit -n" ;;
	"wiki write-slot") echo "--content -c --file -f" ;;
	esac
}

_prose() {
	local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" w i
	(( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
	for ((i = 1; i < COMP_CWORD; i++)); do
		w="${COMP_WORDS[i]}"
		[[ $w == -* ]] && continue
		[[ " $(_prose_commands "$path") " == *" $w "* ]] && path="${path:+$path }$w"
	done
	COMPREPLY=()
	if [[ " $(_prose_valued "$path") $(_prose_valued "") " == *" $prev "* && $cur != -* ]]; then
		return # a flag's value: file names
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_prose_flags "$path") $(_prose_flags "") --help" -- "$cur"))
	else
		local subs
		subs="$(_prose_commands "$path")"
		[[ -n $subs ]] && COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	fi
}
complete -o default -o bashdefault -F _prose prose
