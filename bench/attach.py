#!/usr/bin/env python3
"""bench/attach.py - how long ubt keeps the target's threads stopped while
attaching and detaching ten probes, how much of ubt's memory is resident in
the target, and how long `ubt -c` takes from start to probes live.

    python3 bench/attach.py [--builddir build] [--runs 9]

Target: bench's `attach_target` (4 threads calling fn0..fn9 in hot loops).
For each run, `ubt -v -p PID` with one `count()` probe on each of the ten
functions; ubt -v reports the stop times, the driver takes medians.  Then
`ubt -c` on a program that exits at once, timed from exec to exit (the
probes are live before its main(), so this bounds start-to-live).
Budgets (DESIGN.md): <= 10 ms stopped for 10 probes, <= 100 ms to live,
<= 4 MiB resident in the target.
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from proc import ubt_rss_kb  # noqa: E402


def attach_once(ubt, target):
    script = " ".join("uprobe:%s:fn%d { @c%d = count(); }" % (target, i, i) for i in range(10))
    tp = subprocess.Popen([target], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        tp.stdout.readline()
        up = subprocess.Popen([ubt, "-v", "-p", str(tp.pid), "-e", script],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
        time.sleep(0.3)
        rss = ubt_rss_kb(tp.pid)
        up.send_signal(signal.SIGINT)
        out, err = up.communicate(timeout=30)
        a = re.search(r"threads stopped for ([0-9.]+) ms \((\d+) threads\)", err)
        d = re.search(r"threads stopped for ([0-9.]+) ms while detaching", err)
        counts = [int(x) for x in re.findall(r"@c\d: (\d+)", out)]
        if not a or not d or len(counts) != 10 or min(counts) == 0:
            raise SystemExit("unexpected ubt output:\n" + out + err)
        return float(a.group(1)), float(d.group(1)), int(a.group(2)), rss
    finally:
        os.killpg(tp.pid, signal.SIGKILL)
        tp.wait()


def start_once(ubt, prog):
    t0 = time.monotonic()
    r = subprocess.run([ubt, "-q", "-c", prog + " 1", "-e",
                        "uprobe:%s:f { @c = count(); }" % prog],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    dt = (time.monotonic() - t0) * 1000
    if "@c: 1" not in r.stdout:
        raise SystemExit("unexpected ubt output:\n" + r.stdout + r.stderr)
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    ubt = os.path.abspath(os.path.join(a.builddir, "tools", "ubt"))
    target = os.path.abspath(os.path.join(a.builddir, "bench", "attach_target"))
    loop = os.path.abspath(os.path.join(a.builddir, "tests", "progs", "prog_loop_O2_pie"))
    att, det, rss = [], [], []
    for _ in range(a.runs):
        x, y, n, r = attach_once(ubt, target)
        att.append(x)
        det.append(y)
        rss.append(r)
    starts = [start_once(ubt, loop) for _ in range(a.runs)]
    print("10 uprobes on a process with %d threads in hot loops, median of %d runs" % (n, a.runs))
    print("threads stopped while attaching   %7.2f ms  (budget 10 ms)" % statistics.median(att))
    print("threads stopped while detaching   %7.2f ms  (budget 10 ms)" % statistics.median(det))
    print("ubt's memory resident in the target %7d KiB (budget 4096 KiB)" % statistics.median(rss))
    print("ubt -c CMD, start to exit (probes live before main)  %7.1f ms  (budget 100 ms)"
          % statistics.median(starts))


if __name__ == "__main__":
    main()
