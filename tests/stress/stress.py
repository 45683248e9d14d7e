#!/usr/bin/env python3
"""tests/stress/stress.py - ubt must never hurt the process it traces.

    python3 tests/stress/stress.py [--builddir build] [--cycles 200] [--kills 50]
                                   [--flood 3000000] [--summary FILE]

Target: tests/progs' hammer (worker threads calling f() in endless loops
and checking every result).  Two experiments, each a number of cases:

  cycles   attach ubt with -p, let the probe count for a moment, detach with
           SIGINT; after every detach the bytes of f in the target must equal
           the bytes before the first attach, ubt's count must be > 0, and the
           target must still run.
  kills    attach ubt, then SIGKILL it at a random moment (while attaching,
           while attached, while detaching); ubt's watchdog must restore the
           target: f's bytes equal the original, ubt's memory is gone from
           /proc/PID/maps, and a new ubt attaches and counts afterwards.

  limits   (tests/progs' limits) printf events at 1 M/s and at full speed
           into a -p target: every event printed or reported as `Lost N
           events`, and the resident memory of ubt's mappings in the target
           stays bounded (measured every 10 ms); 1,000 probes attached by a
           wildcard with exact counts; a map of 4,096 keys offered 100,000:
           every dropped update reported.

At the end the target is stopped with SIGTERM and must report `bad 0`
(no wrong result from f ever) and exit 0.  Prints one line per case that
fails, a table of figures, and `N passed, N failed`.  CI runs fewer rounds
(tests/run.sh); the full counts are the defaults.
"""

import argparse
import os
import random
import re
import selectors
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from proc import ubt_rss_kb  # noqa: E402


def read_bytes(pid, addr, n=16):
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as f:
        f.seek(addr)
        return f.read(n)


def ubt_maps(pid):
    try:
        with open("/proc/%d/maps" % pid) as f:
            return sum(1 for line in f if "memfd:ubt" in line)
    except FileNotFoundError:
        return -1  # the target is gone


class Target:
    def __init__(self, prog, threads=2):
        self.p = subprocess.Popen([prog, str(threads)], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        line = self.p.stdout.readline()
        m = re.match(r"ready (\d+) f=(0x[0-9a-f]+)", line)
        if not m:
            raise SystemExit("hammer did not start: %r" % line)
        self.pid = int(m.group(1))
        self.f = int(m.group(2), 16)
        self.orig = read_bytes(self.pid, self.f)

    def alive(self):
        return self.p.poll() is None

    def finish(self):
        self.p.send_signal(signal.SIGTERM)
        out, _ = self.p.communicate(timeout=30)
        return self.p.returncode, out


def start_ubt(ubt, pid, prog):
    return subprocess.Popen([ubt, "-p", str(pid), "-e",
                             'BEGIN { printf("live\\n"); } uprobe:%s:f { @c = count(); }' % prog],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_line(p, want, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            return False
        if line.strip() == want:
            return True
    return False


def wait_watchdog(pid, timeout=10):
    """After ubt died: wait until its memory is gone from the target."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = ubt_maps(pid)
        if n == 0:
            return True
        if n < 0:
            return False
        time.sleep(0.02)
    return False


def session_gone(p, timeout=10):
    """Waits until no process of ubt's session (the watchdog) is left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def cycles(ubt, prog, n, fails, figures):
    t = Target(prog)
    for i in range(n):
        u = start_ubt(ubt, t.pid, prog)
        ok = wait_line(u, "live")
        time.sleep(random.uniform(0.0, 0.05))
        u.send_signal(signal.SIGINT)
        out, err = u.communicate(timeout=30)
        m = re.search(r"@c: (\d+)", out)
        now = read_bytes(t.pid, t.f) if t.alive() else None
        problems = []
        if not ok or u.returncode != 0 or not m:
            problems.append("ubt failed (rc %s): %s" % (u.returncode, err.strip()[-300:]))
        if not t.alive():
            problems.append("target died (status %s)" % t.p.returncode)
            fails.append("cycle %d: %s" % (i, "; ".join(problems)))
            figures["target crashes or wrong results"] += 1
            return
        elif now != t.orig:
            problems.append("f's bytes not restored: %s" % now.hex())
            figures["bytes left modified"] += 1
        if problems:
            fails.append("cycle %d: %s" % (i, "; ".join(problems)))
        figures["attach/detach cycles"] += 1
    rc, out = t.finish()
    if rc != 0 or " bad 0" not in out:
        fails.append("cycles: target reported %r (rc %d)" % (out.strip(), rc))
        figures["target crashes or wrong results"] += 1


def kills(ubt, prog, n, fails, figures):
    t = Target(prog)
    for i in range(n):
        u = start_ubt(ubt, t.pid, prog)
        # anywhere from before the attach completes to well after it; half
        # of the kills fall in the first 40 ms, where attaching happens
        time.sleep(random.uniform(0.0, 0.04 if i % 2 else 0.15))
        try:
            os.kill(u.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        u.communicate(timeout=30)
        problems = []
        if not session_gone(u) or not wait_watchdog(t.pid):
            problems.append("ubt's memory still mapped in the target")
            figures["memory left mapped"] += 1
        if not t.alive():
            problems.append("target died (status %s)" % t.p.returncode)
            fails.append("kill %d: %s" % (i, "; ".join(problems)))
            figures["target crashes or wrong results"] += 1
            return
        if read_bytes(t.pid, t.f) != t.orig:
            problems.append("f's bytes not restored")
            figures["bytes left modified"] += 1
        # a new ubt must be able to attach and count
        u2 = start_ubt(ubt, t.pid, prog)
        ok = wait_line(u2, "live")
        time.sleep(0.02)
        u2.send_signal(signal.SIGINT)
        out, err = u2.communicate(timeout=30)
        m = re.search(r"@c: (\d+)", out)
        if not ok or not m or int(m.group(1)) == 0:
            problems.append("re-attach failed: %s" % (out + err).strip()[-300:])
        if problems:
            fails.append("kill %d: %s" % (i, "; ".join(problems)))
        figures["ubt killed with SIGKILL"] += 1
    rc, out = t.finish()
    if rc != 0 or " bad 0" not in out:
        fails.append("kills: target reported %r (rc %d)" % (out.strip(), rc))
        figures["target crashes or wrong results"] += 1


# ---- deaths: ubt dies (or detaches) at a random moment, int3 and jump sites --

def target_state(pid, f, g):
    """What the tracer must leave as it found it: f's and g's bytes, the
    mappings, the caught signals (SigCgt) and the open descriptors."""
    with open("/proc/%d/maps" % pid) as fh:
        maps = [" ".join(l.split()[:2] + l.split()[5:]) for l in fh]
    with open("/proc/%d/status" % pid) as fh:
        cgt = re.search(r"^SigCgt:\s*(\S+)", fh.read(), re.M).group(1)
    fds = sorted(os.listdir("/proc/%d/fd" % pid))
    return {"f": read_bytes(pid, f), "g": read_bytes(pid, g, 8), "maps": maps, "SigCgt": cgt,
            "fds": fds}


def traced(pid):
    try:
        with open("/proc/%d/status" % pid) as fh:
            return int(re.search(r"^TracerPid:\s*(\d+)", fh.read(), re.M).group(1)) != 0
    except (OSError, AttributeError):
        return False


def wait_stderr(p, pattern, timeout=20):
    """Reads p's stderr (a binary pipe) until a line matches; the text read."""
    fd, text = p.stderr.fileno(), b""
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if not sel.select(timeout=0.05):
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        text += chunk
        if re.search(pattern.encode(), text):
            return True, text.decode(errors="replace")
    return False, text.decode(errors="replace")


def deaths(ubt, prog, n, fails, figures, threads=4):
    """n rounds: ubt attaches to prog_life (jump site f, int3 site g, all
    threads calling both) and is SIGKILLed 0-15 ms after the target's
    TracerPid turns non-zero (attaching), 0-50 ms into steady state, or
    0-20 ms after a SIGINT (detaching), or detaches normally.  After each,
    once the watchdog is gone, the target must run, with f's and g's bytes,
    its mappings, its signal actions and its descriptors as before."""
    t = subprocess.Popen([prog, "hammer", str(threads)], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    m = re.match(r"ready (\d+) f=(0x[0-9a-f]+) g=(0x[0-9a-f]+)", t.stdout.readline())
    if not m:
        fails.append("deaths: prog_life did not start")
        return
    pid, f, g = int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)
    before = target_state(pid, f, g)
    script = "uprobe:%s:f { @f = count(); } uprobe:%s:g { @g = count(); }" % (prog, prog)
    phases = ["attach", "steady", "detach", "detach+kill"]
    for i in range(n):
        phase = phases[i % 4] if i < 4 else random.choice(phases)
        u = subprocess.Popen([ubt, "-v", "-p", str(pid), "-e", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        problems, armed, lines = [], False, ""
        if phase == "attach":
            deadline = time.monotonic() + 20
            while not traced(pid) and time.monotonic() < deadline and u.poll() is None:
                pass
            time.sleep(random.uniform(0.0, 0.015))
            u.kill()
        else:
            armed, lines = wait_stderr(u, r"sites? patched")
            if not armed:
                problems.append("ubt did not arm: %s" % lines[-300:])
            time.sleep(random.uniform(0.0, 0.05))
            if phase == "steady":
                u.kill()
            else:
                u.send_signal(signal.SIGINT)
                if phase == "detach+kill":
                    time.sleep(random.uniform(0.0, 0.02))
                    u.kill()
        out, err = u.communicate(timeout=60)
        out, err = out.decode(errors="replace"), lines + err.decode(errors="replace")
        if phase == "detach" and armed and (u.returncode != 0 or "@g: " not in out):
            problems.append("ubt failed (rc %s): %s" % (u.returncode, err.strip()[-300:]))
        if not session_gone(u, 30):
            problems.append("the watchdog did not finish")
        if t.poll() is not None:
            fails.append("death %d (%s): target died (status %s)" % (i, phase, t.returncode))
            figures["target crashes or wrong results"] += 1
            return
        now = target_state(pid, f, g)
        for k in ("f", "g"):
            if now[k] != before[k]:
                problems.append("%s's bytes not restored: %s" % (k, now[k].hex()))
                figures["bytes left modified"] += 1
        if now["maps"] != before["maps"]:
            extra = sorted(set(now["maps"]) ^ set(before["maps"]))
            problems.append("mappings differ: %s" % "; ".join(extra)[:300])
            figures["memory left mapped"] += 1
        for k in ("SigCgt", "fds"):
            if now[k] != before[k]:
                problems.append("%s differ: %s -> %s" % (k, before[k], now[k]))
        if problems:
            fails.append("death %d (%s): %s" % (i, phase, "; ".join(problems)))

        figures["tracer deaths and detaches (%s)" % phase] += 1
    t.send_signal(signal.SIGTERM)
    out, _ = t.communicate(timeout=30)
    if t.returncode != 0 or " bad 0" not in out:
        fails.append("deaths: target reported %r (rc %d)" % (out.strip(), t.returncode))
        figures["target crashes or wrong results"] += 1


def count_events(out):
    """printf lines and `Lost N events` in ubt's output."""
    printed = sum(1 for l in out.splitlines() if re.fullmatch(r"\d+ \d+ \d+", l))
    lost = sum(int(m) for m in re.findall(r"^Lost (\d+) events$", out, re.M))
    return printed, lost


def flood(ubt, prog, n, rate, fails, figures, name):
    """n printf events at `rate` per second (0: full speed) into a -p target."""
    t = subprocess.Popen([prog, "flood-wait", str(n), str(rate)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    if t.stdout.readline().strip() != "ready":
        fails.append("%s: target did not start" % name)
        return
    script = 'BEGIN { printf("live\\n"); } uprobe:%s:f { printf("%%d %%d %%d\\n", arg0, arg0, arg0); }' % prog
    out_path = "/tmp/ubt-stress-flood-%d.txt" % os.getpid()
    u = subprocess.Popen([ubt, "-o", out_path, "-p", str(t.pid), "-e", script],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # BEGIN's line reaches the file once armed
        if os.path.exists(out_path) and "live" in open(out_path).read(100):
            break
        time.sleep(0.01)
    rss0 = ubt_rss_kb(t.pid)
    rss_max = rss0
    t.send_signal(signal.SIGUSR1)
    start = time.monotonic()
    line = ""
    sel = selectors.DefaultSelector()
    sel.register(t.stderr, selectors.EVENT_READ)
    while time.monotonic() - start < 60:
        rss_max = max(rss_max, ubt_rss_kb(t.pid))
        if sel.select(timeout=0.01):
            line = t.stderr.readline()
            break
    time.sleep(0.3)  # let ubt drain what is left
    rss_max = max(rss_max, ubt_rss_kb(t.pid))
    u.send_signal(signal.SIGINT)
    uout, uerr = u.communicate(timeout=30)
    with open(out_path) as f:
        out = f.read()
    os.unlink(out_path)
    t.send_signal(signal.SIGTERM)
    t.communicate(timeout=30)
    m = re.match(r"flood (\d+) calls in (\d+) us checksum (\d+)", line)
    printed, lost = count_events(out)
    if not m or u.returncode != 0:
        fails.append("%s: flood or ubt failed: %r %s" % (name, line, uerr.strip()[-300:]))
        return
    us = int(m.group(2))
    if printed + lost != n:
        fails.append("%s: %d printed + %d lost != %d events" % (name, printed, lost, n))
    if rss_max > 4096:
        fails.append("%s: ubt's memory in the target reached %d KiB" % (name, rss_max))
    if t.returncode != 0:
        figures["target crashes or wrong results"] += 1
        fails.append("%s: target exited %s" % (name, t.returncode))
    figures["printf events sent (%s)" % name] += n
    figures["  %s: rate, printed, lost, KiB in target" % name] = "%.2f M/s, %d, %d, %d -> %d" % (
        n / us, printed, lost, rss0, rss_max)
    figures["drops reported (lost events + map updates)"] += lost


def many(ubt, prog, fails, figures):
    """1,000 probes by a wildcard (BPFTRACE_MAX_PROBES raised, as for
    bpftrace): attach time, counts, memory."""
    p = subprocess.run([ubt, "-v", "-c", "%s many 100" % prog, "-e",
                        "uprobe:%s:fn* { @c = count(); @f[func] = count(); }" % prog],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, BPFTRACE_MAX_PROBES="1000"))
    n100 = len(re.findall(r"^@f\[fn\d{3}\]: 100$", p.stdout, re.M))
    stop = re.search(r"(\d+) sites patched \((\d+) with a breakpoint\); threads stopped for "
                     r"([0-9.]+) ms", p.stderr)
    if p.returncode != 0 or "@c: 100000" not in p.stdout or n100 != 1000 or not stop:
        fails.append("1,000 probes: rc %d, %d functions counted 100 times, %s" % (
            p.returncode, n100, p.stderr.strip()[-300:]))
        return
    figures["probes in one script (wildcard)"] = int(stop.group(1))
    figures["  sites with a breakpoint, threads stopped"] = "%s, %s ms" % (stop.group(2),
                                                                          stop.group(3))


def full_map(ubt, prog, fails, figures):
    """100,000 distinct keys offered to a map of 4,096."""
    p = subprocess.run([ubt, "-c", "%s flood 100000" % prog, "-e",
                        "uprobe:%s:f { @m[arg0] = count(); }" % prog],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"WARNING: (\d+) updates of @m dropped: the map was full \(4096 keys", p.stderr)
    keys = len(re.findall(r"^@m\[\d+\]: 1$", p.stdout, re.M))
    if p.returncode != 0 or not m or int(m.group(1)) != 100000 - 4096 or keys != 4096:
        fails.append("full map: rc %d, %d keys, %s" % (p.returncode, keys, p.stderr[-300:]))
        return
    figures["map updates offered to a full map"] += 100000 - 4096
    figures["drops reported (lost events + map updates)"] += int(m.group(1))


def limits(ubt, prog, n, fails, figures):
    flood(ubt, prog, n, 1000000, fails, figures, "1 M/s")
    flood(ubt, prog, n, 0, fails, figures, "full speed")
    many(ubt, prog, fails, figures)
    full_map(ubt, prog, fails, figures)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--deaths", type=int, default=200)
    ap.add_argument("--flood", type=int, default=3000000, help="printf events per flood")
    ap.add_argument("--only", help="run one experiment: cycles, kills, deaths, limits")
    ap.add_argument("--summary")
    a = ap.parse_args()
    ubt = os.path.abspath(os.path.join(a.builddir, "tools", "ubt"))
    prog = os.path.abspath(os.path.join(a.builddir, "tests", "progs", "prog_hammer_O2_pie"))
    figures = {k: 0 for k in ("attach/detach cycles", "ubt killed with SIGKILL",
                              "target crashes or wrong results", "bytes left modified",
                              "memory left mapped", "printf events sent (1 M/s)",
                              "printf events sent (full speed)",
                              "map updates offered to a full map",
                              "drops reported (lost events + map updates)",
                              "tracer deaths and detaches (attach)",
                              "tracer deaths and detaches (steady)",
                              "tracer deaths and detaches (detach)",
                              "tracer deaths and detaches (detach+kill)")}
    fails = []
    progs = os.path.abspath(os.path.join(a.builddir, "tests", "progs"))
    cases = 0
    if a.only in (None, "cycles"):
        cycles(ubt, prog, a.cycles, fails, figures)
        cases += a.cycles
    if a.only in (None, "kills"):
        kills(ubt, prog, a.kills, fails, figures)
        cases += a.kills
    if a.only in (None, "deaths"):
        deaths(ubt, os.path.join(progs, "prog_life_O2_pie"), a.deaths, fails, figures)
        cases += a.deaths
    if a.only in (None, "limits"):
        limits(ubt, os.path.join(progs, "prog_limits_O2_pie"), a.flood, fails, figures)
        cases += 4
    for f in fails:
        print("FAIL", f)
    for k, v in figures.items():
        print("%-44s %s" % (k, v))
    nfail = min(len(fails), cases)
    print("%d passed, %d failed" % (cases - nfail, nfail))
    if a.summary:
        with open(a.summary, "w") as f:
            f.write("%d %d 0\n" % (cases - nfail, nfail))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
