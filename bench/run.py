#!/usr/bin/env python3
"""bench/run.py - what a `uprobe { @c = count(); }` costs per hit, for ubt and
for kernel bpftrace, in one run.

    python3 bench/run.py [--builddir build] [--rounds 9] [--cycles 1] [--calls 20000000]
                         [--bpftrace-calls 20000] [--threads 1,2]
                         [--tracer ubt,bpftrace]

For every thread count and tracer it starts bench's `count` program
(BUILDDIR/bench/count THREADS CALLS), which times, in each round and each
thread, CALLS calls of f and CALLS calls of its twin g with the thread's CPU
clock (--probe python: /usr/bin/python3.11 bench/py_calls.py, the same
in Python).  The driver
  1. collects ROUNDS rounds with nothing attached (f and g unprobed),
  2. attaches `BEGIN { printf("live\\n"); } uprobe:BIN:f { @c = count(); }`
     with -p, waits for `live`, collects ROUNDS rounds that started after it,
  3. stops the tracer with SIGINT and checks its `@c` is at least the calls
     made in those rounds,
  4. with --cycles K, does 1-3 K times in the same program (each cycle's
     unprobed rounds are the ones after the previous detach),
and reports medians (over all rounds of all threads) in ns per call:

  unprobed f    f with nothing attached
  probed f      f with the probe attached
  g             the unprobed twin in the probed rounds (the same moment)
  extra/hit     median(f - g, probed rounds) - median(f - g, unprobed rounds)
                (with --cycles, these two columns are medians over the cycles)
  extra g       median(g, probed rounds) - median(g, unprobed rounds): the cost
                where the probe fires for g too (--probe raw_syscalls under
                kernel tracepoints), else drift between the two phases

--probe python fires for f and g alike (python:function__entry fires for
every Python call), so f - g says nothing there.  Its extra/hit is instead
the mean of f's and g's probed - unprobed medians divided by the hits per
call, which a calibration run counts first: the tracer runs the program
(-c) for one round of CAL calls and one of 2*CAL, and the difference of the
two @c over the 2*CAL calls it adds is the hits per call (printed with both
@c, which are equal between tracers when they count the same).

--tracer semaphore stands for no tracer at all: it only increments the
USDT semaphores of the --probe's probe in the running program (through
/proc/PID/mem, decremented again after the rounds), so its row is what the
program itself spends once the probe is enabled (CPython computes the
file name, function name and line number of every call for
function__entry); a tracer's cost per hit is its row minus this one (printed
below the tracer's row when the semaphore row came first).
--semaphore-base measures that difference within each cycle instead: the
semaphores stay set through the whole run (unprobed rounds included), so a
tracer's extra columns are directly its cost beyond the enabled probe's
(the semaphore row itself still compares set with not set).
For python:

    bench/run.py --probe python --threads 1 --rounds 20 --cycles 10 \
        --calls 50000 --bpftrace-calls 2000 --tracer semaphore,ubt,bpftrace
    bench/run.py --probe python --threads 1 --rounds 20 --cycles 10 \
        --calls 50000 --tracer ubt --semaphore-base

Kernel uprobes cost about 1-11 us per hit on this machine class, so bpftrace
runs with far fewer calls per round (--bpftrace-calls).  Needs root.
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time


class Target:
    """The count program; its round lines are parsed as they arrive."""

    def __init__(self, cmd, threads, calls, pause_ms=0):
        self.p = subprocess.Popen(cmd + [str(threads), str(calls), "0", str(pause_ms)],
                                  stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.rounds = []      # (thread, start, end, f, g)
        self.cond = threading.Condition()
        self.ready = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                w = line.split()
                if w and w[0] == "ready":
                    self.ready = True
                elif w and w[0] == "round" and len(w) == 6:
                    self.rounds.append((int(w[1]), int(w[2]), int(w[3]),
                                        float(w[4]), float(w[5])))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def collect(self, n, since_ns, timeout):
        """Wait for n rounds that started at or after since_ns."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                got = [r for r in self.rounds if r[1] >= since_ns]
                if len(got) >= n or self.p.poll() is not None:
                    return got[:n] if len(got) >= n else None
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 0.1))

    def stop(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()


# --probe: the benchmark program and what is attached to its f (each counts
# its calls in @c)
PROBES = {
    "uprobe": ("count", "uprobe:{b}:f { @c = count(); }"),
    "usdt": ("count_usdt", "usdt:{b}:bench:hit { @c = count(); }"),
    # uprobe + uretprobe, both counting (DESIGN.md: <= 5 ns per call)
    "ret": ("count", "uprobe:{b}:f { @c = count(); } uretprobe:{b}:f { @r = count(); }"),
    # the latency idiom (DESIGN.md: <= 30 ns per call)
    # (no @c: the hits are counted by @h itself, see detach())
    "latency": ("count", "uprobe:{b}:f { @s[tid] = nsecs; } "
                "uretprobe:{b}:f { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }"),
    # the same with sum() for hist() and no delete(), for builds without them
    "latency_sum": ("count", "uprobe:{b}:f { @s[tid] = nsecs; @c = count(); } "
                    "uretprobe:{b}:f { @t = sum(nsecs - @s[tid]); }"),
    # one nsecs per call, to see what the clock costs (rdtsc)
    "nsecs": ("count", "uprobe:{b}:f { @t = sum(nsecs); @c = count(); }"),
    # issue 16: a count per system call (DESIGN.md: <= 20 ns per call); f and g
    # each make a getppid(2), g from an anonymous page ubt does not patch
    # (bench/count_sys.c): for ubt extra/hit is f - g, for kernel
    # tracepoints, which fire for both, it is the `extra g` column
    "raw_syscalls": ("count_sys", "tracepoint:raw_syscalls:sys_enter { @c = count(); }"),
}
# issue 7: symbols and stacks (usym of an argument; the stack of f, whose
# frames in bench/count are f, time_loop, the thread function, start_thread)
PROBES.update({
    "usym": ("count", "uprobe:{b}:f { @[usym(arg0)] = count(); @c = count(); }"),
    "ustack": ("count", "uprobe:{b}:f { @[ustack] = count(); @c = count(); }"),
})

# issue 7's budgets: ustack with eight frames (f through bench/stack_chain.c,
# time_loop, worker, start_thread), built with and without frame pointers,
# and usym of a callback argument taking four values in rotation
# (bench/usym_cb.c, as SPDK's send_msg.bt counts @[usym(arg1)])
# issue 18: python:function__entry of Debian's (stripped) python3.11, run on
# bench/py_calls.py; the probe fires for f and g (see the header)
PROBES.update({
    "python": ("py_calls.py", "usdt:{b}:python:function__entry { @c = count(); }"),
})
# issue 18: the usdt probe in a stripped copy of count_usdt
PROBES.update({
    "usdt_strip": ("count_usdt_strip", "usdt:{b}:bench:hit { @c = count(); }"),
})
# programs run by an interpreter: the traced binary is the interpreter
INTERPRETERS = {"py_calls.py": "/usr/bin/python3.11"}
# probes that fire for g as well as for f
BOTH_FIRE = {"python"}

PROBES.update({
    "ustack8_fp": ("stack_fp", "uprobe:{b}:f { @[ustack] = count(); @c = count(); }"),
    "ustack8_nofp": ("stack_nofp", "uprobe:{b}:f { @[ustack] = count(); @c = count(); }"),
    "usym_cb": ("count_usym", "uprobe:{b}:f { @[usym(arg0)] = count(); @c = count(); }"),
})


# issue 18: the count probe on each function shape of bench/shapes.S (a
# 5-byte leaf, an endbr64 entry, a push-first entry, a leaf entered by a
# tail call); DESIGN.md: <= 2 ns per hit on every shape
PROBES.update({
    shape: ("count_" + shape, "uprobe:{b}:f { @c = count(); }")
    for shape in ("leaf5", "endbr", "push", "tail")
})


def target(args):
    """(the command that starts the benchmark program, without its
    arguments; the binary the probe names)"""
    name = PROBES[args.probe][0]
    if name in INTERPRETERS:
        here = os.path.dirname(os.path.abspath(__file__))
        return [INTERPRETERS[name], os.path.join(here, name)], INTERPRETERS[name]
    prog = os.path.join(args.builddir, "bench", name)
    return [prog], prog


def hits_per_call(args, tracer, cal):
    """Count the probe's hits per call of f or g: run the program under the
    tracer (-c) for one round of cal calls and one of 2*cal.  Returns
    (hits per call, @c of the first run, @c of the second) or (None, error)."""
    cmd, binary = target(args)
    script = probe_script(args.probe, args.body).replace("{b}", binary)
    cs = []
    for n in (cal, 2 * cal):
        p = subprocess.run([tracer, "-c", " ".join(cmd + ["1", str(n), "1"]), "-e", script],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=args.timeout)
        m = re.search(r"^@c: (\d+)$", p.stdout, re.M)
        if p.returncode or not m:
            return None, "calibration run exited %d, no @c: %s" % (
                p.returncode, p.stderr.strip().splitlines()[-1:])
        cs.append(int(m.group(1)))
    return (cs[1] - cs[0]) / (2 * cal), cs[0], cs[1]


def usdt_semaphores(binary, script):
    """Link-time addresses of the semaphores of the USDT probes the script
    names (provider and name as written, no wildcards), from readelf -n;
    adjusted as systemtap's notes say when .stapsdt.base moved."""
    wanted = set(re.findall(r"usdt:[^:\s]+:(\w+):(\w+)", script))
    sections = subprocess.run(["readelf", "-SW", binary], capture_output=True,
                              text=True, check=True).stdout
    m = re.search(r"\.stapsdt\.base\s+PROGBITS\s+([0-9a-f]+)", sections)
    base_actual = int(m.group(1), 16) if m else None
    notes = subprocess.run(["readelf", "-nW", binary], capture_output=True,
                           text=True, check=True).stdout
    sems = set()
    for prov, name, base, sem in re.findall(
            r"Provider: (\S+)\s+Name: (\S+)\s+Location: \S+, Base: (0x[0-9a-f]+), "
            r"Semaphore: (0x[0-9a-f]+)", notes):
        if (prov, name) in wanted and int(sem, 16):
            adj = base_actual - int(base, 16) if base_actual is not None else 0
            sems.add(int(sem, 16) + adj)
    return sorted(sems)


def load_bias(pid, binary):
    """Where the program's binary is loaded minus its first PT_LOAD's address."""
    real = os.path.realpath(binary)
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and w[5] == real and int(w[2], 16) == 0:
                start = int(w[0].split("-")[0], 16)
                break
        else:
            raise RuntimeError("%s is not mapped in %d" % (binary, pid))
    phdrs = subprocess.run(["readelf", "-lW", binary], capture_output=True,
                           text=True, check=True).stdout
    vaddr = min(int(v, 16) for v in re.findall(r"^\s*LOAD\s+\S+\s+(0x[0-9a-f]+)",
                                                 phdrs, re.M))
    return start - (vaddr & ~0xfff)


def add_semaphores(pid, addrs, delta):
    """Add delta to each 16-bit semaphore in the running program."""
    with open("/proc/%d/mem" % pid, "r+b", buffering=0) as mem:
        for a in addrs:
            mem.seek(a)
            v = int.from_bytes(mem.read(2), "little")
            mem.seek(a)
            mem.write(((v + delta) & 0xffff).to_bytes(2, "little"))


def probe_script(probe, body):
    """The script attached to f: a --probe entry, or `uprobe:{b}:f { BODY }`."""
    if body:
        return "uprobe:{b}:f { %s }" % body
    return PROBES[probe][1]


def attach(tracer, pid, binary, timeout, probe="uprobe", body=None, out=None):
    """Start `tracer -p pid` with the probe; wait until BEGIN ran.  With
    out, the tracer writes to that file (-o) and the file is watched."""
    script = 'BEGIN { printf("live\\n"); } ' + probe_script(probe, body).replace("{b}", binary)
    cmd = [tracer, "-p", str(pid)] + (["-o", out] if out else []) + ["-e", script]
    if out and os.path.exists(out):
        os.unlink(out)
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + timeout
    # read stdout line by line until `live` (a reader thread keeps the
    # deadline honest if the tracer prints nothing)
    lines = []
    ev = threading.Event()

    def reader():
        for line in p.stdout:
            lines.append(line)
            if line.strip() == "live":
                ev.set()
        ev.set()
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    if out:
        while time.monotonic() < deadline and p.poll() is None:
            try:
                with open(out, "rb") as f:
                    if b"\nlive\n" in f.read(4096):
                        lines.append("live\n")
                        break
            except OSError:
                pass
            time.sleep(0.01)
    else:
        ev.wait(max(0.0, deadline - time.monotonic()))
    return p, lines, t


def out_summary(out):
    """(events printed, events reported lost, @c) from a -o file."""
    events = lost = 0
    c = None
    with open(out, "rb") as f:
        for line in f:
            if line.startswith(b"Lost ") and line.endswith(b" events\n"):
                lost += int(line.split()[1])
            elif line.startswith(b"@c: "):
                c = int(line.split()[1])
            elif line.startswith(b"e "):
                events += 1
    return events, lost, c


def detach(p, lines, t, out=None):
    """SIGINT the tracer; returns (exit code, its @c value or None, stderr)."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        rc = p.wait()
    t.join(timeout=5)
    err = p.stderr.read()
    text = "".join(lines)
    if out:
        with open(out, errors="replace") as f:
            text += f.read()
    m = re.search(r"^@c: (\d+)$", text, re.M)
    if m:
        return rc, int(m.group(1)), err
    # no @c (the latency idiom, measured exactly as written): the hits are
    # the calls its histogram counted
    buckets = re.findall(r"^\[[^\]\n]*[\])]\s+(\d+) \|", text, re.M)
    return rc, sum(int(b) for b in buckets) if buckets else None, err


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def check_count(args, tracer_name, rc, c, err, probed, calls, hpc, attached_s):
    """What is wrong with a tracer's run over the probed rounds ('' when
    nothing), or the printf drain summary of --out."""
    note = ""
    want = len(probed) * calls
    if args.probe in BOTH_FIRE:
        want = int(want * 2 * hpc)
    if "WARNING" in err:
        note = "%s warned: %s" % (tracer_name, err.strip().splitlines()[0])
    elif rc != 0:
        note = "%s exited %d" % (tracer_name, rc)
    elif c is None and args.body and "@c = count()" not in args.body:
        pass                      # another body: no @c to check
    elif c is None:
        note = "%s printed no @c" % tracer_name
    elif c < want:
        note = "@c = %d < %d calls made in the measured rounds" % (c, want)
    if args.out and not note:
        # printf events: each line `e ...` is one event; every hit must
        # be printed or reported lost
        events, lost, _ = out_summary(args.out)
        if c is not None and events + lost != c:
            note = "%d events printed + %d reported lost != %d hits" % (events, lost, c)
        else:
            # events flow only while f's loops run (g's loops are
            # unprobed): the drain rate is per second of f loops
            frac = sum(r[3] for r in probed) / sum(r[3] + r[4] for r in probed)
            note = "drained %.2f M events/s, %d printed, %d lost (reported)" % (
                events / (attached_s * frac) / 1e6, events, lost) if not args.pause_ms \
                else "%d events printed, %d lost (reported)" % (events, lost)
    return note


def measure(args, tracer_name, tracer, threads):
    calls = args.bpftrace_calls if tracer_name == "bpftrace" else args.calls
    hpc = 1.0
    info = ""                     # printed after the row, not a failure
    if args.probe in BOTH_FIRE:
        # the semaphore alone counts nothing: ubt counts for it
        cal = hits_per_call(args, args.ubt_path if tracer_name == "semaphore" else tracer,
                            args.calibrate_calls)
        if cal[0] is None:
            return None, cal[1]
        hpc = cal[0]
        info = "%.3f hits per call: @c %d and %d" % cal
        if hpc <= 0:
            return None, info
    cmd, prog = target(args)
    script = probe_script(args.probe, args.body).replace("{b}", prog)
    tgt = Target(cmd, threads, calls, args.pause_ms)
    cycles = []                   # (unprobed rounds, probed rounds) per cycle
    note = ""
    held = []                     # --semaphore-base: semaphores held for the run
    try:
        # the first round of the program warms up
        if tgt.collect(1, 0, args.timeout) is None:
            return None, "the count program produced no rounds"
        since = time.monotonic_ns()
        if args.semaphore_base and tracer_name != "semaphore":
            held = semaphore_addrs(tgt, prog, script)
            if not held:
                return None, "the probe has no USDT semaphore"
            add_semaphores(tgt.p.pid, held, 1)
            since = time.monotonic_ns()
        for cycle in range(args.cycles):
            base = tgt.collect(args.rounds, since, args.timeout)
            if base is None:
                return None, "the count program produced no rounds"
            if tracer_name == "semaphore":
                addrs = semaphore_addrs(tgt, prog, script)
                if not addrs:
                    return None, "the probe has no USDT semaphore"
                add_semaphores(tgt.p.pid, addrs, 1)
                try:
                    probed = tgt.collect(args.rounds, time.monotonic_ns(), args.timeout * 4)
                finally:
                    if tgt.p.poll() is None:
                        add_semaphores(tgt.p.pid, addrs, -1)
                if probed is None:
                    return None, "no rounds completed with the semaphore set"
            else:
                p, lines, t = attach(tracer, tgt.p.pid, prog, args.timeout, args.probe,
                                     args.body, args.out)
                if not any(l.strip() == "live" for l in lines):
                    rc, c, err = detach(p, lines, t, args.out)
                    return None, "%s did not attach (exit %s): %s" % (
                        tracer_name, rc, err.strip().splitlines()[-1:] or "")
                live_ns = time.monotonic_ns()
                probed = tgt.collect(args.rounds, live_ns, args.timeout * 4)
                attached_s = (time.monotonic_ns() - live_ns) / 1e9
                rc, c, err = detach(p, lines, t, args.out)
                if probed is None:
                    return None, "no rounds completed while %s was attached" % tracer_name
                n = check_count(args, tracer_name, rc, c, err, probed, calls, hpc,
                                attached_s)
                if n and not note:
                    note = n
            since = time.monotonic_ns()
            cycles.append((base, probed))
        r = rows(cycles, calls, hpc, args.probe in BOTH_FIRE)
        r["info"] = info
        return r, note
    finally:
        if held and tgt.p.poll() is None:
            add_semaphores(tgt.p.pid, held, -1)
        tgt.stop()


def semaphore_addrs(tgt, prog, script):
    """The addresses of the script's USDT semaphores in the running program."""
    sems = usdt_semaphores(prog, script)
    return [a + load_bias(tgt.p.pid, prog) for a in sems] if sems else []


def rows(cycles, calls, hpc, both):
    """A row's medians; with several attach cycles, each extra column is
    the median over cycles of that cycle's probed - unprobed medians (the
    unprobed rounds just before each attach), so drift between cycles
    cancels out."""
    base = [r for b, _ in cycles for r in b]
    probed = [r for _, p in cycles for r in p]

    def extra(col):
        return med([med([col(r) for r in p]) - med([col(r) for r in b]) for b, p in cycles])
    row = {
        "calls": calls,
        "base_f": med([r[3] for r in base]),
        "base_g": med([r[4] for r in base]),
        "f": med([r[3] for r in probed]),
        "g": med([r[4] for r in probed]),
        "extra": extra(lambda r: r[3] - r[4]),
        "extra_g": extra(lambda r: r[4]),
    }
    if both:
        # f and g both fire: each of their probed - unprobed differences is
        # a sample of the cost per call
        row["extra"] = extra(lambda r: (r[3] + r[4]) / 2) / hpc
    return row


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builddir", default=os.path.join(here, "..", "build"))
    ap.add_argument("--ubt", help="ubt binary (default BUILDDIR/tools/ubt)")
    ap.add_argument("--bpftrace", default="bpftrace")
    ap.add_argument("--tracer", default="ubt,bpftrace")
    ap.add_argument("--probe", choices=sorted(PROBES), default="uprobe",
                    help="uprobe: count() on f (bench/count); usdt: the usdt probe in f "
                    "(bench/count_usdt); ret: uprobe + uretprobe counting; latency: the "
                    "latency idiom (nsecs at entry, hist of the difference at return); "
                    "raw_syscalls: count() per system call (bench/count_sys); usdt_strip: "
                    "usdt in a stripped count_usdt; python: python:function__entry of "
                    "/usr/bin/python3.11 on bench/py_calls.py")
    ap.add_argument("--body", help="measure `uprobe:BIN:f { BODY }` instead of a --probe "
                    "(on bench/count; e.g. '@m[tid] = count();')")
    ap.add_argument("--out", help="the tracer writes to this file (-o); printf lines of "
                    "the body must start with `e ` and the body must count hits in @c, "
                    "e.g. --body '@c = count(); printf(\"e %%d %%d %%d\\n\", arg0, 1, 2);'")
    ap.add_argument("--pause-ms", type=int, default=0,
                    help="the target sleeps this long between rounds (lets a printf body's "
                    "events drain, so rounds measure recording them, not dropping them)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--cycles", type=int, default=1,
                    help="attach and detach this many times, ROUNDS unprobed and ROUNDS "
                    "probed rounds each; the extra columns are medians over the cycles")
    ap.add_argument("--calls", type=int, default=20000000)
    ap.add_argument("--bpftrace-calls", type=int, default=20000)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--semaphore-base", action="store_true",
                    help="hold the probe's USDT semaphores set through the whole run, so "
                    "the unprobed rounds have the probe enabled and a tracer's extra "
                    "columns are its cost beyond the program's own")
    ap.add_argument("--calibrate-calls", type=int, default=1000,
                    help="--probe python: calls of the calibration runs counting the hits "
                    "per call")
    args = ap.parse_args()
    args.builddir = os.path.abspath(args.builddir)
    args.ubt_path = args.ubt or os.path.join(args.builddir, "tools", "ubt")
    tracers = {
        "ubt": args.ubt_path,
        "bpftrace": args.bpftrace,
        "semaphore": sys.executable,      # no tracer: bench/run.py sets it
    }
    cmd, prog = target(args)
    if not os.access(cmd[0], os.X_OK):
        sys.exit("bench: %s is not built (ninja -C %s)" % (cmd[0], args.builddir)
                 if len(cmd) == 1 else "bench: %s is not installed" % cmd[0])

    print("probe: %s, attached with -p" % probe_script(args.probe, args.body).replace("{b}", prog))
    print("ns per call, per-thread CPU time, median of %d rounds per thread" % args.rounds)
    print()
    hdr = "%-8s %-8s %9s %10s %10s %8s %10s %8s" % (
        "tracer", "threads", "calls", "unprobed f", "probed f", "g", "extra/hit", "extra g")
    print(hdr)
    print("-" * len(hdr))
    failed = False
    sem_extra = {}                # threads: the semaphore row's extra/hit
    for name in args.tracer.split(","):
        path = tracers.get(name, name)
        if os.sep in path and not os.access(path, os.X_OK) or \
                os.sep not in path and not any(
                    os.access(os.path.join(d, path), os.X_OK)
                    for d in os.environ.get("PATH", "").split(":")):
            print("%-8s (not available: %s)" % (name, path))
            continue
        for threads in [int(x) for x in args.threads.split(",")]:
            r, note = measure(args, name, path, threads)
            if r is None:
                print("%-8s %-8d %s" % (name, threads, note))
                failed = True
                continue
            print("%-8s %-8d %9d %10.2f %10.2f %8.2f %10.2f %8.2f%s" % (
                name, threads, r["calls"], r["base_f"], r["f"], r["g"],
                r["extra"], r["extra_g"], "   (" + note + ")" if note else ""), flush=True)
            if name == "semaphore":
                sem_extra[threads] = r["extra"]
            elif threads in sem_extra and not args.semaphore_base:
                r["info"] += "%s%.2f ns per hit beyond the semaphore alone" % (
                    ", " if r["info"] else "", r["extra"] - sem_extra[threads])
            if r["info"]:
                print("%-8s %-8d (%s)" % ("", threads, r["info"]), flush=True)
            failed |= bool(note) and "printed" not in note
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
