#!/usr/bin/python3
"""WHEP playback in a browser (docs/webrtc.md): ffmpeg publishes an H.264/AAC stream over RTMP;
headless Chromium plays it with a plain RTCPeerConnection (webrtc_whep_browser.js: a recvonly
video and audio offer POSTed to /live/cam/whep, the answer set, getStats() sampled for 10 s):
  - the offer is answered (201) and ICE, DTLS and SRTP connect (connectionState "connected"; the
    server logs ice_connected and dtls_connected with the SRTP profile);
  - video: the first frame is decoded within 3 s of the page's start, then at least 24 frames
    per second on average over the 10 s (the source has 25), with no freeze (freezeCount 0), at
    the source's width, as H264; the first frame the browser decoded was a keyframe;
  - audio: the stream's AAC arrives as Opus (the AAC -> Opus bridge), samples received rise with
    time (about 48 000 per second) and little is concealed;
  - DELETE of the resource is 200 and the server logs the session's close.
Two worker loops, each with its own UDP port: the session lives on whichever loop took the
HTTP request."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import free_udp_port  # noqa: E402

require_tools("ffmpeg", "node", "chromium")
t_start = time.time()
BUILD_DIR = os.environ.get("SLUICE_BUILD_DIR", "")
node_modules = os.path.join(BUILD_DIR, "web", "node_modules")
if not os.path.isfile(os.path.join(node_modules, "playwright-core", "package.json")):
    fail(f"playwright-core is not installed in {node_modules} (the build's npm ci installs it with SLUICE_TESTS=ON)")
hport, uport = free_port(), free_udp_port(2)  # two loops: two ports
server = Server("webrtc-whep", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                          f"webrtc:\n  listen: 127.0.0.1:{uport}\nworkers: 2\n").start()
check(wait_port(hport), "the HTTP listener is up")
WIDTH = 640
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30, size=f"{WIDTH}x360", vbitrate="800k")
pub = publish_ffmpeg(src, server.url("live/cam"), loop=True)
try:
    check(wait_for(lambda: "event=publish" in server.log_text(), 10), "ffmpeg publishes live/cam over RTMP")
    time.sleep(1.0)
    cmd = ["timeout", "-k", "5", "60", "node", os.path.join(os.path.dirname(__file__), "webrtc_whep_browser.js"),
           f"http://127.0.0.1:{hport}", "live/cam", node_modules, shutil.which("chromium"), "10"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=75)
finally:
    stop_proc(pub)
lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
if not lines:
    fail(f"the browser script printed no result (rc {out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
r = json.loads(lines[-1])
print("browser: " + json.dumps({k: v for k, v in r.items() if k != "samples"}), flush=True)
print("browser samples: " + json.dumps(r.get("samples")), flush=True)
check("fatal" not in r, f"the browser script ran {r.get('fatal', '')}")
check(r.get("status") == 201, f"the WHEP offer is answered: 201 ({r.get('status')} {r.get('body', '')[:300]})")
check(r.get("connectionState") == "connected",
      f"ICE and DTLS connect ({r.get('connectionState')} after {r.get('connectedAfterMs', 0):.0f} ms)")
log = server.log_text()
check("event=ice_connected" in log and "event=dtls_connected" in log and "SRTP_" in log,
      "the server logs ice_connected and dtls_connected with the SRTP profile")
samples = r.get("samples") or []
check(r.get("firstFrameMs") is not None and r["firstFrameMs"] < 3000,
      f"the first frame is decoded within 3 s of the page's start ({r.get('firstFrameMs')} ms)")
check(len(samples) >= 10, f"10 s of samples ({len(samples)})")
first, last = samples[0], samples[-1]
span = last["t"] - first["t"]
fps = (last.get("framesDecoded", 0) - first.get("framesDecoded", 0)) / max(span, 0.001)
check(fps >= 24, f"video decodes at {fps:.1f} frames per second over {span:.1f} s (>= 24; the source has 25)")
# A freeze says whose it was: the presented frames' gaps of 150 ms or more ([ms since the start,
# ms since the last presented frame, ms between their arrivals, ms of media]) and the server's
# longest wait between two pictures sent in the first 3 s (its close line's start_gap_ms).
close = re.search(r"event=webrtc_close .*?( start_ms=\d+ start_gap_ms=\d+)", server.log_text()) if wait_for(
    lambda: "event=webrtc_close" in server.log_text(), 3) else None
print(f"INFO presented-frame gaps {r.get('gaps')}; the server's start:{close.group(1) if close else ' -'}", flush=True)
check(last.get("freezes", 1) == 0, f"no freeze (freezeCount {last.get('freezes')})")
check(last.get("width") == WIDTH and last.get("videoCodec") == "video/H264",
      f"H.264 at the source's width ({last.get('videoCodec')}, {last.get('width')})")
check(last.get("keyFramesDecoded", 0) >= 1, "a keyframe was decoded (the GOP-cache start)")
audio = (last.get("audioSamples", 0) - first.get("audioSamples", 0)) / max(span, 0.001)
check(last.get("audioCodec") == "audio/opus" and audio > 40000,
      f"audio arrives as Opus, {audio:.0f} samples per second (the AAC -> Opus bridge)")
concealed = last.get("concealed", 0) / max(last.get("audioSamples", 1), 1)
check(concealed < 0.1, f"little audio concealed ({100 * concealed:.1f} %)")
check(r.get("deleteStatus") == 200, f"DELETE of the resource: 200 ({r.get('deleteStatus')})")
check(wait_for(lambda: "event=webrtc_close" in server.log_text(), 3), "the server logs the session's close")
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
