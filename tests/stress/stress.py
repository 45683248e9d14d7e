#!/usr/bin/env python3
"""tests/stress/stress.py - ubt must never hurt the process it traces.

    python3 tests/stress/stress.py [--builddir build] [--cycles 200] [--kills 50]
                                   [--summary FILE]

Target: tests/progs' hammer (worker threads calling f() in endless loops
and checking every result).  Two experiments, each a number of cases:

  cycles   attach ubt with -p, let the probe count for a moment, detach with
           SIGINT; after every detach the bytes of f in the target must equal
           the bytes before the first attach, ubt's count must be > 0, and the
           target must still run.
  kills    attach ubt, then SIGKILL it at a random moment (while attaching,
           while attached, while detaching); ubt's watchdog must restore the
           target: f's bytes equal the original, ubt's memory is gone from
           /proc/PID/maps, and a new ubt attaches and counts afterwards.

At the end the target is stopped with SIGTERM and must report `bad 0`
(no wrong result from f ever) and exit 0.  Prints one line per case that
fails, a table of figures, and `N passed, N failed`.  CI runs fewer rounds
(tests/run.sh); the full counts are the defaults.
"""

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time


def read_bytes(pid, addr, n=16):
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as f:
        f.seek(addr)
        return f.read(n)


def ubt_maps(pid):
    try:
        with open("/proc/%d/maps" % pid) as f:
            return sum(1 for line in f if "memfd:ubt" in line)
    except FileNotFoundError:
        return -1  # the target is gone


class Target:
    def __init__(self, prog, threads=2):
        self.p = subprocess.Popen([prog, str(threads)], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        line = self.p.stdout.readline()
        m = re.match(r"ready (\d+) f=(0x[0-9a-f]+)", line)
        if not m:
            raise SystemExit("hammer did not start: %r" % line)
        self.pid = int(m.group(1))
        self.f = int(m.group(2), 16)
        self.orig = read_bytes(self.pid, self.f)

    def alive(self):
        return self.p.poll() is None

    def finish(self):
        self.p.send_signal(signal.SIGTERM)
        out, _ = self.p.communicate(timeout=30)
        return self.p.returncode, out


def start_ubt(ubt, pid, prog):
    return subprocess.Popen([ubt, "-p", str(pid), "-e",
                             'BEGIN { printf("live\\n"); } uprobe:%s:f { @c = count(); }' % prog],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_line(p, want, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            return False
        if line.strip() == want:
            return True
    return False


def wait_watchdog(pid, timeout=10):
    """After ubt died: wait until its memory is gone from the target."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = ubt_maps(pid)
        if n == 0:
            return True
        if n < 0:
            return False
        time.sleep(0.02)
    return False


def session_gone(p, timeout=10):
    """Waits until no process of ubt's session (the watchdog) is left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def cycles(ubt, prog, n, fails, figures):
    t = Target(prog)
    for i in range(n):
        u = start_ubt(ubt, t.pid, prog)
        ok = wait_line(u, "live")
        time.sleep(random.uniform(0.0, 0.05))
        u.send_signal(signal.SIGINT)
        out, err = u.communicate(timeout=30)
        m = re.search(r"@c: (\d+)", out)
        now = read_bytes(t.pid, t.f) if t.alive() else None
        problems = []
        if not ok or u.returncode != 0 or not m:
            problems.append("ubt failed (rc %s): %s" % (u.returncode, err.strip()[-300:]))
        if not t.alive():
            problems.append("target died (status %s)" % t.p.returncode)
            fails.append("cycle %d: %s" % (i, "; ".join(problems)))
            figures["target crashes or wrong results"] += 1
            return
        elif now != t.orig:
            problems.append("f's bytes not restored: %s" % now.hex())
            figures["bytes left modified"] += 1
        if problems:
            fails.append("cycle %d: %s" % (i, "; ".join(problems)))
        figures["attach/detach cycles"] += 1
    rc, out = t.finish()
    if rc != 0 or " bad 0" not in out:
        fails.append("cycles: target reported %r (rc %d)" % (out.strip(), rc))
        figures["target crashes or wrong results"] += 1


def kills(ubt, prog, n, fails, figures):
    t = Target(prog)
    for i in range(n):
        u = start_ubt(ubt, t.pid, prog)
        # anywhere from before the attach completes to well after it; half
        # of the kills fall in the first 40 ms, where attaching happens
        time.sleep(random.uniform(0.0, 0.04 if i % 2 else 0.15))
        try:
            os.kill(u.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        u.communicate(timeout=30)
        problems = []
        if not session_gone(u) or not wait_watchdog(t.pid):
            problems.append("ubt's memory still mapped in the target")
            figures["memory left mapped"] += 1
        if not t.alive():
            problems.append("target died (status %s)" % t.p.returncode)
            fails.append("kill %d: %s" % (i, "; ".join(problems)))
            figures["target crashes or wrong results"] += 1
            return
        if read_bytes(t.pid, t.f) != t.orig:
            problems.append("f's bytes not restored")
            figures["bytes left modified"] += 1
        # a new ubt must be able to attach and count
        u2 = start_ubt(ubt, t.pid, prog)
        ok = wait_line(u2, "live")
        time.sleep(0.02)
        u2.send_signal(signal.SIGINT)
        out, err = u2.communicate(timeout=30)
        m = re.search(r"@c: (\d+)", out)
        if not ok or not m or int(m.group(1)) == 0:
            problems.append("re-attach failed: %s" % (out + err).strip()[-300:])
        if problems:
            fails.append("kill %d: %s" % (i, "; ".join(problems)))
        figures["ubt killed with SIGKILL"] += 1
    rc, out = t.finish()
    if rc != 0 or " bad 0" not in out:
        fails.append("kills: target reported %r (rc %d)" % (out.strip(), rc))
        figures["target crashes or wrong results"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--summary")
    a = ap.parse_args()
    ubt = os.path.abspath(os.path.join(a.builddir, "tools", "ubt"))
    prog = os.path.abspath(os.path.join(a.builddir, "tests", "progs", "prog_hammer_O2_pie"))
    figures = {k: 0 for k in ("attach/detach cycles", "ubt killed with SIGKILL",
                              "target crashes or wrong results", "bytes left modified",
                              "memory left mapped")}
    fails = []
    cycles(ubt, prog, a.cycles, fails, figures)
    kills(ubt, prog, a.kills, fails, figures)
    for f in fails:
        print("FAIL", f)
    for k, v in figures.items():
        print("%-36s %d" % (k, v))
    cases = a.cycles + a.kills
    nfail = min(len(fails), cases)
    print("%d passed, %d failed" % (cases - nfail, nfail))
    if a.summary:
        with open(a.summary, "w") as f:
            f.write("%d %d 0\n" % (cases - nfail, nfail))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
