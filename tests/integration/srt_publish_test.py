#!/usr/bin/python3
"""An SRT publisher feeds every output (docs/srt.md): ffmpeg sends an H.264/AAC MPEG-TS over SRT
(`#!::r=live/cam,m=publish`, -c copy, in real time); after 2.5 s, so that every player starts
from the GOP cache, these play it at once:
  - ffmpeg over RTMP and rtmpdump over RTMP (FLV captures), rtmp-probe over RTMP (payload MD5s),
  - curl over HTTP-FLV (/live/cam.flv),
  - ffmpeg over HLS (MPEG-TS variant, /live/cam/index.m3u8),
  - ffmpeg over SRT (`read:live/cam`).
How each capture is compared with the source (srt_tools.check_capture): the server turns the
publisher's Annex B access units into AVCC (FLV) or muxes them again (TS), so whole packets differ
by design; what must not differ is the coded picture data. So each access unit's slice NAL units
must be byte for byte a contiguous run of the source's (AUD/SPS/PPS/SEI left out), each raw AAC
frame equal to the source's in order, the decoded pictures (ffmpeg framemd5) a contiguous run of
the source's decoded pictures, the first frame an IDR, and timestamps must rise one frame at a
time. A server that dropped, reordered, duplicated or damaged a frame, lost the join keyframe or
bent the clock fails. rtmp-probe's payload MD5s (whole FLV bodies) must match rtmpdump's
capture, so both RTMP paths deliver identical bytes. The log shows the SRT publish and close."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import (TsSource, check_capture, contiguous_at, ffmpeg_publish, ffmpeg_read, flv_whole,  # noqa: E402
                       log_lines, make_ts_source, srt_close_line, srt_conns, srt_server)

require_tools("ffmpeg", "ffprobe", "rtmpdump", "curl")
t_start = time.time()
apps = "  live: { type: live, gop_cache: true, hls: { variant: mpegts, segment: 1s } }\n"
server, srt_port, hport = srt_server("srt-publish", apps=apps, http=True)
d = server.dir
src = make_ts_source(os.path.join(d, "src.ts"), seconds=40)
source = TsSource(src)
url = server.url("live/cam")
base = f"http://127.0.0.1:{hport}"
pub = ffmpeg_publish(d, src, srt_port, "#!::r=live/cam,m=publish")
try:
    check(wait_for(lambda: log_lines(server, "event=publish", "app=live", "stream=cam", "proto=srt"), 8),
          "the server logs the SRT publish (event=publish app=live stream=cam ... proto=srt)")
    time.sleep(2.5)  # the players join late: each must start on the cached keyframe
    check(pub.alive(), f"the SRT publisher is still sending ({pub.stderr()[-300:]!r})")
    out = {k: os.path.join(d, k) for k in ("rtmp-ffmpeg.flv", "rtmpdump.flv", "http-flv.flv", "hls.ts", "srt-ffmpeg.ts")}
    procs = {
        "rtmp-ffmpeg.flv": ["timeout", "-k", "2", "20", "ffmpeg", "-nostdin", "-loglevel", "error", "-i", url,
                            "-map", "0", "-c", "copy", "-t", "6", "-f", "flv", out["rtmp-ffmpeg.flv"]],
        "rtmpdump.flv": ["timeout", "-k", "2", "7", "rtmpdump", "-q", "--live", "-r", url, "-o", out["rtmpdump.flv"]],
        "http-flv.flv": ["curl", "-s", "--max-time", "7", "-o", out["http-flv.flv"], f"{base}/live/cam.flv"],
        "hls.ts": ["timeout", "-k", "2", "25", "ffmpeg", "-nostdin", "-loglevel", "error", "-i",
                   f"{base}/live/cam/index.m3u8", "-map", "0", "-c", "copy", "-t", "6", "-f", "mpegts",
                   out["hls.ts"]],
    }
    running = {k: subprocess.Popen(v, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for k, v in procs.items()}
    srt_reader = ffmpeg_read(d, srt_port, "read:live/cam", out["srt-ffmpeg.ts"], 6)
    probe_lines = probe(url, "--duration", "6", timeout=15)
    errs = {}
    for k, p in running.items():
        errs[k] = p.communicate(timeout=40)[1].decode(errors="replace").strip()
    srt_reader.wait(30)
    check(srt_reader.proc.returncode == 0, f"ffmpeg read 6 s over SRT ({srt_reader.proc.returncode}: "
                                           f"{srt_reader.stderr()[-300:]!r})")
    check(running["rtmp-ffmpeg.flv"].returncode == 0, f"ffmpeg read 6 s over RTMP ({errs['rtmp-ffmpeg.flv'][-300:]!r})")
    check(running["hls.ts"].returncode == 0, f"ffmpeg read 6 s over HLS ({errs['hls.ts'][-300:]!r})")
    check(pub.alive(), f"the SRT publisher is still sending ({pub.stderr()[-300:]!r})")
finally:
    pub.stop()

conns = srt_conns(server, "live/cam", "publish")
check(len(conns) == 1, f"one SRT publisher connection was logged (event=srt_connect ... mode=publish: {conns})")
check(wait_for(lambda: srt_close_line(server, conns[0]), 8), "the publisher's SRT connection is logged closed")
close_line = srt_close_line(server, conns[0])
print("INFO " + close_line)
bytes_in = int(close_line.split("bytes_in=", 1)[1].split()[0])
check(bytes_in > 300_000, f"its close line counts the bytes it sent (bytes_in={bytes_in})")
check(len(srt_conns(server, "live/cam", "request")) == 1 and
      log_lines(server, "event=play", "app=live", "stream=cam", "proto=srt", "live=yes"),
      "the SRT reader was logged (event=srt_connect ... mode=request, event=play ... proto=srt live=yes)")

# Every capture against the source.
for name in ("rtmp-ffmpeg.flv", "rtmpdump.flv", "http-flv.flv", "hls.ts", "srt-ffmpeg.ts"):
    check_capture(name, out[name], source, min_video=120, min_audio=180)  # 6 s of each: 150 and 258

# rtmp-probe: sequence headers first, a keyframe first, and payloads identical to rtmpdump's.
videos = probe_events(probe_lines, "video")
audios = probe_events(probe_lines, "audio")
check(videos and videos[0][1]["seq"] == "1" and audios and audios[0][1]["seq"] == "1",
      "rtmp-probe: the AVC and AAC sequence headers come before any frame")
frames = [f for _, f, _ in videos if f["seq"] == "0"]
sounds = [f for _, f, _ in audios if f["seq"] == "0"]
check(len(frames) >= 120 and len(sounds) >= 200, f"rtmp-probe: {len(frames)} video and {len(sounds)} audio frames")
check(frames[0]["key"] == "1", "rtmp-probe: the first video frame is a keyframe")
vts = [int(f["ts"]) for f in frames]
check(all(39 <= b - a <= 41 for a, b in zip(vts, vts[1:])), "rtmp-probe: video timestamps rise by 40 ms each")
_, tags = flv_whole(open(out["rtmpdump.flv"], "rb").read())
dump_video = [hashlib.md5(body).hexdigest() for t, _, body in tags if t == 9 and len(body) > 1 and body[1] == 1]
probe_video = [f["md5"] for f in frames]
overlap = max(contiguous_at(probe_video[:100], dump_video), contiguous_at(dump_video[:100], probe_video))
check(overlap >= 0, "rtmp-probe's video payloads (whole FLV bodies) are the same bytes as rtmpdump's, in order")

check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
log = server.log_text()
check(log.count("event=play app=live stream=cam") >= 4, "log has a play line per RTMP and HTTP-FLV player")
check("AddressSanitizer" not in log, "no AddressSanitizer report in the server's log")
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
