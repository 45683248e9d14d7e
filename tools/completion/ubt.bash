# bash completion for ubt (installed as DATADIR/bash-completion/completions/ubt;
# to try it from a source tree: `source tools/completion/ubt.bash`).
#
# Completes options and their values (-p: process ids, -d/--dump/-f/-B: the
# accepted words (after -d, the stages as well as script files: `-d` alone
# is bpftrace's dry run), -o/-I/--include: files), script files, and probe
# names:
# after `-e '` or `-l `, a word like `uprobe:./prog:ha` or `usdt:./prog:`
# completes from `ubt -l 'uprobe:./prog:*'`, and with `-p PID` on the line
# from `ubt -l -p PID` (bpftrace's listing, as SPDK's gen.py reads it).

_ubt_opts="-e -p -c -l -v -q -o -f -B -d -dd --dump --dry-run --info -h --help -V --version
-k -kk --unsafe --usdt-file-activation --no-warnings -b --btf -I --include"

# the stages of -d STAGE and --dump STAGE (tools/ubt_args.c dump_stages)
_ubt_stages="ast types ir asm sites link rsys"

# _ubt_probes UBT PID CUR: probe names starting with CUR
_ubt_probes() {
	local ubt=$1 pid=$2 cur=$3 type rest bin
	type=${cur%%:*}
	rest=${cur#*:}
	if [[ $cur != *:* ]]; then
		compgen -W "uprobe: uretprobe: usdt: BEGIN END" -- "$cur"
		return
	fi
	if [[ -n $pid && $pid =~ ^[0-9]+$ ]]; then
		"$ubt" -l -p "$pid" 2>/dev/null | sed -n "s/^uprobe:/$type:/p; /^usdt:/p" |
			grep -F -- "$cur" | grep -- "^$type:" | grep -F -x -v -- "$cur"
		[[ $rest == *:* ]] && return
	fi
	if [[ $rest != *:* ]]; then
		# the binary: files, then a ':' after a complete one
		local f
		for f in $(compgen -f -- "$rest"); do
			if [[ -d $f ]]; then
				echo "$type:$f/"
			else
				echo "$type:$f:"
			fi
		done
		return
	fi
	bin=${rest%%:*}
	case $type in
	u | uprobe | ur | uretprobe) "$ubt" -l "uprobe:$bin:*" 2>/dev/null | sed "s/^uprobe:/$type:/" ;;
	U | usdt) "$ubt" -l "usdt:$bin:*" 2>/dev/null | sed "s/^usdt:/$type:/" ;;
	esac | grep -F -- "$cur"
}

_ubt() {
	local cur prev words cword ubt pid i
	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n : cur prev words cword
	else
		words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi
	ubt=${words[0]}
	for ((i = 1; i < cword; i++)); do
		[[ ${words[i]} == -p ]] && pid=${words[i + 1]}
	done

	case $prev in
	-p)
		COMPREPLY=($(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur"))
		return ;;
	-c) COMPREPLY=($(compgen -c -- "$cur")); return ;;
	--dump) COMPREPLY=($(compgen -W "$_ubt_stages" -- "$cur")); return ;;
	-d)
		[[ $cur == -* ]] && { COMPREPLY=($(compgen -W "$_ubt_opts" -- "$cur")); return; }
		COMPREPLY=($(compgen -W "$_ubt_stages" -- "$cur") $(compgen -f -X '!*.bt' -- "$cur"))
		return ;;
	-f) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
	-B) COMPREPLY=($(compgen -W "none line full" -- "$cur")); return ;;
	-o | --include) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-I) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-e | -l)
		local q=${cur%%[!\'\"]*}
		COMPREPLY=($(_ubt_probes "$ubt" "$pid" "${cur#$q}"))
		COMPREPLY=("${COMPREPLY[@]/#/$q}")
		[[ ${COMPREPLY[0]} == *: || ${COMPREPLY[0]} == */ ]] && compopt -o nospace 2>/dev/null
		declare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions "$cur"
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$_ubt_opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -X '!*.bt' -- "$cur") $(compgen -d -- "$cur"))
	fi
}
complete -F _ubt ubt
