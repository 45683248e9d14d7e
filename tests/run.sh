#!/bin/bash
# tests/run.sh - the whole test suite: what the README's test command and
# CI (.ci/run) run.
#
#   bash tests/run.sh
#
# 1. as root, installs the Debian packages the build and the tests need
#    (among them qemu-utils, postgresql-15, redis-server and sqlite3, the
#    real programs of tests/e2e/realprog.test; skipped quickly when they
#    are all present) and mounts tracefs and
#    debugfs (bpftrace, the reference of the differential tests, needs them);
#    makes the Debian 13 chroot whose bpftrace 0.23.2 is the reference of
#    the newer language's tests (tests/lib/bpftrace-new, once per machine);
# 2. configures and builds ubt with meson + ninja in build/;
# 3. runs the unit tests (`meson test`), then again in build-san/ under
#    AddressSanitizer + UndefinedBehaviorSanitizer (UBT_SANITIZE=0 skips it);
# 4. checks the rooms' rules of src/ (tests/layers/check.py), .clang-format
#    on the lines the last commit changed (tests/format/check.py) and the
#    README's commands (tests/docs/commands.py), walks ubt's allocations
#    failing one by one under ASan (tests/failalloc: a third build,
#    ${BUILDDIR}-failalloc, of ubt alone), runs the
#    end-to-end tests (tests/e2e/run.py; again with the sanitized
#    ubt), the shared-memory fuzzer (tests/fuzz/shm_fuzz.py, sanitized ubt),
#    the site coverage report (bench/coverage.py), a short run of the
#    SPDK-shaped benchmark (bench/spdk_iops.py), the differential tests
#    (tests/diff) and the stress tests
#    (tests/stress/stress.py, fewer rounds than its defaults);
# 5. ends with one line `N passed, N failed` (`, N skipped`) summing all of
#    them, and exits non-zero if anything failed.
#
# Reads no standard input.  Environment: BUILDDIR (default build),
# UBT_SANITIZE (default 1), FORMAT_BASE (the commit the format check
# compares with, default HEAD~1), FAILALLOC_BUDGET (seconds, default 240),
# E2E_ARGS (extra arguments for tests/e2e/run.py),
# STRESS_CYCLES and STRESS_KILLS (rounds of tests/stress/stress.py),
# SHM_FUZZ_SEEDS (cases of tests/fuzz/shm_fuzz.py, default 60),
# UBT_UPSTREAM (a checkout of bpftrace at tag v0.17.0: its runtime tests
# run against ubt too, tests/upstream/run.sh; not run without it).

set -u
cd "$(dirname "$0")/.." || exit 2
exec </dev/null

BUILDDIR=${BUILDDIR:-build}
SANDIR=${BUILDDIR}-san
UBT_SANITIZE=${UBT_SANITIZE:-1}
PACKAGES="llvm-19-dev clang-19 libzydis-dev libelf-dev libdw-dev flex bison meson
ninja-build systemtap-sdt-dev bpftrace pkg-config python3 gcc g++ liburing-dev libaio-dev
clang-format-19"
# Debian's own programs traced by tests/real/realprog.test (tests/lib/realprog.py)
PACKAGES="$PACKAGES qemu-utils postgresql-15 redis-server sqlite3"
# libc's separate debug file: functions only it names (tests/e2e/lib.test), and
# bench/coverage.py's libc with debug symbols
PACKAGES="$PACKAGES libc6-dbg"
# makes the Debian 13 chroot of bpftrace 0.23.2, the reference of
# tests/e2e/newlang.test (tests/lib/bpftrace-new)
PACKAGES="$PACKAGES debootstrap"
# Go programs (tests/e2e/go.test, tests/progs/go)
PACKAGES="$PACKAGES golang-go"

passed=0 failed=0 skipped=0
log() { printf '== %s\n' "$*"; }
fail_step() { # a step that could not run counts as one failure
	printf 'FAIL  %s\n' "$*"
	failed=$((failed + 1))
}

install_packages() {
	local missing
	missing=$(dpkg-query -W -f='${Package} ${Status}\n' $PACKAGES 2>/dev/null |
		awk '$NF == "installed" { print $1 }' | sort |
		comm -13 - <(printf '%s\n' $PACKAGES | sort))
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		log "missing packages:" $missing
		log "installing them needs root: run 'bash tests/run.sh' as root, or 'sudo bash tests/run.sh'"
		return 0
	fi
	log "installing:" $missing
	export DEBIAN_FRONTEND=noninteractive
	timeout 900 apt-get update -q >/dev/null &&
		timeout 1200 apt-get install -y -q --no-install-recommends $PACKAGES >/dev/null ||
		log "apt-get failed; continuing with what is installed"
}

mount_tracing() {
	[ "$(id -u)" = 0 ] || return 0
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
	return 0
}

# meson_build DIR [meson options...]: configure (once) and build.
meson_build() {
	local dir=$1 out
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		out=$(meson setup "$dir" "$@" 2>&1) || {
			printf '%s\n' "$out"
			rm -rf "$dir"   # so that the next run configures again
			return 1
		}
	fi
	timeout 1200 ninja -C "$dir" || return 1
}

# unit_tests DIR LABEL: meson test, results added to the totals.
unit_tests() {
	local dir=$1 label=$2 json counts
	rm -f "$dir/meson-logs/testlog.json"
	timeout 900 meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2
	json="$dir/meson-logs/testlog.json"
	if [ ! -f "$json" ]; then
		log "$label: no unit tests registered yet"
		return 0
	fi
	counts=$(python3 - "$json" <<'EOF'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif r == "SKIP":
        s += 1
    else:
        f += 1
print(p, f, s)
EOF
)
	read -r p f s <<<"$counts"
	log "$label: $p passed, $f failed, $s skipped"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

install_packages
mount_tracing
# made here, once, rather than inside the first test that needs it
if [ "$(id -u)" = 0 ]; then
	log "bpftrace of Debian 13 (tests/lib/bpftrace-new): $(timeout 1200 tests/lib/bpftrace-new --version 2>&1 | tail -n 1)"
fi

log "build ($BUILDDIR)"
if meson_build "$BUILDDIR"; then
	log "unit tests"
	unit_tests "$BUILDDIR" "unit"
	if [ "$UBT_SANITIZE" = 1 ]; then
		log "unit tests under ASan+UBSan ($SANDIR)"
		if meson_build "$SANDIR" -Db_sanitize=address,undefined -Db_lundef=false \
			-Dbuildtype=debug; then
			ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
				UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
				unit_tests "$SANDIR" "unit (sanitizers)"
		else
			fail_step "sanitizer build ($SANDIR)"
		fi
	fi
else
	fail_step "build ($BUILDDIR): see the errors above"
fi

# suite LABEL TIMEOUT COMMAND...: runs a runner that writes `passed failed
# skipped` to the file given by --summary, and adds them to the totals.
suite() {
	local label=$1 limit=$2 summary
	shift 2
	log "$label"
	summary=$(mktemp)
	timeout "$limit" "$@" --summary "$summary"
	if read -r p f s <"$summary" 2>/dev/null && [ -n "$p" ]; then
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	else
		fail_step "$label: the runner did not finish"
	fi
	rm -f "$summary"
}

# The rooms' rules (docs/ARCHITECTURE.md's map): no file includes or calls
# what its room may not use; --self-test shows each kind of rule failing on a
# copy of the tree with one forbidden include or call added.
suite "rooms: includes and calls each room may use (tests/layers)" 120 \
	python3 tests/layers/check.py --self-test
# .clang-format on the lines changed since FORMAT_BASE (default: the last
# commit), C files of src/ and tools/; --self-test shows it failing on a
# misformatted change in a scratch repository.
suite "format: .clang-format on changed lines (tests/format)" 300 \
	python3 tests/format/check.py --self-test
suite "documentation: the README's commands as root and with sudo (tests/docs)" 120 \
	python3 tests/docs/commands.py
# ubt with ASan+UBSan and -Dfail_alloc=true: the Nth allocation fails, for
# N over a whole `-c` run; a clear error each time, the target untouched.
FADIR=${BUILDDIR}-failalloc
log "build of ubt with failing allocations ($FADIR)"
if { [ -f "$FADIR/build.ninja" ] || meson setup "$FADIR" -Db_sanitize=address,undefined \
	-Db_lundef=false -Dbuildtype=debug -Dfail_alloc=true >/dev/null; } &&
	timeout 1200 ninja -C "$FADIR" tools/ubt >/dev/null; then
	suite "failing allocations: each one ends ubt cleanly, the target untouched (tests/failalloc)" \
		"$(( ${FAILALLOC_BUDGET:-240} + 300 ))" python3 tests/failalloc/run.py \
		--tracer "$PWD/$FADIR/tools/ubt" --budget "${FAILALLOC_BUDGET:-240}"
else
	fail_step "failing-allocation build ($FADIR)"
fi
# shellcheck disable=SC2086
suite "e2e tests" 1800 python3 tests/e2e/run.py --builddir "$BUILDDIR" ${E2E_ARGS:-}
if [ "$UBT_SANITIZE" = 1 ] && [ -x "$SANDIR/tools/ubt" ]; then
	# the same tests with ubt itself built with ASan+UBSan, twice the time
	# limits (the sanitized ubt is slower to start; the runtime
	# injected into targets is never instrumented)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		suite "e2e tests, ubt under ASan+UBSan" 2700 python3 tests/e2e/run.py \
		--builddir "$BUILDDIR" --tracer "$PWD/$SANDIR/tools/ubt" --timeout-scale 2
fi
# A target scribbling on ubt's shared memory (random writes into every
# part, many seeds): ubt must end by itself with no sanitizer report and
# bounded output; with the sanitized ubt when there is one.
fuzz_tracer="$PWD/$BUILDDIR/tools/ubt"
[ "$UBT_SANITIZE" = 1 ] && [ -x "$SANDIR/tools/ubt" ] && fuzz_tracer="$PWD/$SANDIR/tools/ubt"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	suite "shared memory fuzzing: the target writes into ubt's memory (tests/fuzz/shm_fuzz.py)" 900 \
	python3 tests/fuzz/shm_fuzz.py --builddir "$BUILDDIR" --tracer "$fuzz_tracer" \
	--seeds "${SHM_FUZZ_SEEDS:-60}"
# Debian's own programs (qemu-io, postgres, redis-server, sqlite3), once, with
# the plain build: a real program's symbol tables under the sanitizer build
# would take most of the suite's time
suite "real programs (tests/real)" 1500 python3 tests/e2e/run.py --builddir "$BUILDDIR" \
	tests/real/realprog.test
# How many USDT locations and function entries of Debian's python3.11,
# libpython, libc (with and without libc6-dbg) and libstdc++ take a jump, and
# why the others would take a breakpoint (issue 18); fails only on a site
# ubt could not probe at all
suite "site coverage: jumps and breakpoints in real binaries (bench/coverage.py)" 300 \
	python3 bench/coverage.py --builddir "$BUILDDIR"
# The SPDK look-alike (bench/reactor.c) briefly under ubt and bpftrace
# (issue 18): each probed window must be covered by the tracer's own count
# and the 34-site script must count every probe; timings never fail it
suite "SPDK-shaped benchmark, short (bench/spdk_iops.py)" 300 \
	python3 bench/spdk_iops.py --builddir "$BUILDDIR" --pairs 2 --bpftrace-pairs 1 \
	--stop-runs 2 --window 0.3
suite "differential tests against bpftrace (tests/diff)" 1800 \
	python3 tests/diff/run.py --builddir "$BUILDDIR"
# Fewer rounds than the full run (python3 tests/stress/stress.py: 200 cycles, 50 kills).
suite "stress tests: attach/detach cycles and SIGKILLed ubt under load" 900 \
	python3 tests/stress/stress.py --builddir "$BUILDDIR" --cycles "${STRESS_CYCLES:-40}" \
	--kills "${STRESS_KILLS:-10}"

if [ -n "${UBT_UPSTREAM:-}" ]; then
	suite "bpftrace v0.17.0's runtime tests ($UBT_UPSTREAM)" 2400 \
		bash tests/upstream/run.sh "$UBT_UPSTREAM" --builddir "$BUILDDIR"
fi

log "total (unit + e2e + fuzz + diff + stress)"
line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ]
