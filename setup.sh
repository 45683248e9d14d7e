#!/bin/bash
# setup.sh - install what ubt needs, build it, and trace the demo program.
#
#   bash setup.sh          as root (no sudo needed)
#   sudo bash setup.sh     as a user with sudo
#
# Installs the Debian 12 packages (apt-get, as root), builds with meson and
# ninja into build/, then runs the README's demo: ubt counts the calls of
# handle_request() in examples/demo.c's program per request kind, and sums
# their sizes.
set -eu
cd "$(dirname "$0")"
exec </dev/null

PACKAGES="llvm-19-dev clang-19 libzydis-dev libelf-dev libdw-dev flex bison meson
ninja-build systemtap-sdt-dev pkg-config python3 gcc liburing-dev libaio-dev"

missing=$(dpkg-query -W -f='${Package} ${Status}\n' $PACKAGES 2>/dev/null |
	awk '$NF == "installed" { print $1 }' | sort |
	comm -13 - <(printf '%s\n' $PACKAGES | sort))
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup.sh: missing Debian packages:" $missing >&2
		echo "setup.sh: installing them needs root; run this instead:" >&2
		if command -v sudo >/dev/null 2>&1; then
			echo "    cd $(printf %q "$PWD") && sudo bash setup.sh" >&2
		else
			echo "    su -c 'cd $(printf %q "$PWD") && bash setup.sh'    (asks for root's password)" >&2
			echo "or, logged in as root:  cd $(printf %q "$PWD") && bash setup.sh" >&2
		fi
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends $PACKAGES
fi

[ -f build/build.ninja ] || meson setup build
ninja -C build

demo=./build/tests/demo
echo
echo "\$ ./build/tools/ubt -c $demo -e 'uprobe:$demo:handle_request { @requests[arg1] = count(); @bytes[arg1] = sum(arg2); }'"
./build/tools/ubt -c "$demo" \
	-e "uprobe:$demo:handle_request { @requests[arg1] = count(); @bytes[arg1] = sum(arg2); }"
