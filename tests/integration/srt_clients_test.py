#!/usr/bin/python3
"""Other SRT implementations than ffmpeg's, on a server with a passphrase (AES-128): every client
must be given it, so this also proves the encrypted path end to end.

Publishers, at the same time:
  - srt-live-transmit (libsrt's own sample application), `publish:live/slt`, fed by
    `ffmpeg -re ... -f mpegts - | srt-live-transmit file://con srt://...` (ffmpeg only paces
    the source's TS packets into the pipe);
  - GStreamer's srtsink, `#!::r=live/gst,m=publish`, behind GStreamer's own mpegtsmux (the
    source's frames demuxed and muxed again: another TS muxer, whose first PAT/PMT packets are
    sent twice with one continuity counter, which a demuxer must take as duplicates).
Readers of each stream: ffmpeg over RTMP (FLV), srt-live-transmit (`read:live/...` and bare
`live/...`) and GStreamer's srtsrc (`#!::r=live/...` and `#!::r=...,m=request`). The two SRT
readers write the bytes exactly as received, so the server's own MPEG-TS is checked directly: PAT
and PMT before any PES, continuity counters and CRCs right, then the content checks of
srt_tools.check_capture (slice bytes and AAC frames a contiguous run of the source's, decoded
pictures a contiguous run of the source's, an IDR first, timestamps one frame apart)."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import (PASSPHRASE, TsSource, check_capture, gst_publish, gst_read, log_lines,  # noqa: E402
                       make_ts_source, slt_publish, slt_read, srt_conns, srt_server)

require_tools("ffmpeg", "ffprobe", "srt-live-transmit", "gst-launch-1.0")
t_start = time.time()
server, srt_port, _ = srt_server("srt-clients", srt_extra=f'  passphrase: "{PASSPHRASE}"\n')
check("encrypted=yes" in log_lines(server, "event=srt_listening")[0], "the SRT listener says it encrypts")
d = server.dir
src = make_ts_source(os.path.join(d, "src.ts"), seconds=30)
source = TsSource(src)
pubs = {"slt": slt_publish(d, src, srt_port, "publish:live/slt", passphrase=PASSPHRASE),
        "gst": gst_publish(d, src, srt_port, "#!::r=live/gst,m=publish", passphrase=PASSPHRASE)}
readers = []
try:
    for name in pubs:
        check(wait_for(lambda: log_lines(server, "event=publish", "app=live", f"stream={name} ", "proto=srt"), 8),
              f"{name}: the server logs the SRT publish of live/{name}")
    time.sleep(2.5)  # the readers join late: they must start on the cached keyframe
    for name, p in pubs.items():
        check(p.alive(), f"{name}: the publisher is still sending ({p.stderr()[-300:]!r})")
    out = {}
    for name in pubs:
        out[f"{name}-rtmp.flv"] = os.path.join(d, f"{name}-rtmp.flv")
        readers.append(subprocess.Popen(
            ["timeout", "-k", "2", "20", "ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url(f"live/{name}"),
             "-map", "0", "-c", "copy", "-t", "6", "-f", "flv", out[f"{name}-rtmp.flv"]],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    ids = {"slt": ("read:live/slt", "#!::r=live/slt"), "gst": ("live/gst", "#!::r=live/gst,m=request")}
    srt_readers = []
    for name, (slt_id, gst_id) in ids.items():
        out[f"{name}-slt.ts"] = os.path.join(d, f"{name}-slt.ts")
        out[f"{name}-gst.ts"] = os.path.join(d, f"{name}-gst.ts")
        srt_readers.append(slt_read(d, srt_port, slt_id, out[f"{name}-slt.ts"], 6, passphrase=PASSPHRASE,
                                    name=f"{name}-slt-read"))
        srt_readers.append(gst_read(d, srt_port, gst_id, out[f"{name}-gst.ts"], 6, passphrase=PASSPHRASE,
                                    name=f"{name}-gst-read"))
    for r in readers:
        r.wait(timeout=30)
    for r in srt_readers:
        r.wait(20)
        print(f"INFO {r.name}: exit {r.proc.returncode}, stderr {r.stderr().strip()[-200:]!r}")
        r.stop()
    for name, p in pubs.items():
        check(p.alive(), f"{name}: the publisher sent throughout ({p.stderr()[-300:]!r})")
finally:
    for p in pubs.values():
        p.stop()
    for r in readers:
        if r.poll() is None:
            r.kill()

for name in pubs:
    check_capture(f"{name} -> ffmpeg RTMP", out[f"{name}-rtmp.flv"], source, min_video=120, min_audio=180)
    check_capture(f"{name} -> srt-live-transmit", out[f"{name}-slt.ts"], source, min_video=120, min_audio=180,
                  server_ts=True)
    check_capture(f"{name} -> GStreamer srtsrc", out[f"{name}-gst.ts"], source, min_video=120, min_audio=180,
                  server_ts=True)
check(len(srt_conns(server, "live/slt", "request")) == 2 and len(srt_conns(server, "live/gst", "request")) == 2,
      "each stream had its two SRT readers (event=srt_connect ... mode=request)")
check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
check("AddressSanitizer" not in server.log_text(), "no AddressSanitizer report in the server's log")
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
