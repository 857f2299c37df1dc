#!/usr/bin/python3
"""limits.per_ip under a flood: 2000 connections from one address (127.0.0.2) against a per-IP
limit of 50. At most 50 stay open, the server's RSS stays within 20 MB of its idle figure, the
refusals are counted in /metrics, and a player on another address (127.0.0.1) sees no stall (no
gap of more than 500 ms between video packets) and intact packets. HTTP from the flooding
address gets 429."""
import os
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
hport = free_port()
server = Server("access-per-ip", extra_yaml=f"limits: {{ per_ip: 50 }}\nhttp:\n  listen: 127.0.0.1:{hport}\n  api: {{ allow: [] }}\n").start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30)
pub = publish_ffmpeg(src, server.url("live/ref"))
try:
    time.sleep(2)
    idle_rss = server.rss_kb()
    probe = probe_async(server.url("live/ref"), "--duration", "8", timeout=30)
    time.sleep(1.5)
    flood = []
    t0 = time.time()
    for i in range(2000):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind(("127.0.0.2", 0))
        try:
            s.connect(("127.0.0.1", server.port))
        except BlockingIOError:
            pass
        flood.append(s)
    took = time.time() - t0
    time.sleep(2)
    peak_rss = server.rss_kb()
    still_open = 0
    for s in flood:
        try:
            data = s.recv(1)
            if data:
                still_open += 1
        except BlockingIOError:
            still_open += 1  # nothing to read and not closed: the server keeps it
        except OSError:
            pass
    check(still_open <= 50, f"2000 connections from 127.0.0.2 in {took:.1f} s: {still_open} left open (limit 50)")
    check(still_open >= 40, f"and the limit admits its 50 ({still_open})")
    check(peak_rss - idle_rss < 20 * 1024, f"RSS {idle_rss // 1024} MB idle, {peak_rss // 1024} MB under the flood (< +20 MB)")
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", hport))
    s.sendall(b"GET /api/v1/server HTTP/1.1\r\nHost: x\r\n\r\n")
    reply = s.recv(200).decode(errors="replace")
    check(reply.startswith("HTTP/1.1 429"), f"HTTP from the full address: 429 ({reply.splitlines()[0] if reply else ''})")
    s.close()
    lines = probe.lines()
    for s in flood:
        s.close()
    video = [ms for ms, f, _ in probe_events(lines, "video")]
    gaps = [b - a for a, b in zip(video, video[1:])]
    check(len(video) > 120, f"the player on 127.0.0.1 received {len(video)} video packets")
    check(max(gaps) < 500, f"no stall during the flood (largest gap between video packets {max(gaps)} ms)")
    counts = guard_events(hport)
    check(counts.get("per_ip_limit", 0) >= 1900, f"refusals counted as per_ip_limit ({counts.get('per_ip_limit')})")
finally:
    stop_proc(pub)
    rc = server.stop()
check("limits.per_ip=50" in server.log_text() and "suppressed=" in server.log_text(),
      "refusals logged (rate-limited, with the number suppressed)")
check(rc == 0, "server exits 0")
print("PASS")
