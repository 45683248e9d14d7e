#!/usr/bin/env python3
"""tests/lang/run.py - the language corpora of issue 3.

good/*.bt  scripts written for this project covering every construct; each
           must be accepted by ubt's front end (parse + type check).
pending/   (optional, empty now) scripts of good/'s kind waiting on a
           builtin or attach feature not yet merged; they are run and
           listed, not counted, and reported when they become accepted
           (then move them to good/).  The ten that waited for str, hist,
           elapsed, comm, usym, probe, delete, clear and uprobe offsets are
           in good/ and run end to end in tests/e2e/statements.test.
bad/*.bt   broken scripts; each must give exactly the diagnostics in the
           .err file next to it (one precise error each), compared verbatim.

A script whose first line is `// bpftrace: yes` is also valid bpftrace 0.17;
with --bpftrace, run.py runs `bpftrace -d` on it (and on every bad script
marked so) and checks that bpftrace accepts or refuses it as ubt does (a
script passed bpftrace's semantic analysis if its `-d` output reaches
"AST after: Semantic"; probes it cannot attach do not matter).

Prints one line per failure and ends with "N passed, N failed".
"""
import argparse, glob, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))


def ubt(check, path):
    # from the script's directory, so that #include "inc/x.h" resolves
    r = subprocess.run([os.path.abspath(check), '--name', os.path.basename(path), path],
                       capture_output=True, text=True, timeout=60,
                       cwd=os.path.dirname(path))
    return r.returncode, r.stdout + r.stderr


def bpftrace_accepts(path):
    try:
        r = subprocess.run(['bpftrace', '-d', path, '42', 'word'], capture_output=True,
                           text=True, timeout=20, cwd=HERE)
        out = r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b'').decode() + (e.stderr or b'').decode()
    return 'AST after: Semantic' in out, out


def marked_bpftrace(path):
    with open(path, errors='replace') as f:
        return f.readline().startswith('// bpftrace: yes')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--check', required=True, help='the lang_check binary')
    ap.add_argument('--bpftrace', action='store_true', help='compare with bpftrace 0.17')
    ap.add_argument('--update', action='store_true', help='(re)write missing .err files')
    a = ap.parse_args()
    passed = failed = 0

    def fail(name, why, detail=''):
        nonlocal failed
        failed += 1
        print(f'FAIL {name}: {why}')
        if detail:
            print(detail.rstrip())

    good = sorted(glob.glob(os.path.join(HERE, 'good', '*.bt')))
    bad = sorted(glob.glob(os.path.join(HERE, 'bad', '*.bt')))
    for p in good:
        rc, out = ubt(a.check, p)
        if rc != 0 or 'ERROR' in out:
            fail('good/' + os.path.basename(p), 'refused', out)
        else:
            passed += 1
    for p in bad:
        rc, out = ubt(a.check, p)
        errf = p[:-3] + '.err'
        if a.update and not os.path.exists(errf):
            open(errf, 'w').write(out)
        want = open(errf).read() if os.path.exists(errf) else None
        name = 'bad/' + os.path.basename(p)
        if rc == 0:
            fail(name, 'accepted', out)
        elif out.count(': ERROR: ') != 1:
            fail(name, 'not exactly one error', out)
        elif want != out:
            fail(name, 'diagnostics differ', f'--- expected:\n{want}--- got:\n{out}')
        else:
            passed += 1
    for p in sorted(glob.glob(os.path.join(HERE, 'pending', '*.bt'))):
        rc, out = ubt(a.check, p)
        errs = [l.split('ERROR: ', 1)[1] for l in out.splitlines() if 'ERROR: ' in l]
        state = 'now accepted: move it to good/' if rc == 0 else '; '.join(sorted(set(errs)))
        print(f'pending/{os.path.basename(p)}: {state}')
    if a.bpftrace:
        todo = [(p, True) for p in good if marked_bpftrace(p)]
        todo += [(p, False) for p in bad if marked_bpftrace(p)]
        with ThreadPoolExecutor(4) as ex:
            res = list(ex.map(lambda t: (t, bpftrace_accepts(t[0])), todo))
        for (p, want_ok), (ok, out) in res:
            name = 'bpftrace ' + os.path.relpath(p, HERE)
            if ok != want_ok:
                fail(name, 'bpftrace %s it' % ('refuses' if want_ok else 'accepts'),
                     '\n'.join(l for l in out.splitlines() if 'ERROR' in l))
            else:
                passed += 1
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
