#!/usr/bin/env python3
"""stack_many.py - thousands of distinct stacks: every call counted once,
under the stack it really had (tests/e2e/stack_many.test).

Runs `TRACER -e 'uprobe:PROG:fib { @[ustack(perf, F)] = count(); }' -c 'PROG N'`
on tests/progs/fib.c and checks the map against a model of fib(N)'s call
tree: the call reached from main by the choices c1..ck (each the call
fib(n - 1) or fib(n - 2)) has the stack

    fib+0, site(ck), ..., site(c1), main+X, __libc_start_call_main+Y

cut to F frames.  The printed map must hold each such stack exactly once
(equal stacks merged, whatever ids the tracer gave them), with the number
of calls that have it, no empty stack, and nothing on stderr.  Which of
fib's two return sites is the fib(n - 1) call is found by trying both.

With --bpftrace BT (a build with frame pointers, non-PIE so that addresses
are the same in both runs) bpftrace 0.17 runs the same script too: its
stacks are named through the program's symbol table (it prints addresses,
the target having exited), must fit the same model, and its entries must
be among the tracer's; bpftrace's stack map refuses some stacks (hash
collisions: `@[]` with `ERROR: failed to look up stack id` on stderr),
whose count is reported and added to its total.

Prints lines the .test file EXPECTs; exits 1 on the first failure.
"""

import argparse
import collections
import re
import subprocess
import sys


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)



def model(n, frames):
    """Counter of expected stacks (tuples of labels), cut to frames."""
    out = collections.Counter()
    # iterative walk of the call tree: (n, path of sites from the root)
    todo = [(n, ())]
    while todo:
        k, path = todo.pop()
        st = ('fib+0',) + tuple(reversed(path)) + ('main', 'libc')
        out[st[:frames]] += 1
        if k >= 2:
            todo.append((k - 1, path + ('A',)))
            todo.append((k - 2, path + ('B',)))
    return out


def parse(text):
    """[(frames text, count)] of the map @ (perf mode)."""
    body = text[text.find('@['):] if '@[' in text else ''
    return [(m.group(1), int(m.group(2)))
            for m in re.finditer(r'@\[(.*?)\]: (\d+)', body, re.S)]


def symtab(prog):
    """[(lo, hi, name)] of the program's functions."""
    out = []
    nm = subprocess.run(['nm', '-S', '--defined-only', prog], capture_output=True, text=True)
    for line in nm.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in 'tTwW':
            lo, size = int(f[0], 16), int(f[1], 16)
            out.append((lo, lo + size, f[3]))
    return out


def label_frames(frames_text, syms):
    """The stack's frames as labels: fib+OFF, main, libc; and raw addresses."""
    labels, addrs = [], []
    for line in frames_text.strip('\n').split('\n'):
        f = line.split()
        if not f:
            continue
        addr = int(f[0], 16)
        addrs.append(addr)
        name = None
        for lo, hi, sym in syms:
            if lo <= addr < hi:
                name = (sym, addr - lo)
                break
        if name is None:  # PIE: the address is not the file's, the text names it
            sym, _, off = (f[1] if len(f) > 1 else '?').partition('+')
            name = (sym, int(off or '0', 0))
        sym, off = name
        if sym == 'fib':
            labels.append('fib+%d' % off)
        elif sym == 'main':
            labels.append('main')
        elif sym.startswith('__libc_start') or addr >= 0x7f0000000000:
            labels.append('libc')
        else:
            labels.append(sym)
    return tuple(labels), tuple(a for a in addrs if a < 0x7f0000000000)


def check(name, entries, n, frames, syms, allow_refused):
    """Checks entries against the model; returns ({addrs: count}, refused)."""
    refused = 0
    got = collections.Counter()
    by_addr = {}
    seen_text = set()
    for text, cnt in entries:
        if text == '':
            if not allow_refused:
                fail('%s: an empty stack @[] (%d hits)' % (name, cnt))
            refused += cnt
            continue
        if not text.strip():
            fail('%s: an empty stack (%d hits)' % (name, cnt))
        if text in seen_text:
            fail('%s: a stack printed twice:%s' % (name, text))
        seen_text.add(text)
        labels, addrs = label_frames(text, syms)
        got[labels] += cnt
        by_addr[addrs] = cnt
    total = sum(got.values()) + refused
    want = model(n, frames)
    calls = sum(want.values())
    print('%s: %d hits, %d calls' % (name, total, calls))
    if total != calls:
        fail('%s: the counts add up to %d, not %d' % (name, total, calls))
    sites = sorted({l for st in got for l in st[1:] if l.startswith('fib+')})
    if len(sites) > 2:
        fail('%s: more than two return sites in fib: %s' % (name, sites))
    ok = False
    for order in (sites, sites[::-1]):
        ren = dict(zip(order, 'AB'))
        mine = collections.Counter()
        for st, c in got.items():
            mine[(st[0],) + tuple(ren.get(l, l) for l in st[1:])] += c
        if allow_refused:
            # bpftrace: some hits went to @[], and its kernel unwinder cuts
            # a stack short when a page of it is not resident: such a
            # stack must be a prefix of the model's, counted no more often
            ok = all(sum(v for s, v in want.items() if s[:len(st)] == st) >= c
                     for st, c in mine.items())
        else:
            ok = mine == want
        if ok:
            break
    if not ok:
        fail('%s: the stacks are not those of the call tree of fib(%d)' % (name, n))
    print('%s: %d distinct stacks, each printed once, as the call tree has them' %
          (name, len(got)))
    return by_addr, refused


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bpftrace')
    ap.add_argument('--frames', type=int, default=127)
    ap.add_argument('tracer')
    ap.add_argument('prog')
    ap.add_argument('n', type=int)
    a = ap.parse_args()
    syms = symtab(a.prog)
    stack = 'ustack(perf, %d)' % a.frames if a.frames != 127 else 'ustack(perf)'
    script = 'uprobe:%s:fib { @[%s] = count(); }' % (a.prog, stack)
    cmd = '%s %d' % (a.prog, a.n)
    r = subprocess.run([a.tracer, '-e', script, '-c', cmd], capture_output=True, text=True,
                       timeout=120)
    if r.returncode:
        fail('ubt exited %d: %s' % (r.returncode, r.stderr))
    if r.stderr.strip():
        fail('ubt wrote on stderr: ' + r.stderr.strip())
    ubt, _ = check('ubt', parse(r.stdout), a.n, a.frames, syms, False)
    if a.bpftrace:
        b = subprocess.run([a.bpftrace, '-e', script, '-c', cmd], capture_output=True,
                           text=True, timeout=120)
        err = [l for l in b.stderr.splitlines()
               if l.strip() and 'RLIMIT_MEMLOCK' not in l and 'failed to look up stack id' not in l]
        if b.returncode or err:
            fail('bpftrace: exit %d: %s' % (b.returncode, b.stderr))
        bt, refused = check('bpftrace', parse(b.stdout), a.n, a.frames, syms, True)
        for addrs, cnt in bt.items():
            # the kernel's unwinder reads user stacks without faulting pages
            # in: a stack it cut short (main's caller missing) is a prefix
            # of ubt's full one
            longer = [k for k, v in ubt.items()
                      if v == cnt and len(k) > len(addrs) and k[:len(addrs)] == addrs]
            if ubt.get(addrs) != cnt and not longer:
                fail('bpftrace has a stack ubt does not (%d hits): %s' %
                     (cnt, ' '.join('%x' % x for x in addrs)))
        print('bpftrace: every stack it recorded is among ubt\'s, with the same count '
              '(%d hits refused by its stack map)' % refused)
    print('ok')


if __name__ == '__main__':
    main()
