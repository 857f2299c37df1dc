#!/usr/bin/python3
"""Hostile SRT publishers (docs/srt.md, "How an SRT publisher's stream is read"), each sent by
srt-live-transmit from its stdin (`srt-live-transmit file://con srt://...?streamid=publish:...`)
while a legitimate RTMP publisher and player run:

Input that must end the connection with a log line (event=srt_bad_input ... reason="bad MPEG-TS:
...", then event=srt_close with that reason; counted as srt_bad_input in /metrics), after which
srt-live-transmit, still being fed, prints "SRT target disconnected" and ends:
  1. random bytes (no sync byte where a packet should start);
  2. the first 200 KB of a real stream, then random bytes (sync lost mid-stream);
  3. an adaptation field longer than its packet;
  4. one video PES that never ends (PES_packet_length 0, no next payload_unit_start) past the
     4 MiB access unit bound: 5 MiB in all.
Input that is transport stream but absurd, which the server must survive without growing:
  5. PES lengths that lie: 65535 for a 170-byte PES, 1 (shorter than its header), a header
     length past the packet, an ADTS frame_length of 8191 in a 100-byte PES, a PES without PTS;
  6. PSI loops: a PAT whose program map is the PAT's own PID 0, a PMT that lists its own PID, PID 0
     and the null PID as elementary streams, two PMTs flipping the video/audio PIDs every packet;
  7. 253 programs in the PAT, a multi-packet PMT of 200 streams, then PES packets on 10 000
     PIDs (every PID the 13 bits allow, and again).
Throughout: the server stays alive, its RSS (ASan with a 4 MB quarantine) grows by less than 48 MB,
and the legitimate RTMP player's capture is byte-exact (check_same_packets). At the end a new RTMP
publisher and player work, and a real SRT publisher still reaches an RTMP player."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from hls_tools import mpeg_crc32  # noqa: E402
from srt_tools import (ffmpeg_publish, log_lines, make_ts_source, slt_send_bytes, srt_close_line,  # noqa: E402
                       srt_conns, srt_server)

require_tools("ffmpeg", "srt-live-transmit")
t_start = time.time()


# ------------------------------------------------------------------------------------ TS building

class Ts:
    """MPEG-TS packets with the right continuity counter per PID."""

    def __init__(self):
        self.cc = {}

    def packet(self, pid, payload, pusi=False, af=None):
        """One 188-byte packet; a short payload is padded with adaptation field stuffing. `af`
        forces raw adaptation field bytes (length byte included)."""
        cc = self.cc.get(pid, -1) + 1 & 15
        self.cc[pid] = cc
        if af is None and len(payload) < 184:
            n = 183 - len(payload)
            af = bytes([n]) + (bytes([0]) + b"\xff" * (n - 1) if n else b"")
        afc = 0x30 if af is not None else 0x10
        head = bytes([0x47, (0x40 if pusi else 0) | (pid >> 8) & 0x1F, pid & 0xFF, afc | cc])
        return (head + (af or b"") + payload)[:188].ljust(188, b"\xff")

    def psi(self, pid, section):
        data = b"\x00" + section
        out = b""
        for i in range(0, len(data), 184):
            out += self.packet(pid, data[i:i + 184], pusi=(i == 0))
        return out

    def pes(self, pid, stream_id, data, pts=90000, length=None, header=None):
        """A PES split into packets; `length` overrides PES_packet_length, `header` the optional
        header (flags + header length + fields)."""
        if header is None:
            header = b"\x80\x80\x05" + pts_bytes(pts)
        if length is None:
            length = 0 if stream_id == 0xE0 else min(0xFFFF, len(header) + len(data))
        pes = b"\x00\x00\x01" + bytes([stream_id]) + length.to_bytes(2, "big") + header + data
        out = b""
        for i in range(0, len(pes), 184):
            out += self.packet(pid, pes[i:i + 184], pusi=(i == 0))
        return out


def pts_bytes(pts):
    return bytes([0x21 | ((pts >> 29) & 0x0E), (pts >> 22) & 0xFF, 0x01 | ((pts >> 14) & 0xFE), (pts >> 7) & 0xFF,
                  0x01 | ((pts << 1) & 0xFE)])


def section(table_id, ext, body):
    length = 5 + len(body) + 4
    sec = bytes([table_id, 0xB0 | (length >> 8), length & 0xFF, ext >> 8, ext & 0xFF, 0xC1, 0, 0]) + body
    return sec + mpeg_crc32(sec).to_bytes(4, "big")


def pat(programs):
    return section(0, 1, b"".join(n.to_bytes(2, "big") + (0xE000 | pid).to_bytes(2, "big") for n, pid in programs))


def pmt(program, pcr_pid, streams):
    body = (0xE000 | pcr_pid).to_bytes(2, "big") + b"\xf0\x00"
    body += b"".join(bytes([st]) + (0xE000 | pid).to_bytes(2, "big") + b"\xf0\x00" for st, pid in streams)
    return section(2, program, body)


def chunks_of(data, size=1316 * 8):
    """The data padded with null packets to whole SRT messages (srt-live-transmit drops a last
    partial one), in pieces for its stdin."""
    while len(data) % 1316:
        data += b"\x47\x1f\xff\x10" + b"\xff" * 184
    return [data[i:i + size] for i in range(0, len(data), size)]


def garbage(n):
    return bytes(b if b != 0x47 else 0x46 for b in os.urandom(n))


# ------------------------------------------------------------------------------------ the cases

def case_garbage():
    return garbage(188 * 7 * 400)


def case_sync_lost(src_ts):
    real = open(src_ts, "rb").read()[:188 * 1064]  # about 200 KB, whole packets
    return real + garbage(188 * 7 * 300)


def case_adaptation_overrun():
    ts = Ts()
    out = ts.psi(0, pat([(1, 0x100)])) + ts.psi(0x100, pmt(1, 0x101, [(0x1B, 0x101)]))
    out += ts.pes(0x101, 0xE0, os.urandom(500))
    out += ts.packet(0x101, os.urandom(100), af=bytes([250]) + b"\x00" * 83)  # says 250 bytes, the packet has 183
    return out + garbage(188 * 7 * 300)


def case_endless_pes():
    ts = Ts()
    out = bytearray(ts.psi(0, pat([(1, 0x100)])) + ts.psi(0x100, pmt(1, 0x101, [(0x1B, 0x101), (0x0F, 0x102)])))
    out += ts.pes(0x101, 0xE0, b"\x00\x00\x00\x01\x09\xf0" + b"\x00\x00\x00\x01\x65" + os.urandom(150))
    filler = os.urandom(184)
    for _ in range((5 << 20) // 184):
        out += ts.packet(0x101, filler)
    return bytes(out)


def case_lying_pes():
    ts = Ts()
    out = bytearray()
    for i in range(300):
        if i % 20 == 0:
            out += ts.psi(0, pat([(1, 0x100)])) + ts.psi(0x100, pmt(1, 0x101, [(0x1B, 0x101), (0x0F, 0x102)]))
        pts = 90000 + i * 3600
        out += ts.pes(0x102, 0xC0, os.urandom(170), pts=pts, length=0xFFFF)           # claims 64 KiB
        out += ts.pes(0x102, 0xC0, os.urandom(50), pts=pts, length=1)                 # shorter than its header
        out += ts.pes(0x101, 0xE0, os.urandom(100), header=b"\x80\x80\xff" + pts_bytes(pts))  # header past it all
        adts = bytes([0xFF, 0xF1, 0x50, 0x80 | 0x03, 0xFF, 0xFC, 0x00])                # frame_length 8191
        out += ts.pes(0x102, 0xC0, adts + os.urandom(93), pts=pts)
        out += ts.pes(0x101, 0xE0, b"\x00\x00\x00\x01\x65" + os.urandom(300), header=b"\x80\x00\x00")  # no PTS
        out += ts.pes(0x101, 0xE0, b"\x00\x00\x00\x01\x65" + os.urandom(300), pts=pts)
    return bytes(out)


def case_psi_loops():
    ts = Ts()
    out = bytearray()
    for i in range(400):
        out += ts.psi(0, pat([(1, 0x100), (2, 0x0000)]))
        if i % 2:
            out += ts.psi(0x100, pmt(1, 0x100, [(0x1B, 0x100), (0x0F, 0x0000), (0x1B, 0x1FFF), (0x0F, 0x100)]))
        else:
            out += ts.psi(0x100, pmt(1, 0x101, [(0x1B, 0x101), (0x0F, 0x101), (0x1B, 0x102)]))
        pts = 90000 + i * 3600
        out += ts.pes(0x100, 0xE0, b"\x00\x00\x00\x01\x65" + os.urandom(200), pts=pts)
        out += ts.pes(0x101, 0xE0, b"\x00\x00\x00\x01\x67" + os.urandom(200), pts=pts)
        out += ts.pes(0x0000, 0xC0, os.urandom(100), pts=pts)  # a PES on the PAT's PID
    return bytes(out)


def case_many_pids():
    ts = Ts()
    out = bytearray(ts.psi(0, pat([(n, 0x20 + n) for n in range(1, 254)])))
    out += ts.psi(0x21, pmt(1, 0x400, [(0x1B if k % 2 else 0x0F, 0x400 + k) for k in range(200)]))
    for n in range(2, 254):
        out += ts.psi(0x20 + n, pmt(n, 0x1000 + n, [(0x1B, 0x1000 + n), (0x0F, 0x1100 + n)]))
    pids = [p for p in range(0x20, 0x1FFF) if p not in range(0x21, 0x20 + 254)]
    for i in range(10000):
        pid = pids[i % len(pids)]
        out += ts.pes(pid, 0xE0 if pid & 1 else 0xC0, os.urandom(160), pts=90000 + i)
    return bytes(out)


# ------------------------------------------------------------------------------------ the test

server, srt_port, hport = srt_server("srt-hostile", apps="  live: { type: live, gop_cache: true }\n", http=True,
                                     env=SMALL_QUARANTINE)
d = server.dir
flv = make_media(os.path.join(d, "legit.flv"), seconds=60)
source_tags = flv_tags(flv)
legit_url = server.url("live/legit")
legit_pub = publish_ffmpeg(flv, legit_url)
time.sleep(1.5)
legit_out = os.path.join(d, "legit-player.flv")
legit_player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", legit_url, "-map", "0", "-c", "copy",
                                 "-f", "flv", legit_out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
ts_src = make_ts_source(os.path.join(d, "src.ts"), seconds=12)
time.sleep(1.0)
rss0 = server.rss_kb()
bad0 = guard_events(hport).get("srt_bad_input", 0)

# Each with where the demuxer must find the fault: the packet index in its reason, or for the
# endless PES the bytes it took before refusing (the bound is 4 MiB of PES, in 184-byte payloads).
MIB4 = 4 << 20
dropping = [("garbage", case_garbage(), "packet 0:", None),
            ("sync-lost", case_sync_lost(ts_src), "packet 1064:", None),  # just past the real stream's packets
            ("af-overrun", case_adaptation_overrun(), "packet 5:", None),
            ("endless-pes", case_endless_pes(), f"longer than {MIB4} bytes", (MIB4, MIB4 * 188 // 184 + 4 * 1316))]
surviving = [("lying-pes", case_lying_pes()), ("psi-loops", case_psi_loops()), ("many-pids", case_many_pids())]
try:
    for name, data, where, taken in dropping:
        # About 2.5 MB/s: 8 SRT messages every 4 ms at most, whatever the Python overhead.
        chunks = chunks_of(data)
        c = slt_send_bytes(d, srt_port, f"publish:live/{name}", chunks, pace_s=0.004, name=f"slt-{name}")
        conns = srt_conns(server, f"live/{name}", "publish")
        check(len(conns) == 1, f"{name}: srt-live-transmit connected as a publisher ({conns})")
        check(wait_for(lambda: srt_close_line(server, conns[0]), 5), f"{name}: the server closed the connection")
        line = srt_close_line(server, conns[0])
        check('reason="bad MPEG-TS' in line and where in line, f"{name}: it was closed for bad input, at {where!r} ({line})")
        if taken:
            bytes_in = int(line.split("bytes_in=", 1)[1].split()[0])
            check(taken[0] < bytes_in < taken[1], f"{name}: refused as the PES passed 4 MiB (bytes_in={bytes_in})")
        check(log_lines(server, f"conn={conns[0]} ", "event=srt_bad_input", f'stream="{name}"', "bad MPEG-TS"),
              f"{name}: the log has event=srt_bad_input for it")
        # The sender is cut off with input left, unless the fault is at the end of its input
        # (sync-lost: under load it may have written its last bytes before the close arrived).
        if name != "sync-lost":
            check(c.ended_early and "SRT target disconnected" in c.stderr(),
                  f"{name}: srt-live-transmit saw the connection close while it still had input "
                  f"({c.bytes_written} of {sum(map(len, chunks))} bytes written; {c.stderr().strip()[-150:]!r})")
        check(server.alive(), f"{name}: the server is alive")
    check(guard_events(hport).get("srt_bad_input", 0) - bad0 == len(dropping),
          "/metrics counts each dropped publisher (sluice_guard_events_total{event=\"srt_bad_input\"})")

    for name, data in surviving:
        c = slt_send_bytes(d, srt_port, f"publish:live/{name}", chunks_of(data), pace_s=0.004, name=f"slt-{name}")
        conns = srt_conns(server, f"live/{name}", "publish")
        check(len(conns) == 1, f"{name}: srt-live-transmit published {len(data)} bytes")
        check(server.alive(), f"{name}: the server is alive")
        close = wait_for(lambda: srt_close_line(server, conns[0]), 8) and srt_close_line(server, conns[0])
        check(bool(close), f"{name}: the connection is closed once the sender left ({close})")
        print(f"INFO {name}: {close}")
    rss1 = server.rss_kb()
    check(rss1 - rss0 < 48 * 1024, f"RSS grew by {(rss1 - rss0) // 1024} MB over the hostile publishers (< 48 MB)")
    check(legit_pub.poll() is None, "the legitimate RTMP publisher is still publishing")
    check(legit_player.poll() is None, "the legitimate RTMP player is still playing")
finally:
    stop_proc(legit_player)
    stop_proc(legit_pub)
check_same_packets("legitimate RTMP player", legit_out, source_tags, min_video=100, min_audio=150)

check_new_stream_works(server, flv, "live/after-rtmp")
pub = ffmpeg_publish(d, ts_src, srt_port, "publish:live/after-srt", loop=False)
time.sleep(1.5)
lines = probe(server.url("live/after-srt"), "--duration", "2", timeout=10)
got = [f for _, f, _ in probe_events(lines, "video") if f["seq"] == "0"]
pub.stop()
check(len(got) >= 30 and got[0]["key"] == "1", f"a real SRT publisher still reaches an RTMP player ({len(got)} frames)")

check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
check("AddressSanitizer" not in server.log_text(), "no AddressSanitizer report in the server's log")
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
