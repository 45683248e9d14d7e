#!/usr/bin/env python3
"""insn_at.py FILE FUNC OFF MNEMONIC - exit 0 when objdump shows an
instruction starting at FUNC+OFF in FILE whose mnemonic is MNEMONIC: the
guard of a test that probes FUNC+OFF (tests/e2e/lib.test), relative to the
function so that code added around it does not turn the test into a skip."""
import re
import subprocess
import sys


def main():
    path, func, off, mnemonic = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), sys.argv[4]
    text = subprocess.run(["objdump", "-d", path], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) <%s>:\n((?:[ \t]+[0-9a-f]+:.*\n)+)" % re.escape(func), text, re.M)
    if not m:
        return 1
    want = int(m.group(1), 16) + off
    for line in m.group(2).splitlines():
        f = line.split("\t")
        if len(f) >= 3 and int(f[0].strip().rstrip(":"), 16) == want:
            return 0 if f[2].split()[0] == mnemonic else 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
