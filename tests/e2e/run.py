#!/usr/bin/env python3
"""tests/e2e/run.py - end-to-end test runner for ubt.

Runs the tests in tests/e2e/*.test against a built ubt: real target programs
(tests/progs, built by meson into BUILDDIR/tests/progs) are traced and what a
user would see (stdout, stderr, exit code, the target's own output) is
checked.  Where bpftrace 0.17 can run the same command, the test can ask for
a differential run (DIFF_BPFTRACE): the same steps run once with {ubt} =
bpftrace and once with {ubt} = ubt, and the outputs must be equal after
normalisation (pids, addresses, bpftrace's RLIMIT_MEMLOCK noise, the order
of map entries with equal values, which bpftrace leaves unspecified).

Usage:
    tests/e2e/run.py [--builddir build] [--tracer PATH] [--bpftrace PATH|none]
                     [-k REGEX] [-v] [--summary FILE] [FILE.test ...]

    --tracer bpftrace   run every test with bpftrace standing in for ubt
                        (validates the tests themselves; UBT_ONLY tests and
                        the differential half are skipped)

Prints one line per test and closes with `N passed, N failed` (`, N skipped`
when some were skipped).  Exit status 1 if any test failed.

Test file format: one directive per line, `#` starts a comment line, a NAME
line starts a new test.

    NAME text            test name (required, starts a test)
    PROG variant         {prog} = ./prog_<variant> (e.g. loop_O2_pie)
    RUN command          the command under test, a shell command line run
                         with `exec`, stdin /dev/null, cwd BUILDDIR/tests/progs
    BEFORE command       started in the background before RUN (a target for
                         -p); {before_pid} is its pid; killed at the end
    BEFORE_READY regex   wait until a line of BEFORE's stdout matches
    SETUP command        run to completion (must exit 0) after BEFORE is
                         ready and before RUN starts
    WHEN regex           wait until a line of RUN's stdout matches, then ...
    WHEN_BEFORE regex    ... or a line of BEFORE's stdout matches, then ...
    DO command           ... run this shell command (e.g. kill -USR1
                         {before_pid}; kill -INT {run_pid}); WHEN/DO steps
                         run in file order while RUN runs
    IGNORE regex         stdout lines matching (re.search) are dropped before
                         any check (e.g. target output whose interleaving
                         with the tracer's printf output is not fixed)
    SUM regex            stdout lines matching (re.match; group 1 a key,
                         group 2 a count) become one line `KEY: TOTAL` per
                         key, all at the first one's place, in ascending
                         order of total as bpftrace prints a count map (a
                         map printed and cleared every interval: a round of
                         work that straddles two intervals sums the same)
    MASK regex           every match in stdout (re.M: ^ and $ match at each
                         line) becomes `<masked>` before any
                         check (e.g. times: `MASK ^\d+\.\d{6}` makes
                         `0.012345: x` read `<masked>: x`)
    EXPECT line          stdout has this exact line (EXPECT and EXPECT_REGEX
                         lines must match in file order)
    EXPECT_REGEX re      stdout has a line fully matching re
    EXPECT_NO re         no stdout line matches re (re.search)
    EXPECT_STDERR line   like EXPECT, for stderr (bpftrace's RLIMIT_MEMLOCK
    EXPECT_STDERR_REGEX  line is removed first)
    OUTPUT line          all OUTPUT lines, in order, are the whole stdout
                         (`OUTPUT` alone is an empty line)
    OUTPUT_STDERR line   same for the whole stderr
    EXIT n               expected exit code of RUN (default 0)
    EXPECT_BEFORE line   BEFORE's stdout has this line (read after it is
                         stopped with SIGTERM at the end of the test)
    BEFORE_ALIVE         BEFORE is still running after RUN exited
    BEFORE_SAME re       every BEFORE stdout line matching re has the same
                         group 1, and there are at least two such lines
    DIFF_BPFTRACE [stderr]  run under bpftrace too and compare stdout and the
                         exit code (and stderr, when `stderr` is given);
                         the test's expectations are checked on both runs
    DIFF_BPFTRACE_NEW [stderr]  the same with Debian 13's bpftrace 0.23.2
                         (tests/lib/bpftrace-new, which makes its chroot when
                         missing) as the reference: the newer language
    UBT_ONLY             ubt-specific behaviour: skipped with --tracer bpftrace
    REQUIRES command     skip the test unless this shell command succeeds
                         (placeholders {ubt} and {prog...} are expanded)
                         (cwd BUILDDIR/tests/progs, no placeholders)
    TIMEOUT seconds      limit for the whole test run (default 20)

Placeholders in commands: {ubt} {prog} {prog:VARIANT} {demo} {builddir}
{e2edir} (this directory) {tmp} (a fresh directory per run) {before_pid}
{run_pid} {dead_pid} (the pid of a process that just exited).

Every test also fails if RUN leaves a process behind in its session (a -c
child that outlived the tracer, for example).
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from proc import leftovers  # noqa: E402  (tests/lib/proc.py)
from maptext import sort_ties  # noqa: E402  (tests/lib/maptext.py)

RLIMIT_NOISE = re.compile(r"^(ERROR|WARNING): .*RLIMIT_MEMLOCK.*$\n?", re.M)



def sum_lines(out, rx):
    """SUM: the lines of out matching rx summed per key (group 1), the
    totals (group 2) at the first one's place, ascending by total."""
    lines = out.splitlines(True)
    totals, at = {}, None
    kept = []
    for l in lines:
        m = rx.match(l.rstrip("\n"))
        if not m:
            kept.append(l)
            continue
        if at is None:
            at = len(kept)
        totals[m.group(1)] = totals.get(m.group(1), 0) + int(m.group(2))
    if at is None:
        return out
    block = ["%s: %d\n" % (k, v)
             for k, v in sorted(totals.items(), key=lambda kv: kv[1])]
    return "".join(kept[:at] + block + kept[at:])

class Failure(Exception):
    """A test expectation did not hold; the message says which."""


class Skip(Exception):
    """The test cannot run here; the message says why."""


class Proc:
    """A child process in its own session, its stdout and stderr collected
    by reader threads so that WHEN steps can wait for lines while it runs.
    Only this process group is ever signalled."""

    def __init__(self, cmd, cwd, env):
        self.cmd = cmd
        self.out = b""
        self.err = b""
        self.cond = threading.Condition()
        self.p = subprocess.Popen(["/bin/sh", "-c", "exec " + cmd], cwd=cwd,
                                  env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE,
                                  start_new_session=True)
        self.pid = self.p.pid
        self.readers = [
            threading.Thread(target=self._read, args=(self.p.stdout, "out"),
                             daemon=True),
            threading.Thread(target=self._read, args=(self.p.stderr, "err"),
                             daemon=True),
        ]
        for t in self.readers:
            t.start()

    def _read(self, f, which):
        while True:
            chunk = os.read(f.fileno(), 65536)
            with self.cond:
                if not chunk:
                    self.cond.notify_all()
                    return
                setattr(self, which, getattr(self, which) + chunk)
                self.cond.notify_all()

    def stdout(self):
        return self.out.decode("utf-8", "replace")

    def stderr(self):
        return RLIMIT_NOISE.sub("", self.err.decode("utf-8", "replace"))

    def wait_line(self, regex, deadline):
        """Wait until a complete stdout line matches regex (re.search)."""
        rx = re.compile(regex)
        with self.cond:
            while True:
                lines = self.stdout().split("\n")[:-1]
                if any(rx.search(l) for l in lines):
                    return True
                if self.p.poll() is not None and not any(
                        t.is_alive() for t in self.readers[:1]):
                    return False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.05))

    def alive(self):
        if self.p.poll() is not None:
            return False
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
        except OSError:
            return False

    def wait(self, deadline):
        """Exit code, or None if the deadline passed first."""
        try:
            rc = self.p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None
        for t in self.readers:
            t.join(timeout=2)
        return rc

    def signal_group(self, sig):
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace=2.0):
        """SIGTERM, then SIGKILL, the process group; returns the exit code."""
        if self.p.poll() is None:
            self.signal_group(signal.SIGTERM)
            rc = self.wait(time.monotonic() + grace)
            if rc is None:
                self.signal_group(signal.SIGKILL)
                self.wait(time.monotonic() + grace)
        # whatever is left in the session (children of the leader) goes too
        leftovers(self.pid, time.monotonic() + 1.0)
        return self.p.returncode


class Test:
    def __init__(self, name, path, lineno):
        self.name = name
        self.path = path
        self.lineno = lineno
        self.prog = None
        self.run = None
        self.before = None
        self.before_ready = None
        self.setup = []
        self.ignore = []
        self.sum = []
        self.mask = []
        self.steps = []          # [("run"|"before", regex, [commands])]
        self.expect = []         # [(stream, kind, text)]
        self.output = None
        self.output_stderr = None
        self.exit = 0
        self.expect_before = []
        self.before_alive = False
        self.before_same = []
        self.diff = None         # None, "stdout" or "stderr"
        self.diff_new = False    # the reference is bpftrace 0.23.2
        self.ubt_only = False
        self.requires = []
        self.timeout = 20.0


def parse_file(path):
    tests = []
    cur = None
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, _, arg = line.partition(" ")
            if key == "NAME":
                cur = Test(arg.strip(), path, lineno)
                tests.append(cur)
                continue
            if cur is None:
                raise SystemExit("%s:%d: directive before NAME" % (path, lineno))
            if key == "PROG":
                cur.prog = arg.strip()
            elif key == "RUN":
                cur.run = arg
            elif key == "BEFORE":
                cur.before = arg
            elif key == "BEFORE_READY":
                cur.before_ready = arg
            elif key == "IGNORE":
                cur.ignore.append(re.compile(arg))
            elif key == "SUM":
                cur.sum.append(re.compile(arg))
            elif key == "MASK":
                cur.mask.append(re.compile(arg, re.M))
            elif key == "SETUP":
                cur.setup.append(arg)
            elif key in ("WHEN", "WHEN_BEFORE"):
                cur.steps.append(("run" if key == "WHEN" else "before", arg, []))
            elif key == "DO":
                if not cur.steps:
                    raise SystemExit("%s:%d: DO without WHEN" % (path, lineno))
                cur.steps[-1][2].append(arg)
            elif key in ("EXPECT", "EXPECT_REGEX", "EXPECT_NO"):
                cur.expect.append(("out", key, arg))
            elif key in ("EXPECT_STDERR", "EXPECT_STDERR_REGEX"):
                cur.expect.append(("err", key.replace("_STDERR", ""), arg))
            elif key == "OUTPUT":
                cur.output = (cur.output or []) + [arg]
            elif key == "OUTPUT_STDERR":
                cur.output_stderr = (cur.output_stderr or []) + [arg]
            elif key == "EXIT":
                cur.exit = int(arg)
            elif key == "EXPECT_BEFORE":
                cur.expect_before.append(arg)
            elif key == "BEFORE_ALIVE":
                cur.before_alive = True
            elif key == "BEFORE_SAME":
                cur.before_same.append(arg)
            elif key in ("DIFF_BPFTRACE", "DIFF_BPFTRACE_NEW"):
                cur.diff = "stderr" if arg.strip() == "stderr" else "stdout"
                cur.diff_new = key == "DIFF_BPFTRACE_NEW"
            elif key == "UBT_ONLY":
                cur.ubt_only = True
            elif key == "REQUIRES":
                cur.requires.append(arg)
            elif key == "TIMEOUT":
                cur.timeout = float(arg)
            else:
                raise SystemExit("%s:%d: unknown directive %s" % (path, lineno, key))
    for t in tests:
        if not t.run:
            raise SystemExit("%s:%d: test '%s' has no RUN" % (path, t.lineno, t.name))
    return tests


class Runner:
    def __init__(self, args):
        self.builddir = os.path.abspath(args.builddir)
        self.timeout_scale = args.timeout_scale
        self.progdir = os.path.join(self.builddir, "tests", "progs")
        self.e2edir = os.path.dirname(os.path.abspath(__file__))
        self.tracer_is_bpftrace = args.tracer is not None and \
            os.path.basename(args.tracer) == "bpftrace"
        self.ubt = args.tracer or os.path.join(self.builddir, "tools", "ubt")
        if os.sep not in self.ubt:
            self.ubt = shutil.which(self.ubt) or self.ubt
        self.bpftrace = self.bpftrace_new = None
        if args.bpftrace != "none":
            self.bpftrace = shutil.which(args.bpftrace) if os.sep not in \
                args.bpftrace else args.bpftrace
            self.bpftrace_new = os.path.join(self.e2edir, "..", "lib", "bpftrace-new")
        self.verbose = args.verbose
        self.env = dict(os.environ, LC_ALL="C")

    # -- one run of a test with a given tracer -------------------------------

    def expand(self, s, tracer, tmp, pids):
        def sub(m):
            key = m.group(1)
            if key == "ubt":
                return tracer
            if key == "prog":
                return "./prog_" + self.cur.prog
            if key.startswith("prog:"):
                return "./prog_" + key[5:]
            if key == "demo":
                return os.path.join(self.builddir, "tests", "demo")
            if key == "builddir":
                return self.builddir
            if key == "e2edir":
                return self.e2edir
            if key == "tmp":
                return tmp
            if key == "dead_pid":
                if "dead_pid" not in pids:
                    p = subprocess.Popen(["/bin/true"])
                    p.wait()
                    pids["dead_pid"] = p.pid
                return str(pids["dead_pid"])
            if key in pids:
                return str(pids[key])
            raise Failure("unknown placeholder {%s}" % key)
        return re.sub(r"\{(ubt|prog|prog:[A-Za-z0-9_]+|demo|builddir|e2edir|tmp|before_pid|run_pid|dead_pid)\}",
                      sub, s)

    def check_progs(self, t):
        names = re.findall(r"\{prog:([A-Za-z0-9_]+)\}", " ".join(
            [t.run, t.before or ""] + t.setup + [c for s in t.steps for c in s[2]]))
        if t.prog:
            names.append(t.prog)
        for n in names:
            p = os.path.join(self.progdir, "prog_" + n)
            if not os.access(p, os.X_OK):
                raise Failure("target program %s is not built" % p)

    def run_once(self, t, tracer):
        """Run every step of t with {ubt} = tracer; returns a dict of what was
        seen.  All processes are stopped before it returns."""
        tmp = tempfile.mkdtemp(prefix="ubt-e2e-")
        pids = {}
        before = run = None
        deadline = time.monotonic() + t.timeout * self.timeout_scale
        res = {"notes": []}
        try:
            if t.before:
                before = Proc(self.expand(t.before, tracer, tmp, pids),
                              self.progdir, self.env)
                pids["before_pid"] = before.pid
                if t.before_ready and not before.wait_line(t.before_ready, deadline):
                    raise Failure("BEFORE never printed /%s/; its output:\n%s%s" %
                                  (t.before_ready, before.stdout(), before.stderr()))
            for c in t.setup:
                c = self.expand(c, tracer, tmp, pids)
                r = subprocess.run(["/bin/sh", "-c", c], cwd=self.progdir,
                                   stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=max(1.0, deadline - time.monotonic()))
                if r.returncode != 0:
                    raise Failure("SETUP `%s` exited %d: %s" % (
                        c, r.returncode, (r.stdout + r.stderr).decode(errors="replace")))
            run = Proc(self.expand(t.run, tracer, tmp, pids), self.progdir, self.env)
            pids["run_pid"] = run.pid
            for where, regex, cmds in t.steps:
                src = run if where == "run" else before
                if src is None:
                    raise Failure("WHEN_BEFORE without BEFORE")
                if not src.wait_line(regex, deadline):
                    res["notes"].append("WHEN /%s/ never matched (%s)" % (
                        regex, "timeout" if time.monotonic() >= deadline
                        else "process exited"))
                    break
                for c in cmds:
                    c = self.expand(c, tracer, tmp, pids)
                    r = subprocess.run(["/bin/sh", "-c", c], cwd=self.progdir,
                                       stdin=subprocess.DEVNULL,
                                       capture_output=True, timeout=10)
                    if r.returncode != 0:
                        res["notes"].append("DO `%s` failed: %s" % (
                            c, r.stderr.decode(errors="replace").strip()))
            rc = run.wait(deadline)
            if rc is None:
                res["notes"].append("timed out after %gs" % (t.timeout * self.timeout_scale))
                run.stop()
            else:
                left = leftovers(run.pid, time.monotonic() + 2.0)
                if left:
                    res["notes"].append("left process(es) behind: " + ", ".join(left))
            res["rc"] = rc
            res["out"] = "".join(
                l for l in run.stdout().splitlines(True)
                if not any(rx.search(l) for rx in t.ignore))
            for rx in t.sum:
                res["out"] = sum_lines(res["out"], rx)
            for rx in t.mask:
                res["out"] = rx.sub("<masked>", res["out"])
            res["err"] = run.stderr()
            res["pids"] = pids
            if before:
                res["before_alive"] = before.alive()
                before.stop(grace=5.0)
                res["before_out"] = before.stdout()
                res["before_err"] = before.stderr()
        finally:
            for p in (run, before):
                if p is not None and p.p.poll() is None:
                    p.stop()
            shutil.rmtree(tmp, ignore_errors=True)
        return res

    # -- checks ---------------------------------------------------------------

    @staticmethod
    def match_in_order(text, expects, what):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        pos = 0
        for kind, arg in expects:
            if kind == "EXPECT_NO":
                rx = re.compile(arg)
                bad = [l for l in lines if rx.search(l)]
                if bad:
                    raise Failure("%s has a line matching /%s/: %r" % (what, arg, bad[0]))
                continue
            if kind == "EXPECT":
                ok = lambda l: l == arg
            else:
                rx = re.compile(arg)
                ok = lambda l, rx=rx: rx.fullmatch(l) is not None
            for i in range(pos, len(lines)):
                if ok(lines[i]):
                    pos = i + 1
                    break
            else:
                where = " after line %d" % pos if pos else ""
                raise Failure("%s lacks %s%s: %r" % (
                    what, "line" if kind == "EXPECT" else "a line matching", where, arg))

    def check(self, t, res, label):
        pre = label + ": " if label else ""
        if res["notes"]:
            raise Failure(pre + "; ".join(res["notes"]))
        if res["rc"] != t.exit:
            # the last lines each stream printed say why (a helper's FAIL: line)
            tail = [l for st in ("out", "err") for l in res[st].splitlines()[-5:]]
            raise Failure("%sexit code %s, expected %d%s" % (
                pre, res["rc"], t.exit, "".join("\n      | " + l for l in tail)))
        for stream, what in (("out", "stdout"), ("err", "stderr")):
            exps = [(k, a) for s, k, a in t.expect if s == stream]
            self.match_in_order(res[stream], exps, pre + what)
        if t.output is not None:
            want = "".join(l + "\n" for l in t.output)
            if res["out"] != want:
                raise Failure("%sstdout differs from OUTPUT:\n%s" % (
                    pre, unified(want, res["out"], "OUTPUT", "stdout")))
        if t.output_stderr is not None:
            want = "".join(l + "\n" for l in t.output_stderr)
            if res["err"] != want:
                raise Failure("%sstderr differs from OUTPUT_STDERR:\n%s" % (
                    pre, unified(want, res["err"], "OUTPUT_STDERR", "stderr")))
        if t.before_alive and not res.get("before_alive"):
            raise Failure("%sthe BEFORE process did not survive" % pre)
        if t.expect_before:
            self.match_in_order(res.get("before_out", ""),
                                [("EXPECT", a) for a in t.expect_before],
                                pre + "BEFORE's stdout")
        for regex in t.before_same:
            rx = re.compile(regex)
            vals = [m.group(1) for m in map(rx.search, res.get("before_out", "").split("\n")) if m]
            if len(vals) < 2:
                raise Failure("%sBEFORE printed %d line(s) matching /%s/, expected 2 or more" %
                              (pre, len(vals), regex))
            if len(set(vals)) != 1:
                raise Failure("%sBEFORE's /%s/ values differ: %s" % (pre, regex, " vs ".join(vals)))

    def reference(self, t):
        """bpftrace's run of a differential test, which must meet the test's
        expectations itself.  On a loaded machine its kernel unwinder cuts
        stacks it cannot fault in short and its buffers drop events, so a run
        that fails is repeated once before the test is called wrong."""
        for attempt in (1, 2):
            ref = self.run_once(t, self.bpftrace_new if t.diff_new else self.bpftrace)
            try:
                self.check(t, ref, "bpftrace")
                return ref
            except Failure as e:
                if attempt == 2:
                    raise Failure("the test is wrong, bpftrace fails it: %s" % e)

    @staticmethod
    def differs(t, ref, res):
        """What differs between bpftrace's run and ubt's, or None."""
        streams = ["out"] + (["err"] if t.diff == "stderr" else [])
        for s in streams:
            a = normalise(ref[s], ref["pids"])
            b = normalise(res[s], res["pids"])
            if a != b:
                return "std%s differs from bpftrace's:\n%s" % (s, unified(a, b, "bpftrace", "ubt"))
        if ref["rc"] != res["rc"]:
            return "exit code %s, bpftrace's %s" % (res["rc"], ref["rc"])
        return None

    def run_test(self, t):
        self.cur = t
        if t.ubt_only and self.tracer_is_bpftrace:
            raise Skip("UBT_ONLY")
        if t.diff_new and self.tracer_is_bpftrace:
            raise Skip("the newer language: bpftrace 0.17 has not got it")
        for r in t.requires:
            r = self.expand(r, self.ubt, "/nonexistent", {})
            if subprocess.run(["/bin/sh", "-c", r], stdin=subprocess.DEVNULL, cwd=self.progdir,
                              capture_output=True, timeout=30).returncode != 0:
                raise Skip("REQUIRES `%s` failed" % r)
        self.check_progs(t)
        if not (os.path.isfile(self.ubt) and os.access(self.ubt, os.X_OK)):
            raise Failure("tracer %s is not built" % self.ubt)
        ref = None
        if t.diff and (self.bpftrace_new if t.diff_new else self.bpftrace) and \
                not self.tracer_is_bpftrace:
            ref = self.reference(t)
        res = self.run_once(t, self.ubt)
        self.check(t, res, "")
        if ref is not None:
            err = self.differs(t, ref, res)
            if err:
                # bpftrace, the reference, once more (see reference()); ubt
                # is run once
                err = self.differs(t, self.reference(t), res) and err
            if err:
                raise Failure(err)
        if t.diff and ref is None and not self.tracer_is_bpftrace:
            return "ok (bpftrace not available: no differential run)"
        return "ok"


MAP_LINE = re.compile(r"^(@[A-Za-z0-9_]*)\[.*\]: (-?\d+)$")


def normalise(text, pids):
    """Make two tracers' outputs comparable: pids and addresses replaced, and
    map entries with equal values (printed in no fixed order by bpftrace)
    sorted."""
    for name, pid in pids.items():
        text = re.sub(r"\b%d\b" % pid, "<%s>" % name, text)
    text = re.sub(r"/proc/\d+/", "/proc/<pid>/", text)
    # a map's name line: bpftrace 0.17 ends it with a space before a
    # histogram (ubt too), 0.23 without
    text = re.sub(r"^(@.*:) $", r"\1", text, flags=re.M)
    text = re.sub(r"0x[0-9a-fA-F]{6,}", "<addr>", text)
    lines = text.split("\n")
    return "\n".join(sort_ties(lines, MAP_LINE))


def unified(a, b, na, nb):
    import difflib
    d = difflib.unified_diff(a.splitlines(), b.splitlines(), na, nb, lineterm="", n=2)
    return "\n".join("    " + l for l in list(d)[:60])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="ubt end-to-end tests")
    ap.add_argument("--builddir", default=os.path.join(here, "..", "..", "build"))
    ap.add_argument("--tracer", help="tracer to test instead of BUILDDIR/tools/ubt")
    ap.add_argument("--bpftrace", default="bpftrace",
                    help="reference for DIFF_BPFTRACE tests, or `none`")
    ap.add_argument("-k", dest="filter", help="only tests whose name matches REGEX")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--timeout-scale", type=float, default=1.0,
                    help="multiply every test's time limit (a slow, e.g. sanitized, tracer)")
    ap.add_argument("--summary", help="write `passed failed skipped` to FILE")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()

    # a SIGTERM (e.g. from `timeout`) unwinds like Ctrl-C, so the finally
    # blocks stop every process this runner started
    def on_term(sig, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)

    if os.geteuid() != 0:
        print("e2e: warning: not root; attaching and bpftrace will likely fail",
              file=sys.stderr)
    files = args.files or sorted(
        os.path.join(here, f) for f in os.listdir(here) if f.endswith(".test"))
    runner = Runner(args)
    passed = failed = skipped = 0
    for path in files:
        for t in parse_file(path):
            if args.filter and not re.search(args.filter, t.name):
                continue
            label = "%s: %s" % (os.path.basename(path), t.name)
            t0 = time.monotonic()
            try:
                status = runner.run_test(t)
                passed += 1
                print("%s  %s (%.1fs)" % (status, label, time.monotonic() - t0), flush=True)
            except Skip as e:
                skipped += 1
                print("skip  %s: %s" % (label, e), flush=True)
            except (Failure, subprocess.TimeoutExpired, OSError) as e:
                failed += 1
                print("FAIL  %s (%.1fs)\n    %s" % (
                    label, time.monotonic() - t0, str(e).replace("\n", "\n    ")),
                    flush=True)
    summary = "%d passed, %d failed" % (passed, failed)
    if skipped:
        summary += ", %d skipped" % skipped
    print(summary)
    if args.summary:
        with open(args.summary, "w") as f:
            f.write("%d %d %d\n" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
