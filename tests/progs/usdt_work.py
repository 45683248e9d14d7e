# usdt_work.py - a fixed Python workload for the python3.11 USDT tests
# (tests/e2e/usdt.test): the same function calls and returns every run.
def f(x):
    return x


def g():
    return 1


for i in range(1000):
    g()
print(sum(map(f, range(1000))))
