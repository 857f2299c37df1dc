#!/usr/bin/python3
"""Stream health in the API and /metrics (docs/http.md, "Stream health"): ffmpeg publishes testsrc2
1280x720 at 30 fps with a keyframe every 60 frames (2 s) at 2 Mb/s (CBR through x264's VBV) and
AAC; a player reads it over RTMP and stamps each message's arrival. After 13 s of publishing:
  - /api/v1/streams/live/cam's health: video fps 30 +- 0.5, keyframe interval (last and mean)
    2.0 +- 0.05 s, the video bit rate over 10 s within 5 % of what the player got in the same 10 s
    (the sizes of the video messages that arrived in it; the issue's method sums ffprobe's
    packets: the same packets, and their payloads differ from the messages' by the 5-byte tag
    header, 0.06 % at this rate), and within 5 % of the sizes of the last 10 s of media time;
    audio present at about 46.9 frames a second (48 kHz AAC); both tracks' idle time under 1 s;
    the metadata's claims shown beside (ffmpeg's onMetaData says framerate 30);
  - /metrics: sluice_stream_fps{stream="live/cam",track="video"} is 30 +- 0.5 and
    sluice_stream_keyframe_interval_seconds 2 +- 0.05;
  - the publisher killed: 2 s later the video's idle time is 1.5 s or more, its fps 0, and the
    stream's publish_starts is 1; a second publisher of the name makes it 2."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg")
t_start = time.time()
hport = free_port()
# One worker loop: publish_starts counts the publications the stream's entry on a loop saw, and
# with two loops the second publisher may land on the loop whose entry went with the first.
server = Server("stream-health", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\nworkers: 1\n").start()
check(wait_port(hport), "the HTTP listener is up")


def api(path):
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{hport}{path}", timeout=10).read())


def metrics():
    text = urllib.request.urlopen(f"http://127.0.0.1:{hport}/metrics", timeout=10).read().decode()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def ffmpeg_publisher():
    return subprocess.Popen(
        ["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-c:v", "libx264", "-preset", "ultrafast",
         "-tune", "zerolatency", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0", "-b:v", "2M", "-minrate",
         "2M", "-maxrate", "2M", "-bufsize", "500k", "-x264-params", "nal-hrd=cbr", "-c:a", "aac", "-b:a", "96k",
         "-f", "flv", server.url("live/cam")])


publisher = ffmpeg_publisher()
check(wait_for(lambda: "event=publish app=live stream=cam" in server.log_text(), 10), "ffmpeg publishes live/cam")
player = RtmpClient(server.port)
player.connect("live")
player.create_stream()
player.play("cam")
arrivals = []  # (monotonic seconds, type, timestamp, size)
stop = threading.Event()


def read():
    seen = 0
    while not stop.is_set() and not player.closed:
        player.read_some(0.05)
        now = time.monotonic()
        for m in player.messages[seen:]:
            arrivals.append((now, m.type, m.timestamp, len(m.payload)))
        seen = len(player.messages)


reader = threading.Thread(target=read, daemon=True)
reader.start()
time.sleep(13)
t_query = time.monotonic()
stream = api("/api/v1/streams/live/cam")
m = metrics()
h = stream.get("health") or {}
video, audio = h.get("video") or {}, h.get("audio") or {}
print("health: " + json.dumps(h), flush=True)
check(abs(video.get("fps", 0) - 30) <= 0.5, f"video fps 30 +- 0.5 ({video.get('fps')})")
ki = video.get("keyframe_interval") or {}
check(abs(ki.get("last_s", 0) - 2) <= 0.05 and abs(ki.get("mean_s", 0) - 2) <= 0.05,
      f"keyframe interval 2.0 +- 0.05 s ({ki})")
# What the player got in the server's 10 s window (by arrival), and the last 10 s of media time.
got = [(t, ts, n) for t, typ, ts, n in arrivals if typ == 9 and t <= t_query]
by_arrival = sum(n for t, ts, n in got if t > t_query - 10) * 8 / 10 / 1000
last_ts = max(ts for t, ts, n in got)
by_media = sum(n for t, ts, n in got if ts > last_ts - 10000) * 8 / 10 / 1000
kbps = video.get("kbps_10s", 0)
check(abs(kbps - by_arrival) <= 0.05 * by_arrival,
      f"video kbit/s over 10 s within 5 % of what arrived at a player in them ({kbps} against {by_arrival:.1f})")
check(abs(kbps - by_media) <= 0.05 * by_media,
      f"... and of the last 10 s of media time ({kbps} against {by_media:.1f})")
check(1900 <= kbps <= 2200, f"... which is the encoder's 2 Mb/s ({kbps})")
check(abs(audio.get("fps", 0) - 48000 / 1024) <= 0.5, f"audio: {audio.get('fps')} AAC frames a second (46.9)")
check(video.get("idle_ms", 9999) < 1000 and audio.get("idle_ms", 9999) < 1000,
      f"idle time under 1 s ({video.get('idle_ms')}, {audio.get('idle_ms')})")
check(h.get("claimed", {}).get("fps") == 30, f"the metadata's claim beside it ({h.get('claimed')})")
check(h.get("publish_starts") == 1 and h.get("timestamp_jumps") == 0 and video.get("timestamps_back") == 0,
      f"one publication, no jump, no timestamp back ({h.get('publish_starts')}, {h.get('timestamp_jumps')})")
check(h.get("av_drift_ms") is not None and abs(h["av_drift_ms"]) < 200, f"A/V drift is small ({h.get('av_drift_ms')})")
fps_series = m.get('sluice_stream_fps{stream="live/cam",track="video"}', 0)
ki_series = m.get('sluice_stream_keyframe_interval_seconds{stream="live/cam",track="video"}', 0)
check(abs(fps_series - 30) <= 0.5 and abs(ki_series - 2) <= 0.05,
      f"/metrics: sluice_stream_fps {fps_series}, sluice_stream_keyframe_interval_seconds {ki_series}")

stop_proc(publisher)
time.sleep(2)
h = api("/api/v1/streams/live/cam").get("health") or {}
v = h.get("video") or {}
check(v.get("idle_ms", 0) >= 1500 and v.get("fps") == 0,
      f"the publisher gone: the video's idle time grows ({v.get('idle_ms')} ms) and its fps is 0 ({v.get('fps')})")
publisher = ffmpeg_publisher()
check(wait_for(lambda: (api("/api/v1/streams/live/cam").get("health") or {}).get("publish_starts") == 2, 10),
      "a second publisher: publish_starts 2")
stop_proc(publisher)
stop.set()
reader.join(timeout=5)
player.close()
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
