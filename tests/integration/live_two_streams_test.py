#!/usr/bin/python3
"""Several streams on one connection: one player connection plays two live streams (two
createStream ids sharing chunk streams); each stream's packets arrive intact on its own message
stream id and are the right publisher's packets."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
server = Server("two-streams").start()
a = make_media(os.path.join(server.dir, "a.flv"), seconds=15, size="320x240")
b = make_media(os.path.join(server.dir, "b.flv"), seconds=15, size="480x270", vbitrate="500k")
pa = publish_ffmpeg(a, server.url("live/a"))
pb = publish_ffmpeg(b, server.url("live/b"))
try:
    time.sleep(2.5)
    lines = probe(server.url("live/a"), "--duration", "5", "--also", "b")
finally:
    stop_proc(pa)
    stop_proc(pb)
    rc = server.stop()
src = {"a": media_runs(flv_tags(a)), "b": media_runs(flv_tags(b))}
by_sid = {}
for _, f, _ in probe_events(lines, "video"):
    if f["seq"] == "0":
        by_sid.setdefault(f["sid"], []).append(f["md5"])
check(len(by_sid) == 2, f"video arrived on two message stream ids ({sorted(by_sid)})")
matched = set()
for sid, hashes in by_sid.items():
    for name in ("a", "b"):
        if contiguous_in(hashes[:-1], src[name][9]) >= 0:
            matched.add(name)
            check(len(hashes) > 60, f"stream id {sid} carries {name}'s video intact ({len(hashes)} packets)")
check(matched == {"a", "b"}, "each stream id carries one publisher's stream")
check(rc == 0, "server exits 0")
print("PASS")
