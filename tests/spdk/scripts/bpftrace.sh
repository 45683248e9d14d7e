#!/usr/bin/env bash
# tests/spdk/scripts/bpftrace.sh - a look-alike of SPDK's scripts/bpftrace.sh,
# written for ubt's tests (SPDK itself is not needed): the interface and the
# calls it makes are SPDK's, so a test that runs it exercises the path SPDK
# developers use.
#
#   bpftrace.sh PID SCRIPT...
#
# Generates the program with bpf/gen.py (which runs `bpftrace -l -p PID` to
# find where each probe lives and substitutes __EXE__ and __PID__), appends
# the BEGIN/END blocks of bpf/gen_enums.sh, and runs
# `bpftrace -p PID -e PROGRAM`, with `-o FILE` when BPF_OUTFILE is set.
# ECHO_SCRIPT=1 prints the program first.  Whichever `bpftrace` is first on
# PATH runs: put ubt's bpftrace directory first to use ubt.
set -e

if (($# < 2)); then
	echo "usage: $0 PID SCRIPT..." >&2
	echo "BPF_OUTFILE=FILE writes the results to FILE instead of stdout" >&2
	exit 1
fi
here=$(readlink -f "$(dirname "$0")")
pid=$1
shift
program=$("$here/bpf/gen.py" -p "$pid" "$@")
program+=$("$here/bpf/gen_enums.sh")
[[ -n ${ECHO_SCRIPT:-} ]] && printf '%s\n' "$program"
bpftrace -p "$pid" -e "$program" ${BPF_OUTFILE:+-o "$BPF_OUTFILE"}
