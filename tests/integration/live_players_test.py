#!/usr/bin/python3
"""FFmpeg publishes an H.264/AAC file with -re -c copy; ffmpeg, ffprobe, rtmpdump and GStreamer
(rtmp2src and the librtmp-based rtmpsrc) play it. Every player's packets must be a contiguous run of
the source's packets (payload hashes), start on a keyframe, have monotonic timestamps and decode."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe", "rtmpdump", "gst-launch-1.0")
server = Server("live-players").start()
d = server.dir
src = make_media(os.path.join(d, "src.flv"), seconds=14)
source_tags = flv_tags(src)
url = server.url("live/cam")
pub = publish_ffmpeg(src, url)
try:
    time.sleep(3)  # the players join late: they must start on the cached keyframe
    out = {k: os.path.join(d, k + ".flv") for k in ("ffmpeg", "rtmpdump", "rtmp2src", "rtmpsrc")}
    players = {
        "ffmpeg": ["timeout", "-k", "2", "12", "ffmpeg", "-nostdin", "-loglevel", "error", "-i", url,
                   "-c", "copy", "-t", "6", "-f", "flv", out["ffmpeg"]],
        "rtmpdump": ["timeout", "-k", "2", "7", "rtmpdump", "-q", "--live", "-r", url, "-o", out["rtmpdump"]],
        "rtmp2src": ["timeout", "-k", "2", "7", "gst-launch-1.0", "-q", "rtmp2src", f"location={url}", "!",
                     "filesink", f"location={out['rtmp2src']}"],
        "rtmpsrc": ["timeout", "-k", "2", "7", "gst-launch-1.0", "-q", "rtmpsrc", f"location={url} live=1", "!",
                    "filesink", f"location={out['rtmpsrc']}"],
    }
    procs = {k: subprocess.Popen(v, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k, v in players.items()}
    probe = subprocess.run(["timeout", "-k", "2", "15", "ffprobe", "-v", "error", "-show_entries",
                            "stream=codec_name,width,height:packet=stream_index,flags", "-read_intervals", "%+3",
                            "-show_packets", "-of", "compact", url], capture_output=True, text=True)
    for k, p in procs.items():
        _, err = p.communicate(timeout=20)
        if err.strip():
            print(f"{k} stderr: {err.decode(errors='replace')[-500:]}")
    check("codec_name=h264" in probe.stdout and "width=320" in probe.stdout, "ffprobe: sees H.264 320x240")
    check("codec_name=aac" in probe.stdout, "ffprobe: sees AAC")
    npk = probe.stdout.count("packet|")
    check(npk >= 50, f"ffprobe: read {npk} packets in 3 s")

    for name, path in out.items():
        check_same_packets(name, path, source_tags, min_video=100, min_audio=150)

    dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", out["ffmpeg"], "-f", "null", "-"],
                         capture_output=True, text=True, timeout=60)
    check(dec.returncode == 0 and dec.stderr.strip() == "", "ffmpeg player's capture decodes without errors")
    check(server.alive(), "server still running")
finally:
    stop_proc(pub)
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
log = server.log_text()
check("event=publish app=live stream=cam" in log, "log has the publish line")
check(log.count("event=play app=live stream=cam") >= 5, "log has a play line per player")
check("event=close" in log and "bytes_out=" in log, "log has close summaries")
print("PASS")
