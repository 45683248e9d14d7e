#!/bin/sh
# tests/spdk/as-bpftrace.sh TRACER COMMAND [ARG...] - runs COMMAND with
# `bpftrace` on PATH meaning TRACER, for the e2e tests of SPDK's workflow
# (tests/e2e/spdk.test), whose {ubt} is either ubt or, in the differential
# run, the real bpftrace:
#   TRACER = .../bpftrace         PATH unchanged: the real bpftrace runs
#   TRACER = BUILDDIR/tools/ubt   BUILDDIR/tools/bpftrace-compat goes first
#                                 on PATH: ubt's bpftrace wrapper runs
# Exits 2 if `bpftrace` would not be the wanted one.
set -eu
tracer=$1
shift
case $tracer in
*/bpftrace | bpftrace)
	want=$(command -v "$tracer") ;;
*)
	dir=$(dirname "$tracer")/bpftrace-compat
	PATH=$dir:$PATH
	export PATH
	want=$dir/bpftrace ;;
esac
if [ "$(command -v bpftrace)" != "$want" ]; then
	echo "as-bpftrace.sh: bpftrace on PATH is $(command -v bpftrace), not $want" >&2
	exit 2
fi
exec "$@"
