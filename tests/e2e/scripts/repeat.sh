#!/bin/sh
# repeat.sh N CMD [ARG...] - runs CMD N times with its output discarded;
# stops at the first run that fails (printing its exit code), else prints
# `N runs`.  For tests that a tracer leaves its target alive run after run.
n=$1
shift
i=0
while [ "$i" -lt "$n" ]; do
	"$@" > /dev/null 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "run $((i + 1)) exited $rc"
		exit 1
	fi
	i=$((i + 1))
done
echo "$n runs"
