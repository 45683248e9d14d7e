"""tests/lib/proc.py - processes that a test runner starts in a session of
their own (start_new_session=True), and how they are ended.

Used by tests/e2e/run.py and tests/diff/run.py (ubt_rss_kb also by
tests/stress/stress.py and bench/attach.py).  Only a session the runner
created is ever signalled, by its process group or, for whatever a tracer
left behind in it (a `-c` child, a watchdog), by session id: never by name.
"""
import os
import re
import signal
import time


def session_members(sid):
    """(pid, comm) of the live processes in session sid."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] not in "ZX":
            found.append((int(d), comm))
    return found


def leftovers(sid, deadline):
    """Processes still in session sid (a session this runner started), after
    waiting until deadline for them to go away.  They are killed; the list
    says which, as "PID (comm)"."""
    while True:
        left = session_members(sid)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return ["%d (%s)" % l for l in left]


def kill_session(p, grace=1.0):
    """SIGKILL the process group of p (a Popen started with
    start_new_session=True), then anything else left in its session."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return leftovers(p.pid, time.monotonic() + grace)


def ubt_rss_kb(pid):
    """Resident KiB of ubt's shared memory (the memfd mappings) in process
    pid, -1 when the process is gone."""
    total, in_ubt = 0, False
    try:
        with open("/proc/%d/smaps" % pid) as f:
            for line in f:
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    in_ubt = "memfd:ubt" in line
                elif line.startswith("Rss:") and in_ubt:
                    total += int(line.split()[1])
    except FileNotFoundError:
        return -1
    return total
