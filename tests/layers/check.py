#!/usr/bin/env python3
"""
check.py - the rooms' rules of src/ and tools/, checked on the source.

Each folder of src/ is a room whose header opens with its rule (see the map
at the top of docs/ARCHITECTURE.md).  This script reads every .c and .h
file, finds the room of the file and of each header it includes with
#include "...", and fails when:

  - a file includes a header of a room its own room may not use (the table
    MAY_USE below: a lower layer including a higher one, resolve or the ELF
    layer reaching the target, the session or the features);
  - a file outside attach/inject/ and attach/features/ includes one of the
    headers that change the target (tracee_write.h: memory writes and
    remote system calls; session_internal.h: the session's internals),
    tracee.c, spawn.c and tracee_write.h excepted, which implement the first;
  - a file outside src/attach/ includes attach/session.h, the definition
    of struct att_session: outside attach the session is opaque (attach.h
    declares it incomplete, with accessors for what the driver needs);
  - a file of inject/ calls a feature's function by name (att_ret_*,
    att_read_*, ...): the session runs features through the table of
    their verbs (features/table.c), so that features depend on inject and
    not the other way round;
  - a file outside those rooms calls the target-changing functions
    (tracee_write, tracee_syscall, tracee_scratch, tracee_rescue_apply,
    tracee_spawn_rescue, att_rsys), or a file of resolve/ or of the ELF layer calls any tracee_
    function: attach/session.h holds the session, whose struct tracee makes
    tracee.h reachable from every attach room, so calls are checked as well
    as direct includes.

Usage: tests/layers/check.py [--root DIR] [--summary FILE] [--self-test]

--root checks another copy of the tree (default: the repository).  With
--self-test it also shows that each kind of rule fails: it copies src/ and
tools/ to a temporary directory, adds one forbidden include or call there,
and expects this script to report exactly that file and rule.  --summary
writes "passed failed skipped" (tests/run.sh adds them to its totals).
Exit status 0 when every check passed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Rooms by path prefix; the longest prefix wins.
ROOMS = [
    ('src/util/', 'util'),
    ('src/runtime/', 'runtime'),
    ('src/elf/', 'elf'),
    ('src/parser/', 'parser'),
    ('src/sema/', 'sema'),
    ('src/codegen/', 'codegen'),
    ('src/attach/arch/', 'arch'),
    ('src/attach/target/', 'target'),
    ('src/attach/resolve/', 'resolve'),
    ('src/attach/inject/', 'inject'),
    ('src/attach/features/', 'features'),
    ('src/attach/', 'attach'),  # attach.h: the session and the driver's verbs
    ('src/output/', 'output'),
    ('tools/', 'tools'),
]

ALL = {r for _, r in ROOMS}

# Which rooms' headers each room may include (its own always).
MAY_USE = {
    'util': set(),
    'runtime': set(),  # freestanding: it runs inside the target
    'elf': {'util'},
    'parser': {'util'},
    'sema': {'util', 'parser'},
    'codegen': {'util', 'parser', 'sema', 'runtime'},
    'arch': {'runtime', 'util'},
    'target': {'elf', 'util', 'runtime', 'attach', 'codegen', 'sema', 'parser'},
    'resolve': {'elf', 'util', 'parser', 'sema', 'codegen', 'runtime', 'attach'},
    # inject runs the features through their table (att_features[]) and names none
    'inject': {'target', 'resolve', 'arch', 'elf', 'util', 'runtime', 'codegen',
               'sema', 'parser', 'attach'},
    'features': {'inject', 'target', 'resolve', 'arch', 'elf', 'util', 'runtime', 'codegen',
                 'sema', 'parser', 'attach'},
    'attach': {'target', 'resolve', 'inject', 'arch', 'elf', 'codegen', 'runtime',
               'sema', 'parser', 'util'},
    'output': {'util', 'elf', 'parser', 'sema', 'codegen', 'runtime'},
    'tools': ALL - {'inject', 'target', 'resolve', 'arch'},
}

# Headers that change the target: only these rooms (and these files) include them.
WRITERS = {'inject', 'features'}
WRITE_HEADERS = {'src/attach/target/tracee_write.h', 'src/attach/inject/session_internal.h'}
WRITE_IMPL = {'src/attach/target/tracee.c', 'src/attach/target/spawn.c',
              'src/attach/target/tracee_write.h'}
# The session's definition: attach's own (struct att_session is opaque elsewhere).
ATTACH_OWN = {'src/attach/session.h'}
WRITE_CALLS = re.compile(r'\b(tracee_write|tracee_put_regs|tracee_syscall|tracee_scratch|tracee_rescue_apply|tracee_spawn_rescue|att_rsys)\s*\(')
PTRACE_CALLS = re.compile(r'\b(tracee_[a-z_]+)\s*\(')
NO_PTRACE = {'resolve', 'elf'}
# A feature's own functions (features/features.h): inject calls them only
# through the table's verbs.
FEATURE_CALLS = re.compile(r'\b(att_(?:ret|read|pstack|profile|dl|usdt_semas)_[a-z_]+)\s*\(')

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(rel):
    best = None
    for prefix, room in ROOMS:
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, room)
    return best[1] if best else None


def strip_c(text):
    """Source without comments and string literals (their text is no call)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def resolve_include(root, rel, name):
    """The repository path of an #include "name" in file rel, or None (a
    generated header: it belongs to the file's own room)."""
    here = os.path.dirname(rel)
    for cand in (os.path.join(here, name), os.path.join('src', name), name):
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def sources(root):
    for top in ('src', 'tools'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(d, f), root)


def check(root):
    """Every violation in the tree at root, as 'path:line: message'."""
    bad = []
    for rel in sorted(sources(root)):
        room = room_of(rel)
        if room is None:
            continue
        with open(os.path.join(root, rel), errors='replace') as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            line = text.count('\n', 0, m.start()) + 1
            inc = resolve_include(root, rel, m.group(1))
            if inc is None:
                continue
            other = room_of(inc)
            if other is None or other == room:
                pass
            elif other not in MAY_USE[room]:
                bad.append(f'{rel}:{line}: {room}/ may not include {inc} ({other}/)')
                continue
            if inc in ATTACH_OWN and not rel.startswith('src/attach/'):
                bad.append(f'{rel}:{line}: only src/attach/ may include {inc} (the session '
                           f'is opaque outside attach: use the accessors of attach.h)')
                continue
            if inc in WRITE_HEADERS and room not in WRITERS and rel not in WRITE_IMPL:
                bad.append(f'{rel}:{line}: only inject/ and features/ may include {inc} '
                           f'(it changes the target)')
        code = strip_c(text)
        for m in PTRACE_CALLS.finditer(code):
            line = code.count('\n', 0, m.start()) + 1
            if room in NO_PTRACE:
                bad.append(f'{rel}:{line}: {room}/ reads files only, yet calls {m.group(1)}()')
        if room == 'inject':
            for m in FEATURE_CALLS.finditer(code):
                line = code.count('\n', 0, m.start()) + 1
                bad.append(f'{rel}:{line}: inject/ runs features through att_features[], '
                           f'yet calls {m.group(1)}()')
        if room not in WRITERS and rel not in WRITE_IMPL:
            for m in WRITE_CALLS.finditer(code):
                line = code.count('\n', 0, m.start()) + 1
                bad.append(f'{rel}:{line}: only inject/ and features/ may change the target, '
                           f'yet {room}/ calls {m.group(1)}()')
    return bad


# One forbidden change per kind of rule: (file, text added after its first
# #include line, the message expected for that file).
SELF_TESTS = [
    ('resolve including the session\'s internals',
     'src/attach/resolve/resolve.c', '#include "attach/inject/session_internal.h"\n',
     'resolve/ may not include src/attach/inject/session_internal.h'),
    ('resolve including ptrace',
     'src/attach/resolve/dwarf.c', '#include "attach/target/tracee.h"\n',
     'resolve/ may not include src/attach/target/tracee.h'),
    ('resolve calling ptrace through the session\'s struct tracee',
     'src/attach/resolve/names.c',
     'static int peek(struct tracee *t) { char c; return tracee_read(t, 0, &c, 1); }\n',
     'resolve/ reads files only, yet calls tracee_read()'),
    ('the ELF layer including a higher room',
     'src/elf/elfsym.c', '#include "attach/attach.h"\n',
     'elf/ may not include src/attach/attach.h'),
    ('target/ including the write API outside tracee.c',
     'src/attach/target/facts.c', '#include "attach/target/tracee_write.h"\n',
     'only inject/ and features/ may include src/attach/target/tracee_write.h'),
    ('the driver writing target memory',
     'tools/ubt.c',
     'static int poke(struct tracee *t) { return tracee_write(t, 0, "", 1); }\n',
     'yet tools/ calls tracee_write()'),
    ('the driver reading the session\'s fields',
     'tools/ubt.c', '#include "attach/session.h"\n',
     'only src/attach/ may include src/attach/session.h'),
    ('output including the session',
     'src/output/output.c', '#include "attach/attach.h"\n',
     'output/ may not include src/attach/attach.h'),
    ('inject including a feature',
     'src/attach/inject/placement.c', '#include "attach/features/features.h"\n',
     'inject/ may not include src/attach/features/features.h'),
    ('inject calling a feature by name',
     'src/attach/inject/verbs.c',
     'static void unmap_all(struct att_session *s) { att_pstack_unmap(s); }\n',
     'inject/ runs features through att_features[], yet calls att_pstack_unmap()'),
    ('the parser including sema',
     'src/parser/ast.c', '#include "sema/sema.h"\n',
     'parser/ may not include src/sema/sema.h'),
    ('the arch layer including the session',
     'src/attach/arch/x86_64/tramp.c', '#include "attach/inject/link.h"\n',
     'arch/ may not include src/attach/inject/link.h'),
]


def self_test(root, report):
    """Each SELF_TESTS change, made on a copy of the tree, fails the check
    with its message for that file and nothing else new."""
    tmp = tempfile.mkdtemp(prefix='ubt-layers-')
    try:
        for top in ('src', 'tools'):
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        base = set(check(tmp))
        for name, rel, added, want in SELF_TESTS:
            path = os.path.join(tmp, rel)
            with open(path) as f:
                orig = f.read()
            m = INCLUDE.search(orig)
            at = orig.index('\n', m.end()) + 1 if m else 0
            with open(path, 'w') as f:
                f.write(orig[:at] + added + orig[at:])
            # the script itself, as a user runs it, on the copy
            r = subprocess.run([sys.executable, os.path.abspath(__file__), '--root', tmp],
                               capture_output=True, text=True)
            with open(path, 'w') as f:
                f.write(orig)
            new = [l for l in r.stdout.splitlines() if l not in base and l.startswith(rel + ':')]
            ok = r.returncode != 0 and len(new) == 1 and want in new[0]
            report(ok, f'a forbidden change fails the check: {name}',
                   f'exit {r.returncode}, new reports: {new or r.stdout.strip()}')
    finally:
        shutil.rmtree(tmp)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument('--summary', help='write "passed failed skipped" here')
    ap.add_argument('--self-test', action='store_true')
    a = ap.parse_args()
    counts = [0, 0]

    def report(ok, name, why=''):
        counts[0 if ok else 1] += 1
        print(f'{"ok  " if ok else "FAIL"} {name}' + ('' if ok else f': {why}'), file=sys.stderr)

    bad = check(a.root)
    for b in bad:
        print(b)
    report(not bad, 'every file includes and calls only what its room may use',
           f'{len(bad)} violations')
    if a.self_test:
        self_test(a.root, report)
    print(f'{counts[0]} passed, {counts[1]} failed', file=sys.stderr)
    if a.summary:
        with open(a.summary, 'w') as f:
            f.write(f'{counts[0]} {counts[1]} 0\n')
    return 1 if counts[1] else 0


if __name__ == '__main__':
    sys.exit(main())
