#!/bin/bash
# tests/upstream/run.sh PATH [options] - bpftrace v0.17.0's runtime tests
# (PATH: a checkout of bpftrace at that tag) run with ubt standing in for
# bpftrace.  What is selected, how tests are rewritten and how results are
# counted: tests/upstream/run.py (--help).
exec python3 "$(dirname "$0")/run.py" "$@"
