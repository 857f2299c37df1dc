#!/usr/bin/python3
"""srt:// relays (docs/relays.md, "SRT targets and upstreams"): Sluice as an SRT caller.

Two servers. ffmpeg publishes an H.264/AAC MPEG-TS over SRT to B (live/cam). B's app `live` has a
push target srt://A?streamid=publish:live/{stream}: A gets the stream over SRT. B's app `edge`
pulls srt://A?streamid=read:live/{stream} on demand: a player of edge/cam on B gets A's stream, so
the frames went source -> B (SRT in) -> A (SRT push out, SRT in) -> B (SRT read, SRT pull in) ->
an RTMP player. Each RTMP capture (on A, and of B's pull) is checked against the source as every
SRT test checks its captures (srt_tools.check_capture: slice NAL units and raw AAC frames a
contiguous run of the source's, decoded pictures likewise, the first an IDR, timestamps one frame
at a time). A third target points at an app of A that needs a key it does not send: its state
says the SRT reject reason (1401) and it keeps retrying, while the other target stays live. The
relays API shows srt:// URLs without their stream ids (which may hold keys)."""
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import TsSource, check_capture, ffmpeg_publish, log_lines, make_ts_source, srt_server  # noqa: E402

require_tools("ffmpeg", "ffprobe")
t_start = time.time()
apps_a = ("  live: { type: live, gop_cache: true }\n"
          "  keyed: { type: live, gop_cache: true, publish: { keys: [k1] } }\n")
a, a_srt, _ = srt_server("srt-relay-a", apps=apps_a)
apps_b = ("  live:\n    type: live\n    gop_cache: true\n    push:\n"
          f"      - url: \"srt://127.0.0.1:{a_srt}?streamid=publish:live/{{stream}}\"\n"
          f"      - url: \"srt://127.0.0.1:{a_srt}?streamid=publish:keyed/{{stream}}&latency=300\"\n"
          "  edge:\n    type: live\n    gop_cache: true\n"
          f"    pull: {{ upstreams: [\"srt://127.0.0.1:{a_srt}?streamid=read:live/{{stream}}\"] }}\n")
b, b_srt, b_http = srt_server("srt-relay-b", apps=apps_b, http=True)
src = make_ts_source(os.path.join(b.dir, "src.ts"), seconds=40)
source = TsSource(src)
pub = ffmpeg_publish(b.dir, src, b_srt, "publish:live/cam")
try:
    check(wait_for(lambda: log_lines(a, "event=publish", "app=live", "stream=cam", "proto=srt"), 10),
          "B's srt:// push target published live/cam on A (A logs an SRT publish)")
    time.sleep(2.5)  # the players join late, from the GOP cache
    out_a = os.path.join(a.dir, "pushed.flv")
    out_b = os.path.join(b.dir, "pulled.flv")
    ffmpeg = ["timeout", "-k", "2", "25", "ffmpeg", "-nostdin", "-loglevel", "error"]
    cap_a = subprocess.Popen(ffmpeg + ["-i", a.url("live/cam"), "-map", "0", "-c", "copy", "-t", "6", "-f", "flv",
                                       out_a], stderr=subprocess.PIPE)
    cap_b = subprocess.Popen(ffmpeg + ["-i", b.url("edge/cam"), "-map", "0", "-c", "copy", "-t", "6", "-f", "flv",
                                       out_b], stderr=subprocess.PIPE)
    err_a = cap_a.communicate(timeout=40)[1].decode(errors="replace")
    err_b = cap_b.communicate(timeout=40)[1].decode(errors="replace")
    check(cap_a.returncode == 0, f"an RTMP player on A read 6 s of the pushed stream ({err_a[-300:]!r})")
    check(cap_b.returncode == 0, f"an RTMP player of B's edge/cam read 6 s of the pulled stream ({err_b[-300:]!r})")
    relays = json.load(urllib.request.urlopen(f"http://127.0.0.1:{b_http}/api/v1/relays", timeout=5))
    check(pub.alive(), f"the SRT publisher is still sending ({pub.stderr()[-300:]!r})")
finally:
    pub.stop()

check_capture("pushed to A over SRT", out_a, source, min_video=140, min_audio=210)
check_capture("pulled from A over SRT", out_b, source, min_video=140, min_audio=210)

pushes = {r["id"]: r for r in relays["push"]}
print("INFO push targets: " + json.dumps(pushes))
ok_target, keyed_target = pushes.get("live#0"), pushes.get("live#1")
check(ok_target is not None and ok_target["state"] == "live" and ok_target["bytes_out"] > 100_000,
      f"the srt:// target is live and has sent the stream ({ok_target})")
check(ok_target["url"] == f"srt://127.0.0.1:{a_srt}", "the API shows the srt:// URL without its stream id")
check(keyed_target is not None and keyed_target["state"] in ("waiting", "connecting") and
      "1401" in keyed_target["last_error"] and keyed_target["connects"] >= 2,
      f"the target refused for its missing key says SRT's reject reason and retries ({keyed_target})")
pulls = relays["pull"]
check(any(p.get("stream") == "edge/cam" and str(p.get("upstream", p.get("url", ""))).startswith("srt://")
          for p in pulls), f"the API lists the srt:// pull of edge/cam ({pulls})")
check(log_lines(a, "event=srt_rejected", "code=1401"), "A logged the keyed target's refusal with code 1401")

for s in (a, b):
    check(s.alive(), f"{s.dir}: server still running")
rc_a, rc_b = a.stop(), b.stop()
check(rc_a == 0 and rc_b == 0, f"both servers exit 0 on SIGTERM ({rc_a}, {rc_b})")
for s in (a, b):
    check("AddressSanitizer" not in s.log_text(), "no AddressSanitizer report in the server's log")
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
