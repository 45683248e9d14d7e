#!/bin/sh
# nsids.sh - host ids of a process started by `unshare --pid --fork`,
# whose pid (unshare's) a test knows: with one argument, the host pid of
# unshare's child (the traced program); with a second, N, the host tid of
# its Nth thread (1: the main thread), as ps on the host shows them.
set -e
child=$(cat /proc/"$1"/task/"$1"/children)
child=${child% }
if [ -z "$2" ]; then
	echo "$child"
else
	ls /proc/"$child"/task | sort -n | sed -n "$2p"
fi
