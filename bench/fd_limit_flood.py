#!/usr/bin/python3
"""The descriptor-limit flood (docs/architecture.md, "Accepting"): a release server with two worker
loops and HTTP, one publisher and one RTMP player; its soft descriptor limit is lowered to 1024
while it runs (prlimit --pid), then 1500 RTMP (C0+C1 sent) and 1500 HTTP (a GET sent) connections
are opened at once and held for 15 s. Reported per round, and the median of the rounds:
  - the server's CPU while held (utime+stime from /proc/PID/stat), in % of one core (bar: <= 10 %);
  - the HTTP connections answered, closed, and left hanging (neither; bar: 0), the RTMP ones open
    or closed, the API requests answered during the hold;
  - the player's longest gap between media messages during the hold (undisturbed: well under 1 s);
  - after the limit is raised again and the flood closed: does the API answer?

  SLUICE_BUILD_DIR=build/release bench/fd_limit_flood.py [ROUNDS] [N]     (defaults: 3 1500)
"""
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("SLUICE_SOURCE_DIR", os.path.dirname(here))
sys.path.insert(0, os.path.join(os.path.dirname(here), "tests", "integration"))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
HOLD_S = 15
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def one_round(src):
    http_port = free_port()
    server = Server("fdflood", extra_yaml="")
    with open(server.config, "a") as f:
        f.write(f"workers: 2\nhttp:\n  listen: 127.0.0.1:{http_port}\n")
    server.start()
    wait_port(http_port)
    pid = server.proc.pid

    def cpu():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def api_ok(t):
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/v1/server", timeout=t).status == 200
        except Exception:
            return False

    pub = publish_ffmpeg(src, server.url("live/cam"), loop=True)
    rt, ht, out = [], [], {}
    try:
        time.sleep(2)
        player = RtmpClient(server.port)
        player.connect("live")
        player.create_stream()
        player.play("cam")
        arrivals, stop = [], threading.Event()

        def read_player():
            while not stop.is_set() and not player.closed:
                before = len(player.messages)
                player.read_some(0.05)
                now = time.time()
                arrivals.extend(now for m in player.messages[before:] if m.type in (8, 9))
                del player.messages[:-50]
        t = threading.Thread(target=read_player)
        t.start()
        subprocess.run(["prlimit", f"--pid={pid}", "--nofile=1024:"], check=True)
        for _ in range(N):
            for lst, port in ((rt, server.port), (ht, http_port)):
                s = socket.socket()
                s.setblocking(False)
                try:
                    s.connect(("127.0.0.1", port))
                except BlockingIOError:
                    pass
                lst.append(s)
        time.sleep(0.5)
        for s in rt:
            try:
                s.send(b"\x03" + bytes(1536))
            except OSError:
                pass
        for s in ht:
            try:
                s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            except OSError:
                pass
        c0, t0, apis = cpu(), time.time(), []
        while time.time() - t0 < HOLD_S:
            apis.append(api_ok(1))
            time.sleep(1)
        c1, t1 = cpu(), time.time()
        stop.set()
        t.join()
        during = [a for a in arrivals if t0 <= a <= t1]
        gaps = [b - a for a, b in zip(during, during[1:])]
        out["cpu_pct"] = (c1 - c0) / (t1 - t0) * 100
        out["api_answered"] = f"{sum(apis)}/{len(apis)}"
        out["player_gap_ms"] = round(max(gaps) * 1000) if gaps else None
        answered = closed = hanging = 0
        for s in ht:
            try:
                d = s.recv(100)
                if d == b"":
                    closed += 1
                else:
                    answered += 1
            except BlockingIOError:
                hanging += 1
            except OSError:
                closed += 1
        out["http"] = {"answered": answered, "closed": closed, "hanging": hanging}
        r_closed = 0
        for s in rt:
            try:
                r_closed += 1 if s.recv(4000) == b"" else 0
            except BlockingIOError:
                pass
            except OSError:
                r_closed += 1
        out["rtmp"] = {"closed": r_closed, "open_or_answered": N - r_closed}
    finally:
        for s in rt + ht:
            s.close()
        subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={hard}:"], check=False)
        time.sleep(1)
        out["api_after"] = api_ok(5)
        out["refusal_lines"] = server.log_text().count("event=accept_refused")
        stop_proc(pub)
        server.stop()
    return out


src = make_media(os.path.join(workdir("fdflood-media"), "src.flv"), seconds=30)
rounds = []
for i in range(ROUNDS):
    r = one_round(src)
    rounds.append(r)
    print(f"round {i + 1}: {r}", flush=True)
print(f"median server CPU while held: {statistics.median(r['cpu_pct'] for r in rounds):.1f} % of a core "
      f"(rounds: {[round(r['cpu_pct'], 1) for r in rounds]})")
print(f"HTTP left hanging: {[r['http']['hanging'] for r in rounds]}; player's longest gap (ms): "
      f"{[r['player_gap_ms'] for r in rounds]}; API after: {[r['api_after'] for r in rounds]}")
