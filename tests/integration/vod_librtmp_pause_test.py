#!/usr/bin/python3
"""VOD pause/unpause through librtmp (tools/librtmp-player, an implementation independent of ours):
Pause.Notify, no media sent while paused beyond what was already in flight, Unpause.Notify, then
media continues where it stopped (timestamps do not jump back or skip ahead)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
server = vod_server("vod-librtmp")
make_media(os.path.join(server.dir, "media", "long.flv"), seconds=30)
server.start()
out = subprocess.run(["timeout", "-k", "2", "30", binary("tools/librtmp-player"), server.url("vod/long.flv"), "10", "3",
                      "6"], capture_output=True, text=True).stdout.splitlines()
rc = server.stop()
statuses = [(ms, f["_words"][0]) for ms, f, _ in probe_events(out, "status")]
codes = [c for _, c in statuses]
check("NetStream.Pause.Notify" in codes, "librtmp: pause answered with NetStream.Pause.Notify")
check("NetStream.Unpause.Notify" in codes, "librtmp: unpause answered with NetStream.Unpause.Notify")
t_pause = next(ms for ms, c in statuses if c == "NetStream.Pause.Notify")
t_resume = next(ms for ms, c in statuses if c == "NetStream.Unpause.Notify")
videos = [(ms, int(f["ts"])) for ms, f, _ in probe_events(out, "video")]
during = [v for v in videos if t_pause + 200 < v[0] < t_resume]
check(len(during) == 0, f"no video arrives while paused ({len(during)})")
before = [ts for ms, ts in videos if ms <= t_pause]
after = [ts for ms, ts in videos if ms >= t_resume]
check(len(after) > 25, f"video continues after unpause ({len(after)} packets)")
gap = after[0] - before[-1]
check(0 < gap <= 100, f"it continues where it stopped (ts {before[-1]} -> {after[0]})")
# Paused for 3 s: over 10 s of wall time the player got about 7 s of media plus the lead.
span = after[-1] - videos[0][1]
check(span < 7000 + 5500, f"the clock stopped while paused ({span} ms of media in 10 s with 3 s paused)")
check(rc == 0, "server exits 0")
print("PASS")
