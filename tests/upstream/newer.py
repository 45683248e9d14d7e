#!/usr/bin/env python3
"""tests/upstream/newer.py - how many of a newer bpftrace's runtime tests ubt passes.

Issue 24 asks for the share of bpftrace 0.24-0.26's own runtime tests, for
the language ubt now speaks, that ubt passes.  This reads the test files of
a bpftrace git repository at a tag (`git show TAG:tests/runtime/FILE`,
nothing is checked out), keeps the tests a tracer of user space can run
without bpftrace's test programs, runs each with ubt and checks its
expectations as bpftrace's engine does (EXPECT: a whole line, surrounding
blanks ignored; EXPECT_REGEX: a search; the _NONE forms: absent; WILL_FAIL:
a non-zero exit), on stdout and stderr together.

    tests/upstream/newer.py --repo BPFTRACE_GIT [--tag v0.26.1]
                            [--builddir build] [--files bool,macro,...] [-v]

Kept: tests whose program (PROG, or RUN's command line) uses begin/end,
BEGIN/END and interval probes only.  Not kept (counted as such): tests with
BEFORE/AFTER/SETUP (bpftrace's test programs), REQUIRES or REQUIRES_FEATURE
(kernel features), EXPECT_FILE/EXPECT_JSON, ENV, or a kernel probe, a
`test:`/`bench:`/`self:` probe, BTF types or kernel functions.  A test whose
run passes its TIMEOUT (default 5 s) is ended with SIGINT (bpftrace ends
scripts of begin probes by itself since 0.24; ubt too for lowercase begin)
and judged on what it printed.

The last line is `FILE selected N passed N` per file, then the total.
"""

import argparse
import os
import re
import signal
import subprocess
import sys

DEFAULT_FILES = "bool,macro,for,config,stdlib,map,variable,call,basic,intcast"

KERNEL = re.compile(
    r"\b(kprobe|kretprobe|kfunc|kretfunc|fentry|fexit|tracepoint|rawtracepoint|"
    r"software|hardware|watchpoint|asyncwatchpoint|iter|uprobe|uretprobe|usdt|"
    r"test|bench|self|profile|t|k|kr|f|fr|rt|s|h|w|aw|u|ur|U|p):")
KERNEL_WORDS = re.compile(
    r"\b(curtask|kstack|ksym|kaddr|kptr|skboutput|socket_cookie|percpu_kaddr|"
    r"struct task_struct|ctx|args\.|args->|btf|cgroup_path|path\(|pcomm|ppid|"
    r"signal\(|override|offsetof\(struct task|import|sizeof\(struct task|"
    r"__builtin\w*|jiffies|ncpus|kernel_\w*)\b")


def parse(text):
    tests, cur, prev = [], None, None
    for raw in text.splitlines():
        if raw.startswith("#") or not raw.strip():
            prev = None
            continue
        if raw.startswith(" ") and cur is not None and prev in ("PROG", "RUN"):
            cur[prev] += "\n" + raw.strip()
            continue
        key, _, arg = raw.partition(" ")
        if key == "NAME":
            cur = {"NAME": arg.strip(), "EXPECT": [], "TIMEOUT": 5, "other": set()}
            tests.append(cur)
        elif cur is None:
            continue
        elif key in ("PROG", "RUN"):
            cur[key] = arg
        elif key in ("EXPECT", "EXPECT_NONE", "EXPECT_REGEX", "EXPECT_REGEX_NONE"):
            cur["EXPECT"].append((key, arg))
        elif key == "TIMEOUT":
            cur["TIMEOUT"] = float(arg.strip() or 5)
        elif key == "WILL_FAIL":
            cur["WILL_FAIL"] = True
        else:
            cur["other"].add(key)
        prev = key
    return tests


def why_not(t):
    """None if ubt can run t, else why not."""
    for k in ("BEFORE", "AFTER", "SETUP", "CLEANUP", "REQUIRES", "REQUIRES_FEATURE",
              "EXPECT_FILE", "EXPECT_JSON", "ENV", "SKIP_IF_ENV_HAS", "ARCH"):
        if k in t["other"]:
            return k
    prog = t.get("PROG") or t.get("RUN") or ""
    if not prog or not t["EXPECT"]:
        return "no program or no expectation"
    if "testprogs" in prog or "runtime/scripts" in prog or "{{" in prog.replace("{{BPFTRACE}}", ""):
        return "bpftrace's test programs or scripts"
    if KERNEL.search(prog):
        return "a kernel or test probe"
    if KERNEL_WORDS.search(prog):
        return "a kernel type or helper"
    return None


def run(t, ubt):
    if "PROG" in t:
        cmd = [ubt, "-e", t["PROG"]]
        shell = False
    else:
        cmd = t["RUN"].replace("{{BPFTRACE}}", ubt)
        shell = True
    p = subprocess.Popen(cmd, shell=shell, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=t["TIMEOUT"])
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGINT)
        try:
            out, _ = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
    return p.returncode, out.decode("utf-8", "replace")


def check(t, rc, out):
    for kind, arg in t["EXPECT"]:
        if kind == "EXPECT":
            ok = re.search(r"^\s*%s\s*$" % re.escape(arg), out, re.M)
        elif kind == "EXPECT_NONE":
            ok = not re.search(r"^\s*%s\s*$" % re.escape(arg), out, re.M)
        elif kind == "EXPECT_REGEX":
            ok = re.search(arg, out, re.M)
        else:
            ok = not re.search(arg, out, re.M)
        if not ok:
            return "%s %s" % (kind, arg)
    if t.get("WILL_FAIL") and rc == 0:
        return "exit 0, expected a failure"
    if not t.get("WILL_FAIL") and rc not in (0, None) and rc != -signal.SIGINT:
        return "exit %s" % rc
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True, help="a git repository of bpftrace")
    ap.add_argument("--tag", default="v0.26.1")
    ap.add_argument("--builddir", default=os.path.join(here, "..", "..", "build"))
    ap.add_argument("--files", default=DEFAULT_FILES)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    ubt = os.path.abspath(os.path.join(a.builddir, "tools", "ubt"))
    total_sel = total_pass = 0
    lines = []
    for name in a.files.split(","):
        text = subprocess.run(["git", "-C", a.repo, "show", "%s:tests/runtime/%s" % (a.tag, name)],
                              capture_output=True, text=True).stdout
        sel = passed = skipped = 0
        for t in parse(text):
            reason = why_not(t)
            if reason:
                skipped += 1
                continue
            sel += 1
            rc, out = run(t, ubt)
            bad = check(t, rc, out)
            if bad is None:
                passed += 1
            if a.verbose:
                print("%s  %s: %s%s" % ("ok  " if bad is None else "FAIL", name, t["NAME"],
                                       "" if bad is None else "\n      " + bad + "\n      | " +
                                       "\n      | ".join(out.splitlines()[-6:])), flush=True)
        lines.append("%s selected %d passed %d (not run: %d)" % (name, sel, passed, skipped))
        total_sel += sel
        total_pass += passed
    for l in lines:
        print(l)
    share = 100.0 * total_pass / total_sel if total_sel else 0.0
    print("total selected %d passed %d (%.0f %%)" % (total_sel, total_pass, share))
    return 0


if __name__ == "__main__":
    sys.exit(main())
