#!/usr/bin/env bash
# tests/spdk/scripts/bpf/gen_enums.sh - a look-alike of SPDK's
# scripts/bpf/gen_enums.sh for ubt's tests: prints a BEGIN block that fills
# @target[] and @subsystem[] with the names of enum nvmf_tgt_state and enum
# spdk_nvmf_subsystem_state (prefixes dropped: @target[0] = "INIT_NONE"), and
# an END block that clears them, as SPDK appends to every program.  SPDK
# reads its lib/ sources; this reads tests/progs/spdk_like.c (or $SPDK_SRC).
set -e
src=${SPDK_SRC:-$(readlink -f "$(dirname "$0")/../../../progs/spdk_like.c")}

# enum_names MAP 'enum TAG {' PREFIX: `  @MAP[i] = "NAME";` per member
enum_names() {
	local map=$1 open=$2 prefix=$3
	awk -v open="$open" -v map="$map" -v prefix="$prefix" '
		$0 == open { inside = 1; i = 0; next }
		inside && /^}/ { exit }
		inside {
			gsub(/[ \t,]/, ""); sub(/=.*/, "")
			if ($0 == "") next
			if (index($0, prefix) != 1) { print "bad name " $0 > "/dev/stderr"; exit 1 }
			printf "  @%s[%d] = \"%s\";\n", map, i++, substr($0, length(prefix) + 1)
		}' "$src"
}

printf '\nBEGIN {\n'
enum_names target 'enum nvmf_tgt_state {' NVMF_TGT_
enum_names subsystem 'enum spdk_nvmf_subsystem_state {' SPDK_NVMF_SUBSYSTEM_
printf '}\nEND {\n  clear(@target);\n  clear(@subsystem);\n}\n'
