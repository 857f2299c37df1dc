#!/usr/bin/python3
"""An SRT reader that joins late in a long GOP gets the GOP cache's backlog paced (docs/srt.md,
"Readers"; media/catch_up_pacer.hpp): the first 500 ms of media at once, the rest at twice real
time, then the live edge as it comes. libsrt sends what it is handed as fast as it may (1 Gb/s
per connection by default), so without the pacing a join put seconds of media on the wire in a
few ms, more than a player's UDP buffer holds: the overflow was lost and asked for again too late
(docs/benchmarks.md, "SRT against RTMP").

ffmpeg publishes over SRT an H.264/AAC MPEG-TS with a keyframe every 3 s; 2.7 s after the publish
a libsrt caller (ctypes, srt_tools.SrtCaller) reads the stream and notes when each message
arrives. Each message's time is its SRT source time (SRT_MSGCTRL.srctime): when the server handed
it to libsrt, which a busy test machine reading late cannot move (this process's own read times
bunched up under load). From each video PES's DTS and send time (media m ms after the first
picture, sent t ms after it):
  - the backlog is real: max(m - t) >= 2000 ms (otherwise the test would prove nothing);
  - paced: m <= 500 + 2 t + 250 for every picture (250 ms: one 4 KB fill of this 300 kb/s stream
    past the pace, a frame more, and the loop's timer granularity); an unpaced server sends the 3 s
    at once;
  - not held back: the reader reaches the live edge (m - t within 150 ms of the backlog; at 2x
    the lag shrinks by real time, so after backlog - 500 ms) no later than 600 ms after that, and
    from then on no picture goes out more than 500 ms behind the live edge (a busy machine may
    send a few late, which a rate over a short window took for a fault);
  - the first picture is an IDR and arrives within a second of the connect; the pictures are a
    contiguous run of the source's (slice MD5s)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from hls_tools import annexb_nals, ts_demux  # noqa: E402
from srt_tools import (FPS, SrtCaller, TsSource, contiguous_at, ffmpeg_publish, log_lines, make_ts_source,  # noqa: E402
                       slices_md5, srt_server)

require_tools("ffmpeg", "ffprobe")
t_start = time.time()
server, srt_port, _ = srt_server("srt-join-pace")
d = server.dir
src = make_ts_source(os.path.join(d, "src.ts"), seconds=20, gop=3 * FPS)
source = TsSource(src)


def pes_starts(msg):
    """[(dts 90 kHz, PES bytes so far)] of the video PES that start in this message."""
    out = []
    for off in range(0, len(msg) - 187, 188):
        p = msg[off:off + 188]
        if p[0] != 0x47 or not p[1] & 0x40:
            continue
        pos = 4 + (1 + p[4] if p[3] & 0x20 else 0)
        if p[pos:pos + 4] != b"\x00\x00\x01\xe0":
            continue
        flags, h = p[pos + 7], p[pos + 9:]
        ts = h[5:10] if flags & 0x40 else h[0:5]  # DTS when present, else PTS
        out.append((((ts[0] >> 1) & 7) << 30) | (ts[1] << 22) | ((ts[2] >> 1) << 15) | (ts[3] << 7) | (ts[4] >> 1))
    return out


pub = ffmpeg_publish(d, src, srt_port, "#!::r=live/cam,m=publish")
reader = None
try:
    check(wait_for(lambda: log_lines(server, "event=publish", "stream=cam", "proto=srt"), 8),
          "the server logs the SRT publish")
    # 2.7 s into the first 3-s GOP: about 2.5 s of backlog for the reader, under the queue's soft
    # limit (rtmp.player_queue.soft_delay, 3 s), past which the slow-player rule would drop frames
    # of a backlog however it is sent.
    time.sleep(2.7)
    t_connect = time.monotonic()
    reader = SrtCaller(srt_port, "read:live/cam")
    check(reader.connected, f"the reader connects ({reader.reject_text})")
    data, pictures = bytearray(), []  # pictures: (the server's send time s, dts)
    first_local = None
    while time.monotonic() - t_connect < 7.5:
        msg, srctime = reader.recv(1000)
        if msg is None:
            break
        if first_local is None:
            first_local = time.monotonic()
        pictures += [(srctime / 1e6, dts) for dts in pes_starts(msg)]
        data += msg
finally:
    if reader:
        reader.close()
    pub.stop()
check(len(pictures) > 5 * FPS, f"the reader got {len(pictures)} pictures in 7.5 s")
t0, dts0 = pictures[0]
check(first_local - t_connect < 1.0, f"the first picture arrives {first_local - t_connect:.2f} s after the connect")
points = [((t - t0) * 1000, ((dts - dts0) & ((1 << 33) - 1)) / 90) for t, dts in pictures]
backlog = max(m - t for t, m in points)
print(f"INFO backlog at the join {backlog:.0f} ms; first picture {1000 * (first_local - t_connect):.0f} ms after the "
      "connect")
check(backlog >= 2000, f"the join found a backlog of {backlog:.0f} ms (>= 2000 ms, else the test proves nothing)")
early = [(round(t), round(m)) for t, m in points if m > 500 + 2 * t + 250]
check(not early, f"every picture within the pace (media <= 500 ms + 2 x elapsed + 250): {early[:5]} are ahead")
caught = next((t for t, m in points if m - t >= backlog - 150), None)
check(caught is not None and caught <= backlog - 500 + 600,
      f"the reader is at the live edge {caught} ms after its first picture (<= {backlog - 500 + 600:.0f})")
behind = [(round(t), round(backlog - (m - t))) for t, m in points if caught is not None and t >= caught
          and m - t < backlog - 500]
check(caught is not None and not behind and points[-1][0] - caught >= 2000,
      f"from the live edge on (2 s and more of it) no picture is sent more than 500 ms behind it: {behind[:5]}")

dm = ts_demux(bytes(data[:len(data) - len(data) % 188]))
got = [slices_md5(annexb_nals(au["data"])) for au in dm["video"][:-1]]
check(got and got[0][1], "the first picture is an IDR")
check(contiguous_at([h for h, _ in got], source.video) >= 0,
      f"the {len(got)} pictures are a contiguous run of the source's")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
