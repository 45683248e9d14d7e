#!/usr/bin/env python3
"""
check.py - .clang-format followed on the lines a change touches.

The tree as a whole does not follow .clang-format (it was committed after
most of the code), and reformatting everything at once would bury every
line's history.  So the rule holds for what changes: this script takes
the C files under src/ and tools/ that the commits since BASE changed,
asks clang-format to format only the lines they changed (--lines), and
fails listing each place where its output differs from the commit's,
with the lines as they are and as clang-format wants them.

BASE is --base, else $FORMAT_BASE, else HEAD~1 (the last commit; for a
merge, what it brought in).  The files are read from the commit (HEAD),
never from the working tree.  clang-format-19 is used, and only it:
other versions format some constructs differently.

Usage: tests/format/check.py [--base REV] [--head REV] [--repo DIR]
                             [--clang-format PROG] [--style STYLE]
                             [--self-test] [--summary FILE]

--head checks another commit than HEAD (with --base REV~1: one commit of
the history), --repo another repository (default: the one holding this
script), --style another style than .clang-format's (to try one).
--self-test also shows the check failing: in a scratch git repository it
commits a formatted file, then a change with a misformatted line (which
must be reported, and only it: a misformatted line the change did not
touch is not), then a formatted change (which must pass).  --summary
writes "passed failed skipped" (tests/run.sh adds them up).  Exit status
0 when every check passed.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
PATHS = ["src/*.c", "src/*.h", "src/**/*.c", "src/**/*.h",
         "tools/*.c", "tools/*.h", "tools/**/*.c", "tools/**/*.h"]


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          capture_output=True, text=True).stdout


def changed_lines(repo, base, head):
    """{path: [(first, last), ...]}: lines of head's version that the
    commits since base added or changed."""
    out = git(repo, "diff", "-U0", "--no-color", "--no-ext-diff", "--diff-filter=AMR",
              base, head, "--", *PATHS)
    ranges, path = {}, None
    for line in out.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif path and line.startswith("@@"):
            m = HUNK.match(line)
            first, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                ranges.setdefault(path, []).append((first, first + count - 1))
    return ranges


def check_file(repo, clang_format, path, ranges, head, style):
    """Problems in one file: (line, as it is, as clang-format wants it)."""
    text = git(repo, "show", head + ":" + path)
    args = [clang_format, "--style=" + style, "--assume-filename=" + os.path.join(repo, path)]
    args += ["--lines=%d:%d" % r for r in ranges]
    formatted = subprocess.run(args, input=text, capture_output=True, text=True, check=True,
                               cwd=repo).stdout
    old, new = text.splitlines(), formatted.splitlines()
    problems = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new,
                                                      autojunk=False).get_opcodes():
        if op != "equal":
            problems.append((i1 + 1, old[i1:i2], new[j1:j2]))
    return problems


def run_check(repo, base, clang_format, quiet=False, head="HEAD", style="file"):
    """Returns the list of (path, line, is, wants) that differ."""
    found = []
    for path, ranges in sorted(changed_lines(repo, base, head).items()):
        for line, is_, wants in check_file(repo, clang_format, path, ranges, head, style):
            found.append((path, line, is_, wants))
            if not quiet:
                print("FAIL  %s:%d: not as .clang-format wants it" % (path, line))
                for s in is_:
                    print("    - " + s)
                for s in wants:
                    print("    + " + s)
    return found


def self_test(clang_format, style):
    """(passed, failed): the check on changes made in a scratch repository."""
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="ubt-format-")
    try:
        def commit(files, msg):
            for name, body in files.items():
                os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(body)
            git(tmp, "add", "-A")
            git(tmp, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", msg)

        git(tmp, "init", "-q")
        shutil.copy(style, os.path.join(tmp, ".clang-format"))
        good = ("int f(int a)\n{\n\tint b = a + 1;\n\treturn b;\n}\n\n"
                "int   old_and_bad( int a ) { return a; }\n")
        commit({"src/x/a.c": good, "tests/t.c": "int  t ;\n"}, "formatted, one old bad line")
        cases = [
            ("a misformatted line added", {"src/x/a.c": good + "int g(int b){return b*2;}\n"},
             [("src/x/a.c", 8)]),
            ("a formatted line added", {"src/x/a.c": good + "int h(void) { return 0; }\n"},
             []),
            ("a misformatted header in tools/", {"tools/b.h": "#define X(a)  ((a)+1)\n"},
             [("tools/b.h", 1)]),
            ("a file outside src/ and tools/ is not checked",
             {"tests/t.c": "int  t ;\nint  u ;\n"}, []),
            ("the line changed inside an old function",
             {"src/x/a.c": good.replace("\tint b = a + 1;", "\tint b = a+2 ;")},
             [("src/x/a.c", 3)]),
        ]
        for name, files, want in cases:
            head = git(tmp, "rev-parse", "HEAD").strip()
            commit(files, name)
            got = [(p, line) for p, line, _, _ in run_check(tmp, "HEAD~1", clang_format,
                                                            quiet=True)]
            if got == want:
                passed += 1
                print("ok    self-test: %s" % name)
            else:
                failed += 1
                print("FAIL  self-test: %s: reported %s, want %s" % (name, got, want))
            git(tmp, "reset", "-q", "--hard", head)
        # a base given by name spans several commits
        commit({"src/x/a.c": good + "int g(int b){return b*2;}\n"}, "bad")
        commit({"src/x/c.c": "int c(void) { return 0; }\n"}, "good")
        got = [(p, line) for p, line, _, _ in run_check(tmp, "HEAD~2", clang_format, quiet=True)]
        if got == [("src/x/a.c", 8)]:
            passed += 1
            print("ok    self-test: a base two commits back")
        else:
            failed += 1
            print("FAIL  self-test: a base two commits back: reported %s" % got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=os.environ.get("FORMAT_BASE") or "HEAD~1")
    ap.add_argument("--repo", help="the repository (default: this script's)")
    ap.add_argument("--head", default="HEAD", help="the commit checked (default HEAD)")
    ap.add_argument("--style", default="file", help="clang-format's --style (default: file)")
    ap.add_argument("--clang-format", default="clang-format-19")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--summary")
    a = ap.parse_args()
    repo = a.repo or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "..", ".."))
    passed = failed = 0
    try:
        if not shutil.which(a.clang_format):
            print("FAIL  %s is not installed (Debian: apt-get install clang-format-19)"
                  % a.clang_format)
            failed += 1
        else:
            try:
                git(repo, "rev-parse", "--verify", "-q", a.base + "^{commit}")
            except subprocess.CalledProcessError:
                # a clone of one commit: nothing to compare with
                print("FAIL  base %s is not a commit of this repository" % a.base)
                failed += 1
            else:
                found = run_check(repo, a.base, a.clang_format, head=a.head, style=a.style)
                if found:
                    failed += 1
                    print("FAIL  %d place(s) on lines changed since %s differ from "
                          ".clang-format (fix with: git clang-format-19 %s)"
                          % (len(found), a.base, a.base))
                else:
                    passed += 1
                    print("ok    lines changed since %s follow .clang-format" % a.base)
            if a.self_test:
                p, f = self_test(a.clang_format, os.path.join(repo, ".clang-format"))
                passed += p
                failed += f
        print("%d passed, %d failed" % (passed, failed))
    finally:
        if a.summary:
            with open(a.summary, "w") as f:
                f.write("%d %d 0\n" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
