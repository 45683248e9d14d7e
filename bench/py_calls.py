"""bench/py_calls.py - benchmark target: the cost of a USDT probe in the
Python interpreter itself (bench/run.py --probe python).

    python3.11 bench/py_calls.py THREADS CALLS_PER_ROUND [ROUNDS [PAUSE_MS]]

The Python twin of bench/count.c, with the same arguments and output: each
of THREADS threads loops in rounds (forever when ROUNDS is 0 or absent); it
calls the Python function f CALLS_PER_ROUND times, then its twin g as many
times (the order alternates from round to round), timing each loop with its
own CPU clock (time.thread_time_ns), and prints one line per round:

    round <thread> <start> <end> <f ns/call> <g ns/call>

<start> and <end> are CLOCK_MONOTONIC ns (time.monotonic_ns).  At start it
prints `ready <pid>`; SIGTERM or SIGINT end it.

CPython 3.11 runs its USDT hooks (python:function__entry and the rest) only
while a profile or trace function is set, so a profile function that does
nothing is set in every thread from the start, probed or not: the rounds
before a tracer attaches and the rounds after differ only by the probe.
Unlike bench/count.c's f and g, the twins cannot differ in being probed:
function__entry fires for every Python call, f's and g's alike, so the
probe's cost is the `extra g` column of bench/run.py (g's time per call
probed minus unprobed) divided by the hits per call, which bench/run.py
counts in a calibration run.  Threads share the GIL: one is the default.
"""

import os
import signal
import sys
import threading
import time

sink = 0


def f(x):
    return x + 1


def g(x):
    return x + 1


def time_loop(fn, calls):
    """CPU ns per call of fn over `calls` calls."""
    global sink
    s = 0
    t0 = time.thread_time_ns()
    for i in range(calls):
        s = fn(i)
    t1 = time.thread_time_ns()
    sink += s
    return (t1 - t0) / calls


def worker(tid, calls, rounds, pause_ms, out_lock):
    sys.setprofile(lambda *a: None)
    r = 0
    while rounds == 0 or r < rounds:
        start = time.monotonic_ns()
        if r & 1:
            tg = time_loop(g, calls)
            tf = time_loop(f, calls)
        else:
            tf = time_loop(f, calls)
            tg = time_loop(g, calls)
        end = time.monotonic_ns()
        with out_lock:
            sys.stdout.write("round %d %d %d %.3f %.3f\n" % (tid, start, end, tf, tg))
            sys.stdout.flush()
        if pause_ms:
            time.sleep(pause_ms / 1000)
        r += 1
    sys.setprofile(None)


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: py_calls.py THREADS CALLS_PER_ROUND [ROUNDS [PAUSE_MS]]\n")
        return 1
    nthreads = int(sys.argv[1])
    calls = int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    pause_ms = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    if not 1 <= nthreads <= 64 or calls < 1:
        sys.stderr.write("py_calls: bad arguments\n")
        return 1
    # SIGTERM ends the process at once, as it ends bench/count
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.stdout.write("ready %d\n" % os.getpid())
    sys.stdout.flush()
    lock = threading.Lock()
    th = [threading.Thread(target=worker, args=(i, calls, rounds, pause_ms, lock))
          for i in range(nthreads)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
