#!/bin/sh
# repeat.sh N REGEX CMD [ARG...] - runs CMD N times; each run must exit 0
# and print a line matching REGEX (grep -E), e.g. the target's own last
# words, which a target killed during the trace never prints.  Stops at the
# first run that does not (saying why), else prints `N runs`.
n=$1
re=$2
shift 2
i=0
while [ "$i" -lt "$n" ]; do
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || ! printf '%s\n' "$out" | grep -Eq "$re"; then
		echo "run $((i + 1)): exit $rc, output:"
		printf '%s\n' "$out" | tail -5
		exit 1
	fi
	i=$((i + 1))
done
echo "$n runs"
