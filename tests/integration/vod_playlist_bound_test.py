#!/usr/bin/python3
"""Issue 11, finding 4: the RTMP VOD playlist is bounded. While one stream plays, a client sends
thousands of play(reset=false): first with 60 KB names (refused for apps.vod.name_max_bytes), then
with 1000-byte names (64 queued, every further one refused for playlist_max_entries). Each refusal
is a NetStream.Play.Failed with the reason, counted in /metrics, and logged rate-limited; the
server's RSS stays flat (unbounded, 4480 such names were 256 MiB); the playing stream goes on; and
a normal VOD play on another connection gets exactly the file's packets."""
import os
import select
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg", "ffprobe")
hport = free_port()
server = Server("vod-playlist-bound", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n",
                apps="  vod: { type: vod, root: ./media }\n", env=SMALL_QUARANTINE)
media = os.path.join(server.dir, "media")
os.makedirs(media)
good = make_media(os.path.join(media, "good.flv"), seconds=4)
make_media(os.path.join(media, "long.flv"), seconds=60)
server.start()
check(wait_port(hport), "HTTP listener is up")

LONG_NAMES = 2240   # x 60 KB: 131 MiB of names
MEDIUM_NAMES = 2240  # x 1000 bytes
MAX_ENTRIES = 64

c = RtmpClient(server.port)
c.set_chunk_size(65536)
c.connect("vod")
c.create_stream()
c.play("long.flv")
check(c.wait_status("NetStream.Play.Start") is not None, "the attacker's stream plays")
c.read_for(1.0)
rss_before = server.rss_kb()
events_before = guard_events(hport)


def failures():
    out = []
    for m in c.messages:
        if m.status_code() == "NetStream.Play.Failed":
            info = [a for a in m.command()[2] if isinstance(a, dict)]
            out.append(info[0].get("description", "") if info else "")
    return out


def send_reading(data):
    """Sends data while reading whatever the server sends: a client that stops reading gets its
    own reads paused by the server (its output bound), and this test is about the playlist."""
    view = memoryview(data)
    deadline = time.time() + 30
    while view and time.time() < deadline:
        readable, writable, _ = select.select([c.sock], [c.sock], [], 1.0)
        if readable:
            c.read_some(0.5)
        if writable:
            c.sock.settimeout(0)
            try:
                view = view[c.sock.send(view):]
            except BlockingIOError:
                pass
    check(not view, "the server keeps reading the flood")


def flood(count, name_bytes, tag):
    for i in range(count):
        name = f"{tag}{i:06d}".ljust(name_bytes - 4, "x") + ".flv"
        send_reading(c.command_bytes("play", (None, name, -2000, -1, False), sid=1, txn=0, csid=8))


t0 = time.time()
flood(LONG_NAMES, 60 * 1024, "long")
flood(MEDIUM_NAMES, 1000, "medium")
want = LONG_NAMES + MEDIUM_NAMES - MAX_ENTRIES
end = time.time() + 60
while len(failures()) < want and time.time() < end and not c.closed:
    c.read_some(0.5)
took = time.time() - t0
fails = failures()
print(f"sent {LONG_NAMES + MEDIUM_NAMES} plays in {took:.1f} s, {len(fails)} refused", flush=True)
check(len(fails) == want, f"every refused play is told: {len(fails)} NetStream.Play.Failed, want {want}")
check(sum("name_max_bytes" in d for d in fails) == LONG_NAMES, "60 KB names: refused for name_max_bytes")
check(sum("playlist_max_entries" in d for d in fails) == MEDIUM_NAMES - MAX_ENTRIES,
      "names past the 64th queued: refused for playlist_max_entries")
rss_after = server.rss_kb()
growth_mb = (rss_after - rss_before) / 1024
print(f"RSS {rss_before} KB -> {rss_after} KB (+{growth_mb:.1f} MB)", flush=True)
check(growth_mb < 24, f"server memory stays bounded (+{growth_mb:.1f} MB; unbounded this was +256 MiB)")

# The attacker's own stream still plays: media keeps coming after the flood.
media_before = sum(1 for m in c.messages if m.type == 9)
c.read_for(2.0)
check(sum(1 for m in c.messages if m.type == 9) > media_before + 10, "the playing stream goes on")
check(not c.closed, "the attacker's connection is refused plays, not dropped")

events = guard_events(hport)
check(events["vod_name_too_long"] - events_before.get("vod_name_too_long", 0) == LONG_NAMES,
      f"/metrics counts vod_name_too_long ({events['vod_name_too_long']})")
check(events["vod_playlist_full"] - events_before.get("vod_playlist_full", 0) == MEDIUM_NAMES - MAX_ENTRIES,
      f"/metrics counts vod_playlist_full ({events['vod_playlist_full']})")
log = server.log_text()
refusal_lines = [l for l in log.splitlines() if "event=vod_play_refused" in l]
check(0 < len(refusal_lines) < 200, f"refusals are logged, rate-limited ({len(refusal_lines)} lines)")
check(any("guard=vod_name_too_long" in l for l in refusal_lines) and
      any("guard=vod_playlist_full" in l for l in refusal_lines), "the log names both bounds")
check(max(len(l) for l in log.splitlines()) < 4096, "no log line carries a whole hostile name")

# A legitimate player on another connection, meanwhile: exactly the file's packets.
check_vod_plays_source("normal play", server.url("vod/good.flv"), good, os.path.join(server.dir, "copy.flv"))
c.close()
check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
