#!/usr/bin/python3
"""Pause and unpause of a live stream: Pause.Notify and no media while paused; Unpause.Notify, then
media again starting at a keyframe."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
server = Server("pause").start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=20)
pub = publish_ffmpeg(src, server.url("live/p"))
try:
    time.sleep(2)
    lines = probe(server.url("live/p"), "--duration", "7", "--pause-at", "2", "--resume-at", "4.5")
finally:
    stop_proc(pub)
    rc = server.stop()
statuses = [(ms, f["_words"][0]) for ms, f, _ in probe_events(lines, "status")]
codes = [c for _, c in statuses]
check("NetStream.Pause.Notify" in codes, "pause answered with NetStream.Pause.Notify")
check("NetStream.Unpause.Notify" in codes, "unpause answered with NetStream.Unpause.Notify")
t_pause = next(ms for ms, c in statuses if c == "NetStream.Pause.Notify")
t_resume = next(ms for ms, c in statuses if c == "NetStream.Unpause.Notify")
videos = [v for v in probe_events(lines, "video") if v[1]["seq"] == "0"]
during = [v for v in videos if t_pause + 300 < v[0] < t_resume]
check(len(during) == 0, f"no video while paused ({len(during)} packets)")
after = [v for v in videos if v[0] >= t_resume]
check(len(after) > 20, f"video again after unpause ({len(after)} packets)")
check(after[0][1]["key"] == "1", "the first frame after unpause is a keyframe")
check(rc == 0, "server exits 0")
print("PASS")
