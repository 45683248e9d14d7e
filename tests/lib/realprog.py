#!/usr/bin/env python3
"""tests/lib/realprog.py - Debian's own programs as tracing targets, for
end-to-end tests (tests/real/realprog.test) and anyone writing more of them.

A tracer (ubt, or bpftrace for the differential half of a test) is attached
with -p to a real program that this module starts in a temporary directory,
a deterministic workload runs, the tracer is stopped with SIGINT and its
output printed; the program must still be alive, and it is then stopped
cleanly.  Everything listens on local sockets in that directory only.

As a library (sys.path has tests/lib):

    with Postgres(tmp) as pg:           # initdb + postgres on a socket in tmp
        s = pg.session()                # one psql session: one backend
        s.backend_pid                   # attach here: queries run in it
        s.query("select 1;")
    with Redis(tmp) as r:               # redis-server on tmp/redis.sock
        r.pid; r.commands(["SET k v"] * 10)
    with Sqlite(tmp) as q:              # sqlite3 :memory:, fed on stdin
        q.pid; q.sql("select 1;")
    with QemuIo(tmp) as q:              # qemu-io on a raw image, fed on stdin
        q.pid; q.command("write 0 64k")
    t = Tracer([ubt, "-p", pid, "-e", script]); t.wait_attached(); ...; t.stop()

As a command (the tracer's path comes first, so run.py's {ubt} can be
bpftrace in a differential run; SCRIPT may name {pid}):

    realprog.py pg TMP TRACER SCRIPT N        N queries `select 1;` in one backend
    realprog.py pg-checkpoint TMP TRACER SCRIPT N   N `checkpoint;`, traced in the
                                              checkpointer process
    realprog.py pg-fork TMP TRACER SCRIPT N   traces the postmaster while a session
                                              (a forked backend) runs N queries; then
                                              both must hold the file's code and no
                                              memory of ubt's
    realprog.py redis TMP TRACER SCRIPT N     N `SET k<i> v` through one connection
    realprog.py sqlite TMP TRACER SCRIPT N    N times two selects in sqlite3 :memory:
    realprog.py qemu TMP TRACER SCRIPT RUNS   RUNS fresh qemu-io processes, each
                                              traced while writing and reading;
                                              prints `RUNS runs, D deaths`

Each prints the tracer's stdout, then `target alive` when the program
survived the trace, and exits non-zero if anything went wrong (the reason on
stderr).  Processes are ended by their own pid, never by name.
"""
import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

PG_BIN = "/usr/lib/postgresql/15/bin"


class Fail(Exception):
    """A step of the workload failed; the message says which."""


def _wait_line(proc, stream, pred, timeout, what):
    """Reads lines of stream (a pipe of proc) until pred(line); returns the
    lines read.  Raises Fail on timeout or end of file."""
    lines = []
    end = time.monotonic() + timeout
    buf = b""
    fd = stream.fileno()
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise Fail("timed out waiting for %s; got %r" % (what, b"".join(lines)[-400:]))
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            raise Fail("%s: end of output before %s" % (proc.args[0], what))
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line + b"\n")
            if pred(line.decode(errors="replace")):
                return lines


def _end(p, sig=signal.SIGTERM, timeout=10):
    """Ends process p (a Popen) by its pid, SIGKILL if it lingers."""
    if p.poll() is not None:
        return p.returncode
    p.send_signal(sig)
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait()


def _start_server(argv, cwd, stop_sig):
    """Starts a server that logs `... ready to accept connections` (postgres
    and redis-server both do) and waits for that line; ends it on failure."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, cwd=cwd)
    try:
        _wait_line(p, p.stdout, lambda l: "ready to accept connections" in l, 60,
                   "%s to accept connections" % os.path.basename(argv[0]))
    except Fail:
        _end(p, stop_sig)
        raise
    # keep reading its log so that a full pipe never blocks it
    threading.Thread(target=lambda: p.stdout.read(), daemon=True).start()
    return p


class Tracer:
    """ubt or bpftrace attached with -p; stdout collected, stopped by SIGINT."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.head = []

    def wait_attached(self, timeout=60):
        self.head = _wait_line(self.p, self.p.stdout, lambda l: l.startswith("Attaching"),
                               timeout, "'Attaching N probes...'")
        time.sleep(1)  # bpftrace prints the line before all its probes are live

    def stop(self):
        """SIGINT, then (exit code, stdout, stderr)."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            out, err = self.p.communicate(timeout=120)  # bpftrace may still be attaching
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        return self.p.returncode, b"".join(self.head) + out, err


class Postgres:
    """A PostgreSQL 15 cluster in tmp/pg, listening only on a socket in tmp."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "pg")
        self.sock = tmp
        self.p = None

    def __enter__(self):
        os.makedirs(self.dir, exist_ok=True)
        pw = pwd.getpwnam("postgres")
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chown(self.sock, pw.pw_uid, pw.pw_gid)
        self.as_pg = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                      "--init-groups", "--"]
        data = os.path.join(self.dir, "data")
        r = subprocess.run(self.as_pg + [PG_BIN + "/initdb", "-D", data, "-A", "trust",
                                         "--no-sync", "-U", "postgres"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=self.dir)
        if r.returncode:
            raise Fail("initdb: " + r.stdout.decode(errors="replace")[-400:])
        self.p = _start_server(
            self.as_pg + [PG_BIN + "/postgres", "-D", data, "-k", self.sock, "-c",
                          "listen_addresses=", "-c", "fsync=off", "-c", "max_connections=10"],
            self.dir, signal.SIGINT)
        self.pid = self.p.pid
        return self

    def child(self, title):
        """The pid of the postmaster's child whose title starts `postgres: TITLE`."""
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmd = f.read().split(b"\0")[0].decode(errors="replace")
            except (OSError, ValueError, IndexError):
                continue
            if ppid == self.pid and cmd.startswith("postgres: " + title):
                return int(d)
        raise Fail("no postgres child '%s'" % title)

    def session(self):
        return PgSession(self)

    def __exit__(self, *exc):
        if self.p:
            _end(self.p, signal.SIGINT)  # fast shutdown
        return False


class PgSession:
    """One psql session, so one backend process, fed query by query."""

    def __init__(self, pg):
        self.p = subprocess.Popen(
            pg.as_pg + [PG_BIN + "/psql", "-h", pg.sock, "-U", "postgres", "-X", "-q", "-A",
                        "-t", "-v", "ON_ERROR_STOP=1", "postgres"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=pg.dir)
        self.backend_pid = int(self.query("select pg_backend_pid();").strip())

    def query(self, sql):
        """Runs sql (one statement), returns its output; a marker line ends it."""
        self.p.stdin.write((sql + "\n\\echo --done--\n").encode())
        self.p.stdin.flush()
        lines = _wait_line(self.p, self.p.stdout, lambda l: l == "--done--", 60, "psql")
        return b"".join(lines[:-1]).decode(errors="replace")

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        return _end(self.p)


class Redis:
    """redis-server on tmp/redis.sock, no TCP, no persistence."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.sock = os.path.join(tmp, "redis.sock")
        self.p = None

    def __enter__(self):
        self.p = _start_server(
            ["redis-server", "--port", "0", "--unixsocket", self.sock, "--save", "",
             "--appendonly", "no", "--dir", self.tmp, "--daemonize", "no"],
            self.tmp, signal.SIGTERM)
        self.pid = self.p.pid
        return self

    def commands(self, cmds):
        """Sends cmds through one redis-cli connection; returns its output."""
        r = subprocess.run(["redis-cli", "-s", self.sock], input="\n".join(cmds) + "\n",
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
        if r.returncode:
            raise Fail("redis-cli: " + r.stdout[-400:])
        return r.stdout

    def __exit__(self, *exc):
        if self.p:
            _end(self.p)
        return False


class Sqlite:
    """sqlite3 on an in-memory database, fed statements on stdin."""

    def __init__(self, tmp):
        self.p = None

    def __enter__(self):
        self.p = subprocess.Popen(["sqlite3", ":memory:"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.p.pid
        self.sql("create table t(a, b); insert into t values (1, 'x'), (2, 'y'), (3, 'z');")
        return self

    def sql(self, text):
        """Runs text; returns its output (a marker line ends it)."""
        self.p.stdin.write((text + "\n.print --done--\n").encode())
        self.p.stdin.flush()
        lines = _wait_line(self.p, self.p.stdout, lambda l: l == "--done--", 60, "sqlite3")
        return b"".join(lines[:-1]).decode(errors="replace")

    def __exit__(self, *exc):
        if self.p and self.p.poll() is None:
            try:
                self.p.stdin.close()
                self.p.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                _end(self.p)
        return False


class QemuIo:
    """qemu-io on a 16 MiB raw image in tmp, reading its commands from a pipe
    (each I/O runs in a coroutine of QEMU's block layer)."""

    def __init__(self, tmp):
        self.img = os.path.join(tmp, "disk.raw")
        self.p = None

    def __enter__(self):
        with open(self.img, "wb") as f:
            f.truncate(16 << 20)
        self.p = subprocess.Popen(["qemu-io", "-f", "raw", self.img], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.p.pid
        self.command("write -P 0x11 0 4k")  # first coroutines, before any tracer
        return self

    def command(self, cmd):
        """One qemu-io command; waits for its report (`wrote ...`, `read ...`)."""
        self.p.stdin.write((cmd + "\n").encode())
        self.p.stdin.flush()
        word = cmd.split()[0]
        want = {"write": "wrote ", "read": "read ", "aio_write": "wrote ",
                "aio_read": "read "}.get(word)
        if want:
            _wait_line(self.p, self.p.stdout, lambda l: want in l, 60, "qemu-io: " + cmd)

    def alive(self):
        return self.p.poll() is None

    def __exit__(self, *exc):
        if self.p and self.p.poll() is None:
            try:
                self.p.stdin.write(b"quit\n")
                self.p.stdin.close()
                self.p.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                _end(self.p)
        return False


def _trace(tracer, pid, script):
    t = Tracer([tracer, "-p", str(pid), "-e", script.replace("{pid}", str(pid))])
    t.wait_attached()
    return t


def _finish(t, alive):
    rc, out, err = t.stop()
    sys.stdout.write(out.decode(errors="replace"))
    if rc:
        sys.stderr.write(err.decode(errors="replace"))
        raise Fail("the tracer exited %d" % rc)
    if not alive:
        raise Fail("the target died during the trace")
    print("target alive")


def cmd_pg(tmp, tracer, script, n):
    with Postgres(tmp) as pg:
        s = pg.session()
        t = _trace(tracer, s.backend_pid, script)
        for _ in range(n):
            s.query("select 1;")
        time.sleep(0.3)
        _finish(t, os.path.exists("/proc/%d" % s.backend_pid))
        if s.query("select 42;").strip() != "42":  # the backend still answers
            raise Fail("the backend does not answer after the trace")
        s.close()


def cmd_pg_checkpoint(tmp, tracer, script, n):
    with Postgres(tmp) as pg:
        s = pg.session()
        ckpt = pg.child("checkpointer")
        t = _trace(tracer, ckpt, script)
        for _ in range(n):
            s.query("checkpoint;")
        time.sleep(0.3)
        _finish(t, os.path.exists("/proc/%d" % ckpt))
        s.close()


def _code_clean(pid, binary):
    """Fails unless process pid maps nothing of ubt's and its executable
    mappings of binary hold the same bytes as the file."""
    real = os.path.realpath(binary)
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read().splitlines()
    if any("memfd:ubt" in l for l in maps):
        raise Fail("pid %d still maps ubt's memory" % pid)
    checked = 0
    with open(real, "rb") as fb, open("/proc/%d/mem" % pid, "rb") as mem:
        for l in maps:
            f = l.split()
            if len(f) < 6 or "x" not in f[1] or os.path.realpath(f[5]) != real:
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            fb.seek(int(f[2], 16))
            want = fb.read(hi - lo)
            mem.seek(lo)
            got = mem.read(len(want))
            if got != want:
                at = next(i for i in range(len(want)) if got[i] != want[i])
                raise Fail("pid %d: code at 0x%x differs from %s" % (pid, lo + at, real))
            checked += len(want)
    if not checked:
        raise Fail("pid %d maps no code of %s" % (pid, real))


def cmd_pg_fork(tmp, tracer, script, n):
    """Traces the postmaster; a session opened meanwhile is a backend
    forked with ubt's patches and memory.  After the trace both must hold
    the file's code and nothing of ubt's, and still answer."""
    with Postgres(tmp) as pg:
        t = _trace(tracer, pg.pid, script)
        s = pg.session()  # forked now, while the postmaster is patched
        for _ in range(n):
            s.query("select 1;")
        _finish(t, os.path.exists("/proc/%d" % pg.pid))
        for pid in (pg.pid, s.backend_pid):
            _code_clean(pid, PG_BIN + "/postgres")
        if s.query("select 42;").strip() != "42":
            raise Fail("the backend does not answer after the trace")
        s.close()
        print("postmaster and forked backend: the file's code, no memory of ubt's")


def cmd_redis(tmp, tracer, script, n):
    with Redis(tmp) as r:
        t = _trace(tracer, r.pid, script)
        r.commands(["SET k%d v%d" % (i, i) for i in range(n)])
        time.sleep(0.3)
        _finish(t, r.p.poll() is None)
        if r.commands(["GET k1"]).strip() != "v1":
            raise Fail("redis does not answer after the trace")


def cmd_sqlite(tmp, tracer, script, n):
    with Sqlite(tmp) as q:
        t = _trace(tracer, q.pid, script)
        for _ in range(n):
            q.sql("select b from t; select a, b from t where a > 1;")
        time.sleep(0.3)
        _finish(t, q.p.poll() is None)
        if q.sql("select count(*) from t;").strip() != "3":
            raise Fail("sqlite3 does not answer after the trace")


def cmd_qemu(tmp, tracer, script, runs):
    deaths = 0
    for i in range(runs):
        d = os.path.join(tmp, "run%d" % i)
        os.makedirs(d, exist_ok=True)
        with QemuIo(d) as q:
            t = _trace(tracer, q.pid, script)
            try:
                for k in range(4):
                    q.command("write -P 0x5a %dk 64k" % (k * 64))
                    q.command("read -P 0x5a %dk 64k" % (k * 64))
            except Fail:
                pass  # qemu-io died: counted below
            time.sleep(0.2)
            rc, out, err = t.stop()
            if not q.alive():
                deaths += 1
                sys.stderr.write("run %d: qemu-io died (%s)\n" % (i + 1, q.p.returncode))
            elif rc:
                raise Fail("run %d: the tracer exited %d: %s" % (i + 1, rc,
                                                                err.decode(errors="replace")))
            if i == runs - 1:
                sys.stdout.write(out.decode(errors="replace"))
    print("%d runs, %d deaths" % (runs, deaths))
    if deaths:
        raise Fail("qemu-io died in %d of %d runs" % (deaths, runs))


def main(argv):
    cmds = {"pg": cmd_pg, "pg-checkpoint": cmd_pg_checkpoint, "pg-fork": cmd_pg_fork,
            "redis": cmd_redis,
            "sqlite": cmd_sqlite, "qemu": cmd_qemu}
    if len(argv) != 6 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    what, tmp, tracer, script, n = argv[1], argv[2], argv[3], argv[4], int(argv[5])
    tracer = shutil.which(tracer) or tracer
    try:
        cmds[what](tmp, tracer, script, n)
    except Fail as e:
        sys.stderr.write("FAIL: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
