#!/usr/bin/env python3
"""
run.py - ubt's allocations failing one at a time, under ASan and UBSan.

ubt built with -Dfail_alloc=true (and the sanitizers) fails the Nth call
of its allocation wrappers when UBT_FAIL_ALLOC=N (src/util/util.c).  This
runner traces a small program (target.c, built here without sanitizers)
with `ubt -c` and a script that compiles, attaches uprobes and uretprobes
and prints maps at the end, once per N, and checks for each N:

  - ubt ends by itself within the time limit, with status 0 (the Nth
    allocation never came, or fell on a path that copes), or with status
    1 and "ERROR: out of memory" on stderr: no signal, no sanitizer
    report (AddressSanitizer, LeakSanitizer, UBSan's "runtime error");
  - the target is untouched: either it never started (ubt failed before
    letting the command run: its main() never ran), or it runs to the end
    with its normal sum and exit status 3; when ubt ended before the
    target's loop did, the target finds, once ubt's watchdog is gone, its
    code equal to the file and no mapping of ubt's left;
  - nothing of the run is left behind (every process of its session ends).

N runs over 1..K, K being the number of allocations of a whole run
(UBT_FAIL_ALLOC=count): all of the first --first values, then a spread
of --samples more (a fixed pseudo-random choice, --seed), within a time
budget (--budget seconds; the values not reached are counted skipped).
LLVM's, libelf's and libdw's own allocations are not counted: they
allocate inside those libraries, not through ubt's wrappers.

Usage: tests/failalloc/run.py --tracer BUILD-FAILALLOC/tools/ubt
                              [--first 40] [--samples 60] [--budget 240]
                              [--seed 1] [--only N,...] [--summary FILE] [-v]
--summary writes "passed failed skipped" (tests/run.sh adds them up).
Exit status 0 when no N failed.
"""
import argparse
import ctypes
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from proc import session_members  # noqa: E402

CALLS = 2000
SUM = sum(3 * i + 1 for i in range(CALLS))
SANITIZER = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")
# Known defects, reported and not yet fixed: a failure whose ubt stderr
# matches is counted as skipped ("XFAIL") instead of failed.  Each entry:
# (regex over ubt's stderr, what it is).  Remove an entry with its fix.
KNOWN = [
    (re.compile(r"SEGV.*\n(?:.*\n)*?.*#0 .* in trap_site .*inject/patch\.c.*\n"
                r".*#1 .* in att_stop .*\n.*#2 .* in restore .*inject/watchdog\.c"),
     "-c: the watchdog is forked (session.c, att_open) before the sites are mapped "
     "shared (sites_alloc): when ubt dies after that, the watchdog crashes in "
     "trap_site and the target keeps ubt's mappings (sometimes its patches)"),
]
SCRIPT = """\
uprobe:{t}:work {{ @calls = count(); @by[arg0 % 4] = sum(arg0); }}
uretprobe:{t}:work {{ @ret = hist(retval); }}
END {{ printf("done\\n"); }}
"""


def subreaper():
    """Orphans of ubt (the -c target, the watchdog) become our children,
    so that their exit status can be read."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def reap(statuses):
    """Collects every exited child but ubt (already waited for)."""
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = st


def run_one(tracer, target, script, n, limit):
    """One run with UBT_FAIL_ALLOC=n; returns (problems, ubt status, stderr)."""
    env = dict(os.environ)
    if n is None:
        env.pop("UBT_FAIL_ALLOC", None)
    else:
        env["UBT_FAIL_ALLOC"] = str(n)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    p = subprocess.Popen([tracer, "-c", "%s %d" % (target, CALLS), script],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, start_new_session=True)
    sid = p.pid
    out, err = b"", b""
    fds = {p.stdout.fileno(): "out", p.stderr.fileno(): "err"}
    deadline = time.monotonic() + limit
    tpid = None           # the target's pid, from its "loop done" line
    ubt_done_first = None  # did ubt end before the target's loop did?
    statuses = {}
    problems = []
    while fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(fds), [], [], 0.05)
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                del fds[fd]
            elif fds[fd] == "out":
                out += data
            else:
                err += data
        if p.poll() is not None:
            reap(statuses)
        if tpid is None:
            m = re.search(rb"target (\d+): loop done", out)
            if m:
                tpid = int(m.group(1))
                ubt_done_first = p.poll() is not None
        if tpid is not None and not p.stdin.closed:
            # let the target check itself once only it is left of the run
            # (ubt and its watchdog gone), or at once while ubt traces it
            others = [q for q, _ in session_members(sid) if q != tpid]
            if not ubt_done_first or not others:
                p.stdin.close()
    hung = bool(fds)
    if hung:
        problems.append("hang: still running after %ds" % limit)
    while time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    # what is left of the session (a -c target, a watchdog) gets a moment
    while time.monotonic() < deadline and session_members(sid):
        reap(statuses)
        time.sleep(0.05)
    left = session_members(sid)
    if left:
        problems.append("left running: %s" % ", ".join("%d (%s)" % x for x in left))
        try:
            os.killpg(sid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not p.stdin.closed:
        p.stdin.close()
    p.wait()
    time.sleep(0.01)
    reap(statuses)
    out_s = out.decode(errors="replace")
    err_s = err.decode(errors="replace")

    rc = p.returncode
    if rc < 0:
        problems.append("ubt killed by signal %d" % -rc)
    elif rc not in (0, 1):
        problems.append("ubt exit status %d" % rc)
    elif rc == 1 and "ERROR: out of memory" not in err_s:
        problems.append("ubt exit status 1 without 'ERROR: out of memory'")
    if SANITIZER.search(err_s):
        summary = re.search(r"SUMMARY: (.*)", err_s)
        problems.append("sanitizer report: %s" % (summary.group(1) if summary else "?"))
    m = re.search(r"target (\d+): sum=(\d+) traced=(\d) code_changed=(\d) ubt_mappings=(\d+)",
                  out_s)
    started = re.search(r"target \d+: started", out_s)
    if not m and started:
        problems.append("the target started but did not finish")
    elif not m and rc == 0:
        problems.append("ubt succeeded but the target never started")
    elif not m:
        pass  # ubt failed before the command ran
    else:
        if int(m.group(2)) != SUM:
            problems.append("the target's sum is %s, want %d" % (m.group(2), SUM))
        if ubt_done_first and m.group(3, 4, 5) != ("0", "0", "0"):
            problems.append("ubt ended first but the target was not restored "
                            "(traced=%s code_changed=%s ubt_mappings=%s)" % m.group(3, 4, 5))
        st = statuses.get(int(m.group(1)))
        if st is not None and not (os.WIFEXITED(st) and os.WEXITSTATUS(st) == 3):
            problems.append("the target's status is %#x, want exit 3" % st)
    if rc == 0 and n is None and "@calls: %d" % CALLS not in out_s:
        problems.append("no @calls: %d in ubt's output" % CALLS)
    return problems, rc, err_s, out_s


def count_allocations(tracer, target, script, limit):
    env = dict(os.environ, UBT_FAIL_ALLOC="count",
               ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1")
    r = subprocess.run([tracer, "-c", "%s %d" % (target, CALLS), script], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=limit,
                       start_new_session=True)
    found = re.findall(rb"ubt: (\d+) allocations", r.stderr)
    if not found:
        raise RuntimeError("%s does not count allocations: not a -Dfail_alloc=true build?\n%s"
                           % (tracer, r.stderr.decode(errors="replace")))
    return max(int(x) for x in found)


def choose(k, first, samples, seed):
    ns = list(range(1, min(k, first) + 1))
    rest = list(range(first + 1, k + 1))
    random.Random(seed).shuffle(rest)
    return ns + sorted(rest[:samples])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tracer", required=True, help="ubt built with -Dfail_alloc=true")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--first", type=int, default=40, help="every N up to this")
    ap.add_argument("--samples", type=int, default=60, help="N chosen beyond --first")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=240, help="seconds for all runs")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per run")
    ap.add_argument("--only", help="comma-separated N to run (no counting run)")
    ap.add_argument("--summary", help='write "passed failed skipped" here')
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    passed = failed = skipped = 0
    tmp = tempfile.mkdtemp(prefix="ubt-failalloc-")
    try:
        subreaper()
        target = os.path.join(tmp, "target")
        subprocess.run([a.cc, "-O2", "-g", "-o", target, os.path.join(HERE, "target.c")],
                       check=True)
        script = os.path.join(tmp, "trace.bt")
        with open(script, "w") as f:
            f.write(SCRIPT.format(t=target))
        start = time.monotonic()
        # the run without a failure first: the test itself must pass
        problems, rc, err, out = run_one(a.tracer, target, script, None, a.timeout)
        if problems or rc != 0:
            print("FAIL  no failing allocation: %s" % "; ".join(problems or ["status %d" % rc]))
            print(err[-3000:])
            failed += 1
            ns = []
        else:
            passed += 1
            if a.only:
                ns = [int(x) for x in a.only.split(",")]
            else:
                k = count_allocations(a.tracer, target, script, a.timeout)
                ns = choose(k, a.first, a.samples, a.seed)
                print("%d allocations in a whole run; N = 1..%d and %d more" %
                      (k, min(k, a.first), len(ns) - min(k, a.first)))
        seen_known = set()
        for i, n in enumerate(ns):
            if time.monotonic() - start > a.budget:
                skipped += len(ns) - i
                print("budget of %ds spent: %d values of N not run" % (a.budget, len(ns) - i))
                break
            problems, rc, err, out = run_one(a.tracer, target, script, n, a.timeout)
            known = [i for i, (rx, _) in enumerate(KNOWN) if rx.search(err)]
            if problems and known:
                skipped += 1
                seen_known.add(known[0])
                print("XFAIL N=%d: %s (known defect %d)" % (n, "; ".join(problems), known[0] + 1))
            elif problems:
                failed += 1
                print("FAIL  N=%d: %s" % (n, "; ".join(problems)))
                print("  ubt's stderr (end):\n" + "\n".join(
                    "    " + x for x in err[-4000:].splitlines()))
            else:
                passed += 1
                if a.verbose:
                    print("ok    N=%d: status %d%s" % (n, rc, ", out of memory"
                                                        if "out of memory" in err else ""))
        for i in sorted(seen_known):
            print("known defect %d: %s" % (i + 1, KNOWN[i][1]))
        print("%d passed, %d failed%s (%.0fs)" % (passed, failed,
              ", %d skipped" % skipped if skipped else "", time.monotonic() - start))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if a.summary:
            with open(a.summary, "w") as f:
                f.write("%d %d %d\n" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
