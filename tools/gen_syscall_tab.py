#!/usr/bin/env python3
"""
gen_syscall_tab.py - writes src/attach/resolve/syscall_tab.c, the x86-64
system-call table ubt uses for `tracepoint:syscalls:*` when tracefs is not
mounted, and for the system-call numbers always (tracefs has none).

Inputs, both of the machine that runs this script:

  - the tracepoint formats of a running x86-64 kernel:
    TRACEFS/events/syscalls/sys_enter_NAME/format (the arguments' C types
    and names) and sys_exit_NAME/format;
  - the system-call numbers of <asm/unistd_64.h> (linux-libc-dev).

A tracepoint is named after the kernel's entry point, which for six calls
is not the call's name (RENAMED below), and a kernel newer than the header
has calls the header lacks (NEWER below: their numbers are fixed once a
call is merged, in the kernel's arch/x86/entry/syscalls/syscall_64.tbl, and
shared by every architecture from 424 on).  A tracepoint whose number is
still unknown stops the script: add it to NEWER.

Every format of the syscalls category has the same shape, which the script
checks and the table then leaves out: the four common fields at 0..7,
`int __syscall_nr` at 8, argument k (8 bytes) at 16 + 8k; the exit
tracepoint has `long ret` at 16.  The table keeps each call's number, name
and its arguments as the format files declare them, `TYPE NAME; ...`.

Usage: tools/gen_syscall_tab.py [--tracefs DIR] [--header FILE] [-o OUT]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# tracepoint name (the kernel's entry point sys_NAME) -> the call's name in unistd_64.h
RENAMED = {
    'newstat': 'stat', 'newfstat': 'fstat', 'newlstat': 'lstat',
    'newuname': 'uname', 'sendfile64': 'sendfile', 'umount': 'umount2',
}

# calls merged after the header's kernel (Debian 12: Linux 6.1)
NEWER = {
    'uretprobe': 335, 'uprobe': 336,
    'cachestat': 451, 'fchmodat2': 452, 'map_shadow_stack': 453,
    'futex_wake': 454, 'futex_wait': 455, 'futex_requeue': 456,
    'statmount': 457, 'listmount': 458, 'lsm_get_self_attr': 459,
    'lsm_set_self_attr': 460, 'lsm_list_modules': 461, 'mseal': 462,
    'setxattrat': 463, 'getxattrat': 464, 'listxattrat': 465,
    'removexattrat': 466, 'open_tree_attr': 467, 'file_getattr': 468,
    'file_setattr': 469, 'listns': 470,
}

FIELD = re.compile(r'^\s*field:(.*?);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);')


def fields(path):
    """[(type, name, offset, size)] of one format file, common fields included."""
    out = []
    with open(path) as f:
        for line in f:
            m = FIELD.match(line)
            if not m:
                continue
            decl = m.group(1).strip()
            cut = max(decl.rfind(' '), decl.rfind('\t'))
            out.append((decl[:cut].strip(), decl[cut + 1:], int(m.group(2)), int(m.group(3))))
    return out


COMMON = [('unsigned short', 'common_type', 0, 2), ('unsigned char', 'common_flags', 2, 1),
          ('unsigned char', 'common_preempt_count', 3, 1), ('int', 'common_pid', 4, 4)]


def check_enter(name, fl):
    if fl[:4] != COMMON or fl[4] != ('int', '__syscall_nr', 8, 4):
        sys.exit(f'{name}: unexpected common fields: {fl[:5]}')
    args = fl[5:]
    for k, (t, n, off, size) in enumerate(args):
        if off != 16 + 8 * k or size != 8:
            sys.exit(f'{name}: argument {n} at {off} size {size}, not {16 + 8 * k} size 8')
    if len(args) > 6:
        sys.exit(f'{name}: {len(args)} arguments')
    return [(t, n) for t, n, _, _ in args]


def check_exit(name, fl):
    if fl != COMMON + [('int', '__syscall_nr', 8, 4), ('long', 'ret', 16, 8)]:
        sys.exit(f'{name}: unexpected exit format: {fl}')


def numbers(header):
    nr = {}
    with open(header) as f:
        for line in f:
            m = re.match(r'#define __NR_(\w+)\s+(\d+)', line)
            if m:
                nr[m.group(1)] = int(m.group(2))
    return nr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tracefs', default='/sys/kernel/tracing')
    ap.add_argument('--header', default='/usr/include/x86_64-linux-gnu/asm/unistd_64.h')
    ap.add_argument('-o', '--out', default=os.path.join(os.path.dirname(__file__), '..', 'src',
                                                      'attach', 'resolve', 'syscall_tab.c'))
    o = ap.parse_args()
    events = os.path.join(o.tracefs, 'events', 'syscalls')
    nr = numbers(o.header)
    nr.update(NEWER)
    rows = []
    for d in sorted(os.listdir(events)):
        if not d.startswith('sys_enter_'):
            continue
        name = d[len('sys_enter_'):]
        args = check_enter(d, fields(os.path.join(events, d, 'format')))
        check_exit('sys_exit_' + name, fields(os.path.join(events, 'sys_exit_' + name, 'format')))
        call = RENAMED.get(name, name)
        if call not in nr:
            sys.exit(f'{d}: no number for {call}: add it to NEWER')
        rows.append((name, nr[call], args))
    release = os.uname().release.split('-')[0]
    out = [
        '/*',
        ' * syscall_tab.c - the x86-64 system calls that have tracepoints: number,',
        ' * tracepoint name, arguments (`TYPE NAME; ...` as the format files declare them).',
        ' *',
        ' * GENERATED by tools/gen_syscall_tab.py (do not edit) from the tracefs',
        f' * formats of Linux {release} and the numbers of <asm/unistd_64.h>, completed by',
        ' * the script\'s lists of renamed and newer calls.  Every format has the same',
        ' * shape (the script checks it), which resolve/syscalls.c rebuilds: common',
        ' * fields at 0..7, `int __syscall_nr` at 8, argument k (8 bytes) at 16 + 8k;',
        ' * the exit tracepoint\'s `long ret` at 16.',
        ' */',
        '#include "syscalls.h"',
        '',
        'const struct att_sys_call att_sys_tab[] = {',
    ]
    for name, n, args in rows:
        decl = '; '.join(f'{t} {an}' for t, an in args)
        out.append(f'\t{{ "{name}", {n}, "{decl}" }},')
    out += ['};', '', 'const int att_sys_tab_len = (int)(sizeof(att_sys_tab) / sizeof(att_sys_tab[0]));', '']
    # every call's name by number, with or without a tracepoint: syscall_name()
    out += ['', '/* Each x86-64 number\'s call, tracepoint or not (syscall_name()). */',
            'const char *const att_sys_call_names[ATT_SYS_MAX_NR] = {']
    for call, n in sorted(nr.items(), key=lambda kv: kv[1]):
        out.append(f'\t[{n}] = "{call}",')
    out += ['};', '']
    text = '\n'.join(out)
    # the tree's .clang-format (tests/format checks changed lines)
    fmt = shutil.which('clang-format-19') or shutil.which('clang-format')
    if fmt:
        text = subprocess.run([fmt, '--assume-filename=' + o.out], input=text, text=True,
                              check=True, capture_output=True,
                              cwd=os.path.dirname(os.path.abspath(o.out))).stdout
    with open(o.out, 'w') as f:
        f.write(text)
    print(f'{o.out}: {len(rows)} system calls with tracepoints, {len(nr)} in all', file=sys.stderr)


if __name__ == '__main__':
    main()
