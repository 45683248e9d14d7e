#!/usr/bin/env python3
"""tests/fuzz/shm_fuzz.py - a traced process scribbles on ubt's shared memory.

    python3 tests/fuzz/shm_fuzz.py [--builddir build] [--tracer PATH]
                                   [--seeds 48] [--first 1] [--rounds 150]
                                   [--jobs 2] [--timeout 90] [--summary FILE]
                                   [-v]

Everything the traced process can write (the data part of `memfd:ubt`:
header, thread table, rings, maps, stack table) is untrusted input to ubt
(DESIGN.md decision 10, docs/safety.md).  Each case runs

    TRACER [flags] -c './prog_scribble fuzz SEED ROUNDS' -e SCRIPT

where tests/progs/scribble.c, once ubt's probes run, makes ROUNDS random
writes into that memory (a random field of a random part: header fields,
thread slots, ring record headers and payloads, map headers, hash slots,
keys, live flags, values, the stack table and its entries, or any byte;
random or boundary values of 1 to 8 bytes), 0-2 ms apart, chosen by SEED.
The scripts (SCRIPTS below, one per seed in turn) make ubt read all of it:
printf records of every argument kind, maps of every kind printed in text
and JSON, ustack keys, print/clear/zero events, -kk warnings, and BEGIN,
END and interval probes, which run in ubt itself and write into the same
maps.

A case passes when ubt ends by itself within the timeout (no signal, no
hang), its stderr holds no sanitizer report (CI runs this with ubt built
with ASan+UBSan, build-san/), its stdout stays under --max-output bytes,
and, if it exits 1 (what ubt does after noticing corrupt values), stderr
names the corruption.  The target may die of its own scribbling (its
runtime trusts its own memory); ubt must not.  A failing case prints its
seed and command to reproduce it.

Prints one line per failing case (all with -v) and `N passed, N failed`.
"""

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

P = "./prog_scribble"

SCRIPTS = [
    # maps of every kind, ustack keys, host-side map writes
    ("", """
uprobe:%(p)s:f {
  @c = count(); @cnt[arg0 %% 7] = count(); @s[arg0 %% 5] = sum(arg0);
  @mn = min(arg0); @mx[tid] = max(arg0); @a = avg(arg0); @st[arg0 %% 2] = stats(arg0);
  @h = hist(arg0); @lh[arg0 %% 3] = lhist(arg0 %% 100, 0, 100, 10);
  @stk[ustack] = count(); @str[comm] = count(); @last = arg0; @name[arg0 %% 4] = comm;
  if (arg0 %% 500 == 0) { printf("f %%d %%s\\n", arg0, comm); }
}
interval:ms:40 { @tick[1] = count(); @j[2]++; @k[3] = @c; }
END { @e[2] = count(); @n = len(@cnt); printf("end %%d\\n", @n); }
"""),
    # the same in JSON
    ("-f json", None),
    # events of every kind: strings, tuples, symbols, stacks, buf, map
    # operations, print(value), -kk warnings of failed reads
    ("-kk", """
uprobe:%(p)s:f {
  @m[arg0 %% 5] = count(); @t[arg0 %% 3] = (arg0, comm);
  if (arg0 %% 997 == 0) {
    printf("%%d %%s %%s %%x %%s|%%s\\n", arg0, comm, str(arg0 & 0xff), arg0, usym(arg1), ustack(3));
    print((arg0, "x", comm));
    printf("%%r %%rx\\n", buf(comm, 4), buf(comm, 2));
    $s = str(arg0 & 0xfff);
  }
  if (arg0 %% 10007 == 0) { print(@m); zero(@t); }
  if (arg0 %% 20011 == 0) { clear(@m); }
}
interval:ms:30 { print(@m, 2); @q = @t[1]; printf("tick %%d\\n", @q.0); }
END { print(@t); }
"""),
    # BEGIN/END/interval heavy: ubt's own probes look up, insert, delete
    # and walk the maps the target also writes
    ("", """
BEGIN { @b[1] = 1; @b[2] = 2; }
uprobe:%(p)s:f { @x[arg0 %% 13] = count(); @y[arg0 %% 11] = arg0; @z[arg0 %% 5] = hist(arg0); @w[tid] = nsecs; }
interval:ms:25 {
  @i[@y[1]] = count(); delete(@y[3]); @len = len(@x); @b[3] = @y[4];
  for ($kv : @x) { @sum = sum((int64)$kv.1); }
  @has = has_key(@y[5]);
}
END { @b[4] = @y[7] + @y[2]; delete(@b[1]); for ($kv : @y) { @last = $kv.1; } print(@len); }
"""),
]


def script_for(seed):
    i = seed % len(SCRIPTS)
    flags, text = SCRIPTS[i]
    if text is None:  # same as the one before, other flags
        text = SCRIPTS[i - 1][1]
    return flags, text % {"p": P}


SANITIZER = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
             "runtime error:", "ThreadSanitizer")


def session_stacks(sid):
    """Where each process of a hung case is (gdb, when installed)."""
    text = ""
    try:
        pids = subprocess.run(["pgrep", "-s", str(sid)], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            bt = subprocess.run(["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt 10"],
                                capture_output=True, text=True, timeout=60).stdout
            text += "\n== pid %s\n" % pid + "\n".join(
                l for l in bt.splitlines() if l.startswith(("#", "Thread")))
    except (OSError, subprocess.SubprocessError):
        pass
    return text


def run_case(args, seed):
    flags, text = script_for(seed)
    cmd = [args.tracer] + shlex.split(flags) + [
        "-c", "%s fuzz %d %d" % (P, seed, args.rounds), "-e", text]
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(cmd, cwd=args.progs, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, env=env, start_new_session=True)
        except OSError as e:
            return seed, "cannot run: %s" % e, -1, 0.0, 0, "", cmd
        timed_out = False
        stacks = ""
        try:
            p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            stacks = session_stacks(p.pid)
        # whatever is left of the session (ubt, its watchdog, the target)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        secs = time.monotonic() - t0
        out_len = out.seek(0, 2)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace") + stacks
    why = None
    if timed_out:
        why = "no end after %d s" % args.timeout
    elif p.returncode < 0:
        why = "killed by signal %d" % -p.returncode
    elif any(s in stderr for s in SANITIZER):
        why = "sanitizer report"
    elif out_len > args.max_output:
        why = "%d bytes of output (at most %d)" % (out_len, args.max_output)
    elif p.returncode == 1 and "ERROR:" not in stderr:
        why = "exit 1 without an error"
    return seed, why, p.returncode, secs, out_len, stderr, cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--tracer", help="ubt to run (default BUILDDIR/tools/ubt)")
    ap.add_argument("--seeds", type=int, default=48)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=90)
    ap.add_argument("--max-output", type=int, default=8 << 20)
    ap.add_argument("--summary")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    top = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    builddir = os.path.join(top, args.builddir)
    args.progs = os.path.join(builddir, "tests", "progs")
    args.tracer = os.path.abspath(args.tracer or os.path.join(builddir, "tools", "ubt"))
    passed = failed = 0
    if not os.path.exists(os.path.join(args.progs, P)) or not os.path.exists(args.tracer):
        print("FAIL  shm fuzz: %s or %s missing (build first)" % (P, args.tracer))
        failed = 1
    else:
        seeds = range(args.first, args.first + args.seeds)
        codes = {}
        with ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for seed, why, rc, secs, out_len, stderr, cmd in ex.map(
                    lambda s: run_case(args, s), seeds):
                codes[rc] = codes.get(rc, 0) + 1
                if why:
                    failed += 1
                    print("FAIL  seed %d: %s (exit %d, %.1f s, %d bytes of output)"
                          % (seed, why, rc, secs, out_len))
                    print("      cd %s && %s" % (args.progs, " ".join(shlex.quote(c) for c in cmd)))
                    for line in stderr.splitlines()[-60:]:
                        print("      | " + line)
                else:
                    passed += 1
                    if args.v:
                        named = [l for l in stderr.splitlines() if "shared memory" in l]
                        print("ok    seed %d: exit %d, %.1f s, %d bytes%s"
                              % (seed, rc, secs, out_len,
                                 ", " + named[0][:150] if named else ""))
        print("exit codes: %s" % ", ".join("%d: %d" % kv for kv in sorted(codes.items())))
    print("%d passed, %d failed" % (passed, failed))
    if args.summary:
        with open(args.summary, "w") as f:
            f.write("%d %d 0\n" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
