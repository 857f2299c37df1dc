#!/usr/bin/python3
"""GStreamer's rtmp2sink as a second, independent publisher implementation: players receive its
stream, starting on a keyframe, and it decodes.

flvmux waits up to 500 ms for the other stream (its `latency`; 0 by default): in live mode it
otherwise times out on the audio when the machine is loaded, writes the video, and then stamps
the late AAC frames with the video's time (two at 880 ms, two at 920 ms in a capture of a failed
run: ffmpeg's decode then reports non-monotonic DTS). The server passes a source's stamps on as
they come (no timestamp jump was logged), so the source must make them right."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("gst-launch-1.0", "ffmpeg")
server = Server("gst-publisher").start()
url = server.url("live/gst")
pipeline = ("videotestsrc is-live=true ! video/x-raw,width=320,height=240,framerate=25/1 ! "
            "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=25 bitrate=300 ! h264parse ! "
            "flvmux name=mux streamable=true latency=500000000 ! rtmp2sink location=" + url + " "
            "audiotestsrc is-live=true ! audioconvert ! avenc_aac ! aacparse ! mux.")
pub = subprocess.Popen(["gst-launch-1.0", "-q"] + pipeline.split(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
try:
    time.sleep(3)
    check(pub.poll() is None, "rtmp2sink is publishing")
    lines = probe(url, "--duration", "3")
    videos = [v for v in probe_events(lines, "video") if v[1]["seq"] == "0"]
    audios = [a for a in probe_events(lines, "audio") if a[1]["seq"] == "0"]
    check(len(videos) >= 50, f"player received rtmp2sink's video ({len(videos)} packets)")
    check(len(audios) >= 50, f"player received rtmp2sink's audio ({len(audios)} packets)")
    check(videos[0][1]["key"] == "1", "first video packet is a keyframe")
    out = os.path.join(server.dir, "gst.flv")
    cap = subprocess.run(["timeout", "-k", "2", "10", "ffmpeg", "-nostdin", "-loglevel", "error", "-i", url, "-c", "copy",
                          "-t", "3", "-f", "flv", out], capture_output=True, text=True)
    check(cap.returncode == 0, f"ffmpeg captured 3 s of the GStreamer stream ({cap.returncode}: {cap.stderr[-300:]!r})")
    dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", out, "-f", "null", "-"], capture_output=True,
                         text=True)
    check(dec.returncode == 0 and dec.stderr.strip() == "",
          f"ffmpeg's capture of the GStreamer stream decodes ({dec.returncode}: {dec.stderr[-300:]!r})")
finally:
    stop_proc(pub)
    rc = server.stop()
check("event=publish app=live stream=gst" in server.log_text(), "log has rtmp2sink's publish")
check(rc == 0, "server exits 0")
print("PASS")
