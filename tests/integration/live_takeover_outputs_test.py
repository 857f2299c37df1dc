#!/usr/bin/python3
"""A takeover as the outputs that are not players see it (docs/live.md, "A second publisher of the
same name"): GStreamer's rtmp2sink takes a name over from ffmpeg A, stopped with SIGSTOP, in an app
with HLS (MPEG-TS, from the publish) and recording (record: all).

- HLS: ffmpeg reading the live playlist keeps reading across the takeover; its capture has A's
  pictures (320x240) and then rtmp2sink's (352x288) and decodes without an error; the playlist
  carries exactly one EXT-X-DISCONTINUITY, where rtmp2sink's segments begin.
- Recording: A's file is finished (ffprobe reads it, onMetaData has a keyframe index, its packets are
  a run of A's source) and rtmp2sink's publication is a new file, valid the same way; no .part is left."""
import glob
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from record_tools import check_recording  # noqa: E402

require_tools("ffmpeg", "ffprobe", "gst-launch-1.0")

hport = free_port()
tmp = workdir("takeover-outputs")
rec = os.path.join(tmp, "rec")
apps = (f"  live: {{ type: live, hls: {{ variant: mpegts, segment: 1s, on_demand: false }}, "
        f"record: {{ mode: all, dir: {rec} }} }}\n")
server = Server("takeover-outputs", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n", apps=apps).start()
check(wait_port(hport), "HTTP listener is up")
src = make_media(os.path.join(tmp, "a.flv"), seconds=30)
url = server.url("live/t")
playlist_url = f"http://127.0.0.1:{hport}/live/t/index.m3u8"

pub_a = publish_ffmpeg(src, url)
check(wait_for(lambda: subprocess.run(["curl", "-s", "-f", "-o", os.devnull, playlist_url]).returncode == 0, 10),
      "A's HLS playlist is served")
hls_out = os.path.join(tmp, "hls.ts")
# Every packet written as it comes: the reader is stopped at the end (an HLS input has no end while
# the stream may come back), and what its output buffer held would be lost.
reader = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", playlist_url, "-c", "copy",
                           "-flush_packets", "1", "-f", "mpegts", hls_out], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
time.sleep(3)
pub_a.send_signal(signal.SIGSTOP)
time.sleep(0.5)
gst = ("videotestsrc is-live=true pattern=ball ! video/x-raw,width=352,height=288,framerate=25/1 ! "
       "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=25 bitrate=300 ! h264parse ! "
       "flvmux name=mux streamable=true ! rtmp2sink location=" + url + " "
       "audiotestsrc is-live=true freq=660 ! audioconvert ! avenc_aac ! aacparse ! mux.")
pub_b = subprocess.Popen(["gst-launch-1.0", "-q", "-e"] + gst.split(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
playlists = []
end = time.time() + 8
while time.time() < end:
    try:
        with urllib.request.urlopen(playlist_url, timeout=2) as r:
            playlists.append(r.read().decode())
    except OSError:
        pass
    time.sleep(0.3)
check(pub_b.poll() is None, "rtmp2sink is publishing")
check(reader.poll() is None, "the HLS reader is still reading across the takeover")
pub_b.send_signal(signal.SIGINT)  # -e: an end of stream, then rtmp2sink unpublishes
pub_b.wait(timeout=15)
time.sleep(4)  # the reader, a few segments behind the live edge, reads to the end
stop_proc(reader)
pub_a.send_signal(signal.SIGCONT)
pub_a.wait(timeout=20)

# HLS: one discontinuity, where the new publisher's segments begin.
open(os.path.join(tmp, "playlists.txt"), "w").write("\n=====\n".join(playlists))
counts = [pl.count("#EXT-X-DISCONTINUITY\n") for pl in playlists]
check(max(counts) == 1, f"the playlists carry one EXT-X-DISCONTINUITY at most ({sorted(set(counts))})")
check(1 in counts, "a playlist lists the discontinuity")
sizes = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "frame=width,height",
                        "-of", "csv=p=0", hls_out], capture_output=True, text=True, timeout=120).stdout.split()
runs = []
for size in (x.strip(",") for x in sizes):
    if not runs or runs[-1][0] != size:
        runs.append([size, 0])
    runs[-1][1] += 1
check([r[0] for r in runs] == ["320,240", "352,288"], f"HLS: A's pictures, then the new publisher's ({runs})")
check(all(n >= 25 for _, n in runs), f"HLS: a second of each at least ({runs})")
# -enc_time_base -1: the frames keep the input's 90 kHz times. By default ffmpeg times them in
# 1/frame-rate units, estimated from the timestamps; a step at the takeover that is not a whole
# frame (the new publisher's audio came first and its video follows at its own offset) made the
# estimate 24.9 fps, and after some 250 frames two frames rounded to one unit: a complaint of
# ffmpeg's muxer about its own rounding, not of the decoder.
dec = subprocess.run(["ffmpeg", "-v", "error", "-i", hls_out, "-enc_time_base", "-1", "-f", "null", "-"],
                     capture_output=True, text=True, timeout=120)
check(dec.returncode == 0 and not dec.stderr.strip(), f"HLS: the capture decodes without an error {dec.stderr[-300:]!r}")

# Recording: A's file finished, the new publisher's in a new file.
check(wait_for(lambda: not glob.glob(os.path.join(rec, "live", "*.part")), 10), "no .part left")
files = sorted(glob.glob(os.path.join(rec, "live", "t-*.flv")))
check(len(files) == 2, f"two recordings: A's and the new publisher's ({files})")
a_tags = check_recording("A's recording", files[0], flv_tags(src), exact=False)
check(contiguous_in(media_runs(a_tags)[9], media_runs(flv_tags(src))[9]) >= 0, "A's recording holds a run of A's video")
check_recording("the new publisher's recording", files[1], [], exact=False)
check("replaced by a new publisher" in server.log_text(), "the takeover is logged")
check(server.alive(), "server still running")
check(server.stop() == 0, "server exits 0")
print("PASS")
