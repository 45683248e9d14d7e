#!/usr/bin/env python3
"""tests/e2e/roundtrip.py UBT [-p PID] SEARCH... - every probe `ubt -l`
prints is accepted back verbatim (tests/e2e/list.test).

Lists SEARCH (each one, with -p PID when given), writes every listed line as
an attach point of one script (`LINE,LINE,... { }`), and runs
`UBT --dry-run SCRIPT`: each name must parse and resolve to a probe.
Prints `N names listed, all accepted back` or the listing and the errors,
and exits non-zero on any failure. A USDT probe whose name resolved but one
of whose argument operands ubt cannot decode (`cannot parse argument`) has
been accepted back as a name: it is reported, dropped, and the rest run again.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    ubt, args = args[0], args[1:]
    pid = []
    if args[:1] == ["-p"]:
        pid, args = args[:2], args[2:]
    names = []
    for search in args:
        r = subprocess.run([ubt, "-l"] + pid + [search], capture_output=True, text=True)
        if r.returncode:
            print("ubt -l %s failed:\n%s" % (search, r.stderr))
            return 1
        names += [l for l in r.stdout.splitlines() if l and not l.startswith(" ")]
    if not names:
        print("nothing listed")
        return 1
    listed = len(names)
    operands = []
    while True:
        r = dry_run(ubt, pid, names)
        if not r.returncode:
            break
        # "usdt probe PROV:NAME in FILE: cannot parse argument '...'"
        bad = set(re.findall(r"usdt probe (\S+) in (\S+): cannot parse argument", r.stderr))
        drop = [n for n in names if any(n.endswith(":" + pn) and f in n for pn, f in bad)]
        if not drop or len(drop) == len(names):
            print("%d names listed; the script of them fails:\n%s" % (listed, r.stderr[:4000]))
            return 1
        operands += drop
        names = [n for n in names if n not in drop]
    print("%d names listed, all accepted back" % listed)
    for n in operands:
        print("  (name accepted; an argument operand ubt does not decode: %s)" % n)
    return 0


def dry_run(ubt, pid, names):
    with tempfile.NamedTemporaryFile("w", suffix=".bt", delete=False) as f:
        f.write(",\n".join(names) + " { }\n")
        script = f.name
    try:
        # thousands of names in one script: past bpftrace's default limit of 512 probes
        env = dict(os.environ, BPFTRACE_MAX_PROBES="1000000")
        return subprocess.run([ubt, "--dry-run"] + pid + [script], capture_output=True, text=True,
                              env=env)
    finally:
        os.unlink(script)


if __name__ == "__main__":
    sys.exit(main())
