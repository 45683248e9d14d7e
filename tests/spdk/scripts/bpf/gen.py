#!/usr/bin/env python3
"""tests/spdk/scripts/bpf/gen.py - a look-alike of SPDK's scripts/bpf/gen.py
for ubt's tests.

    gen.py -p PID SCRIPT...

Prints the scripts with `__EXE__` and `__PID__` replaced.  Where a line
starts a `usdt:__EXE__:NAME` or `uprobe:__EXE__:NAME` probe, __EXE__ becomes
the path `bpftrace -l -p PID` prints for that probe (a library's path for a
probe in a library, as /proc/PID/root/...), elsewhere the executable of PID.
It splits each listed line on ':' and takes the first, second and last
fields, as SPDK's does, so it depends on the exact listing format.
"""

import argparse
import os
import re
import subprocess


def listed_probes(pid):
    out = subprocess.run(["bpftrace", "-l", "-p", str(pid)], check=True,
                         capture_output=True, text=True).stdout
    where = {}
    for line in out.splitlines():
        fields = line.split(":")
        if len(fields) >= 3:
            where[(fields[0], fields[-1])] = fields[1]
    return where


PROBE_START = re.compile(r"(usdt|uprobe):__EXE__:(\w+)")


def fixup(path, pid, exe, where):
    text = []
    with open(path) as f:
        for line in f:
            m = PROBE_START.match(line)
            if m:
                line = line.replace("__EXE__", where.get(m.groups(), exe))
            text.append(line.replace("__EXE__", exe).replace("__PID__", str(pid)))
    return "".join(text)


def main():
    ap = argparse.ArgumentParser(description="substitute __EXE__ and __PID__ in bpftrace scripts")
    ap.add_argument("-p", "--pid", type=int, required=True)
    ap.add_argument("scripts", nargs="+")
    args = ap.parse_args()
    exe = os.readlink("/proc/%d/exe" % args.pid)
    where = listed_probes(args.pid)
    for s in args.scripts:
        print(fixup(s, args.pid, exe, where))


if __name__ == "__main__":
    main()
