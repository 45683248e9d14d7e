#!/usr/bin/env python3
"""tests/diff/run.py - differential tests: the same script under ubt and
bpftrace 0.17, outputs compared after normalisation.

Each case runs `TRACER [OPTS] -c 'PROG ARGS' -e SCRIPT` (cwd
BUILDDIR/tests/progs) once with bpftrace and once with ubt, and requires the
same stdout and exit code after normalising what legitimately differs
between two runs: pids, addresses, times, random values, and the order of
map entries with equal values (bpftrace leaves it unspecified).

Case files (tests/diff/*.cases): a case starts with `== NAME`; the lines
after it, up to the next `==`, are directives (`% ...`) and the script.
Lines starting with `#` outside a script are comments.

    % prog VARIANT ARGS   target: prog_VARIANT ARGS (default: args_O2_pie 8)
    % opts OPTIONS        extra tracer options (e.g. -f json)
    % params WORDS        positional parameters after the script ($1 ...),
                          split as a shell would
    % sub REGEX REPL      re.sub on both outputs (times, random values)
    % stderr              compare stderr too (bpftrace's RLIMIT line removed)
    % nocmd               run without -c (BEGIN/END-only scripts)
    % env NAME=VALUE      set an environment variable for both tracers
    % outfile             add `-o FILE` and compare the file's text after stdout
    % signal MS SIG       send signal SIG (USR1, INT, ...) to the tracer MS ms
                          after it started (several lines: in order)
    % compat WHY          a deliberate difference (docs/compat.md): ubt's
                          output must differ from bpftrace's and match the
                          `% want` lines, in order, as regular expressions
    % want REGEX          a line ubt must print (compat cases only)

{prog} in the script is the target binary's path.

Usage: tests/diff/run.py [--builddir build] [-k REGEX] [-j N] [FILE.cases ...]
Prints one line per case and closes with `N passed, N failed`.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from proc import kill_session  # noqa: E402  (tests/lib/proc.py)
from maptext import sort_ties  # noqa: E402  (tests/lib/maptext.py)

TARGET_LINE = re.compile(r"^(total|checksum) -?\d+$")
MAP_LINE = re.compile(r"^(@[A-Za-z0-9_]*)\[.*\]: (.*)$")


class Case:
    def __init__(self, name, path):
        self.name, self.path = name, path
        self.prog, self.args = "args_O2_pie", "8"
        self.opts, self.subs, self.script = "", [], []
        self.params = []
        self.stderr = self.nocmd = False
        self.compat, self.want = None, []
        self.env = {}
        self.outfile, self.signals = False, []


def parse(path):
    cases, cur = [], None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("== "):
            cur = Case(line[3:].strip(), path)
            cases.append(cur)
        elif cur is None or (line.startswith("#") and not cur.script):
            continue
        elif line.startswith("% "):
            kw, _, rest = line[2:].partition(" ")
            if kw == "prog":
                cur.prog, _, cur.args = rest.partition(" ")
            elif kw == "opts":
                cur.opts = rest
            elif kw == "params":
                cur.params = shlex.split(rest)
            elif kw == "sub":
                pat, _, repl = rest.partition(" ")
                cur.subs.append((pat, repl))
            elif kw == "stderr":
                cur.stderr = True
            elif kw == "env":
                k, _, v = rest.partition("=")
                cur.env[k] = v
            elif kw == "outfile":
                cur.outfile = True
            elif kw == "signal":
                ms, _, sig = rest.partition(" ")
                cur.signals.append((int(ms), sig.strip()))
            elif kw == "nocmd":
                cur.nocmd = True
            elif kw == "compat":
                cur.compat = rest
            elif kw == "want":
                cur.want.append(rest)
            else:
                raise SystemExit("%s: unknown directive %s" % (path, kw))
        else:
            cur.script.append(line)
    return cases


def run(tracer, case, progdir, timeout):
    import signal as sigmod
    import tempfile
    import time
    prog = os.path.join(progdir, "prog_" + case.prog)
    script = "\n".join(case.script).strip().replace("{prog}", prog)
    cmd = [tracer] + shlex.split(case.opts)
    outf = None
    if case.outfile:
        fd, outf = tempfile.mkstemp(prefix="ubt-diff-", suffix=".out")
        os.close(fd)
        cmd += ["-o", outf]
    if not case.nocmd:
        cmd += ["-c", "%s %s" % (prog, case.args)]
    cmd += ["-e", script] + case.params
    env = dict(os.environ, **case.env)
    try:
        p = subprocess.Popen(cmd, cwd=progdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, text=True, errors="replace",
                             start_new_session=True)
        start = time.monotonic()
        for ms, sig in case.signals:
            time.sleep(max(0.0, start + ms / 1000.0 - time.monotonic()))
            if p.poll() is None:
                p.send_signal(getattr(sigmod, "SIG" + sig))
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_session(p)  # the tracer, its -c child and anything else it left
            out, err = p.communicate()
            return out, "timeout", -1
        if outf:
            with open(outf, errors="replace") as f:
                out += "--file--\n" + f.read()
        return out, err, p.returncode
    finally:
        if outf:
            os.unlink(outf)


def json_map_order(line):
    """A JSON map line with its entries of equal value sorted by key."""
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    if not isinstance(obj, dict) or obj.get("type") not in ("map", "stats", "hist"):
        return line
    for name, val in obj["data"].items():
        if isinstance(val, dict):
            items, out, i = list(val.items()), [], 0
            while i < len(items):
                j = i
                while j < len(items) and items[j][1] == items[i][1]:
                    j += 1
                out.extend(sorted(items[i:j]))
                i = j
            obj["data"][name] = dict(out)
    return json.dumps(obj)


def normalise(text, case):
    text = re.sub(r"0x[0-9a-fA-F]{6,}", "<addr>", text)
    for pat, repl in case.subs:
        text = re.sub(pat, repl, text, flags=re.M)
    lines = text.split("\n")
    # RLIMIT noise, and the target's own last line, whose place among the
    # tracer's lines depends on when its buffered stdout is flushed
    lines = [l for l in lines if "RLIMIT_MEMLOCK" not in l and not TARGET_LINE.match(l)]
    lines = [json_map_order(l) if l.startswith("{") else l for l in lines]
    return "\n".join(sort_ties(lines, MAP_LINE))


def check(case, ubt, bpftrace, progdir, timeout):
    """None when ubt's output is bpftrace's; else what differs.  bpftrace,
    the reference, is run a second time when the first differs: on a loaded
    machine its kernel unwinder and its event buffers drop what they can not
    fault in or keep up with, and only ubt is under test."""
    res = run(ubt, case, progdir, timeout)
    err = compare(case, run(bpftrace, case, progdir, timeout), res)
    if err and not case.compat:
        again = compare(case, run(bpftrace, case, progdir, timeout), res)
        if again is None:
            return None
    return err


def compare(case, ref, res):
    a, b = normalise(ref[0], case), normalise(res[0], case)
    if case.stderr:
        a += "\n--stderr--\n" + normalise(ref[1], case)
        b += "\n--stderr--\n" + normalise(res[1], case)
    if case.compat:
        # ubt's own expectations first: an empty or failed run of ubt is a
        # failure of ubt, not a sign that bpftrace changed
        lines, k = b.split("\n"), 0
        for w in case.want:
            while k < len(lines) and not re.fullmatch(w, lines[k]):
                k += 1
            if k == len(lines):
                return "ubt's output has no line matching %r:\n%s\n    ubt stderr, exit %d: %s" % \
                    (w, indent(b), res[2], res[1][:300])
            k += 1
        if a == b:
            return "the documented difference (%s) is gone: ubt prints what bpftrace prints" % \
                case.compat
        return None
    if a != b:
        import difflib
        d = difflib.unified_diff(a.splitlines(), b.splitlines(), "bpftrace", "ubt",
                                 lineterm="", n=2)
        return "output differs:\n" + indent("\n".join(list(d)[:40])) + \
            ("\n    ubt stderr: " + res[1][:300] if res[1] and not case.stderr else "")
    if ref[2] != res[2]:
        return "exit code %d, bpftrace's %d (%s)" % (res[2], ref[2], res[1][:200])
    return None


def indent(s):
    return "    " + s.replace("\n", "\n    ")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="ubt differential tests against bpftrace")
    ap.add_argument("--builddir", default=os.path.join(here, "..", "..", "build"))
    ap.add_argument("--bpftrace", default="bpftrace")
    ap.add_argument("-k", dest="filter")
    # one at a time: bpftrace's kernel uprobes patch the binary's page for
    # every process that maps it, so cases on one binary cannot overlap
    ap.add_argument("-j", dest="jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--summary", help="write `passed failed skipped` to FILE")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    ubt = os.path.abspath(os.path.join(args.builddir, "tools", "ubt"))
    progdir = os.path.abspath(os.path.join(args.builddir, "tests", "progs"))
    files = args.files or sorted(os.path.join(here, f) for f in os.listdir(here)
                                 if f.endswith(".cases"))
    cases = [c for f in files for c in parse(f)
             if not args.filter or re.search(args.filter, c.name)]
    if subprocess.run(["sh", "-c", "command -v " + args.bpftrace],
                      capture_output=True).returncode:
        print("diff: %s not found; 0 passed, 0 failed, %d skipped" % (args.bpftrace, len(cases)))
        return 0
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = [(c, ex.submit(check, c, ubt, args.bpftrace, progdir, args.timeout))
                for c in cases]
        for c, f in futs:
            try:
                err = f.result()
            except Exception as e:  # a broken case must not hide the others
                err = "runner error: %r" % e
            label = "%s: %s" % (os.path.basename(c.path), c.name)
            if err:
                failed += 1
                print("FAIL  %s\n%s" % (label, indent(err)), flush=True)
            else:
                passed += 1
                print("ok  %s%s" % (label, " (compat)" if c.compat else ""), flush=True)
    print("%d passed, %d failed" % (passed, failed))
    if args.summary:
        with open(args.summary, "w") as f:
            f.write("%d %d 0\n" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
