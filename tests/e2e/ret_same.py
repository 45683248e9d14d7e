#!/usr/bin/env python3
"""ret_same.py - runs a target program twice, plainly and traced by ubt -p,
and says whether the program's own output and exit status were the same.

    ret_same.py UBT PROG [ARGS...] -- SCRIPT

The traced run sets RET_WAIT=1: the program (tests/progs/ret.c,
ret_cxx.cc) prints `ready` and waits on stdin until ubt has attached, so
every probed call of the run is traced.  Prints `same output and exit
status` or the difference, then ubt's stdout (the maps) and stderr lines
prefixed with `stderr: ` (of -v's lines only `ubt: return probes: ...`).
Used by tests/e2e/ret*.test.
"""
import os
import subprocess
import sys


def main():
    sep = sys.argv.index("--")
    ubt, prog, script = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1]
    env = dict(os.environ)
    env.pop("RET_WAIT", None)
    plain = subprocess.run(prog, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                           timeout=60)
    env["RET_WAIT"] = "1"
    p = subprocess.Popen(prog, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    assert p.stdout.readline() == b"ready\n"
    t = subprocess.Popen([ubt, "-v", "-p", str(p.pid), "-e", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    early = b""
    while True:  # -v says when the sites are patched
        line = t.stderr.readline()
        if not line or b"patched" in line:
            break
        early += line
    if not line:
        p.kill()
        sys.stdout.write("ubt did not attach: " + early.decode())
        return 1
    out, err = p.communicate(input=b"\n", timeout=60)
    tout, terr = t.communicate(timeout=30)
    if out == plain.stdout and err == plain.stderr and p.returncode == plain.returncode:
        print("same output and exit status")
        sys.stdout.write(out.decode())
    else:
        print("DIFFERENT: plain exit %d, traced exit %d" % (plain.returncode, p.returncode))
        print("plain:\n" + plain.stdout.decode() + plain.stderr.decode())
        print("traced:\n" + out.decode() + err.decode())
    print("program exit %d" % p.returncode)
    sys.stdout.write(tout.decode())
    for line in (early + terr).decode().splitlines():
        # -v's timings go; its return-probe counters stay, for the tests
        if not line.startswith("ubt: ") or line.startswith("ubt: return probes:"):
            print("stderr: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
