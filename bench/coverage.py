#!/usr/bin/env python3
"""bench/coverage.py - how many probe sites take a jump, and why the rest
would take a breakpoint, over a corpus of real binaries (issue 18).

Runs BUILDDIR/bench/site_coverage (bench/coverage.c: ubt's own planner,
no process needed) over every USDT location and every function entry of:
Debian's python3.11 (the executable and libpython3.11), libc.so.6 with and
without its separate debug file (libc6-dbg), libstdc++, PostgreSQL 15's
postgres, and the project's SPDK-shaped program and stripped USDT program
(tests/progs).  A file
missing on this machine is reported as such and left out.

Usage:
    bench/coverage.py [--builddir build] [--sites] [--summary FILE] [FILE ...]

Prints, per file and kind of site (usdt, entry): the sites, how many
take a jump, how many a breakpoint, how many ubt would refuse (error),
where the functions' bounds came from, and each breakpoint reason with
its count (numbers in reasons shown as N, so that equal reasons add up).
--sites also lists every site that does not take a jump.  tests/run.sh
runs it as a suite: --summary FILE writes `passed failed skipped`, one
file planned being one pass, and a file that cannot be planned, or with a
site ubt would refuse to probe at all (error), one failure.  Exit status 0
when every file passed.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

LIB = '/usr/lib/x86_64-linux-gnu'


def corpus(builddir):
    """(label, path, extra arguments of site_coverage) of the default corpus."""
    progs = os.path.join(builddir, 'tests', 'progs')
    return [
        ('python3.11', '/usr/bin/python3.11', []),
        ('libpython3.11', LIB + '/libpython3.11.so.1.0', []),
        ('libc.so.6 (with its debug file)', LIB + '/libc.so.6', []),
        ('libc.so.6 (without)', LIB + '/libc.so.6', ['--no-debug-file']),
        ('libstdc++.so.6', LIB + '/libstdc++.so.6', []),
        # tests/run.sh installs it for tests/real: 71 USDT locations, stripped
        ('postgres 15', '/usr/lib/postgresql/15/bin/postgres', []),
        ('spdk_like (tests/progs)', os.path.join(progs, 'prog_spdk_like_O2_pie'), []),
        ('usdt_strip (tests/progs)', os.path.join(progs, 'prog_usdt_strip_O2_pie'), []),
    ]


def plan(tool, path, extra):
    out = subprocess.run([tool] + extra + [path], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr.strip() or 'exit %d' % out.returncode)
    rows = []
    for line in out.stdout.splitlines():
        f = line.split('\t')
        if len(f) >= 7:
            rows.append(dict(kind=f[1], name=f[2], addr=f[3], bounds=f[4], plan=f[5],
                             why=f[6]))
    return rows


def counts_line(label, kind, n, c):
    """One row: sites, jumps (and their share), breakpoints, errors."""
    return '%-34s %-5s %6d sites  %6d jump (%6.2f %%)  %4d breakpoint  %3d error' % (
        label, kind, n, c['jump'], 100.0 * c['jump'] / n, c['breakpoint'], c['error'])


def generic(why):
    return re.sub(r'0x[0-9a-f]+|\d+', 'N', why)


def report(label, rows, show_sites):
    for kind in ('usdt', 'entry'):
        ks = [r for r in rows if r['kind'] == kind]
        if not ks:
            continue
        n = len(ks)
        c = collections.Counter(r['plan'] for r in ks)
        bounds = collections.Counter(r['bounds'] for r in ks)
        print(counts_line(label, kind, n, c))
        print('%-34s       bounds: %s' % ('', ', '.join(
            '%s %d' % (b, k) for b, k in sorted(bounds.items(), key=lambda x: -x[1]))))
        why = collections.Counter(generic(r['why']) for r in ks if r['plan'] != 'jump')
        for w, k in sorted(why.items(), key=lambda x: (-x[1], x[0])):
            print('%-34s   %5d  %s' % ('', k, w))
        if show_sites:
            for r in ks:
                if r['plan'] != 'jump':
                    print('%-34s         %s %s %s: %s' % ('', r['addr'], r['name'], r['plan'],
                                                         r['why']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--builddir', default='build')
    ap.add_argument('--sites', action='store_true')
    ap.add_argument('--summary')
    ap.add_argument('files', nargs='*')
    a = ap.parse_args()
    tool = os.path.join(a.builddir, 'bench', 'site_coverage')
    if not os.access(tool, os.X_OK):
        sys.exit('coverage.py: %s is not built (ninja -C %s)' % (tool, a.builddir))
    items = [(f, f, []) for f in a.files] or corpus(a.builddir)
    passed = failed = skipped = 0
    totals = collections.defaultdict(collections.Counter)
    for label, path, extra in items:
        if not os.path.exists(path):
            print('%-34s not on this machine (%s)' % (label, path))
            skipped += 1
            continue
        try:
            rows = plan(tool, path, extra)
        except RuntimeError as e:
            print('%-34s FAILED: %s' % (label, e))
            failed += 1
            continue
        report(label, rows, a.sites)
        errors = [r for r in rows if r['plan'] == 'error']
        for r in errors:
            print('FAIL  %s: %s %s at %s: ubt would refuse it: %s' % (label, r['kind'], r['name'],
                                                                    r['addr'], r['why']))
        failed += 1 if errors else 0
        passed += 0 if errors else 1
        for r in rows:
            totals[r['kind']][r['plan']] += 1
    for kind in ('usdt', 'entry'):
        c = totals[kind]
        if c:
            print(counts_line('all', kind, sum(c.values()), c))
    if a.summary:
        with open(a.summary, 'w') as f:
            f.write('%d %d %d\n' % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
