#!/usr/bin/env python3
"""tests/spdk/check_docs.py UBT MANPAGE - `ubt --help` and the manual page
list the same options.

Options are the words starting with '-' in the first column of --help's
option lines, and those of the `.TP` tag lines of the manual page (with
troff's `\\-` read as '-').  Prints the options only one of them has, and
exits 1 if there are any."""

import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])--?[A-Za-z][-A-Za-z]*")


def help_options(ubt):
    text = subprocess.run([ubt, "--help"], capture_output=True, text=True,
                          check=True).stdout
    opts = set()
    for line in text.splitlines():
        m = re.match(r"    (-\S.*?)(?:\s{2,}|$)", line)
        if m:
            opts.update(OPT.findall(m.group(1)))
    return opts


def man_options(path):
    lines = open(path).read().splitlines()
    opts = set()
    for i, line in enumerate(lines[:-1]):
        if line.startswith(".TP") and lines[i + 1].startswith((".B", ".I")):
            tag = lines[i + 1].replace("\\-", "-")
            tag = re.sub(r"\\f[BIRP]", "", tag)
            opts.update(o for o in OPT.findall(tag) if o.startswith("-"))
    return opts


def main():
    ubt, man = sys.argv[1], sys.argv[2]
    h, m = help_options(ubt), man_options(man)
    bad = 0
    for o in sorted(h - m):
        print("in --help, not in the manual page: %s" % o)
        bad = 1
    for o in sorted(m - h):
        print("in the manual page, not in --help: %s" % o)
        bad = 1
    print("%d options in both" % len(h & m))
    return bad


if __name__ == "__main__":
    sys.exit(main())
