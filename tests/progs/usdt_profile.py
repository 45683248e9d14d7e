# usdt_profile.py - a Python workload that fires python:function__entry on
# every call (tests/e2e/usdt_strip.test): CPython 3.11 runs its USDT hooks
# for a call only while a profile or trace function is set.
#
# With the argument `wait`, it sets the profile function, prints `ready`
# and waits for SIGUSR1 before the calls, so a tracer attached with -p
# finds the profile function already set and must enable the probe (its
# semaphore) in the running process; the handler is one more Python call.
import sys


def f(x):
    return x + 1


def wait_for_usr1():
    import signal
    go = []
    signal.signal(signal.SIGUSR1, lambda sig, frame: go.append(sig))
    sys.setprofile(lambda *a: None)
    print("ready", flush=True)
    while not go:
        signal.pause()


if sys.argv[1:] == ["wait"]:
    wait_for_usr1()
else:
    sys.setprofile(lambda *a: None)
s = 0
for i in range(20000):
    s = f(s)
sys.setprofile(None)
print(s)
