#!/usr/bin/python3
"""Edge mode (docs/relays.md): an edge app pulls a missing stream on demand from its origins, tried
in order. The first four origins fail in four ways (nothing listens, a SYN is never answered, one
accepts and never answers, one answers with garbage) and the edge goes on to the fifth, a real
Sluice origin; each failure is logged against its own origin. 200
players join the edge at once on both of its loops: the origin sees one upstream connection for the
stream, and a player on the edge gets the origin's packets byte for byte. The pull ends `idle` after
the last player left. A publish on the edge is forwarded to the origin. The state is in the API."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")


def api(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return json.loads(r.read())



def fake_origin(kind):
    """A TCP server on a free port that accepts and then stays silent or sends garbage."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held = []

    def run():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)
            if kind == "garbage":
                try:
                    c.sendall(b"\x07" + os.urandom(4000))
                except OSError:
                    pass
    threading.Thread(target=run, daemon=True).start()
    return srv, srv.getsockname()[1], held


def unanswered_origin():
    """A listener whose accept queue is full (backlog 0, filled, never accepted): a SYN gets no
    answer, so a connect stays under way until the edge's setup timeout, as to a lost host."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    fill = []
    for _ in range(3):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(srv.getsockname())
        fill.append(c)
    time.sleep(0.2)
    return srv, srv.getsockname()[1], fill


unanswered, unanswered_port, unanswered_fill = unanswered_origin()  # held: the queue stays full
silent, silent_port, _ = fake_origin("silent")
garbage, garbage_port, _ = fake_origin("garbage")
# Bound but never listening: a connect is refused, and no other test can take the port meanwhile
# (a port only looked up free could be, under the parallel suite).
refused = socket.socket()
refused.bind(("127.0.0.1", 0))
refused_port = refused.getsockname()[1]
o_http, e_http = free_port(), free_port()
origin = Server("relay_edge_origin", extra_yaml=f"http: {{ listen: 127.0.0.1:{o_http} }}\n").start()
origins = [f"rtmp://127.0.0.1:{p}/live" for p in (refused_port, unanswered_port, silent_port, garbage_port, origin.port)]
# handshake_timeout (in the rtmp: section) also bounds how long a silent origin is waited for.
edge = Server("relay_edge", extra_yaml=f"  handshake_timeout: 2s\nhttp: {{ listen: 127.0.0.1:{e_http} }}\nworkers: 2\n",
              apps=f"  live:\n    type: edge\n    origins: [{', '.join(origins)}]\n").start()
tmp = edge.dir
src = make_media(os.path.join(tmp, "src.flv"), seconds=40)
source_tags = flv_tags(src)
bench = binary("bench/load/sluice-bench")

try:
    pub = publish_ffmpeg(src, origin.url("live/cam"))
    time.sleep(1.5)
    t0 = time.time()
    out = os.path.join(tmp, "edge.flv")
    first = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", edge.url("live/cam"), "-t", "6", "-c", "copy",
                              "-f", "flv", "-y", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    check(wait_for(lambda: any(p["state"] == "live" for p in api(e_http, "/api/v1/relays")["pull"]), 15),
          "the edge's pull reaches the fifth origin")
    print(f"pull live {time.time() - t0:.1f} s after the first play (two silent origins cost rtmp.handshake_timeout each)")
    log = edge.log_text()
    relay_lines = [line for line in log.splitlines() if "event=relay_pull" in line][:12]

    def failure_of(port):
        """The reason logged when the edge gave up the origin on `port` (each is logged against its own address)."""
        lines = [line for line in log.splitlines() if f"upstream=rtmp://127.0.0.1:{port}/live state=waiting" in line]
        return lines[0].split("reason=", 1)[-1] if lines else f"no waiting line for it in {relay_lines}"

    why = failure_of(refused_port)
    check("connect failed: connection refused" in why, f"the first origin (nothing listening) was refused ({why})")
    why = failure_of(unanswered_port)
    check("connection timeout" in why, f"the origin that never answers a SYN was given up after the timeout ({why})")
    why = failure_of(silent_port)
    check("connection timeout" in why, f"the silent origin was given up after the timeout ({why})")
    why = failure_of(garbage_port)
    check("handshake" in why or "version" in why or "invalid" in why, f"the origin sending garbage failed ({why})")
    check(log.count("state=waiting") >= 4 and "next upstream" in log, "each failed origin passed on to the next at once")

    # 200 players at once, on both loops of the edge.
    js = os.path.join(tmp, "bench.json")
    b = subprocess.run([bench, "play", "-q", "-n", "200", "--rate", "0", "-d", "6", "--json", js, edge.url("live/cam")],
                       capture_output=True, text=True, timeout=60)
    first.wait(timeout=30)
    summary = json.load(open(js))
    check(b.returncode == 0, f"200 players on the edge played ({b.stdout[-400:]} {b.stderr[-400:]})")
    check_same_packets("ffmpeg on the edge", out, source_tags, min_video=100, min_audio=100)
    upstream = [c for c in api(o_http, "/api/v1/clients") if "live/cam" in c.get("playing", [])]
    check(len(upstream) == 1, f"the origin has exactly one player of live/cam: the edge's pull ({len(upstream)})")
    plays = origin.log_text().count("event=play app=live stream=cam")
    check(plays == 1, f"the origin saw one play of live/cam in all ({plays})")
    print(f"200 edge players: {json.dumps(summary.get('summary', summary))[:300]}")

    # Idle: the last player left; the pull ends after idle (10 s by default) and leaves the origin.
    check(wait_for(lambda: not [c for c in api(o_http, "/api/v1/clients") if "live/cam" in c.get("playing", [])], 16),
          "the pull ends once nobody plays the stream on the edge")
    check(api(e_http, "/api/v1/relays")["pull"] == [], "the edge lists no pull any more")

    # A publish on the edge goes to the origin.
    up = publish_ffmpeg(src, edge.url("live/up"))
    time.sleep(2)
    got = os.path.join(tmp, "forwarded.flv")
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", origin.url("live/up"), "-t", "4", "-c", "copy",
                        "-f", "flv", "-y", got], capture_output=True, timeout=30)
    check(p.returncode == 0, "the origin plays the stream published on the edge")
    check_same_packets("published on the edge, played on the origin", got, source_tags, min_video=50, min_audio=50)
    stop_proc(up)
    stop_proc(pub)
    check(edge.alive() and origin.alive(), "both servers still run")
    print("relay_edge_test: OK")
finally:
    edge.stop()
    origin.stop()
    silent.close()
    garbage.close()
