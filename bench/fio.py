#!/usr/bin/env python3
"""bench/fio.py - what a probe on fio's I/O path costs: IOPS kept by fio
(Debian's /usr/bin/fio, --ioengine=null) with

    uprobe:/usr/bin/fio:td_io_queue { @ = count(); }

attached by ubt and by kernel bpftrace, against fio alone, in one run.

    python3 bench/fio.py [--builddir build] [--pairs 20] [--window 1.0]
                         [--tracer ubt,bpftrace] [--fio /usr/bin/fio]

Method.  fio's IOPS on a small shared VM move by +-15 % from one run to the
next and from one second to the next inside one run (other tenants, other
processes), much more than the cost to measure.  So one long-lived fio is
measured with and without the probe, in alternation:

  - fio runs one job thread for the whole benchmark, pinned to the last CPU
    (taskset); tracers and this script run on the others, so a tracer's
    own work never takes fio's CPU;
  - fio prints its counters every 100 ms (--status-interval, JSON);
  - for each tracer in turn: W seconds without a probe (U), then the tracer
    attaches with -p, W seconds with the probe (P), the tracer is stopped
    (SIGINT, it detaches); repeated --pairs times and closed by one more U.
    Only status intervals wholly inside a window count; the time to attach
    and detach is outside every window.
  - each P is compared with the mean of the U just before and just after it
    (drift cancels); the table shows the median of these ratios and their
    interquartile range.

Two ratios are reported per tracer: IOPS (I/Os per second of wall time,
what the issue asks) and I/Os per second of CPU time of fio's job thread
(fio's usr_cpu + sys_cpu, from getrusage).  The second is not moved by
another process taking fio's CPU, so it is the steadier measure of what the
probe costs fio; a kernel uprobe's trap is system time of that thread, so
it counts for bpftrace too.  The tracer's @ must lie between the I/Os of
its P window and those of the whole attach-to-detach span.  fio runs with
--thread (ubt does not trace a fork child; docs/compat.md).  Needs root and
fio (apt-get install fio).
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROBE = "uprobe:{fio}:td_io_queue { @ = count(); }"
SETTLE = 0.3  # seconds after "Attaching" / after the tracer exited


def fio_cmd(fio, runtime, cpu):
    return ["taskset", "-c", str(cpu), fio, "--thread", "--name=null", "--ioengine=null",
            "--size=1G", "--rw=randread", "--bs=4k", "--time_based",
            "--runtime=%d" % runtime, "--output-format=json", "--status-interval=100ms"]


class Fio:
    """One fio, its status snapshots parsed as they arrive:
    (wall time, runtime ms, total I/Os, cpu ms of the job)."""

    def __init__(self, cmd):
        self.snaps = []
        self.lock = threading.Lock()
        self.p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True,
                                  start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        dec = json.JSONDecoder()
        buf = ""
        for line in self.p.stdout:
            buf += line
            while True:
                start = buf.find("{")
                if start < 0:
                    buf = ""
                    break
                try:
                    o, end = dec.raw_decode(buf, start)
                except ValueError:
                    break
                buf = buf[end:]
                jb = o["jobs"][0]
                rt = jb["job_runtime"]
                with self.lock:
                    self.snaps.append((o["timestamp_ms"] / 1000.0, rt, jb["read"]["total_ios"],
                                       (jb["usr_cpu"] + jb["sys_cpu"]) * rt / 100.0))

    def wait_past(self, t, timeout=5.0):
        """Waits until fio reported a snapshot taken after t (its status can lag
        while a tracer attaches or detaches)."""
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                if self.snaps and self.snaps[-1][0] > t:
                    return
            time.sleep(0.02)

    def window(self, t0, t1):
        """(IOPS, I/Os per CPU second, I/Os) over status intervals inside [t0, t1]."""
        self.wait_past(t1)
        with self.lock:
            s = [x for x in self.snaps if t0 <= x[0] <= t1]
        if len(s) < 2 or s[-1][1] <= s[0][1] or s[-1][3] <= s[0][3]:
            return None
        ios = s[-1][2] - s[0][2]
        return ios * 1000.0 / (s[-1][1] - s[0][1]), ios * 1000.0 / (s[-1][3] - s[0][3]), ios

    def ios_between(self, t0, t1):
        """I/Os from the last snapshot before t0 to the first after t1."""
        self.wait_past(t1)
        with self.lock:
            a = [x for x in self.snaps if x[0] <= t0]
            b = [x for x in self.snaps if x[0] >= t1]
        return b[0][2] - a[-1][2] if a and b else None

    def stop(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except OSError:
            pass
        self.p.wait()


def probed_window(tracer, pid, fio_path, cpus, w, fio, probe):
    """Attach, measure w seconds, detach: (window, @, attach-to-detach I/Os, error)."""
    cmd = ["taskset", "-c", cpus, tracer, "-p", str(pid), "-e", probe.replace("{fio}", fio_path)]
    t_start = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = p.stdout.readline()
        if not line.startswith("Attaching"):
            p.wait(timeout=30)
            return None, None, None, "no 'Attaching' line: %s" % p.stderr.read().strip()[-300:]
        time.sleep(SETTLE)
        t0 = time.time()
        time.sleep(w)
        t1 = time.time()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        t_end = time.time()
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    m = re.search(r"^@: (\d+)$", out, re.M)
    return fio.window(t0, t1), int(m.group(1)) if m else None, fio.ios_between(t_start, t_end), \
        None if p.returncode == 0 else "exit %d: %s" % (p.returncode, err.strip()[-300:])


def unprobed_window(w, fio):
    time.sleep(SETTLE)
    t0 = time.time()
    time.sleep(w)
    t1 = time.time()
    return fio.window(t0, t1)


def quartiles(v):
    if len(v) < 4:
        return min(v), max(v)
    q = statistics.quantiles(v, n=4)
    return q[0], q[2]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builddir", default=os.path.join(here, "..", "build"))
    ap.add_argument("--fio", default="/usr/bin/fio")
    ap.add_argument("--tracer", default="ubt,bpftrace")
    ap.add_argument("--pairs", type=int, default=20, help="probed windows per tracer")
    ap.add_argument("--window", type=float, default=1.0, help="seconds per window")
    ap.add_argument("--probe", default=PROBE,
                    help="script instead of the issue's ({fio} is fio's path; the @ check "
                    "is made only for the default)")
    args = ap.parse_args()
    if not os.access(args.fio, os.X_OK):
        sys.exit("bench/fio.py: %s not found (apt-get install fio)" % args.fio)
    ncpu = os.cpu_count() or 1
    fio_cpu = ncpu - 1
    other = "0-%d" % (ncpu - 2) if ncpu > 1 else "0"
    os.sched_setaffinity(0, set(range(max(1, ncpu - 1))))
    paths = {"ubt": os.path.abspath(os.path.join(args.builddir, "tools", "ubt")),
             "bpftrace": "bpftrace"}
    tracers = [t for t in args.tracer.split(",") if t]
    # bpftrace detaches in seconds; give fio time for every window and tracer start
    per_pair = 2 * (args.window + SETTLE) + 6
    runtime = int(len(tracers) * (args.pairs + 1) * per_pair + 30)
    cmd = fio_cmd(args.fio, runtime, fio_cpu)
    print("probe: %s" % args.probe.replace("{fio}", args.fio))
    print("fio:   %s" % " ".join(cmd))
    print("tracers on CPUs %s, fio on CPU %d; %d pairs of %.1f s windows per tracer"
          % (other, fio_cpu, args.pairs, args.window))
    fio = Fio(cmd)
    failed = False
    rows = []
    try:
        time.sleep(1.0)  # past fio's start
        for t in tracers:
            us, ps, notes = [], [], set()
            us.append(unprobed_window(args.window, fio))
            for k in range(args.pairs):
                pw, at, span, err = probed_window(paths.get(t, t), fio.p.pid, args.fio, other,
                                                  args.window, fio, args.probe)
                if err:
                    notes.add(err)
                if pw and args.probe == PROBE and (
                        at is None or span is None or not pw[2] <= at <= span):
                    notes.add("@ = %s, outside [%s, %s] I/Os" % (at, pw[2], span))
                ps.append(pw)
                us.append(unprobed_window(args.window, fio))
                if pw and us[-2] and us[-1]:
                    print("%-9s pair %2d: IOPS %.2fM / %.2fM, per CPU-s %.2fM / %.2fM" % (
                        t, k + 1, pw[0] / 1e6, (us[-2][0] + us[-1][0]) / 2e6, pw[1] / 1e6,
                        (us[-2][1] + us[-1][1]) / 2e6), flush=True)
            ratio = [[], []]
            for k, pw in enumerate(ps):
                a, b = us[k], us[k + 1]
                if pw and a and b:
                    for i in (0, 1):
                        ratio[i].append(pw[i] / ((a[i] + b[i]) / 2))
            rows.append((t, ratio, [u for u in us if u], [p for p in ps if p], notes))
    finally:
        fio.stop()
    print()
    print("%-10s %13s %22s %22s" % ("", "IOPS (median)", "IOPS kept [IQR]", "per CPU-s kept [IQR]"))
    for t, ratio, us, ps, notes in rows:
        if not ratio[0]:
            print("%-10s %s" % (t, "; ".join(sorted(notes)) or "no result"))
            failed = True
            continue
        if t == rows[0][0]:
            print("%-10s %13.0f %22s %22s" % ("unprobed", statistics.median(u[0] for u in us),
                                             "100 %", "100 %"))
        cells = []
        for i in (0, 1):
            lo, hi = quartiles(ratio[i])
            cells.append("%5.1f %% [%5.1f, %5.1f]" % (100 * statistics.median(ratio[i]),
                                                      100 * lo, 100 * hi))
        print("%-10s %13.0f %22s %22s  (%d pairs)%s" % (
            t, statistics.median(p[0] for p in ps), cells[0], cells[1], len(ratio[0]),
            "   (" + "; ".join(sorted(notes)) + ")" if notes else ""))
        failed |= bool(notes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
