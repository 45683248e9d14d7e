#!/usr/bin/env python3
"""life.py - scenarios of tests/e2e/life.test: what happens to ubt (killed,
detaching, twice on one process, beside kernel uprobes) or in the target's
own life (fork, exec of a sibling, its own SIGTRAP handler) must never
crash or fool the target.  Each scenario drives tests/progs' prog_life and
prints a few lines the test expects; any surprise is printed as
`PROBLEM: ...` and makes the exit status 1.

    life.py SCENARIO UBT PROG [ARGS...]

Scenarios:
    cycles N THREADS [block]   N attach/detach cycles (SIGINT) while THREADS
                               threads call f (a jump site) and g (an int3
                               site); `block`: all signals blocked
    kills N                    ubt SIGKILLed N times: in steady state, then
                               0-20 ms after a SIGINT (while detaching)
    forks [kill] [pstack]      prog_life server forks a worker while traced;
                               ubt detaches (or is SIGKILLed): the worker's
                               code equals the file's, no memfd:ubt is left;
                               `pstack`: handlers run on probe stacks, and
                               no mapping ubt made is left in the worker
    twice                      a second ubt on a traced process is refused;
                               the first detaches, the target runs on
    owntrap                    the program installs its own SIGTRAP handler
                               after ubt attached: it gets its own traps only
    spawnkill [loader]         ubt -c is SIGKILLed while the command's
                               constructors run (ubt attached before them),
                               or, `loader`, while the loader relocates
                               liblifector.so, before ubt's stop point (the
                               stub is there): the command runs to its end
    mainexit                   -c: the main thread ends first, two threads
                               call f for 3 s: no exec reported, every call
                               counted
    spawn                      posix_spawn and vfork children run probes
                               with their own pid and tid
    kuprobe BPFTRACE           bpftrace -p puts a kernel uprobe on f; ubt -p
                               on f is refused with the reason, the target
                               and bpftrace run on
"""
import atexit
import os
import random
import re
import selectors
import signal
import subprocess
import sys
import time

PROBLEMS = []


def problem(msg):
    PROBLEMS.append(msg)
    print("PROBLEM: " + msg)


def maps(pid):
    with open("/proc/%d/maps" % pid) as f:
        return f.read().splitlines()


def ours(pid):
    return sum(1 for l in maps(pid) if "memfd:ubt" in l)


def read_mem(pid, addr, n):
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as f:
        f.seek(addr)
        return f.read(n)


def file_bytes(pid, addr, n):
    """The bytes at addr as the file behind its mapping holds them."""
    for line in maps(pid):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if lo <= addr < hi and len(f) >= 6 and f[5].startswith("/"):
            with open(f[5], "rb") as fh:
                fh.seek(addr - lo + int(f[2], 16))
                return fh.read(n)
    return None


def code_is_file(pid, f, g):
    return read_mem(pid, f, 16) == file_bytes(pid, f, 16) and \
        read_mem(pid, g, 8) == file_bytes(pid, g, 8)


def end_target(t):
    """A target still running when this script ends (a check failed, or
    ubt could not start) ends with it: it runs in a session of its own, out
    of the test runner's reach."""
    if t.poll() is None:
        t.kill()
        t.wait()


def start_target(prog, *args, stdin=None, env=None):
    t = subprocess.Popen([prog] + list(args), stdin=stdin, stdout=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    atexit.register(end_target, t)
    m = re.match(r"ready (\d+)(?: f=(0x[0-9a-f]+) g=(0x[0-9a-f]+))?", t.stdout.readline())
    if not m:
        raise SystemExit("PROBLEM: prog_life did not start")
    f = int(m.group(2), 16) if m.group(2) else 0
    g = int(m.group(3), 16) if m.group(3) else 0
    return t, int(m.group(1)), f, g


def script(prog):
    return "uprobe:%s:f { @f = count(); } uprobe:%s:g { @g = count(); }" % (prog, prog)


def start_ubt(ubt, pid, text):
    return subprocess.Popen([ubt, "-v", "-p", str(pid), "-e", text], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def wait_armed(u, timeout=120):
    """Reads ubt's stderr until -v says the sites are patched; the text read."""
    fd, text = u.stderr.fileno(), b""
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    armed = re.compile(rb"sites? patched")
    while time.monotonic() < deadline and not armed.search(text):
        if sel.select(timeout=0.1):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            text += chunk
    if not armed.search(text):
        problem("ubt did not attach: %s" % text.decode()[-300:])
    return text.decode()


def session_gone(u, timeout=60):
    """ubt and its watchdog (same session) are gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(u.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    problem("ubt's watchdog did not finish")
    return False


def finish(t, ok_line):
    t.send_signal(signal.SIGTERM)
    out, _ = t.communicate(timeout=60)
    if t.returncode != 0 or not re.search(ok_line, out):
        problem("target ended with %s: %s" % (t.returncode, out.strip()[-200:]))
    else:
        print("target ran correctly to its end")


def check_target(t, pid, f, g, what):
    if t.poll() is not None:
        problem("%s: the target died (status %s)" % (what, t.returncode))
        return False
    if not code_is_file(pid, f, g):
        problem("%s: f or g not restored" % what)
    if ours(pid):
        problem("%s: memfd:ubt still mapped" % what)
    return True


def all_block_sigtrap(pid):
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as fh:
            blk = int(re.search(r"SigBlk:\s*([0-9a-f]+)", fh.read()).group(1), 16)
        if not blk & (1 << (signal.SIGTRAP - 1)):
            return False
    return True


def cycles(ubt, prog, n, threads, *block):
    t, pid, f, g = start_target(prog, "hammer", threads, *block)
    hits = 0
    for i in range(int(n)):
        u = start_ubt(ubt, pid, script(prog))
        wait_armed(u)
        time.sleep(0.05)
        u.send_signal(signal.SIGINT)
        out, err = u.communicate(timeout=120)
        m = re.search(r"^@g: (\d+)", out.decode(), re.M)
        hits += int(m.group(1)) if m else 0
        if u.returncode != 0 or not m:
            problem("cycle %d: ubt failed: %s" % (i, err.decode()[-300:]))
        if not check_target(t, pid, f, g, "cycle %d" % i):
            return
        if block and not all_block_sigtrap(pid):
            problem("cycle %d: a thread no longer blocks SIGTRAP after detach" % i)
    print("%s cycles: the target survived, its code restored each time" % n)
    print("int3 site hits counted: %s" % ("yes" if hits > 0 else "no"))
    finish(t, r"bad 0$")


def kills(ubt, prog, n):
    t, pid, f, g = start_target(prog, "hammer", "4")
    rnd = random.Random(int(n))
    for i in range(int(n)):
        u = start_ubt(ubt, pid, script(prog))
        wait_armed(u)
        time.sleep(rnd.uniform(0, 0.05))
        if i % 2:
            u.send_signal(signal.SIGINT)
            time.sleep(rnd.uniform(0, 0.02))
        u.kill()
        u.communicate(timeout=120)
        session_gone(u)
        if not check_target(t, pid, f, g, "kill %d" % i):
            return
    print("%s kills: the watchdog restored the target each time" % n)
    finish(t, r"bad 0$")


def mapped_in(pid, lines):
    """The mappings of pid that overlap any of the /proc/PID/maps lines."""
    def span(l):
        return tuple(int(x, 16) for x in l.split()[0].split("-"))
    rng = [span(l) for l in lines]
    return [l for l in maps(pid) if any(a < span(l)[1] and span(l)[0] < b for a, b in rng)]


def forks(ubt, prog, *how):
    t, pid, f, g = start_target(prog, "server", stdin=subprocess.PIPE)
    before = set(maps(pid))
    text = script(prog)
    if "pstack" in how:  # handlers on probe stacks: a mapping of ubt's besides the memfd
        text = 'uprobe:%s:f { printf("%%s\\n", ustack); @u[ustack] = count(); }' % prog
    u = start_ubt(ubt, pid, text)
    wait_armed(u)
    made = [l for l in maps(pid) if l not in before]
    t.stdin.write("fork\n")
    t.stdin.flush()
    child = int(t.stdout.readline().split()[1])
    time.sleep(0.2)
    print("worker patched while traced: %s" % ("no" if code_is_file(child, f, g) else "yes"))
    print("worker maps memfd:ubt while traced: %s" % ("yes" if ours(child) else "no"))
    if "kill" in how:
        u.kill()
        u.communicate(timeout=120)
        session_gone(u)
    else:
        u.send_signal(signal.SIGINT)
        u.communicate(timeout=120)
    print("worker code equals the file's: %s" % ("yes" if code_is_file(child, f, g) else "no"))
    print("worker memfd:ubt mappings: %d" % ours(child))
    if "pstack" in how:
        print("worker keeps mappings ubt made: %d" % len(mapped_in(child, made)))
    print("server code equals the file's: %s" % ("yes" if code_is_file(pid, f, g) else "no"))
    t.stdin.close()
    out = t.stdout.read()
    t.wait(timeout=60)
    if t.returncode != 0 or not re.search(r"worker \d+ calls \d+ bad 0", out):
        problem("server ended with %s: %s" % (t.returncode, out.strip()[-200:]))
    else:
        print("worker ran correctly to its end")


def twice(ubt, prog):
    t, pid, f, g = start_target(prog, "hammer", "2")
    u1 = start_ubt(ubt, pid, script(prog))
    wait_armed(u1)
    u2 = subprocess.run([ubt, "-p", str(pid), "-e", script(prog)], capture_output=True,
                        text=True, timeout=120)
    print("second ubt: exit %d" % u2.returncode)
    for line in u2.stderr.splitlines():
        if line.startswith(("ERROR", "HINT")):
            print(re.sub(r"\d+", "N", line))
    time.sleep(0.1)
    u1.send_signal(signal.SIGINT)
    out, err = u1.communicate(timeout=120)
    if u1.returncode != 0 or b"@g: " not in out:
        problem("first ubt failed: %s" % err.decode()[-300:])
    if check_target(t, pid, f, g, "after the first ubt detached"):
        finish(t, r"bad 0$")


def owntrap(ubt, prog):
    t, pid, f, g = start_target(prog, "owntrap", "1000")
    u = start_ubt(ubt, pid, script(prog))
    wait_armed(u)
    t.send_signal(signal.SIGUSR1)
    print(t.stdout.readline().strip())  # own N/N
    time.sleep(0.1)
    u.send_signal(signal.SIGINT)
    out, err = u.communicate(timeout=120)
    if u.returncode != 0 or b"@g: " not in out:
        problem("ubt failed: %s" % err.decode()[-300:])
    if check_target(t, pid, f, g, "after detach"):
        # the program's own handler is SIGTRAP's action again
        with open("/proc/%d/status" % pid) as fh:
            cgt = int(re.search(r"SigCgt:\s*([0-9a-f]+)", fh.read()).group(1), 16)
        print("own SIGTRAP handler installed after detach: %s" %
              ("yes" if cgt & (1 << (signal.SIGTRAP - 1)) else "no"))
        t.send_signal(signal.SIGTERM)
        out, _ = t.communicate(timeout=60)
        print(re.sub(r"calls \d+", "calls N", out.strip()))


def spawnkill(ubt, prog, *loader):
    env = dict(os.environ, LIFE_CTOR_SLEEP_MS="1500")
    if loader:
        env = dict(os.environ, LIFE_LOADER_SLEEP="1")
    u = subprocess.Popen([ubt, "-c", "%s run 1000" % prog, "-e", script(prog)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True)
    child, deadline = None, time.monotonic() + 120
    while child is None and time.monotonic() < deadline:
        for d in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % d) as fh:
                    st = fh.read()
                with open("/proc/%s/status" % d) as fh:
                    tracer = int(re.search(r"TracerPid:\s*(\d+)", fh.read()).group(1))
            except (OSError, ValueError, AttributeError):
                continue
            if int(st[st.rindex(")") + 2:].split()[1]) == u.pid and tracer == u.pid:
                child = int(d)
        time.sleep(0.005)
    if child is None:
        problem("the command was not started")
    # loader: past its exec, in the loader's 1.5 s sleep (lifelib.c)
    while loader and time.monotonic() < deadline:
        try:
            if os.readlink("/proc/%d/exe" % child).endswith("prog_life_O2_pie"):
                break
        except OSError:
            break
        time.sleep(0.005)
    if loader:
        time.sleep(0.2)
    u.kill()
    out, err = u.communicate(timeout=120)
    session_gone(u)
    out = out.decode()
    print("command output after ubt was killed in its start: %s" %
          ("complete" if re.search(r"^sum \d+\ndone$", out, re.M) else repr(out[-100:])))


def mainexit(ubt, prog):
    p = subprocess.run([ubt, "-c", "%s mainexit 3000" % prog, "-e",
                        "uprobe:%s:f { @f = count(); }" % prog],
                       capture_output=True, text=True, timeout=300)
    m = re.search(r"calls (\d+)", p.stdout)
    c = re.search(r"^@f: (\d+)", p.stdout, re.M)
    print("exec reported: %s" % ("yes" if "called exec" in p.stderr else "no"))
    print("every call counted: %s" % (
        "yes" if m and c and m.group(1) == c.group(1) else "no (%s, %s)" % (
            m and m.group(0), c and c.group(0))))


def kuprobe(ubt, prog, bpftrace):
    t, pid, f, g = start_target(prog, "hammer", "2")
    b = subprocess.Popen([bpftrace, "-p", str(pid), "-e", "uprobe:%s:f { @k = count(); }" % prog],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    line = b.stdout.readline()  # Attaching 1 probe...
    if "Attaching" not in line:
        problem("bpftrace did not attach: %r %s" % (line, b.stderr.read()[-300:]))
    # the kernel writes its breakpoint into the process once the probe is registered
    deadline = time.monotonic() + 60
    while read_mem(pid, f, 1) != b"\xcc" and time.monotonic() < deadline:
        time.sleep(0.01)
    print("kernel breakpoint at f: %s" % ("yes" if read_mem(pid, f, 1) == b"\xcc" else "no"))
    u = subprocess.run([ubt, "-p", str(pid), "-e", script(prog)], capture_output=True,
                       text=True, timeout=120)
    print("ubt: exit %d" % u.returncode)
    for l in u.stderr.splitlines():
        if l.startswith(("ERROR", "HINT")):
            l = l.replace(os.path.realpath(prog), "PROG")
            print(re.sub(r"0x[0-9a-f]+", "ADDR", re.sub(r"pid \d+", "pid N", l)))
    b.send_signal(signal.SIGINT)
    out, _ = b.communicate(timeout=120)
    print("bpftrace counted: %s" % ("yes" if re.search(r"^@k: [1-9]", out, re.M) else "no"))
    if check_target(t, pid, f, g, "after bpftrace ended"):
        finish(t, r"bad 0$")


def spawn(ubt, prog):
    t, pid, f, g = start_target(prog, "spawn")
    u = subprocess.Popen([ubt, "-v", "-p", str(pid), "-e",
                          'uprobe:%s:f { printf("f %%d pid %%d tid %%d\\n", arg0, pid, tid); } '
                          'uprobe:libc:execve { printf("execve pid %%d tid %%d\\n", pid, tid); }'
                          % prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    wait_armed(u)
    t.send_signal(signal.SIGUSR1)
    out_t, _ = t.communicate(timeout=120)
    out_u, err = u.communicate(timeout=120)
    kids = dict(re.findall(r"^(spawned|vforked) (\d+)$", out_t, re.M))
    names = {kids.get("spawned"): "SPAWNED", kids.get("vforked"): "VFORKED", str(pid): "PARENT"}
    for line in out_u.splitlines():
        if line.startswith(("f ", "execve ")):
            print(re.sub(r"\d{2,}", lambda m: names.get(m.group(0), "OTHER"), line))
    if u.returncode != 0:
        problem("ubt failed: %s" % err[-300:])


def main():
    scenario, ubt, prog, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    globals()[scenario](ubt, prog, *args)
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
