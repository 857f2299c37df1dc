#!/usr/bin/python3
"""WHIP ingest from GStreamer's webrtcbin (docs/webrtc.md, "Publishing"): webrtc_whip_gst.py
publishes H.264 (x264, constrained baseline, 25 fps, a keyframe a second) and Opus (a 440 Hz
sine) over WHIP; ffmpeg plays it over RTMP and the checks are on what it recorded:
  - the server logs ice_connected, dtls_connected and the publish (proto=webrtc);
  - video: H.264 320x240, the frames decode without an error, one every 40 ms (FLV timestamps
    step by 40 ms, within 1 ms: the RTP clock's 90 kHz made milliseconds), about 25 per second
    of the recording; the first is a keyframe;
  - audio: the Opus was made AAC (48 kHz), decodes without an error, its frames step by 1024
    samples (21-22 ms), and the decoded tone is 440 Hz;
  - TS-HLS of the same stream (ffmpeg reads index.m3u8 for 4 s while the RTMP player records):
    H.264 320x240 and AAC 48 kHz, decodes without an error, a video frame every 40 ms (3600 at
    90 kHz) with none missing, audio stepping by 1024 samples (1920 at 90 kHz on average, each
    step within the 1 ms of the hub's millisecond stamps);
  - the client's DELETE ends the publication (publish_end in the log).

libnice (webrtcbin's ICE) never offers loopback addresses, and the project's tests keep their
traffic on 127.0.0.1 or in namespaces they make: so the test runs in a network namespace of its
own (unshare --net, as root), with lo and a veth pair whose one end has 10.99.0.1, where the
server's WebRTC port listens; RTMP and HTTP stay on 127.0.0.1 in it."""
import json
import os
import struct
import subprocess
import sys
import time

if os.environ.get("SLUICE_WHIP_NETNS") != "1":
    os.environ["SLUICE_WHIP_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "--net", "--", sys.executable, os.path.abspath(__file__)] + sys.argv[1:])

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe", "ip", "gst-launch-1.0")
for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
            ["ip", "addr", "add", "10.99.0.1/24", "dev", "v0"], ["ip", "link", "set", "v0", "up"],
            ["ip", "link", "set", "v1", "up"]):
    subprocess.run(cmd, check=True)
t_start = time.time()
hport = free_port()
server = Server("webrtc-whip", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                          "webrtc:\n  listen: 10.99.0.1:8189\nworkers: 1\n",
                apps="  live: { type: live, gop_cache: true, hls: { variant: mpegts, segment: 1s } }\n").start()
check(wait_port(hport), "the HTTP listener is up")
gst = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "webrtc_whip_gst.py"),
                        f"http://127.0.0.1:{hport}/live/gst/whip", "14"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
rec = os.path.join(server.dir, "rtmp.flv")
hls_rec = os.path.join(server.dir, "hls.ts")
try:
    check(wait_for(lambda: "event=publish app=live stream=gst proto=webrtc" in server.log_text(), 10),
          "the WHIP publish is logged (event=publish ... proto=webrtc)")
    log = server.log_text()
    check("event=ice_connected" in log and "event=dtls_connected" in log, "ICE and DTLS connected (log)")
    time.sleep(1.5)
    hls = subprocess.Popen(["timeout", "25", "ffmpeg", "-nostdin", "-loglevel", "error", "-rw_timeout", "10000000",
                            "-i", f"http://127.0.0.1:{hport}/live/gst/index.m3u8", "-map", "0", "-c", "copy", "-t", "4",
                            "-f", "mpegts", "-y", hls_rec])
    subprocess.run(["timeout", "20", "ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url("live/gst"),
                    "-map", "0", "-c", "copy", "-t", "6", "-f", "flv", "-y", rec], check=False, timeout=30)
    hls.wait(timeout=30)
finally:
    out, err = gst.communicate(timeout=30)
lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
print("gstreamer: " + json.dumps(lines)[:600], flush=True)
check(any(line.get("status") == 201 for line in lines), "the WHIP offer was answered 201")
check(wait_for(lambda: "event=publish_end stream=live/gst" in server.log_text(), 5),
      "the client's DELETE ends the publication (publish_end)")

tags = flv_tag_bodies(rec)
video = [(ts, body) for t, ts, body in tags if t == 9 and len(body) > 5 and body[1] == 1]
audio = [(ts, body) for t, ts, body in tags if t == 8 and len(body) > 2 and body[1] == 1]
check(len(video) >= 5 * 25, f"{len(video)} video frames in 6 s of recording (about 25 per second)")
check((video[0][1][0] >> 4) == 1, "the first video frame is a keyframe")
steps = [b[0] - a[0] for a, b in zip(video, video[1:])]
check(all(39 <= s <= 41 for s in steps), f"video timestamps step by 40 ms (steps seen: {sorted(set(steps))})")
asteps = [b[0] - a[0] for a, b in zip(audio, audio[1:])]
check(len(audio) >= 5 * 46 and all(21 <= s <= 22 for s in asteps),
      f"{len(audio)} AAC frames stepping by 1024 samples at 48 kHz ({sorted(set(asteps))})")
probe_out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height,sample_rate",
                            "-of", "json", rec], capture_output=True, text=True).stdout
streams = json.loads(probe_out).get("streams", [])
check({"codec_name": "h264", "width": 320, "height": 240} in [{k: s.get(k) for k in ("codec_name", "width", "height")}
                                                              for s in streams], f"H.264 320x240 ({streams})")
check(any(s.get("codec_name") == "aac" and s.get("sample_rate") == "48000" for s in streams), "AAC at 48 kHz")
dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", rec, "-f", "null", "-"], capture_output=True, text=True)
check(dec.returncode == 0 and not dec.stderr.strip(), f"the recording decodes without an error {dec.stderr[-300:]!r}")
pcm = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", rec, "-vn", "-ac", "1", "-ar", "48000", "-f", "s16le",
                      "-"], capture_output=True).stdout
samples = struct.unpack(f"<{len(pcm) // 2}h", pcm[:len(pcm) // 2 * 2])[48000:96000]


def power(freq):
    import math
    s_prev = s_prev2 = 0.0
    coeff = 2 * math.cos(2 * math.pi * freq / 48000)
    for x in samples:
        s = x + coeff * s_prev - s_prev2
        s_prev2, s_prev = s_prev, s
    return s_prev2 ** 2 + s_prev ** 2 - coeff * s_prev * s_prev2


p440, p880, p220 = power(440), power(880), power(220)
check(len(samples) == 48000 and p440 > 100 * max(p880, p220), "the decoded audio is the 440 Hz tone")

# TS-HLS of the WHIP stream.
packets = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries",
                                     "packet=codec_type,pts:stream=codec_name,width,height,sample_rate", "-of", "json",
                                     hls_rec], capture_output=True, text=True).stdout or "{}")
hstreams = packets.get("streams", [])
check(any(s.get("codec_name") == "h264" and s.get("width") == 320 for s in hstreams)
      and any(s.get("codec_name") == "aac" and s.get("sample_rate") == "48000" for s in hstreams),
      f"HLS: H.264 320x240 and AAC 48 kHz ({hstreams})")
vpts = sorted(p["pts"] for p in packets.get("packets", []) if p.get("codec_type") == "video" and "pts" in p)
apts = sorted(p["pts"] for p in packets.get("packets", []) if p.get("codec_type") == "audio" and "pts" in p)
vsteps = sorted(set(b - a for a, b in zip(vpts, vpts[1:])))
check(len(vpts) >= int(3.5 * 25) and all(3510 <= s <= 3690 for s in vsteps),
      f"HLS: {len(vpts)} video frames, one every 40 ms with none missing (steps at 90 kHz: {vsteps[:6]})")
asteps = sorted(set(b - a for a, b in zip(apts, apts[1:])))
# 1024 samples at 48 kHz is 1920 at 90 kHz; the hub's millisecond stamps move a step by 1 ms at most.
amean = (apts[-1] - apts[0]) / max(1, len(apts) - 1)
check(len(apts) >= int(3.5 * 46) and all(1820 <= s <= 2020 for s in asteps) and abs(amean - 1920) < 10,
      f"HLS: {len(apts)} AAC frames stepping by 1024 samples (steps at 90 kHz: {asteps[:6]}, mean {amean:.1f})")
hdec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", hls_rec, "-f", "null", "-"], capture_output=True,
                      text=True)
check(hdec.returncode == 0 and not hdec.stderr.strip(), f"HLS: decodes without an error {hdec.stderr[-300:]!r}")
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
