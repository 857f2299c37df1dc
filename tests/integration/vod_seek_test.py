#!/usr/bin/python3
"""VOD seek and stop through play's start/duration (rtmpdump -A/-B): the first video packet is a
keyframe at or just before the start, and the stream stops at the stop time. Also the seek
command, pause/unpause and playlists (play with reset=false) through rtmp-probe."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "rtmpdump")
server = vod_server("vod-seek")
media = os.path.join(server.dir, "media")
make_media(os.path.join(media, "a.flv"), seconds=12, gop=25)  # keyframe every second
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", os.path.join(media, "a.flv"), "-c", "copy",
                os.path.join(media, "a.mp4")], check=True)
make_media(os.path.join(media, "b.flv"), seconds=3, gop=25)
server.start()

for name in ("a.flv", "mp4:a.mp4"):
    out = os.path.join(server.dir, "seek.flv")
    subprocess.run(["timeout", "-k", "2", "30", "rtmpdump", "-q", "-r", server.url("vod/" + name), "-A", "4.5", "-B",
                    "7", "-o", out])
    tags = flv_tags(out)
    videos = [t for t in tags if t[0] == 9 and not ((t[4][0] & 0x0F) == 7 and t[4][1] == 0)]
    check(len(videos) > 0, f"{name}: seek returned video")
    # rtmpdump adds its -A offset to what it writes only for some versions; read the server's
    # timestamps with the probe instead, and check rtmpdump's first frame is a keyframe.
    check((videos[0][4][0] >> 4) == 1, f"{name}: rtmpdump's first video packet after -A is a keyframe")
    lines = probe(server.url("vod/" + name), "--start", "4500", "--duration", "8")
    v = [f for _, f, _ in probe_events(lines, "video") if f["seq"] == "0"]
    first_ts = int(v[0]["ts"])
    check(v[0]["key"] == "1" and 4000 <= first_ts <= 4500,
          f"{name}: first video is the keyframe at or before 4.5 s (ts={first_ts})")
    out2 = os.path.join(server.dir, "stop.flv")
    # -A 2 -B 5 sends play(name, 2000, 3000): start at the keyframe at or before 2 s, stop at 5 s.
    # rtmpdump adds its -A offset (2000 ms) to every timestamp it writes.
    subprocess.run(["timeout", "-k", "2", "30", "rtmpdump", "-q", "-r", server.url("vod/" + name), "-A", "2", "-B", "5",
                    "-o", out2])
    stamps = [t[1] - 2000 for t in flv_tags(out2) if t[0] in (8, 9)]
    check(len(stamps) > 0 and 1000 <= min(stamps) <= 2000, f"{name}: -A 2 starts at the keyframe before 2 s ({min(stamps)})")
    check(4800 <= max(stamps) < 5000, f"{name}: -B 5 stops at 5 s (last packet at {max(stamps)} ms)")

# The seek command, pause/unpause and a playlist, through the probe.
lines = probe(server.url("vod/a.flv"), "--duration", "9", "--pause-at", "2", "--resume-at", "4")
codes = [f["_words"][0] for _, f, _ in probe_events(lines, "status")]
check("NetStream.Pause.Notify" in codes and "NetStream.Unpause.Notify" in codes, "pause/unpause notified")
lines = probe(server.url("vod/b.flv"), "--duration", "10", "--play2", "a.flv", "--buffer", "1000")
codes = [f["_words"][0] for _, f, _ in probe_events(lines, "status")]
datas = [f for _, f, _ in probe_events(lines, "data") if f.get("name") == "onPlayStatus"]
check(codes.count("NetStream.Play.Start") >= 2, "playlist: Play.Start for each item")
check(any("NetStream.Play.Switch" in l for l in lines), "playlist: onPlayStatus Play.Switch between items")
vts = [int(f["ts"]) for _, f, _ in probe_events(lines, "video") if f["seq"] == "0"]
check(max(vts) > 4000, f"playlist: the second item followed the first (last ts {max(vts)})")
check(all(b >= a for a, b in zip(vts, vts[1:])), "playlist: timestamps keep rising across items")

# getStreamLength answers the file's duration in seconds.
lines = probe(server.url("vod/a.flv"), "--duration", "2", "--length")
lengths = [float(l.split("value=")[1]) for l in lines if l.startswith("result") and "value=" in l]
check(len(lengths) == 1 and abs(lengths[0] - 12.0) < 0.2, f"getStreamLength: {lengths}")

# A file that changes is re-indexed at the next play.
import shutil  # noqa: E402
shutil.copy(os.path.join(media, "b.flv"), os.path.join(media, "c.flv"))
lines = probe(server.url("vod/c.flv"), "--duration", "1", "--length")
first = [float(l.split("value=")[1]) for l in lines if l.startswith("result") and "value=" in l]
shutil.copy(os.path.join(media, "a.flv"), os.path.join(media, "c.flv.new"))
os.replace(os.path.join(media, "c.flv.new"), os.path.join(media, "c.flv"))
lines = probe(server.url("vod/c.flv"), "--duration", "1", "--length")
second = [float(l.split("value=")[1]) for l in lines if l.startswith("result") and "value=" in l]
check(first and second and abs(first[0] - 3) < 0.2 and abs(second[0] - 12) < 0.2,
      f"a replaced file is re-indexed ({first} -> {second})")

# End of file: Play.Complete (onPlayStatus), StreamEOF, Play.Stop.
lines = probe(server.url("vod/b.flv"), "--duration", "8")
check(any("NetStream.Play.Complete" in l for l in lines), "end: onPlayStatus NetStream.Play.Complete")
check(any(l.startswith("uc ") and "StreamEOF" in l for l in lines), "end: StreamEOF")
check(any("NetStream.Play.Stop" in l for l in lines), "end: NetStream.Play.Stop")
rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
