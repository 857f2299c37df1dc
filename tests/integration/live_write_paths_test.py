#!/usr/bin/python3
"""Both ways the server writes to live players deliver the same bytes: with rtmp.io_uring on (all
players of a flush pass written by one io_uring submit) and off (one writev each). In each mode six
RTMP players and two HTTP-FLV readers watch one 12 Mb/s stream; one of each has a tiny receive
buffer and stops reading for 4 s, more than the kernel's largest send buffer (4 MiB) holds, so the
server's writes to it come back partial, then EAGAIN, and the rest must follow through libuv's
queue. Every player's video and audio payloads must be a contiguous run of the source's, in order
(the queue limits are raised so that the stalled players lose nothing)."""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403



def stalled_http_reader(port, path, out_path, result):
    """GET path over HTTP/1.0 with a 4 KB receive buffer; read 2 s, stop 4 s, read until 10 s."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: t\r\n\r\n".encode())
        data = bytearray()
        t0 = time.time()
        while time.time() - t0 < 10:
            if "resumed_at" not in result and time.time() - t0 >= 2:
                time.sleep(4)
                result["resumed_at"] = len(data)
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        head, _, body = bytes(data).partition(b"\r\n\r\n")
        result["status"] = head.split(b"\r\n")[0].decode()
        result["after"] = len(data) - result.get("resumed_at", len(data))
        with open(out_path, "wb") as o:
            o.write(body)
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        result["error"] = repr(e)


require_tools("ffmpeg", "curl")
src = None
source = None
for mode in ("true", "false"):
    hport = free_port()
    server = Server(f"write-paths-{mode}", extra_yaml=(
        f"  io_uring: {mode}\n"
        "  player_queue: { soft_bytes: 64MiB, hard_bytes: 128MiB, soft_delay: 20s, hard_delay: 30s }\n"
        f"http:\n  listen: 127.0.0.1:{hport}\n")).start()
    check(wait_port(hport), "HTTP listener is up")
    if src is None:
        src = make_media(os.path.join(server.dir, "src.flv"), seconds=14, vbitrate="12M", noise=True)
        source = media_runs(flv_tags(src))
    url = server.url("live/paths")
    pub = publish_ffmpeg(src, url)
    try:
        time.sleep(2)
        normal = [probe_async(url, "--duration", "9") for _ in range(5)]
        # 12 Mb/s for 4 s is ~6 MB: more than a 4 KB receive window and a 4 MiB send buffer hold.
        stalled = probe_async(url, "--duration", "10", "--rcvbuf", "4096", "--stall-at", "2", "--stall-for", "4")
        http_out = os.path.join(server.dir, "http.flv")
        http_url = f"http://127.0.0.1:{hport}/live/paths.flv"
        http_reader = subprocess.Popen(["curl", "-s", "-m", "9", "-o", http_out, http_url],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        http_stalled_out = os.path.join(server.dir, "http-stalled.flv")
        http_stalled = {}
        http_thread = threading.Thread(target=stalled_http_reader,
                                       args=(hport, "/live/paths.flv", http_stalled_out, http_stalled))
        http_thread.start()
        results = [(f"player {i}", p.lines()) for i, p in enumerate(normal)] + [("stalled player", stalled.lines())]
        http_reader.wait(timeout=20)
        http_thread.join(timeout=20)
    finally:
        stop_proc(pub)
        rc = server.stop()
    check(rc == 0, f"io_uring={mode}: server exited 0 on SIGTERM (got {rc})")
    for name, lines in results:
        name = f"io_uring={mode}: {name}"
        ends = [line for line in lines if line.startswith("end ")]
        check(ends == ["end reason=duration"], f"{name}: played to its end without a protocol error ({ends})")
        for kind, minimum in (("video", 100), ("audio", 150)):
            got = [e[1]["md5"] for e in probe_events(lines, kind) if e[1]["seq"] == "0"]
            check(len(got) >= minimum, f"{name}: {len(got)} {kind} packets (>= {minimum})")
            pos = contiguous_in(got, source[9 if kind == "video" else 8])
            check(pos >= 0, f"{name}: {kind} payloads are a contiguous run of the source's (at packet {pos})")
    stalled_lines = results[-1][1]
    resumed = [i for i, line in enumerate(stalled_lines) if line.startswith("cmd") and line.endswith(" read")]
    check(len(resumed) == 1, f"io_uring={mode}: the stalled player stopped and resumed reading")
    after = [e for e in probe_events(stalled_lines[resumed[0]:], "video") if e[1]["seq"] == "0"]
    check(len(after) >= 150, f"io_uring={mode}: the stalled player got its backlog and more after resuming "
                             f"({len(after)} video packets, >= 150)")
    check("error" not in http_stalled, f"io_uring={mode}: stalled HTTP-FLV reader ran ({http_stalled.get('error')})")
    status = http_stalled.get("status", "")
    check(status.split(" ")[1:2] == ["200"], f"io_uring={mode}: stalled HTTP-FLV reader got 200 ({status})")
    # 4 s of reading after the stall at a 4 KB window: the 6 MB backlog and more must arrive.
    after = http_stalled.get("after", 0)
    check(after > 8_000_000,
          f"io_uring={mode}: the stalled HTTP-FLV reader got its backlog after resuming ({after} bytes)")
    for name, path in (("HTTP-FLV reader", http_out), ("stalled HTTP-FLV reader", http_stalled_out)):
        check_same_packets(f"io_uring={mode}: {name}", path, flv_tags(src), min_video=150, min_audio=200)
    log = server.log_text()
    if mode == "true":
        check("event=io_uring state=on" in log, "io_uring=true: the server says it writes through io_uring")
        stats = [line for line in log.splitlines() if "event=io_uring_stats" in line]
        check(stats and " writes=0 " not in stats[-1] + " ",
              f"io_uring=true: players were written through the ring ({stats[-1] if stats else 'no stats line'})")
    else:
        check("event=io_uring" not in log, "io_uring=false: the server does not set up a ring")
    check("event=slow_player" not in log, f"io_uring={mode}: no player was dropped as too slow")
print("PASS")
