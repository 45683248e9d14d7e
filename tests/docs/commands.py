#!/usr/bin/env python3
"""tests/docs/commands.py - the commands the documentation gives work as written.

Many users who trace production processes are root in a container where
`sudo` does not exist; many others are not root and need sudo.  The README's
set-up and test commands must work for both, copied as written, and so must
every other command the documentation shows.  This script checks:

  root-forms      README.md and man/ubt.8: every command line that starts with
                  `sudo CMD` has its root form `CMD` beside it (in the same
                  code block or the one just before), so a root user without
                  sudo has a line to copy.
  main-commands   README.md gives `bash setup.sh` and `bash tests/run.sh` as
                  command lines of their own (the README's two commands).
  setup-no-sudo   setup.sh run by a user who is not root, on a machine without
                  sudo, with packages missing: it stops, changes nothing, and
                  says exactly what to run (`su -c 'cd DIR && bash setup.sh'`).
  setup-sudo      the same on a machine with sudo: `cd DIR && sudo bash setup.sh`.

The setup.sh cases run it in a private PATH whose `id` says uid 1000 and
whose `dpkg-query` reports nothing installed, so nothing is installed or
built, whoever runs the test.

Usage: tests/docs/commands.py [--summary FILE]
Prints one line per check and ends with `N passed, N failed`.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def markdown_blocks(text):
    """The fenced code blocks of a Markdown text, each a list of lines."""
    blocks, cur = [], None
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            if cur is None:
                cur = []
            else:
                blocks.append(cur)
                cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def man_blocks(text):
    """The .EX/.EE example blocks of a man page, roff escapes undone."""
    blocks, cur = [], None
    for line in text.split('\n'):
        if line.startswith('.EX'):
            cur = []
        elif line.startswith('.EE') and cur is not None:
            blocks.append(cur)
            cur = None
        elif cur is not None:
            cur.append(line.replace('\\-', '-').replace('\\e', '\\'))
    return blocks


def command(line):
    """A code line as a command: comment and surrounding blanks removed."""
    line = re.sub(r'\s+#.*$', '', line).strip()
    return '' if line.startswith('#') else line


def sudo_without_root_form(blocks):
    """Lines `sudo CMD` whose `CMD` is not in their block or the one before."""
    bad = []
    for i, block in enumerate(blocks):
        near = {command(l) for l in block}
        if i > 0:
            near |= {command(l) for l in blocks[i - 1]}
        for line in block:
            cmd = command(line)
            if cmd.startswith('sudo ') and cmd[5:].strip() not in near:
                bad.append(cmd)
    return bad


def fake_path(tmp, with_sudo):
    """A PATH directory with the tools setup.sh needs, an `id` that says
    uid 1000, a `dpkg-query` for which nothing is installed, and `sudo`
    only if asked."""
    d = os.path.join(tmp, 'sudo' if with_sudo else 'nosudo')
    os.mkdir(d)
    for tool in ('bash', 'awk', 'sort', 'comm', 'dirname', 'cat', 'printf'):
        path = shutil.which(tool)
        if path:
            os.symlink(path, os.path.join(d, tool))
    scripts = {
        'id': '#!/bin/sh\necho 1000\n',
        'dpkg-query': '#!/bin/sh\nexit 1\n',
        # must never run: setup.sh only names it
        'apt-get': '#!/bin/sh\necho apt-get ran >&2\nexit 99\n',
        'meson': '#!/bin/sh\necho meson ran >&2\nexit 99\n',
    }
    if with_sudo:
        scripts['sudo'] = '#!/bin/sh\necho sudo ran >&2\nexit 99\n'
    for name, body in scripts.items():
        path = os.path.join(d, name)
        with open(path, 'w') as f:
            f.write(body)
        os.chmod(path, 0o755)
    return d


def run_setup(tmp, with_sudo):
    path = fake_path(tmp, with_sudo)
    bash = os.path.join(path, 'bash')
    r = subprocess.run([bash, os.path.join(ROOT, 'setup.sh')], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL,
                       env={'PATH': path, 'HOME': tmp, 'LANG': 'C'})
    return r.returncode, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--summary', help='write "passed failed skipped" here')
    a = ap.parse_args()
    results = []

    def check(name, ok, detail=''):
        results.append(ok)
        print(('ok    ' if ok else 'FAIL  ') + name)
        if not ok and detail:
            print('      ' + detail.replace('\n', '\n      '))

    readme = open(os.path.join(ROOT, 'README.md')).read()
    man = open(os.path.join(ROOT, 'man', 'ubt.8')).read()
    for name, blocks in (('README.md', markdown_blocks(readme)),
                         ('man/ubt.8', man_blocks(man))):
        bad = sudo_without_root_form(blocks)
        check(f'root-forms: {name}: every `sudo CMD` has `CMD` beside it', not bad,
              'no root form beside: ' + '; '.join(bad))

    cmds = {command(l) for b in markdown_blocks(readme) for l in b}
    for want in ('bash setup.sh', 'bash tests/run.sh'):
        check(f'main-commands: README.md gives `{want}` (as root)', want in cmds)
        check(f'main-commands: README.md gives `sudo {want}` (with sudo)',
              'sudo ' + want in cmds)

    with tempfile.TemporaryDirectory() as tmp:
        rc, out = run_setup(tmp, with_sudo=False)
        want = f"su -c 'cd {ROOT} && bash setup.sh'"
        check('setup-no-sudo: setup.sh as a user without sudo stops and names '
              'the command to run', rc == 1 and want in out and 'ran' not in out,
              f'exit {rc}, wanted a line with: {want}\n{out}')
        rc, out = run_setup(tmp, with_sudo=True)
        want = f'cd {ROOT} && sudo bash setup.sh'
        check('setup-sudo: setup.sh as a user with sudo stops and names the '
              'command to run', rc == 1 and want in out and 'ran' not in out,
              f'exit {rc}, wanted a line with: {want}\n{out}')

    passed = sum(results)
    failed = len(results) - passed
    print(f'{passed} passed, {failed} failed')
    if a.summary:
        with open(a.summary, 'w') as f:
            f.write(f'{passed} {failed} 0\n')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
