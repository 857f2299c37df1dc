#!/usr/bin/python3
"""Stream alerts (docs/configuration.md, "Stream alerts") on a server with two loops, told to a real
HTTP hook server, the log, GET /api/v1/alerts and /metrics. apps.live.alerts: keyframe_interval 4s,
no_media 3s, fps_below 20 for 3s, bitrate_below_kbps 100 for 3s.
  - live/cam: ffmpeg publishes testsrc2 1280x720 at 30 fps with a keyframe every 300 frames (10 s):
    keyframe_interval is raised about 4 s after the first keyframe, once, with its figure; nothing
    else is. A second ffmpeg takes the name over with -g 60: the alert is cleared once a 2 s
    interval has been measured (value 2.0), not because a publisher left. That one killed:
    no_media raised after 3 s; a third publisher: no_media cleared.
  - live/slow (10 fps) raises fps_below, live/thin (about 40 kbit/s) raises bitrate_below; each
    once, and neither raises the other's alert.
Every hook body names its app, stream, alert, state, value, threshold and unit."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
hook = HookRecorder()
hport = free_port()
apps = ("  live:\n    type: live\n    alerts:\n      keyframe_interval: 4s\n      no_media: 3s\n"
        "      fps_below: 20\n      fps_for: 3s\n      bitrate_below_kbps: 100\n      bitrate_for: 3s\n")
server = Server("stream-alerts", apps=apps, extra_yaml=(
    f"http:\n  listen: 127.0.0.1:{hport}\nworkers: 2\nhooks:\n  on_stream_alert: {hook.url}/alert\n")).start()
check(wait_port(hport), "the HTTP listener is up")


def api(path):
    return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{hport}{path}", timeout=10).read())


def metric(name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{hport}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def publish(name, gop, size="1280x720", rate=30, bitrate="2M", audio=True):
    cmd = ["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate={rate}"]
    if audio:
        cmd += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-c:a", "aac", "-b:a", "64k"]
    cmd += ["-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", str(gop), "-keyint_min", str(gop),
            "-sc_threshold", "0", "-b:v", bitrate, "-maxrate", bitrate, "-bufsize", bitrate, "-f", "flv",
            server.url(f"live/{name}")]
    return subprocess.Popen(cmd)


def alerts(stream, alert=None, state=None):
    return [b for b in hook.bodies("alert", stream)
            if (alert is None or b["alert"] == alert) and (state is None or b["state"] == state)]


def body_ok(b, alert, state, unit):
    return (b["action"] == "stream_alert" and b["app"] == "live" and b["alert"] == alert and b["state"] == state
            and b["unit"] == unit and isinstance(b["value"], (int, float)) and isinstance(b["threshold"], (int, float))
            and b.get("server_id"))


# The long GOP, with the two other streams beside.
cam = publish("cam", 300)
t_cam = time.time()
slow = publish("slow", 20, size="640x360", rate=10, bitrate="500k")
thin = publish("thin", 60, size="160x120", rate=30, bitrate="40k", audio=False)
check(wait_for(lambda: alerts("cam", "keyframe_interval", "raised"), 12), "live/cam: keyframe_interval raised")
raised_after = time.time() - t_cam
b = alerts("cam", "keyframe_interval", "raised")[0]
print(f"keyframe_interval raised {raised_after:.1f} s after the publish: {b}")
check(body_ok(b, "keyframe_interval", "raised", "s") and b["threshold"] == 4 and b["value"] > 4
      and "raised_unix_ms" in b, "... with its figure (over 4 s) and threshold (4 s)")
check(3.5 < raised_after < 9, f"... about 4 s after the first keyframe ({raised_after:.1f} s after the publish)")
check(re.search(r"event=stream_alert state=raised alert=keyframe_interval stream=live/cam value=\S+ threshold=4\.00",
                server.log_text()), "... and in the log")
active = api("/api/v1/alerts")["alerts"]
check(any(a["stream"] == "live/cam" and a["alert"] == "keyframe_interval" for a in active),
      f"GET /api/v1/alerts lists it ({active})")
check(metric('sluice_stream_alerts_active{alert="keyframe_interval"}') == 1, "/metrics counts it as active")

check(wait_for(lambda: alerts("slow", "fps_below", "raised"), 15), "live/slow (10 fps): fps_below raised")
b = alerts("slow", "fps_below", "raised")[0]
check(body_ok(b, "fps_below", "raised", "fps") and b["threshold"] == 20 and 8 < b["value"] < 12,
      f"... at about 10 fps ({b})")
check(wait_for(lambda: alerts("thin", "bitrate_below", "raised"), 20), "live/thin: bitrate_below raised")
b = alerts("thin", "bitrate_below", "raised")[0]
check(body_ok(b, "bitrate_below", "raised", "kbps") and b["threshold"] == 100 and b["value"] < 100,
      f"... under 100 kbit/s ({b})")

# A second keyframe of the long GOP (10 s) is measured, then an encoder with a 2 s GOP takes over.
time.sleep(max(0.0, t_cam + 11.5 - time.time()))
check(len(alerts("cam", "keyframe_interval")) == 1, "raised once, not again, while the long GOP goes on")
cam2 = publish("cam", 60)
t_takeover = time.time()
check(wait_for(lambda: alerts("cam", "keyframe_interval", "cleared"), 12),
      "the encoder with a 2 s GOP clears keyframe_interval")
b = alerts("cam", "keyframe_interval", "cleared")[0]
print(f"cleared {time.time() - t_takeover:.1f} s after the takeover: {b}")
check(body_ok(b, "keyframe_interval", "cleared", "s") and abs(b["value"] - 2.0) < 0.1 and "reason" not in b,
      "... by a measured 2.0 s interval, not by a publisher leaving")
stop_proc(cam)
check(cam.wait(timeout=10) is not None, "the first encoder is gone")

# The encoder dies: no media.
time.sleep(1)
cam2.send_signal(signal.SIGKILL)
cam2.wait()
t_kill = time.time()
check(wait_for(lambda: alerts("cam", "no_media", "raised"), 8), "the encoder killed: no_media raised")
print(f"no_media raised {time.time() - t_kill:.1f} s after the kill")
b = alerts("cam", "no_media", "raised")[0]
check(body_ok(b, "no_media", "raised", "s") and b["value"] >= 3 and b["threshold"] == 3, f"... after 3 s ({b})")
cam3 = publish("cam", 60)
check(wait_for(lambda: alerts("cam", "no_media", "cleared"), 10), "a new publisher clears no_media")
check(not alerts("cam", "no_media", "cleared")[0].get("reason"), "... by its media")

# Each raised once and cleared at most once; no alert a stream's figures do not call for.
for stream, expected in (("cam", {"keyframe_interval", "no_media"}), ("slow", {"fps_below"}),
                         ("thin", {"bitrate_below"})):
    got = alerts(stream)
    kinds = {b["alert"] for b in got}
    check(kinds == expected, f"live/{stream}: only {sorted(expected)} ({sorted(kinds)})")
    for kind in kinds:
        states = [b["state"] for b in got if b["alert"] == kind]
        check(states.count("raised") == 1 and states.count("cleared") <= 1 and states[0] == "raised",
              f"live/{stream} {kind}: raised once, cleared at most once ({states})")
check(metric('sluice_stream_alerts_raised_total{alert="keyframe_interval"}') == 1 and
      metric('sluice_stream_alerts_raised_total{alert="no_media"}') == 1, "/metrics counts the raises")
for p in (cam3, slow, thin):
    stop_proc(p)
check(server.stop() == 0, "the server exits cleanly")
print("stream_alerts_test: OK")
