#!/usr/bin/env python3
"""wild.py - a wildcard over all of libc attached to a running
multi-threaded program (tests/e2e/wild.test): the program keeps running
with the same output, and detaching restores every byte of libc's code.

    wild.py UBT PROG [SCRIPT] [--numbers]

PROG is prog_libcalls: `threads N` runs 4 threads calling libc (snprintf,
strlen, qsort, memcpy, strtol, malloc, rand_r) and prints `round K sum S`
every N rounds, S the same each time.  The driver copies libc's executable
mapping out of the running program, attaches `ubt -v -p PID` with SCRIPT
(default `uprobe:libc:* { @c = count(); }`, BPFTRACE_MAX_PROBES raised),
lets it count for a second, stops it with SIGINT, and checks: every round
line printed before, during and after has the first one's sum; libc's code
equals the copy byte for byte; the probes counted.  Prints a few fixed
lines the test expects; with --numbers also ubt's own timings (-v), for
the README.  Any surprise is printed as `PROBLEM: ...` (exit status 1).
"""
import atexit
import os
import re
import signal
import subprocess
import sys
import threading
import time

problems = []


def problem(text):
    problems.append(text)
    print("PROBLEM: " + text)


def exec_maps(pid, name):
    """(start, end) of the executable mappings of the file `name`."""
    out = []
    with open("/proc/%d/maps" % pid) as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 6 and "x" in f[1] and os.path.basename(f[5]).startswith(name):
                lo, hi = (int(x, 16) for x in f[0].split("-"))
                out.append((lo, hi))
    return out


def read_mem(pid, ranges):
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as fh:
        parts = []
        for lo, hi in ranges:
            fh.seek(lo)
            parts.append(fh.read(hi - lo))
        return parts


class Lines:
    """A process's stdout lines, read by a thread as they come."""

    def __init__(self, stream):
        self.lines = []
        self.cv = threading.Condition()
        self.thread = threading.Thread(target=self.run, args=(stream,), daemon=True)
        self.thread.start()

    def run(self, stream):
        for line in stream:
            with self.cv:
                self.lines.append(line.rstrip("\n"))
                self.cv.notify_all()

    def wait(self, pred, timeout):
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for i, line in enumerate(self.lines):
                    if pred(line):
                        return i, line
                left = end - time.monotonic()
                if left <= 0:
                    return None, None
                self.cv.wait(left)

    def rounds(self):
        with self.cv:
            return [line for line in self.lines if line.startswith("round ")]


def threads_state(pid):
    """Each thread of pid: its state and where the kernel has it waiting,
    for a report of a run that hung."""
    out = []
    try:
        for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as fh:
                    state = fh.read().rsplit(")", 1)[1].split()[0]
                with open("/proc/%d/task/%s/wchan" % (pid, tid)) as fh:
                    wchan = fh.read().strip()
                out.append("%s %s %s" % (tid, state, wchan))
            except OSError:
                continue
    except OSError as e:
        out.append("pid %d: %s" % (pid, e))
    return "; ".join(out)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    numbers = "--numbers" in sys.argv
    ubt, prog = args[0], args[1]
    script = args[2] if len(args) > 2 else "uprobe:libc:* { @c = count(); }"
    t = subprocess.Popen([prog, "threads", "200"], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    atexit.register(lambda: t.poll() is None and (t.kill(), t.wait()))
    m = re.match(r"ready (\d+)", t.stdout.readline())
    if not m:
        raise SystemExit("PROBLEM: prog_libcalls did not start")
    pid = int(m.group(1))
    out = Lines(t.stdout)
    if out.wait(lambda l: l.startswith("round 2 "), 20)[0] is None:
        raise SystemExit("PROBLEM: no rounds from prog_libcalls")
    libc = exec_maps(pid, "libc.so")
    before = read_mem(pid, libc)
    env = dict(os.environ, BPFTRACE_MAX_PROBES="100000")
    u = subprocess.Popen([ubt, "-v", "-p", str(pid), "-e", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    uout, uerr = Lines(u.stdout), Lines(u.stderr)
    # the banner comes before the install; -v says when the probes are live
    # the waits below add up to less than the test's TIMEOUT, so that a
    # hang is reported with where it happened
    if uerr.wait(lambda l: l.startswith("ubt: probes live"), 120)[0] is None:
        state = "ubt: %s; target: %s" % (threads_state(u.pid), threads_state(pid))
        u.kill()
        raise SystemExit("PROBLEM: ubt did not attach in 120 s (%s): %s" %
                         (state, "\n".join(uerr.lines[-20:])))
    n0 = len(out.rounds())
    time.sleep(1.0)
    during = len(out.rounds()) - n0
    u.send_signal(signal.SIGINT)
    try:
        u.wait(timeout=60)
    except subprocess.TimeoutExpired:
        state = "ubt: %s; target: %s" % (threads_state(u.pid), threads_state(pid))
        u.kill()
        problem("ubt did not end in 60 s after SIGINT (%s); its last lines: %s" %
                (state, " | ".join(uerr.lines[-10:])))
    uout.thread.join(timeout=30)  # every line of ubt's output read
    uerr.thread.join(timeout=30)
    err = "\n".join(uerr.lines)
    n1 = len(out.rounds())
    if out.wait(lambda l: l.startswith("round %d " % (n1 + 2)), 30)[0] is None:
        problem("the program stopped printing rounds after detach")
    if t.poll() is not None:
        problem("the program died (status %s)" % t.returncode)
    after = read_mem(pid, libc)
    t.send_signal(signal.SIGTERM)
    t.wait(timeout=30)
    rounds = out.rounds()
    sums = set(line.split()[3] for line in rounds)
    count = sum(int(x) for x in re.findall(r"^@.*: (\d+)$", "\n".join(uout.lines), re.M))
    if len(sums) != 1:
        problem("round sums differ: %s" % sorted(sums)[:5])
    if during < 1:
        problem("no round while attached")
    if before != after:
        diff = sum(1 for a, b in zip(b"".join(before), b"".join(after)) if a != b)
        problem("%d bytes of libc's code differ from before attaching" % diff)
    if u.returncode != 0:
        problem("ubt exited %s: %s" % (u.returncode, err[-1500:]))
    print("the program ran on: %s rounds, every sum the same before, during and after"
          % ("all" if len(sums) == 1 else "not all"))
    print("libc's code after detach: %s" % ("every byte restored" if before == after
                                             else "changed"))
    print("probes counted: %s" % ("yes" if count > 0 else "no"))
    if numbers:
        banner = next((l for l in uout.lines if l.startswith("Attaching")), "")
        print("NUMBERS %s %s rounds while attached" % (banner, during))
        for line in err.splitlines():
            if line.startswith("ubt:"):
                print("NUMBERS " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
