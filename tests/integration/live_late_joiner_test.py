#!/usr/bin/python3
"""A player that joins a live stream late gets metadata, the sequence headers and the cached GOP at
once: its first video packet arrives within 300 ms of play and is a keyframe. The play replies come
in the order players expect."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
server = Server("late-joiner").start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30, gop=50)  # 2 s GOPs; outlasts 5 joins on a slow machine
pub = publish_ffmpeg(src, server.url("live/late"))
try:
    time.sleep(3.3)  # mid-GOP
    ttffs = []
    for i in range(5):
        check(pub.poll() is None, f"join {i}: the publisher is still running")
        lines = probe(server.url("live/late"), "--duration", "1.5")
        videos = [v for v in probe_events(lines, "video") if v[1].get("seq") == "0"]
        check(len(videos) > 0, f"join {i}: received video")
        first = videos[0]
        ttffs.append(first[0])
        check(first[1]["key"] == "1", f"join {i}: first video packet is a keyframe")
        order = [l.split()[0] + ":" + (l.split()[2] if l.startswith("status") else "") for l in lines
                 if l.startswith(("status", "uc", "data", "video", "audio"))]
        statuses = [l.split()[2] for l in lines if l.startswith("status")]
        check(statuses[:2] == ["NetStream.Play.Reset", "NetStream.Play.Start"], f"join {i}: Play.Reset then Play.Start")
        datas = [v[1]["name"] for v in probe_events(lines, "data")]
        check(datas[:2] == ["|RtmpSampleAccess", "onMetaData"], f"join {i}: |RtmpSampleAccess then onMetaData")
        media = [l for l in lines if l.startswith(("video", "audio"))]
        check("seq=1" in media[0] and "seq=1" in media[1], f"join {i}: sequence headers come before any frame")
        time.sleep(0.4)
    ttffs.sort()
    print("time to first video frame (ms):", ttffs)
    check(ttffs[len(ttffs) // 2] < 300 and max(ttffs) < 300, "every late joiner's first video frame within 300 ms")
finally:
    stop_proc(pub)
    server.stop()
print("PASS")
