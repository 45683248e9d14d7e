# usdt_profile.py - a Python workload that fires python:function__entry on
# every call (tests/e2e/usdt_strip.test): CPython 3.11 runs its USDT hooks
# for a call only while a profile or trace function is set.
import sys


def f(x):
    return x + 1


sys.setprofile(lambda *a: None)
s = 0
for i in range(20000):
    s = f(s)
sys.setprofile(None)
print(s)
