#!/usr/bin/python3
"""An SRT reader that joins late in a long GOP gets the GOP cache's backlog paced (docs/srt.md,
"Readers"; media/catch_up_pacer.hpp): the first 500 ms of media at once, the rest at twice real
time, then the live edge as it comes. libsrt sends what it is handed as fast as it may (1 Gb/s
per connection by default), so without the pacing a join put seconds of media on the wire in a
few ms, more than a player's UDP buffer holds: the overflow was lost and asked for again too late
(docs/benchmarks.md, "SRT against RTMP").

ffmpeg sends an H.264/AAC MPEG-TS with a keyframe every 3 s in real time over UDP to this test,
which publishes it over SRT (srt_tools.SrtCaller) and notes when it handed each picture to libsrt:
the ingest time. Every AAC frame is a PES of its own (srt_tools.AUDIO_PES_PER_FRAME): ffmpeg's
default of 0.37 s of audio per PES makes -re send the video in bursts of that length too. 2.7 s
after the first picture went in a libsrt caller reads the stream and notes when each message was sent: its SRT
source time (SRT_MSGCTRL.srctime), when the server handed it to libsrt, which a busy test machine
reading late cannot move (this process's own read times bunched up under load). Each picture
(media m ms after the first, sent t ms after it) has a delay: its send time minus its ingest time,
less the least delay of all (the server's own); a picture whose delay is within 150 ms of the least
is at the live edge, sent as soon as it came. Then:
  - the backlog is real: the first picture's delay >= 2000 ms (otherwise the test proves nothing);
  - paced: m <= 500 + 2 t + 250 for every picture not at the live edge (250 ms: one 4 KB fill of
    this 300 kb/s stream past the pace, a frame more, and the loop's timer granularity); an unpaced
    server sends the backlog at once. A picture at the live edge may be ahead of that line: the
    publisher (ffmpeg, this test) may have been late and caught up, and the pacing ends at the live
    edge (a reader at 2x in such a run reached the edge 0.3 s early and the next burst went out at
    once, 307 ms past the line, when the line and the edge were taken from a smooth source);
  - not held back: the reader reaches the live edge (at 2x the lag shrinks by real time, so after
    backlog - 500 ms) no later than 600 ms after that, and from then on (2 s and more) no picture
    is more than 500 ms behind it (its delay; a publisher that was late moves ingest and send times
    alike, which a line drawn from the reader's own times took for the server);
  - the first picture is an IDR and arrives within a second of the connect; the pictures are a
    contiguous run of the source's (slice MD5s)."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from hls_tools import annexb_nals, ts_demux  # noqa: E402
from srt_tools import (AUDIO_PES_PER_FRAME, FFMPEG, FPS, Client, SrtCaller, TsSource, contiguous_at,  # noqa: E402
                       log_lines, make_ts_source, slices_md5, srt_server)

require_tools("ffmpeg", "ffprobe")
t_start = time.time()
server, srt_port, _ = srt_server("srt-join-pace")
d = server.dir
src = make_ts_source(os.path.join(d, "src.ts"), seconds=20, gop=3 * FPS, audio_pes_per_frame=True)
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


# ffmpeg -> UDP -> this test -> SRT: the test knows when each picture entered the server.
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
udp.settimeout(0.2)
udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
publisher = SrtCaller(srt_port, "#!::r=live/cam,m=publish")
check(publisher.connected, f"the publisher connects ({publisher.reject_text})")
ingest = []  # when this test handed each picture (in the file's order) to libsrt (µs, monotonic)
stopping = threading.Event()


def forward():
    while not stopping.is_set():
        try:
            msg = udp.recv(2048)
        except socket.timeout:
            continue
        now = time.monotonic_ns() // 1000
        ingest.extend(now for _ in pes_starts(msg))
        if not publisher.send(msg):
            return


forwarder = threading.Thread(target=forward, daemon=True)
forwarder.start()
pub = Client("ffmpeg-pub", FFMPEG + ["-re", "-i", src, "-map", "0", "-c", "copy", "-f", "mpegts"] +
             AUDIO_PES_PER_FRAME + [f"udp://127.0.0.1:{udp.getsockname()[1]}?pkt_size=1316"], d)
reader = None
try:
    check(wait_for(lambda: log_lines(server, "event=publish", "stream=cam", "proto=srt"), 8),
          "the server logs the SRT publish")
    # 2.7 s after the first picture went in (less about 0.4 s, SRT's latency on the way in and the
    # demuxer's frame, plus 0.2 s to the reader's first picture): about 2.5 s of backlog for the reader, under the queue's soft limit (rtmp.player_queue.soft_delay,
    # 3 s), past which the slow-player rule would drop frames of a backlog however it is sent.
    check(wait_for(lambda: ingest, 5), "the first picture is published")
    time.sleep(max(0.0, ingest[0] / 1e6 + 2.7 - time.monotonic()))
    t_connect = time.monotonic()
    reader = SrtCaller(srt_port, "read:live/cam")
    check(reader.connected, f"the reader connects ({reader.reject_text})")
    data, pictures = bytearray(), []  # pictures: (the server's send time µs, dts)
    first_local = None
    while time.monotonic() - t_connect < 7.5:
        msg, srctime = reader.recv(1000)
        if msg is None:
            break
        if first_local is None:
            first_local = time.monotonic()
        pictures += [(srctime, dts) for dts in pes_starts(msg)]
        data += msg
finally:
    if reader:
        reader.close()
    pub.stop()
    stopping.set()
    forwarder.join(timeout=5)
    publisher.close()
check(len(pictures) > 5 * FPS, f"the reader got {len(pictures)} pictures in 7.5 s")
t0, dts0 = pictures[0]
check(first_local - t_connect < 1.0, f"the first picture arrives {first_local - t_connect:.2f} s after the connect")
# The server's timeline is not the file's (it starts at 1000 ms): the pictures are matched by
# their slices, which also checks that they are a contiguous run of the source's.
dm = ts_demux(bytes(data[:len(data) - len(data) % 188]))
got = [slices_md5(annexb_nals(au["data"])) for au in dm["video"][:-1]]
check(got and got[0][1], "the first picture is an IDR")
start = contiguous_at([h for h, _ in got], source.video)
check(start >= 0, f"the {len(got)} pictures are a contiguous run of the source's")
pictures = pictures[:len(got)]
check(start + len(pictures) <= len(ingest), "the test published each of them")
delays = [(t - ingest[start + i]) / 1000 for i, (t, _) in enumerate(pictures)]
least = min(delays)
points = [((t - t0) / 1000, ((dts - dts0) & ((1 << 33) - 1)) / 90, delay - least)
          for (t, dts), delay in zip(pictures, delays)]
backlog = points[0][2]
print(f"INFO backlog at the join {backlog:.0f} ms; first picture {1000 * (first_local - t_connect):.0f} ms after the "
      f"connect; the server's least delay {least:.0f} ms")
check(backlog >= 2000, f"the join found a backlog of {backlog:.0f} ms (>= 2000 ms, else the test proves nothing)")
EDGE = 150
early = [(round(t), round(m)) for t, m, behind in points if m > 500 + 2 * t + 250 and behind > EDGE]
if early:
    print("INFO the first pictures (t, m, behind):", [(round(t), round(m), round(b)) for t, m, b in points[:40]])
check(not early, f"every picture not at the live edge is within the pace (media <= 500 ms + 2 x elapsed + 250): "
      f"{early[:5]} are ahead")
caught = next((t for t, m, behind in points if behind <= EDGE), None)
check(caught is not None and caught <= backlog - 500 + 600,
      f"the reader is at the live edge {caught} ms after its first picture (<= {backlog - 500 + 600:.0f})")
behind = [(round(t), round(b)) for t, m, b in points if caught is not None and t >= caught and b > 500]
check(caught is not None and not behind and points[-1][0] - caught >= 2000,
      f"from the live edge on (2 s and more of it) no picture is sent more than 500 ms behind it: {behind[:5]}")

server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
