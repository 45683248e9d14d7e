#!/usr/bin/env python3
"""textsum.py PID NAME - the sha256 of the code a process maps from the file
whose path ends in NAME (its executable mappings, read through
/proc/PID/mem), so that a test can check that detach put every patched
byte back: the sums before attaching and after detaching must be equal."""

import hashlib
import sys


def main():
    pid, name = sys.argv[1], sys.argv[2]
    h = hashlib.sha256()
    n = 0
    with open('/proc/%s/maps' % pid) as maps, open('/proc/%s/mem' % pid, 'rb') as mem:
        for line in maps:
            f = line.split()
            if len(f) < 6 or 'x' not in f[1] or not f[5].endswith(name):
                continue
            lo, hi = (int(x, 16) for x in f[0].split('-'))
            mem.seek(lo)
            h.update(mem.read(hi - lo))
            n += 1
    print('%d mappings %s' % (n, h.hexdigest()))


if __name__ == '__main__':
    main()
