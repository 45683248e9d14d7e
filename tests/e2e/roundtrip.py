#!/usr/bin/env python3
"""tests/e2e/roundtrip.py UBT [-p PID] SEARCH... - every probe `ubt -l`
prints is accepted back verbatim (tests/e2e/list.test).

Lists SEARCH (each one, with -p PID when given), writes every listed line as
an attach point of one script (`LINE,LINE,... { }`), and runs
`UBT --dry-run SCRIPT`: each name must parse and resolve to a probe.
Prints `N names listed, all accepted back` or the listing and the errors,
and exits non-zero on any failure.
"""
import os
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
    with tempfile.NamedTemporaryFile("w", suffix=".bt", delete=False) as f:
        f.write(",\n".join(names) + " { }\n")
        script = f.name
    try:
        r = subprocess.run([ubt, "--dry-run"] + pid + [script], capture_output=True, text=True)
    finally:
        os.unlink(script)
    if r.returncode:
        print("%d names listed; the script of them fails:\n%s" % (len(names), r.stderr[:4000]))
        return 1
    print("%d names listed, all accepted back" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
