#!/usr/bin/env python3
"""stack_same.py - traces a program with a ustack script twice, without and
with return probes on the functions the stacks go through, and says whether
the stacks printed were the same (and, optionally, the same as bpftrace's).

    stack_same.py [-p] [--bpftrace PATH] UBT PROG [ARGS...] -- SCRIPT -- RETSCRIPT

Without -p each run is `UBT -c 'PROG ARGS' -e SCRIPT` (then SCRIPT +
RETSCRIPT): the program must do the same thing every run, so the maps must
print the same.  With -p one instance of PROG is started (it must print
`ready` and start on SIGUSR1, like tests/progs/sym.c with `wait`), and each
run attaches to it with -p; SCRIPT must end the run itself (exit()).  The
same process serves every run, so even raw addresses must match; with
--bpftrace, bpftrace runs SCRIPT + RETSCRIPT on it as well (kernel
uretprobes: this kernel shows the real callers too) and must print the same.

RETSCRIPT's maps must be named @ret...: their lines are left out of the
comparison, and printed, so a test can check that the return probes fired.
Prints `same stacks without and with return probes` (and `same as
bpftrace`) or both outputs, then the output of the run with return probes.
With -p it also says whether the program was still alive at the end.
"""
import os
import re
import signal
import subprocess
import sys

NOISE = re.compile(r"^(Attaching \d+ probes?\.\.\.|ERROR: Unknown error -1: couldn't set RLIMIT_MEMLOCK.*)$")


def items(out):
    """Lines, with each multi-line map entry (`@m[` ... `]: N`) as one item."""
    res, cur = [], None
    for line in out.splitlines():
        if cur is not None:
            cur.append(line)
            if re.match(r"^\]: ", line):
                res.append("\n".join(cur))
                cur = None
        elif re.match(r"^@\w*\[$", line):
            cur = [line]
        else:
            res.append(line)
    if cur is not None:
        res.append("\n".join(cur))
    return res


def compare_key(out):
    """What must be equal: no banner, no @ret maps, and the entries of a
    map in a canonical order (ubt and bpftrace order equal values
    differently)."""
    keep, in_ret = [], False
    for it in items(out):
        if NOISE.match(it):
            continue
        if it.startswith("@"):
            in_ret = it.startswith("@ret")
        if not in_ret:
            keep.append(it)
    # sort runs of entries of one map by (value, text): only ties move
    res, i = [], 0
    while i < len(keep):
        m = re.match(r"^(@\w*)\[", keep[i])
        j = i + 1
        if m:
            while j < len(keep) and keep[j].startswith(m.group(1) + "["):
                j += 1
            run_ = keep[i:j]
            run_.sort(key=lambda e: (int(re.search(r"\]: (-?\d+)$", e).group(1))
                                     if re.search(r"\]: (-?\d+)$", e) else 0, e))
            res.extend(run_)
        else:
            res.append(keep[i])
        i = j
    return "\n".join(res).strip("\n")


def run(cmd):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return p.stdout.decode(), p.stderr.decode(), p.returncode


def main():
    args = sys.argv[1:]
    by_pid = args[0] == "-p"
    if by_pid:
        args = args[1:]
    bpftrace = None
    if args[0] == "--bpftrace":
        bpftrace, args = args[1], args[2:]
    ubt = args[0]
    a = args.index("--", 1)
    b = args.index("--", a + 1)
    prog, script, retscript = args[1:a], args[a + 1], args[b + 1]
    both = script + " " + retscript
    target = None
    if by_pid:
        target = subprocess.Popen(prog, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        assert target.stdout.readline() == b"ready\n"
        os.kill(target.pid, signal.SIGUSR1)
        where = ["-p", str(target.pid)]
    else:
        where = ["-c", " ".join(prog)]
    try:
        plain = run([ubt] + where + ["-e", script])
        withret = run([ubt] + where + ["-e", both])
        bpf = run([bpftrace] + where + ["-e", both]) if bpftrace else None
        alive = target is not None and target.poll() is None
    finally:
        if target:
            target.kill()
            target.wait()
    if compare_key(plain[0]) == compare_key(withret[0]) and plain[2] == withret[2]:
        print("same stacks without and with return probes")
    else:
        print("DIFFERENT: without return probes (exit %d):" % plain[2])
        sys.stdout.write(plain[0] + plain[1])
        print("-- with return probes (exit %d):" % withret[2])
    if bpf:
        if compare_key(bpf[0]) == compare_key(withret[0]):
            print("same as bpftrace")
        else:
            print("DIFFERENT from bpftrace (exit %d):" % bpf[2])
            sys.stdout.write(bpf[0])
            for line in bpf[1].splitlines():
                if not NOISE.match(line):
                    print("bpftrace stderr: " + line)
            print("-- ubt (exit %d):" % withret[2])
    if by_pid:
        print("program alive" if alive else "program DEAD")
    sys.stdout.write(withret[0])
    for line in withret[1].splitlines():
        print("stderr: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
