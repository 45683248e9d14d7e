#!/usr/bin/env python3
"""bench/fio.py - what a probe on fio's I/O path costs: IOPS kept by fio
(Debian's /usr/bin/fio, --ioengine=null) with

    uprobe:/usr/bin/fio:td_io_queue { @ = count(); }

attached by ubt and by kernel bpftrace, against fio alone, in one run.

    python3 bench/fio.py [--builddir build] [--rounds 5] [--runtime 3]
                         [--tracer ubt,bpftrace] [--fio /usr/bin/fio]

Each round runs fio once unprobed and once under each tracer (`TRACER -c
'fio ...'`, so the probe is live for the whole job), in an interleaved
order, and reads fio's IOPS from its JSON output.  The table shows, per
tracer, the median IOPS and the median of the per-round ratios to the
unprobed run of the same round (neighbouring runs share the machine's
state, so the ratio is steadier than IOPS).  The tracer's @ must equal
fio's I/O count.  fio runs its job with --thread: a job in a forked
process would not be traced by ubt (a fork child's probes are off, see
docs/compat.md).  Needs root and fio (apt-get install fio).
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

PROBE = "uprobe:{fio}:td_io_queue { @ = count(); }"


def fio_cmd(fio, runtime, out):
    return [fio, "--thread", "--name=null", "--ioengine=null", "--size=1G",
            "--rw=randread", "--bs=4k", "--time_based", "--runtime=%d" % runtime,
            "--output-format=json", "--output=" + out]


def run_once(tracer, fio, runtime):
    """(iops, total ios, tracer's @ or None, error or None)"""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        cmd = fio_cmd(fio, runtime, out)
        if tracer:
            cmd = [tracer, "-q", "-c", " ".join(shlex.quote(w) for w in cmd),
                   "-e", PROBE.replace("{fio}", fio)]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=runtime * 10 + 60)
        if p.returncode != 0:
            return None, None, None, "exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
        with open(out) as f:
            j = json.load(f)
        rd = j["jobs"][0]["read"]
        m = re.search(r"^@: (\d+)$", p.stdout, re.M)
        return rd["iops"], rd["total_ios"], int(m.group(1)) if m else None, None
    finally:
        os.unlink(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builddir", default=os.path.join(here, "..", "build"))
    ap.add_argument("--fio", default="/usr/bin/fio")
    ap.add_argument("--tracer", default="ubt,bpftrace")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=3, help="seconds per fio run")
    args = ap.parse_args()
    if not os.access(args.fio, os.X_OK):
        sys.exit("bench/fio.py: %s not found (apt-get install fio)" % args.fio)
    paths = {"ubt": os.path.abspath(os.path.join(args.builddir, "tools", "ubt")),
             "bpftrace": "bpftrace"}
    tracers = [t for t in args.tracer.split(",") if t]
    iops = {t: [] for t in [""] + tracers}
    ratios = {t: [] for t in tracers}
    notes = {t: set() for t in tracers}
    print("probe: %s" % PROBE.replace("{fio}", args.fio))
    print("fio: %s" % " ".join(fio_cmd(args.fio, args.runtime, "OUT")))
    for r in range(args.rounds):
        # alternate the order so drift in the machine hits every column alike
        order = [""] + tracers if r % 2 == 0 else tracers[::-1] + [""]
        got = {}
        for t in order:
            v, ios, at, err = run_once(paths.get(t, t) if t else None, args.fio, args.runtime)
            if err:
                notes[t or tracers[0]].add(err)
                continue
            if t and at != ios:
                notes[t].add("@ = %s, fio did %d I/Os" % (at, ios))
            got[t] = v
            iops[t].append(v)
        for t in tracers:
            if t in got and "" in got:
                ratios[t].append(got[t] / got[""])
        print("round %d: %s" % (r + 1, ", ".join("%s %.0f" % (t or "unprobed", got[t])
                                                  for t in order if t in got)), flush=True)
    print()
    print("%-10s %14s %12s" % ("", "IOPS (median)", "kept"))
    print("%-10s %14.0f %12s" % ("unprobed", statistics.median(iops[""]) if iops[""] else 0,
                                 "100 %"))
    failed = False
    for t in tracers:
        if not ratios[t]:
            print("%-10s %s" % (t, "; ".join(sorted(notes[t])) or "no result"))
            failed = True
            continue
        print("%-10s %14.0f %10.1f %%%s" % (
            t, statistics.median(iops[t]), 100 * statistics.median(ratios[t]),
            "   (" + "; ".join(sorted(notes[t])) + ")" if notes[t] else ""))
        failed |= bool(notes[t])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
