#!/usr/bin/python3
"""Publish conflict (publish_conflict: reject), unknown app, garbage after the handshake, a chunk header with a 16 MiB length
and Set Chunk Size 0: each offending connection is closed with a log line; a stream being published
and played meanwhile is not disturbed, and the server keeps running."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
# publish_conflict: reject (the default, takeover, is live_takeover_test's): a second publisher of a
# name whose publisher keeps sending is refused.
server = Server("bad-input", extra_yaml="  max_message_size: 8MiB\n  handshake_timeout: 2s\n",
                apps="  live: { type: live, gop_cache: true, publish_conflict: reject }\n").start()
# A client that connects and never says anything: closed by the handshake timeout.
silent = socket.create_connection(("127.0.0.1", server.port))
src = make_media(os.path.join(server.dir, "src.flv"), seconds=25)
url = server.url("live/main")
pub = publish_ffmpeg(src, url)
time.sleep(2)
watcher = probe_async(url, "--duration", "14")
time.sleep(1)

# A second publisher on the same name gets BadName and gives up; the first is not disturbed.
second = subprocess.run(["timeout", "-k", "2", "15", "ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src,
                         "-c", "copy", "-f", "flv", url], capture_output=True, text=True)
check(second.returncode != 0, "second publisher on a live name fails")
check(pub.poll() is None, "first publisher still publishing")

# Unknown app.
bad_app = subprocess.run(["timeout", "-k", "2", "15", "ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src,
                          "-c", "copy", "-f", "flv", server.url("nosuchapp/x")], capture_output=True, text=True)
check(bad_app.returncode != 0, "publishing to an unknown app fails")

# Garbage after the handshake: a chunk basic header for csid 3 with a type-0 header and a bogus
# message type, followed by random bytes, is a protocol violation somewhere; the server must close.
s = rtmp_handshake(server.port)
s.sendall(b"\x03" + bytes([0, 0, 0, 0, 0, 10, 20, 0, 0, 0, 0]) + os.urandom(10) + b"\x00" * 64 + os.urandom(4000))
check(closed_by_peer(s), "garbage after the handshake: connection closed")

# A chunk header declaring a 16 MiB - 1 message (over max_message_size): closed at once.
s = rtmp_handshake(server.port)
s.sendall(bytes([0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 20, 0, 0, 0, 0]))
check(closed_by_peer(s), "16 MiB message length: connection closed")

# Set Chunk Size 0.
s = rtmp_handshake(server.port)
s.sendall(bytes([0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0]))
check(closed_by_peer(s), "Set Chunk Size 0: connection closed")

check(closed_by_peer(silent, timeout=1.0), "a silent client is closed by the handshake timeout")
lines = watcher.lines()
stop_proc(pub)
check(server.alive(), "server still running")
rc = server.stop()
videos = [v for v in probe_events(lines, "video") if v[1]["seq"] == "0"]
check(len(videos) > 250, f"watcher of the main stream kept receiving ({len(videos)} video packets in ~13 s)")
gaps = [b[0] - a[0] for a, b in zip(videos, videos[1:])]
check(max(gaps) < 1000, f"no stall for the watcher (largest gap {max(gaps)} ms)")
statuses = [l.split()[2] for l in lines if l.startswith("status")]
check("NetStream.Play.UnpublishNotify" not in statuses[:-1] or statuses.count("NetStream.Play.UnpublishNotify") <= 1,
      "watcher never saw its stream unpublished by the conflict")
log = server.log_text()
check("reason=\"already publishing\"" in log, "log: publish conflict")
check("reason=\"unknown app\"" in log, "log: unknown app")
check(log.count("event=protocol_error") >= 3, "log: a protocol_error line per hostile connection")
check("bad_chunk_size" in log, "log: Set Chunk Size 0 named")
check("limit_exceeded" in log, "log: message length limit named")
check("reason=\"handshake timeout\"" in log, "log: handshake timeout")
check(rc == 0, "server exits 0")
print("PASS")
