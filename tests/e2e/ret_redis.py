#!/usr/bin/env python3
"""ret_redis.py - entry and return probes on Debian's redis-server under load.

    ret_redis.py UBT PATTERN

redis' dict functions call each other in tail position (gcc -O2 makes the
calls jmp), so return probes on all of them form chains on one return
slot.  Starts redis-server on a unix socket in a temporary directory,
attaches `ubt -v -p` with `uprobe:redis-server:PATTERN { @e = count(); }
uretprobe:redis-server:PATTERN { @r = count(); }`, runs redis-benchmark
(50,000 requests of five kinds) while attached, stops ubt after the
benchmark ended (redis idle: no probed call in flight), and checks that
every call returned through its probe (@e == @r), that no shadow-stack
entry was abandoned (-v) and that ubt warned about nothing.

Prints `entries and returns balance, nothing abandoned` or what differed.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

REDIS = "/usr/bin/redis-server"


def main():
    ubt, pattern = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "redis.sock")
        srv = subprocess.Popen([REDIS, "--port", "0", "--unixsocket", sock, "--save", "",
                                "--appendonly", "no", "--dir", d],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                if os.path.exists(sock):
                    break
                time.sleep(0.05)
            probe = "%s:%s" % (REDIS, pattern)
            script = "uprobe:%s { @e = count(); } uretprobe:%s { @r = count(); }" % (probe, probe)
            t = subprocess.Popen([ubt, "-v", "-p", str(srv.pid), "-e", script],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            err = ""
            while True:  # -v says when the sites are patched
                line = t.stderr.readline()
                err += line
                if not line or "patched" in line:
                    break
            subprocess.run(["redis-benchmark", "-s", sock, "-q", "-n", "10000",
                            "-t", "set,get,incr,lpush,hset"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
            t.send_signal(signal.SIGINT)
            out, e = t.communicate(timeout=30)
            err += e
        finally:
            srv.kill()
            srv.wait()
    vals = dict((m.group(1), int(m.group(2)))
                for m in re.finditer(r"^(@\w+): (\d+)$", out, re.M))
    ab = re.search(r"^ubt: return probes: (\d+) frames abandoned", err, re.M)
    why = []
    if not vals.get("@e") or vals.get("@r") != vals["@e"]:
        why.append("entries %s, returns %s" % (vals.get("@e"), vals.get("@r")))
    if not ab or ab.group(1) != "0":
        why.append("abandoned: %s" % (ab.group(1) if ab else "no -v line"))
    if re.search(r"^(WARNING|ERROR)", err, re.M):
        why.append("ubt said:\n" + err)
    if why:
        print("; ".join(why))
    else:
        print("entries and returns balance, nothing abandoned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
