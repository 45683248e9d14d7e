#!/usr/bin/env python3
"""tests/upstream/run.py - bpftrace v0.17.0's own runtime tests, run against ubt.

bpftrace's tests/runtime/ suite was written by bpftrace's authors, not by
ours; it checks the semantics every bpftrace user relies on.  This script
takes a checkout of bpftrace at tag v0.17.0 (it stays outside this
repository, like the test programs built from it), decides which of its
tests apply to a tracer of user space, rewrites those that need it, and runs
them with bpftrace's own test engine (tests/runtime/engine, unchanged) with
ubt standing in for bpftrace:

    tests/upstream/run.sh PATH [--builddir build] [--tracer ubt|bpftrace]
                          [--work DIR] [-k GLOB] [--list] [--summary FILE]

    PATH        the bpftrace checkout (tag v0.17.0)
    --tracer    ubt (default: BUILDDIR's bpftrace wrapper, which runs ubt) or
                bpftrace (the installed bpftrace 0.17, to check the
                selection and the rewrites themselves)
    --work      where the test programs are built and the selected tests
                written (default: $TMPDIR/ubt-upstream-UID)
    -k GLOB     only tests whose `suite.name` matches (fnmatch)
    --list      print every test with its class and reason, run nothing
    --retries N run a failed test again, alone, up to N times (default 2):
                some upstream tests race a program that exits one second
                after it starts, which a loaded machine misses

Each upstream test falls in one class:

  as written    run unchanged (REQUIRES_FEATURE lines naming what ubt has,
                loop/dwarf/libpath_resolv, are dropped: the engine would ask
                `bpftrace --info` for kernel features);
  process       a uprobe/usdt test that attaches system-wide in bpftrace
                (no -p/-c; ubt traces one process): BEFORE's program is
                given with -p, AFTER's command with -c (a bash script file
                when it is a shell command line);
  uprobe        a kernel probe that only triggers an event, rewritten to a
                uprobe on the same test program (REWRITES below), then as
                `process`;
  excluded      needs the kernel (kprobes, tracepoints, BTF, perf events,
                kernel helpers), needs system-wide probes, or is disabled
                upstream (REQUIRES that never holds): not run.

A selected test passes, or fails by a difference listed in
tests/upstream/differences (each line names the test, a phrase that must
appear in docs/compat.md, and the reason).  The run fails when a selected
test fails without such a line, when a listed test passes (the list must
stay true), or when a listed phrase is missing from docs/compat.md.  The
last line is `selected N, passed N (N of them on a retry), documented
differences N, failed N`.
"""

import argparse
import fnmatch
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Features bpftrace's engine reads from `bpftrace --info` that ubt has.
UBT_FEATURES = {"loop", "dwarf", "libpath_resolv"}

# Attach-point providers that need the kernel (bpftrace's long and short names).
KERNEL_PROVIDERS = ("kprobe", "kretprobe", "k", "kr", "tracepoint", "t", "kfunc",
                    "kretfunc", "f", "fr", "software", "s", "hardware", "h",
                    "watchpoint", "w", "asyncwatchpoint", "aw", "iter", "it",
                    "rawtracepoint", "rt")
PROVIDER_RE = re.compile(r"(?:^|(?<=[\s'\"{},;]))(?:(%s):|(%s):[A-Za-z_*$])" % (
    "|".join(p for p in KERNEL_PROVIDERS if len(p) > 2),
    "|".join(p for p in KERNEL_PROVIDERS if len(p) <= 2)))
USER_PROVIDER_RE = re.compile(r"(?:^|(?<=[\s'\"{},;]))(uprobe|uretprobe|usdt|u|ur|U|profile|p):")

# Builtins and functions that read the kernel.
KERNEL_CALLS = re.compile(r"\b(kstack|ksym|kaddr|curtask|skboutput|debugf|kptr|uptr)\b|"
                          r"\bpath\(|struct task_struct")

# Kernel probes that only trigger an event, rewritten to uprobes on the same
# test program: test -> [(old, new), ...], applied to the command, the
# program, EXPECT and AFTER.  testprogs/syscall makes its system calls from
# gen_read(), gen_nanosleep(), gen_open_openat() and (through libc's
# execve) gen_execve().
READ = "uprobe:./testprogs/syscall:gen_read"
READ_RET = "uretprobe:./testprogs/syscall:gen_read"
SLEEP = "uprobe:./testprogs/syscall:gen_nanosleep"
OPEN = "uprobe:./testprogs/syscall:gen_open_openat"
BASH_ECHO = "/bin/bash -c echo"
SYSCALL = "uprobe:libc:syscall"  # gen_read: syscall(SYS_read, fd, buf, 0)
REWRITES = {
    "builtin.comm": [("k:vfs_read", READ)],
    "builtin.ustack": [("k:vfs_read", READ)],
    "builtin.arg": [("k:vfs_read", READ)],
    "builtin.retval": [("kretprobe:vfs_read", READ_RET)],
    "builtin.func": [("k:vfs_read", READ)],
    "builtin.probe": [("k:do_nanosleep", SLEEP), ("kprobe:do_nanosleep", SLEEP)],
    "call.sum": [("kprobe:vfs_read", SYSCALL), ("arg2", "arg3")],
    "call.avg": [("kprobe:vfs_read", SYSCALL), ("arg2", "arg3")],
    "call.min": [("kprobe:vfs_read", SYSCALL), ("arg2", "arg3")],
    "call.max": [("kprobe:vfs_read", SYSCALL), ("arg2", "arg3")],
    "call.stats": [("kprobe:vfs_read", SYSCALL), ("arg2", "arg3")],
    "call.hist": [("kretprobe:vfs_read", READ_RET)],
    "call.lhist": [("kretprobe:vfs_read", READ_RET)],
    "call.ustack": [("k:do_nanosleep", SLEEP)],
    # gen_execve: syscall(SYS_execve, path, argv, envp), its only syscall()
    # (join's test ran system() and caught its shell's execve: the command
    # is given with -c instead)
    "call.str": [("t:syscalls:sys_enter_execve", SYSCALL), ("args->filename", "arg1")],
    "call.join": [("i:ms:1 { system(\"echo '_A_'\"); } ", ""),
                  ("t:syscalls:sys_enter_execve", SYSCALL),
                  ("join(args->argv)", "join(arg2)"),
                  ("-e '", "-c './testprogs/syscall execve /bin/echo _A_' -e '")],
    "call.join_delim": [("i:ms:1 { system(\"echo '_A_'\"); } ", ""),
                        ("t:syscalls:sys_enter_execve", SYSCALL),
                        ("join(args->argv, \",\")", "join(arg2, \",\")"),
                        ("-e '", "-c './testprogs/syscall execve /bin/echo _A_' -e '")],
    "json-output.join_delim": [("tracepoint:syscalls:sys_enter_execve", SYSCALL),
                               ("join(args->argv, \",\")", "join(arg2, \",\")")],
    # Debian's python is python3
    "call.strftime_microsecond_extension": [("python -c", "python3 -c")],
    "call.strftime_microsecond_extension_rollover": [("python -c", "python3 -c")],
    "other.string compare map lookup": [("t:syscalls:sys_enter_openat", OPEN)],
    "other.positional lhist": [("kretprobe:vfs_read", READ_RET)],
    "other.positional ustack": [("k:do_nanosleep", SLEEP)],
    "variable.global_associative_arrays": [("k:vfs_read", READ),
                                           ("kretprobe:vfs_read", READ_RET)],
    "variable.scratch": [("k:vfs_read", READ), ("kretprobe:vfs_read", READ_RET)],
    # a tracepoint that counts events beside the interval being tested
    "probe.interval": [("t:raw_syscalls:sys_enter", READ),
                       ("AFTER", "./testprogs/syscall read")],
    "probe.interval_short_name": [("t:raw_syscalls:sys_enter", READ),
                                  ("AFTER", "./testprogs/syscall read")],
    # bash runs the probed echo builtin itself (bash -c "echo lala" would, but
    # 0.17's -c splits at spaces); the order tests need two calls in the
    # traced bash, where upstream runs two
    "probe.uprobe": [("AFTER", BASH_ECHO)],
    "probe.uprobe_offset": [("AFTER", BASH_ECHO)],
    "probe.uretprobe": [("AFTER", BASH_ECHO)],
    "probe.uprobe_order": [("AFTER", BASH_ECHO + ";echo")],
    "probe.uretprobe_order": [("AFTER", BASH_ECHO + ";echo")],
    # profile samples the CPU time of the traced process: usdt_test spins
    "probe.profile": [("AFTER", "./testprogs/usdt_test")],
    "probe.profile_short_name": [("AFTER", "./testprogs/usdt_test")],
    "probe.profile_probe_builtin": [("AFTER", "./testprogs/usdt_test")],
}

# Tests the rules below would select, but that cannot apply to ubt.
EXCLUDE = {
    "basic.it lists kprobes": "kernel probe listing",
    "basic.it lists tracepoints": "kernel probe listing",
    "basic.it lists software events": "kernel probe listing",
    "basic.it lists hardware events": "kernel probe listing",
    "basic.info flag": "--info lists kernel BPF features",
    "regression.single_arg_wildcard_listing": "kernel probe listing (a word: kprobes)",
    "regression.single_arg_wildcard_listing_tracepoint":
        "kernel probe listing (a word: tracepoints)",
    "builtin.log size too small": "the BPF verifier's log",
    "basic.non existent library include fails": "#include of C headers goes through clang",
    "basic.libraries under /usr/include are in the search path":
        "#include of C headers goes through clang",
    "call.strerror": "--include of C headers goes through clang",
    "other.sigint under heavy load": "tracepoint:sched:sched_switch",
    "signals.strace no quit": "strace attaches to ubt with ptrace",
    "regression.access ctx struct field twice": "tracepoint arguments",
    "variable.32-bit tracepoint arg": "tracepoint arguments",
    "variable.tracepoint arg casts in predicates": "tracepoint arguments",
    "other.positional as string literal": "kaddr(): kernel symbols",
}


class Test:
    """One upstream test: its directives as written, then as run."""

    def __init__(self, suite, lines):
        self.suite = suite
        self.lines = lines  # [(directive, text)] in file order
        self.fields = {}
        for k, v in lines:
            self.fields.setdefault(k, []).append(v)
        self.name = self.get("NAME")
        self.cls, self.reason = None, ""

    def get(self, key, default=""):
        v = self.fields.get(key)
        return v[0] if v else default

    def set(self, key, value):
        out, done = [], False
        for k, v in self.lines:
            if k == key:
                if not done and value is not None:
                    out.append((k, value))
                done = True
            else:
                out.append((k, v))
        if not done and value is not None:
            out.append((key, value))
        self.lines = out
        self.fields = {}
        for k, v in out:
            self.fields.setdefault(k, []).append(v)

    @property
    def id(self):
        return "%s.%s" % (self.suite, self.name)

    def text(self):
        return "".join("%s %s\n" % kv for kv in self.lines)


def read_suite(path):
    """Tests of one file, split as bpftrace's engine splits them."""
    tests, cur = [], []
    suite = os.path.basename(path)
    with open(path) as f:
        lines = f.readlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            continue
        if line != "\n":
            key, _, rest = line.rstrip("\n").partition(" ")
            cur.append((key, " ".join(rest.split())))
        if (line == "\n" or i == len(lines) - 1) and cur:
            t = Test(suite, cur)
            arch = [a.strip() for a in t.get("ARCH").split("|") if a.strip()]
            if not arch or os.uname().machine.lower() in arch:  # as the engine does
                tests.append(t)
            cur = []
    return tests


def read_all(runtime):
    tests = []
    for name in sorted(os.listdir(runtime)):
        p = os.path.join(runtime, name)
        if os.path.isfile(p) and not name.startswith("."):
            tests.extend(read_suite(p))
    return tests


def program_text(t, runtime):
    """The command, the program and any script file it runs."""
    text = t.get("RUN") + " " + t.get("PROG")
    for m in re.finditer(r"runtime/scripts/\S+\.bt", text):
        p = os.path.join(os.path.dirname(runtime), m.group(0))
        if os.path.exists(p):
            text += " " + open(p).read()
    return text


def shell_free(cmd):
    """A command bpftrace's -c (words split at spaces) and a shell run alike;
    `;` is fine in a word given to bash -c."""
    return not re.search(r"[\"'`$&|<>(){}*?\\]", cmd)


def to_process(t, work):
    """A system-wide uprobe/usdt test made to name its process: -p BEFORE's
    pid, or -c AFTER's command.  Returns whether the test changed."""
    run, prog = t.get("RUN"), t.get("PROG")
    if re.search(r"(^|\s)-(p|c)\s", run):
        return False
    before, after = t.get("BEFORE"), t.get("AFTER")
    if prog:
        run = "{{BPFTRACE}} -e '%s'" % prog
    # the option goes first, so that the test does not also depend on
    # options after positional parameters
    if before:
        opt = "-p {{BEFORE_PID}}"
    elif after:
        if not shell_free(after):
            raise SystemExit("%s: AFTER is a shell command line; give it a rewrite" % t.id)
        cmd = after
        opt = "-c '%s'" % cmd
        t.set("AFTER", None)
    else:
        return False
    t.set("PROG", None)
    t.set("RUN", run.replace("{{BPFTRACE}}", "{{BPFTRACE}} " + opt, 1))
    return True


def features_ok(t):
    """REQUIRES_FEATURE lines: the ones about what ubt has are dropped;
    returns the features ubt lacks (or has, for `!feature`) that the test
    needs."""
    missing = set()
    for line in t.fields.get("REQUIRES_FEATURE", []):
        for f in line.split():
            neg = f.startswith("!")
            if (f.lstrip("!") in UBT_FEATURES) == neg:
                missing.add(f)
    t.set("REQUIRES_FEATURE", None)
    return missing


def classify(t, runtime, work):
    """Sets t.cls and t.reason, rewriting t where its class says so."""
    if t.id in EXCLUDE:
        t.cls, t.reason = "excluded", EXCLUDE[t.id]
        return
    if 'bash -c "exit 1"' in t.fields.get("REQUIRES", []):
        t.cls, t.reason = "excluded", "disabled upstream (REQUIRES that never holds)"
        return
    missing = features_ok(t)
    if missing:
        t.cls, t.reason = "excluded", "needs kernel feature %s" % ",".join(sorted(missing))
        return
    rewritten = any(old not in ("AFTER", "python -c") for old, _ in REWRITES.get(t.id, []))
    for old, new in REWRITES.get(t.id, []):
        if old == "AFTER":
            t.set("AFTER", new)
            continue
        hit = False
        for key in ("RUN", "PROG", "EXPECT", "AFTER"):
            if old in t.get(key):
                t.set(key, t.get(key).replace(old, new))
                hit = True
        if not hit:
            raise SystemExit("the rewrite of %s (%s) no longer applies" % (t.id, old))
    text = program_text(t, runtime)
    m = PROVIDER_RE.search(text)
    if m:
        t.cls, t.reason = "excluded", "kernel probe %s:" % (m.group(1) or m.group(2))
        return
    m = KERNEL_CALLS.search(text)
    if m:
        t.cls, t.reason = "excluded", "kernel data (%s)" % m.group(0)
        return
    run = t.get("RUN")
    if re.search(r"\s-l", run) and re.search(r"-l\S*\s+['\"]?(\*|k|t|s|h)[a-z*]*:", run):
        t.cls, t.reason = "excluded", "kernel probe listing"
        return
    user = USER_PROVIDER_RE.search(text) and not re.search(r"\s-l", run)
    changed = bool(user) and to_process(t, work)
    if rewritten:
        t.cls, t.reason = "uprobe", "kernel probe rewritten to a uprobe"
    elif changed:
        t.cls = "process"
    else:
        t.cls = "as written"


def select(tests, runtime, work):
    for t in tests:
        classify(t, runtime, work)


# ---------------------------------------------------------------------------
# Test programs, built as bpftrace's tests/CMakeLists.txt builds them.

def build_progs(src, work):
    progs, libs = os.path.join(work, "testprogs"), os.path.join(work, "testlibs")
    os.makedirs(progs, exist_ok=True)
    os.makedirs(libs, exist_ok=True)
    has_sdt = subprocess.run(["gcc", "-E", "-x", "c", "-", "-o", os.devnull],
                             input="#include <sys/sdt.h>\n", text=True,
                             capture_output=True).returncode == 0
    sdt = ["-DHAVE_SYSTEMTAP_SYS_SDT_H"] if has_sdt else []
    for c in sorted(os.listdir(os.path.join(src, "testlibs"))):
        if not c.endswith(".c"):
            continue
        out = os.path.join(libs, "lib%s.so" % c[:-2])
        compile_if_stale([os.path.join(src, "testlibs", c)], out,
                         ["gcc", "-g", "-O0", "-fPIC", "-shared"] + sdt)
        os.chmod(out, 0o644)  # bpftrace's build clears the executable bit
    for c in sorted(os.listdir(os.path.join(src, "testprogs"))):
        if not c.endswith(".c"):
            continue
        extra = []
        if c == "usdt_lib.c":
            extra = ["-I", os.path.join(src, "testlibs"), "-L", libs, "-lusdt_tp",
                     "-Wl,-rpath," + libs]
        compile_if_stale([os.path.join(src, "testprogs", c)],
                         os.path.join(progs, c[:-2]),
                         ["gcc", "-g", "-O0", "-no-pie"] + sdt, extra)


def compile_if_stale(srcs, out, cmd, extra=()):
    # rebuilt when the command changes too; the stamp lives apart, since
    # tests match the programs' directory with wildcards
    stamp = os.path.join(os.path.dirname(os.path.dirname(out)), "stamps",
                         os.path.basename(out))
    os.makedirs(os.path.dirname(stamp), exist_ok=True)
    line = " ".join(cmd + list(extra))
    if (os.path.exists(out) and os.path.exists(stamp) and open(stamp).read() == line and
            all(os.path.getmtime(out) >= os.path.getmtime(s) for s in srcs)):
        return
    r = subprocess.run(cmd + ["-o", out] + srcs + list(extra), capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("building %s failed:\n%s" % (out, r.stderr))
    with open(stamp, "w") as f:
        f.write(line)


# ---------------------------------------------------------------------------

def write_suite(tests, src, work):
    """WORK/runtime: the given tests (those not excluded), bpftrace's scripts,
    outputs and engine."""
    rt = os.path.join(work, "runtime")
    shutil.rmtree(rt, ignore_errors=True)
    os.makedirs(rt)
    for d in ("scripts", "outputs", "engine"):
        shutil.copytree(os.path.join(src, "runtime", d), os.path.join(rt, d))
    # configured as bpftrace's CMakeLists.txt configures it (no AOT runtime)
    with open(os.path.join(rt, "engine", "cmake_vars.py"), "w") as f:
        f.write("LIBBCC_BPF_CONTAINS_RUNTIME = False\n")
    suites = {}
    for t in tests:
        if t.cls != "excluded":
            suites.setdefault(t.suite, []).append(t)
    for suite, ts in suites.items():
        with open(os.path.join(rt, suite), "w") as f:
            f.write("\n".join(t.text() for t in ts))


def tracer_dir(args, work):
    d = os.path.join(work, "bin-" + args.tracer)
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, "bpftrace")
    if args.tracer == "ubt":
        target = os.path.join(os.path.abspath(args.builddir), "tools", "bpftrace-compat",
                              "bpftrace")
    else:
        target = shutil.which("bpftrace") or "/usr/bin/bpftrace"
    if not os.path.exists(target):
        raise SystemExit("%s: not found (build ubt first)" % target)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    return d


STALL = 90  # seconds without engine output before its tracers are stopped
RESULT_RE = re.compile(r"^\[ *(OK|FAILED|TIMEOUT|SKIP) *\] (.*)$")


def own_tracers(bindir):
    """Pids of tracers this run started: their argv[0] is BINDIR/bpftrace,
    a path no other process has."""
    exe = os.path.join(bindir, "bpftrace")
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if f.read().split(b"\0")[0].decode(errors="replace") == exe:
                        pids.append(int(d))
            except OSError:
                pass
    return pids


def run_engine(work, bindir, log):
    """bpftrace's engine on WORK/runtime; returns {test id: [status, ...]}
    (a few upstream tests share a name: one status each, in file order).

    The engine waits for a tracer's output to end with no time limit once
    the shell it started has exited; a tracer that missed the signal meant
    to stop it (sent before it could handle it, on a loaded machine) would
    hang the run.  After STALL seconds without a line from the engine, this
    run's own tracers are sent SIGTERM."""
    env = dict(os.environ, BPFTRACE_RUNTIME_TEST_EXECUTABLE=bindir, PYTHONUNBUFFERED="1")
    results = {}
    p = subprocess.Popen([sys.executable, "runtime/engine/main.py"], cwd=work, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         stdin=subprocess.DEVNULL)
    last = [time.monotonic()]
    done = threading.Event()

    def watchdog():
        while not done.wait(10):
            if time.monotonic() - last[0] > STALL:
                for pid in own_tracers(bindir):
                    print("(no progress for %ds: SIGTERM to tracer %d)" % (STALL, pid),
                          flush=True)
                    try:
                        os.kill(pid, signal.SIGTERM)
                    except OSError:
                        pass
                last[0] = time.monotonic()

    threading.Thread(target=watchdog, daemon=True).start()
    summary = False
    for line in p.stdout:
        last[0] = time.monotonic()
        log.write(line)
        if line.startswith("[==========]") and "ran." in line:
            summary = True
        m = RESULT_RE.match(line.rstrip("\n"))
        if m and not summary:
            results.setdefault(m.group(2), []).append(m.group(1))
            print("%-8s %s" % (m.group(1), m.group(2)), flush=True)
    p.wait()
    done.set()
    return results


def read_differences(path):
    """tests/upstream/differences: `suite.name | compat.md phrase | reason`."""
    diffs = {}
    if not os.path.exists(path):
        return diffs
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 3:
            raise SystemExit("%s:%d: want `test | compat.md phrase | reason`" % (path, n))
        diffs[parts[0]] = (parts[1], parts[2])
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path")
    ap.add_argument("--builddir", default=os.path.join(REPO, "build"))
    ap.add_argument("--tracer", choices=("ubt", "bpftrace"), default="ubt")
    ap.add_argument("--work")
    ap.add_argument("-k", dest="glob")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--summary")
    ap.add_argument("--retries", type=int, default=2)
    args = ap.parse_args()

    src = os.path.join(os.path.abspath(args.path), "tests")
    runtime = os.path.join(src, "runtime")
    if not os.path.isdir(os.path.join(runtime, "engine")):
        raise SystemExit("%s: not a bpftrace checkout (no tests/runtime/engine)" % args.path)
    work = os.path.abspath(args.work or os.path.join(
        os.environ.get("TMPDIR", "/tmp"), "ubt-upstream-%d" % os.getuid()))
    os.makedirs(work, exist_ok=True)

    tests = read_all(runtime)
    select(tests, runtime, work)
    if args.glob:
        for t in tests:
            if t.cls != "excluded" and not fnmatch.fnmatch(t.id, args.glob):
                t.cls, t.reason = "excluded", "not matched by -k"
    counts = {}
    for t in tests:
        counts[t.cls] = counts.get(t.cls, 0) + 1
    if args.list:
        for t in tests:
            print("%-10s %-60s %s" % (t.cls, t.id, t.reason))
            if t.cls in ("process", "uprobe"):
                print("           %s" % (t.get("RUN") or t.get("PROG")))
        print(", ".join("%s %d" % kv for kv in sorted(counts.items())))
        return 0

    build_progs(src, work)
    write_suite(tests, src, work)
    bindir = tracer_dir(args, work)
    selected = [t for t in tests if t.cls != "excluded"]
    print("upstream: %d tests, %d selected (%s)" % (
        len(tests), len(selected),
        ", ".join("%s %d" % kv for kv in sorted(counts.items()) if kv[0] != "excluded")),
        flush=True)
    with open(os.path.join(work, "engine.log"), "w") as log:
        results = run_engine(work, bindir, log)
    status = [(results.get(t.id) or ["MISSING"]).pop(0) for t in selected]

    diffs = read_differences(os.path.join(HERE, "differences"))
    # A test that failed and is not a listed difference runs again, alone:
    # several upstream tests race a program that exits a second after it
    # starts, or allow one second for the whole run, which a loaded machine
    # misses.  A pass on a retry counts, and is counted.
    retried = set()
    for attempt in range(args.retries):
        again = [i for i, t in enumerate(selected)
                 if status[i] != "OK" and not (args.tracer == "ubt" and t.id in diffs)]
        if not again:
            break
        print("retrying %d failed tests (attempt %d)" % (len(again), attempt + 1), flush=True)
        write_suite([selected[i] for i in again], src, work)
        with open(os.path.join(work, "engine-retry%d.log" % (attempt + 1)), "w") as log:
            res = run_engine(work, bindir, log)
        for i in again:
            st = (res.get(selected[i].id) or ["MISSING"]).pop(0)
            if st == "OK":
                retried.add(i)
            status[i] = st

    compat = open(os.path.join(REPO, "docs", "compat.md")).read()
    passed = documented = failed = 0
    problems = []
    for i, t in enumerate(selected):
        st = status[i]
        d = diffs.get(t.id) if args.tracer == "ubt" else None
        if st == "OK" and not d:
            passed += 1
        elif st == "OK":
            failed += 1
            problems.append("%s passes but is listed in tests/upstream/differences" % t.id)
        elif d and d[0] in compat:
            documented += 1
        elif d:
            failed += 1
            problems.append("%s: `%s` is not in docs/compat.md" % (t.id, d[0]))
        else:
            failed += 1
            problems.append("%s: %s" % (t.id, st))
    for i in sorted(retried):
        print("RETRY %s passed on a retry" % selected[i].id)
    for p in problems:
        print("FAIL  " + p)
    print("engine log: %s" % os.path.join(work, "engine.log"))
    print("selected %d, passed %d (%d of them on a retry), documented differences %d, "
          "failed %d" % (len(selected), passed, len(retried), documented, failed))
    if args.summary:
        with open(args.summary, "w") as f:
            f.write("%d %d %d\n" % (passed + documented, failed, 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
