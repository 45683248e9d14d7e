#!/usr/bin/env python3
"""ret_qemu.py - return probes on QEMU's coroutine switch, on Debian's qemu-io.

    ret_qemu.py UBT RUNS

qemu_coroutine_switch(from, to, action) is sigsetjmp + siglongjmp: a call
entered on one coroutine's stack returns on that stack only when some
other coroutine switches back to it, after the thread ran elsewhere.  Each
of RUNS runs starts qemu-io on a fresh raw image (interactive: commands on
stdin), attaches `ubt -p` with an entry and a return probe on
qemu_coroutine_switch, feeds it writes, reads and an aio batch, and
checks:

  - qemu-io exits 0 and prints what it prints without ubt (timings masked,
    lines sorted: aio completions come in any order);
  - the returns balance: every call returns except those that end a
    coroutine (action COROUTINE_TERMINATE = 2, which never come back), so
    @r == @e - @t[2];
  - ubt says nothing about lost returns, and no error.

Prints `RUNS runs: qemu-io unchanged, returns balanced` or what differed.
"""
import os
import re
import subprocess
import sys
import tempfile

QEMU_IO = "/usr/bin/qemu-io"
COMMANDS = ["write -P 0xab 0 1M", "read -P 0xab 0 1M", "aio_write -P 1 0 64k",
            "aio_write -P 2 64k 64k", "aio_write -P 3 128k 64k", "aio_flush",
            "read -P 2 64k 64k", "write -z 0 256k", "read -P 0 0 256k", "quit"]
TIMING = re.compile(r"\d+(\.\d+)? (sec|ops|MiB|KiB|bytes)|\d+\.\d+|\(.*?\)")


def norm(out):
    """The lines without prompts and timings, sorted: aio completions and
    the prompts printed meanwhile come in any order."""
    out = out.replace("qemu-io> ", "\n")
    return sorted(TIMING.sub("#", l) for l in out.splitlines() if l.strip())


def run_qemu(image, ubt=None):
    """One qemu-io session; with ubt, traced.  (stdout, exit status, ubt output)."""
    q = subprocess.Popen([QEMU_IO, "-f", "raw", image], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tout = ""
    t = None
    if ubt:
        b = "uprobe:%s:qemu_coroutine_switch" % QEMU_IO
        script = ("%s { @e = count(); @t[arg2] = count(); } "
                  "uretprobe:%s:qemu_coroutine_switch { @r = count(); }" % (b, QEMU_IO))
        t = subprocess.Popen([ubt, "-p", str(q.pid), "-v", "-e", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while True:  # -v says when the sites are patched
            line = t.stderr.readline()
            tout += line
            if not line or "patched" in line:
                break
    out, _ = q.communicate("\n".join(COMMANDS) + "\n", timeout=60)
    if t:
        o, e = t.communicate(timeout=30)
        tout += o + e
    return out, q.returncode, tout


def maps(tout):
    vals = {}
    for m in re.finditer(r"^(@\w+(\[\d+\])?): (\d+)$", tout, re.M):
        vals[m.group(1)] = int(m.group(3))
    return vals


def main():
    ubt, runs = sys.argv[1], int(sys.argv[2])
    with tempfile.TemporaryDirectory() as d:
        image = os.path.join(d, "img.raw")
        subprocess.run(["qemu-img", "create", "-f", "raw", image, "4M"], check=True,
                       stdout=subprocess.DEVNULL)
        plain, code, _ = run_qemu(image)
        if code != 0:
            print("qemu-io without ubt failed (%d):\n%s" % (code, plain))
            return 1
        bad = 0
        for i in range(runs):
            out, code, tout = run_qemu(image, ubt)
            v = maps(tout)
            why = []
            if code != 0:
                why.append("qemu-io exit %d" % code)
            if norm(out) != norm(plain):
                why.append("qemu-io printed:\n%s\nwithout ubt:\n%s" % (out, plain))
            if not v.get("@e") or v.get("@r") != v["@e"] - v.get("@t[2]", 0):
                why.append("returns do not balance: %s" % v)
            # (about return probes: a spurious exec warning at exit is issue 14's item 13)
            if re.search(r"^ERROR|^WARNING: .*return", tout, re.M):
                why.append("ubt said:\n" + tout)
            if why:
                bad += 1
                print("run %d: %s" % (i, "; ".join(why)))
        if bad:
            print("%d of %d runs went wrong" % (bad, runs))
        else:
            print("%d runs: qemu-io unchanged, returns balanced" % runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
