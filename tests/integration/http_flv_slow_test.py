#!/usr/bin/python3
"""HTTP-FLV slow-reader policy (the same rtmp.player_queue limits as RTMP players): a reader that
stops reading is disconnected past the hard limit with a log line that says why, while a curl reader
and an RTMP player of the same stream keep receiving every packet."""
import os
import socket
import subprocess
import sys
import urllib.request
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "curl")


def dropped_frames(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return (float(values.get("sluice_dropped_frames_total", "0")),
            float(values.get('sluice_stream_dropped_frames_total{stream="live/slow"}', "0")))


hport = free_port()
server = Server("http-flv-slow", extra_yaml=(
    "  player_queue: { soft_bytes: 1MiB, hard_bytes: 4MiB, soft_delay: 1s, hard_delay: 4s }\n"
    f"http:\n  listen: 127.0.0.1:{hport}\n"), env=SMALL_QUARANTINE).start()
check(wait_port(hport), "HTTP listener is up")
# 6 Mb/s so a stopped reader's socket buffers (several MB on loopback) fill within seconds.
src = make_media(os.path.join(server.dir, "src.flv"), seconds=24, size="640x360", vbitrate="6M", noise=True)
source_tags = flv_tags(src)
pub = publish_ffmpeg(src, server.url("live/slow"))
try:
    time.sleep(2)
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(("127.0.0.1", hport))
    stuck.sendall(b"GET /live/slow.flv HTTP/1.1\r\nHost: t\r\n\r\n")  # and never reads
    good = os.path.join(server.dir, "good.flv")
    reader = subprocess.Popen(["curl", "-s", "-m", "16", "-o", good, f"http://127.0.0.1:{hport}/live/slow.flv"])
    rtmp = probe_async(server.url("live/slow"), "--duration", "15")
    rss = []
    drops = []  # (server total, this stream's) from /metrics, while the stream has its readers
    for _ in range(16):
        time.sleep(1)
        rss.append(server.rss_kb())
        drops.append(dropped_frames(hport))
    reader.wait(timeout=30)
    lines = rtmp.lines()
    log = server.log_text()
    check("event=slow_player proto=http-flv" in log, "the stuck HTTP-FLV reader hit the hard limit (log line)")
    check("player too slow" in log, "its close line says why")
    check(closed_by_peer(stuck, timeout=5), "the stuck reader's connection was closed")
    stuck.close()
    # Before the hard limit it lost inter frames (soft limit): the metrics count them, in all and
    # for the stream (nobody else dropped anything).
    total, per_stream = max(drops)
    check(total > 0 and per_stream == total, f"metrics count the dropped frames (total {total}, stream {per_stream})")
    check(dropped_frames(hport)[0] == total, "the server-wide count stays after the reader is gone")
    check_same_packets("curl reader", good, source_tags, min_video=300, min_audio=500)
    got = media_runs(flv_tags(good))[9]
    src_run = media_runs(source_tags)[9]
    pos = contiguous_in(got[:-2], src_run)
    check(pos >= 0 and len(got) >= 0.9 * min(len(src_run) - pos, 25 * 15), "curl reader: no video packet lost")
    videos = [v for v in probe_events(lines, "video") if v[1]["seq"] == "0"]
    gaps = [b[0] - a[0] for a, b in zip(videos, videos[1:])]
    check(len(videos) > 300 and max(gaps) < 1000,
          f"RTMP player was not stalled ({len(videos)} video packets, largest gap {max(gaps)} ms)")
    print("server RSS samples (KB):", rss)
    check(max(rss) - min(rss) < 40 * 1024, f"server memory stayed bounded (grew {max(rss) - min(rss)} KB)")
finally:
    stop_proc(pub)
    rc = server.stop()
check(rc == 0, f"server exits 0 (got {rc})")
print("PASS")
