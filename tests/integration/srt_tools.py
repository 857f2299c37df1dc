"""Helpers the SRT integration tests share (docs/srt.md): an MPEG-TS source, SRT publishers and
readers driven through real clients (ffmpeg, srt-live-transmit, GStreamer), a libsrt caller
through ctypes that reports the exact reject reason, and the content checks every player's capture
must pass.

What the clients need (ffmpeg 5.1, srt-live-transmit 1.5.1, GStreamer 1.22, checked against a
plain libsrt listener):
  - ffmpeg passes `streamid=` of an srt:// URL to libsrt as it is (no percent-decoding), so the
    `#!::r=...,m=...` form works raw in the URL, but a `&` would end it; the `-srt_streamid`
    option (not `-streamid`, which is ffmpeg's own output option) takes any text: we use it.
    ffmpeg's `latency` is in microseconds.
  - srt-live-transmit 1.5.1 has no -streamid option: it reads `streamid=` and `passphrase=` from
    its URI's query, also raw; `latency` there is in milliseconds. `-a:no` stops it from
    reconnecting for ever. Its stdin (file://con) must be a pipe (a regular file: "Failed to add
    FILE source to poll"); it is read in whole chunks (`-chunk:1316`: 7 TS packets a message, a
    last partial chunk is dropped); what it reads before it is connected is dropped; at the end of
    its input it stays connected, idle, until a signal.
  - What each prints when refused (libsrt 1.5.1 logs the reject on stderr; no client shows the
    code, SrtCaller below reads it): ffmpeg `... REJECT reported from HS processing:
    Application-defined rejection reason - not processing further` then `Connection to srt://...
    failed: Input/output error` (exit 1); srt-live-transmit the same libsrt line (exit 0);
    GStreamer `Error on SRT socket: Application-defined rejection reason` (exit 1). A passphrase
    refusal reads `Incorrect passphrase` or `Password required or unexpected` instead.
  - GStreamer's srtsrc/srtsink take `streamid=` and `passphrase=` properties; gst-launch needs the
    `#!::` form quoted (its `!` links elements); `auto-reconnect=false` makes a refusal an error
    instead of a retry loop.

How a capture is compared with its source (the same for every player, whatever the container):
  - video, exact: each access unit's slice NAL units (types 1 and 5), without start codes or
    length prefixes, and without the AUD, SPS, PPS and SEI units a muxer may add, move or drop,
    hashed; the player's access units must be a contiguous run of the source's. An FLV player's
    AVCC frames and a TS reader's Annex B frames are compared with the publisher's bytes this way.
  - video, decoded: ffmpeg decodes the capture without printing an error, and each decoded
    picture's MD5 (framemd5) is a contiguous run of the source's decoded pictures.
  - audio, exact: the raw AAC frames (ADTS headers removed) are a contiguous run of the source's.
    Decoded audio is only required to decode without an error: ffmpeg's AAC decoder output for a
    frame depends on the frames before it (a cut of the source decodes to other samples than
    the whole source does), so decoded audio MD5s would not match after a join.
  - timestamps from the container (FLV tag ms or PES 90 kHz) rise by one video frame (40 ms) and
    by one AAC frame (1024 samples) at a time.
  - the first video access unit is a keyframe (IDR), as a player joining from the GOP cache needs.
The source is longer than any test publishes it, so the publisher's -stream_loop never wraps
during a test: ffmpeg's loop makes a timestamp jump (+57 ms video, a repeated audio timestamp)
that the timestamp checks would (rightly) report.
"""
import ctypes
import ctypes.util
import hashlib
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import (Server, check, fail, free_port, wait_for, wait_port)  # noqa: E402
from hls_tools import annexb_nals, avcc_nals, strip_adts, ts_demux  # noqa: E402

LATENCY_MS = 200
FFMPEG = ["ffmpeg", "-nostdin", "-loglevel", "error"]
FPS = 25
AAC_RATE = 44100
PASSPHRASE = "0123456789abc"
# ffmpeg's TS muxer gathers AAC frames into PES of about 2930 bytes (0.37 s at 64 kb/s), and -re
# then sends the video in bursts of that length too (its interleaving waits for the audio): the
# server's live edge moves in steps. With this, every AAC frame is a PES and the edge moves a frame
# at a time.
AUDIO_PES_PER_FRAME = ["-pes_payload_size", "0"]


# ------------------------------------------------------------------------------------ the server

def srt_server(name, apps=None, srt_extra="", http=False, extra_yaml="", env=None, workers=None):
    """A Server with `srt.listen` on a free UDP port (and HTTP when asked), started and listening
    for SRT. Returns (server, srt_port, http_port or None)."""
    srt_port = free_udp_port()
    http_port = free_port() if http else None
    yaml = f"srt:\n  listen: 127.0.0.1:{srt_port}\n  latency: {LATENCY_MS}ms\n{srt_extra}"
    if http:
        yaml += f"http:\n  listen: 127.0.0.1:{http_port}\n"
    if workers:
        yaml += f"workers: {workers}\n"
    server = Server(name, extra_yaml=yaml + extra_yaml, apps=apps, env=env).start()
    if not wait_for(lambda: "event=srt_listening" in server.log_text(), 10):
        server.stop()
        fail("the server did not log event=srt_listening; log:\n" + server.log_text()[-3000:])
    if http and not wait_port(http_port):
        fail("HTTP listener did not start")
    return server, srt_port, http_port


def free_udp_port(count=1):
    """A port free for both TCP and UDP on 127.0.0.1, and the count - 1 UDP ports after it (a
    WebRTC port per worker loop)."""
    for _ in range(50):
        port = free_port()
        socks = []
        try:
            for p in range(port, port + count):
                u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(u)
                u.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
        finally:
            for u in socks:
                u.close()
    fail("no free UDP port")


def log_lines(server, *words):
    """The server's log lines holding every one of words."""
    return [l for l in server.log_text().splitlines() if all(w in l for w in words)]


def srt_conns(server, stream, mode=None):
    """The connection ids of the SRT callers for `stream` (APP/NAME), in order, from their
    `event=srt_connect app=APP stream="NAME" mode=...` lines."""
    app, name = stream.split("/", 1)
    words = ["event=srt_connect", f"app={app} ", f'stream="{name}"'] + ([f"mode={mode}"] if mode else [])
    return [l.split("conn=", 1)[1].split()[0] for l in log_lines(server, *words) if "conn=" in l]


def srt_close_line(server, conn):
    """The `event=srt_close` line of connection `conn`, or None."""
    lines = log_lines(server, f"conn={conn} ", "event=srt_close")
    return lines[0] if lines else None


# ------------------------------------------------------------------------------------ the source

def make_ts_source(path, seconds=30, size="320x240", tone=440, pattern="testsrc2", vf=None, gop=FPS,
                   audio_pes_per_frame=False):
    """An H.264 (constrained baseline: no B-frames, so decode order is display order) + AAC MPEG-TS
    with a keyframe every second (-g 25, no scene cuts), made by one x264 thread so the encode is
    reproducible (`vf`: a filter, e.g. negate, for a second source with other pictures; testsrc2
    is the pattern whose every picture differs; `gop`: frames from one keyframe to the next). libx264 repeats SPS/PPS before every IDR (no global header in MPEG-TS) and
    ffmpeg's TS muxer puts an AUD before every access unit, as a hardware encoder does."""
    cmd = FFMPEG + ["-y", "-f", "lavfi", "-i", f"{pattern}=size={size}:rate={FPS}:duration={seconds}",
                    "-f", "lavfi", "-i", f"sine=frequency={tone}:sample_rate={AAC_RATE}:duration={seconds}"] + (
                       ["-vf", vf] if vf else []) + [
                    "-c:v", "libx264", "-profile:v", "baseline", "-preset", "ultrafast", "-threads", "1",
                    "-g", str(gop), "-keyint_min", str(gop), "-sc_threshold", "0", "-bf", "0",
                    "-b:v", "300k", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-f", "mpegts"] + (
                       AUDIO_PES_PER_FRAME if audio_pes_per_frame else []) + [path]
    subprocess.run(cmd, check=True, timeout=120)
    return path


def md5(b):
    return hashlib.md5(b).hexdigest()


def slices_md5(nals):
    """MD5 of an access unit's coded slices (NAL types 1 and 5), and whether it is an IDR."""
    slices = [n for n in nals if n and (n[0] & 0x1F) in (1, 5)]
    return md5(b"".join(slices)), any((n[0] & 0x1F) == 5 for n in slices)


def decoded(path, timeout=60):
    """(video frame MD5s, audio frame count, ffmpeg's stderr) of a file decoded by ffmpeg."""
    p = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-map", "0:a:0?",
                        "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", "-f", "framemd5", "-"],
                       capture_output=True, text=True, timeout=timeout)
    video, audio = [], 0
    for line in p.stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        parts = [x.strip() for x in line.split(",")]
        if parts[0] == "0":
            video.append(parts[5])
        elif parts[0] == "1":
            audio += 1
    return video, audio, (p.stderr.strip() if p.returncode == 0 else f"exit {p.returncode}: {p.stderr.strip()}")


class TsSource:
    """What a player's capture is compared with: the source's video slices, raw AAC frames and
    decoded pictures."""

    def __init__(self, path):
        self.path = path
        dm = ts_demux(open(path, "rb").read())
        if dm["errors"]:
            fail(f"the source {path} does not demux cleanly: {dm['errors'][:3]}")
        self.video = [slices_md5(annexb_nals(au["data"]))[0] for au in dm["video"]]
        self.audio = [md5(strip_adts(au["data"])[0]) for au in dm["audio"]]
        self.frames, _, err = decoded(path)
        if err or len(self.frames) != len(self.video):
            fail(f"the source {path} decodes to {len(self.frames)} pictures for {len(self.video)} access units ({err})")
        # A run could match twice (and prove less) if pictures repeated.
        if len(set(self.frames)) != len(self.frames) or len(set(self.video)) != len(self.video):
            fail(f"the source {path} has repeated pictures")

    def owns(self, video_md5):
        return video_md5 in set(self.video)


# ------------------------------------------------------------------------------------ captures

def clean_ts(data):
    """The whole packets of a raw TS capture without each elementary stream's last PES (which the
    end of the capture may have cut): what is left is complete, so a decoder must not complain."""
    data = data[:len(data) - len(data) % 188]
    packets = [data[i:i + 188] for i in range(0, len(data), 188)]
    last_pes = {}
    for i, p in enumerate(packets):
        if p[0] != 0x47:
            continue
        pid = ((p[1] & 0x1F) << 8) | p[2]
        if p[1] & 0x40:
            pos = 4 + (1 + p[4] if p[3] & 0x20 else 0)
            if p[pos:pos + 3] == b"\x00\x00\x01":
                last_pes[pid] = i
    keep = [p for i, p in enumerate(packets)
            if p[0] != 0x47 or i < last_pes.get(((p[1] & 0x1F) << 8) | p[2], len(packets))]
    return b"".join(keep)


def flv_whole(data):
    """An FLV capture cut after its last complete tag, and its tags [(type, ms, body)]."""
    if len(data) < 13 or data[:3] != b"FLV":
        return data[:0], []
    off = int.from_bytes(data[5:9], "big") + 4
    tags = []
    while off + 11 <= len(data):
        size = int.from_bytes(data[off + 1:off + 4], "big")
        if off + 11 + size + 4 > len(data):
            break
        ts = int.from_bytes(data[off + 4:off + 7], "big") | (data[off + 7] << 24)
        tags.append((data[off] & 0x1F, ts, data[off + 11:off + 11 + size]))
        off += 11 + size + 4
    return data[:off], tags


def capture_media(path):
    """{"format", "video": [{"t" ms, "md5", "idr"}], "audio": [{"t" ms, "md5"}], "errors", "clean",
    "psi_first"} of an FLV or MPEG-TS capture; "clean" is a copy a decoder can read to the end."""
    data = open(path, "rb").read() if os.path.exists(path) else b""
    out = {"video": [], "audio": [], "errors": [], "clean": path + ".clean"}
    if data[:3] == b"FLV":
        out["format"] = "flv"
        whole, tags = flv_whole(data)
        for t, ms, body in tags:
            if t == 9 and len(body) > 5 and (body[0] & 0x0F) == 7 and body[1] == 1:
                try:
                    h, idr = slices_md5(avcc_nals(body[5:]))
                except ValueError as e:
                    out["errors"].append(f"video tag at {ms} ms: {e}")
                    continue
                out["video"].append({"t": ms, "md5": h, "idr": idr, "key": (body[0] >> 4) == 1})
            elif t == 8 and len(body) > 2 and (body[0] >> 4) == 10 and body[1] == 1:
                out["audio"].append({"t": ms, "md5": md5(body[2:])})
    else:
        out["format"] = "ts"
        whole = clean_ts(data)
        out["psi_first"] = ts_psi_first(whole)
        dm = ts_demux(whole)
        out["errors"] = dm["errors"]
        for au in dm["video"]:
            h, idr = slices_md5(annexb_nals(au["data"]))
            # A TS keyframe is its IDR; the random access indicator is optional.
            out["video"].append({"t": au["dts"] / 90.0, "md5": h, "idr": idr, "key": idr, "rai": au["key"]})
        for au in dm["audio"]:
            try:
                out["audio"].append({"t": au["dts"] / 90.0, "md5": md5(strip_adts(au["data"])[0])})
            except ValueError as e:
                out["errors"].append(f"audio at {au['dts']}: {e}")
    with open(out["clean"], "wb") as f:
        f.write(whole)
    return out


def ts_psi_first(data):
    """True when the TS starts with a PAT, then a PMT, before any PES packet."""
    seen_pat = seen_pmt = False
    pmt_pids = set()
    for off in range(0, len(data) - 187, 188):
        p = data[off:off + 188]
        pid = ((p[1] & 0x1F) << 8) | p[2]
        pos = 4 + (1 + p[4] if p[3] & 0x20 else 0)
        if pid == 0 and p[1] & 0x40:
            seen_pat = True
            sec = p[pos + 1 + p[pos]:]
            for i in range(8, 3 + (((sec[1] & 0x0F) << 8) | sec[2]) - 4, 4):
                if int.from_bytes(sec[i:i + 2], "big"):
                    pmt_pids.add(((sec[i + 2] & 0x1F) << 8) | sec[i + 3])
        elif pid in pmt_pids:
            seen_pmt = True
        elif pid != 0x1FFF and p[1] & 0x40 and p[pos:pos + 3] == b"\x00\x00\x01":
            return seen_pat and seen_pmt
    return False


def contiguous_at(needle, haystack):
    """Index where needle occurs as a contiguous run in haystack, or -1."""
    if not needle:
        return -1
    n = len(needle)
    for i in range(len(haystack) - n + 1):
        if haystack[i] == needle[0] and haystack[i:i + n] == needle:
            return i
    return -1


def steps_ok(times, step, tol):
    return all(abs((b - a) - step) <= tol for a, b in zip(times, times[1:]))


def check_capture(name, path, source, min_video=50, min_audio=80, server_ts=False):
    """Every check of the module docstring on one player's capture. server_ts: the capture is the
    server's own MPEG-TS (an SRT reader's bytes as received): PAT and PMT come first, continuity
    counters and CRCs are right. Returns the capture's media."""
    m = capture_media(path)
    check(len(m["video"]) >= min_video and len(m["audio"]) >= min_audio,
          f"{name}: {len(m['video'])} video and {len(m['audio'])} audio frames in the {m['format']} capture "
          f"(>= {min_video}, {min_audio})")
    check(not m["errors"], f"{name}: the capture demuxes cleanly ({m['errors'][:3]})")
    if server_ts:
        check(m["psi_first"], f"{name}: the server's TS starts with a PAT and a PMT, before any PES")
    v = [f["md5"] for f in m["video"]]
    at = contiguous_at(v, source.video)
    check(at >= 0, f"{name}: the video access units' slices are a contiguous run of the source's "
                   f"(from access unit {at}, {len(v)} of them)")
    a = [f["md5"] for f in m["audio"]]
    at_a = contiguous_at(a, source.audio)
    check(at_a >= 0, f"{name}: the AAC frames are a contiguous run of the source's (from frame {at_a}, {len(a)})")
    check(m["video"][0]["idr"] and m["video"][0]["key"], f"{name}: the first video frame is a keyframe (IDR)")
    vt = [f["t"] for f in m["video"]]
    check(steps_ok(vt, 1000.0 / FPS, 1.01), f"{name}: video timestamps rise by 40 ms each "
                                            f"({[round(b - a, 1) for a, b in zip(vt, vt[1:]) if abs(b - a - 40) > 1.01][:5]})")
    at_ms = [f["t"] for f in m["audio"]]
    check(steps_ok(at_ms, 1024000.0 / AAC_RATE, 1.5), f"{name}: audio timestamps rise by one AAC frame each "
                                                      f"({[round(b - a, 1) for a, b in zip(at_ms, at_ms[1:]) if abs(b - a - 23.2) > 1.5][:5]})")
    frames, audio_frames, err = decoded(m["clean"])
    check(err == "", f"{name}: ffmpeg decodes the capture without an error ({err[-300:]!r})")
    fat = contiguous_at(frames, source.frames)
    check(len(frames) == len(v) and fat >= 0,
          f"{name}: the {len(frames)} decoded pictures ({len(v)} access units) are a contiguous run of the source's "
          f"(from picture {fat})")
    check(audio_frames >= len(a) - 2, f"{name}: {audio_frames} AAC frames decode ({len(a)} received)")
    return m


# ------------------------------------------------------------------------------------ clients

def srt_url(port, query=""):
    return f"srt://127.0.0.1:{port}" + (("?" + query) if query else "")


class Client:
    """A client process whose stderr goes to a file (a pipe nobody reads would block it)."""

    def __init__(self, name, cmd, directory, stdin=None, stdout=None):
        self.name = name
        self.err_path = os.path.join(directory, f"{name}.stderr")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(cmd, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                     stdout=stdout if stdout is not None else subprocess.DEVNULL, stderr=self.err)
        self.helpers = []

    def alive(self):
        return self.proc.poll() is None

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=5):
        for p in [self.proc] + self.helpers:
            if p.poll() is None:
                p.send_signal(2)
                try:
                    p.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.err.close()
        return self.proc.returncode

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        return open(self.err_path, errors="replace").read()


def ffmpeg_publish(directory, src, port, streamid, passphrase=None, loop=True, name="ffmpeg-pub"):
    """ffmpeg sends src in real time as MPEG-TS over SRT (-c copy, the source's own frames)."""
    cmd = FFMPEG + ["-re"] + (["-stream_loop", "-1"] if loop else []) + ["-i", src, "-map", "0", "-c", "copy",
                                                                       "-f", "mpegts", "-srt_streamid", streamid]
    if passphrase:
        cmd += ["-passphrase", passphrase]
    return Client(name, cmd + [srt_url(port, f"latency={LATENCY_MS * 1000}")], directory)


def ffmpeg_read(directory, port, streamid, out, seconds, passphrase=None, name="ffmpeg-srt"):
    """ffmpeg reads an SRT stream and copies `seconds` of it into the MPEG-TS file out."""
    cmd = ["timeout", "-k", "2", str(seconds + 10)] + FFMPEG + ["-srt_streamid", streamid]
    if passphrase:
        cmd += ["-passphrase", passphrase]
    cmd += ["-i", srt_url(port, f"latency={LATENCY_MS * 1000}"), "-map", "0", "-c", "copy", "-t", str(seconds),
            "-f", "mpegts", "-y", out]
    return Client(name, cmd, directory)


def slt_uri(port, streamid, passphrase=None):
    q = f"streamid={streamid}&latency={LATENCY_MS}"
    if passphrase:
        q += f"&passphrase={passphrase}"
    return srt_url(port, q)


def slt_publish(directory, src, port, streamid, passphrase=None, loop=True, name="slt-pub"):
    """`ffmpeg -re ... -f mpegts - | srt-live-transmit file://con srt://...`: ffmpeg only paces
    the source's TS packets to a pipe; srt-live-transmit is the SRT caller."""
    ff = subprocess.Popen(FFMPEG + ["-re"] + (["-stream_loop", "-1"] if loop else []) +
                          ["-i", src, "-map", "0", "-c", "copy", "-f", "mpegts", "-"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    c = Client(name, ["srt-live-transmit", "-a:no", "-chunk:1316", "file://con", slt_uri(port, streamid, passphrase)],
               directory, stdin=ff.stdout)
    ff.stdout.close()
    c.helpers.append(ff)
    return c


def slt_read(directory, port, streamid, out, seconds, passphrase=None, name="slt-read"):
    """srt-live-transmit reads an SRT stream for `seconds`, writing the bytes as received to out."""
    f = open(out, "wb")
    c = Client(name, ["timeout", "-s", "INT", "-k", "2", str(seconds), "srt-live-transmit", "-a:no",
                      slt_uri(port, streamid, passphrase), "file://con"], directory, stdout=f)
    f.close()
    return c


def slt_send_bytes(directory, port, streamid, chunks, pace_s=0.02, linger_s=1.0, name="slt-raw", passphrase=None):
    """srt-live-transmit sends `chunks` (bytes each), written to its stdin pace_s apart; stdin
    stays open linger_s longer (it drops what is unsent when stdin ends). Returns the Client,
    finished. When the listener closes the connection srt-live-transmit prints "SRT target
    disconnected" and exits (status 0): then `ended_early` is true. It sends whole chunks only
    (a last partial one is dropped): give it a multiple of 1316 bytes."""
    # Its stdin must be a pipe ("Failed to add FILE source to poll" for a regular file).
    c = Client(name, ["srt-live-transmit", "-a:no", "-chunk:1316", "file://con", slt_uri(port, streamid, passphrase)],
               directory, stdin=subprocess.PIPE)
    c.ended_early = False  # it ended (the server closed the connection) before all was written
    c.bytes_written = 0
    # srt-live-transmit reads its stdin while it connects and drops what it read before it is
    # connected: nothing is written until it says so.
    c.connected = wait_for(lambda: "SRT target connected" in c.stderr() or not c.alive(), 5, step=0.02)
    try:
        for chunk in chunks:
            if not c.alive():
                c.ended_early = True
                break
            c.proc.stdin.write(chunk)
            c.proc.stdin.flush()
            c.bytes_written += len(chunk)
            time.sleep(pace_s)
        if not c.ended_early:
            time.sleep(linger_s)
            c.ended_early = not c.alive()
        c.proc.stdin.close()
    except BrokenPipeError:
        c.ended_early = True
    c.wait(0.5)  # at the end of its input it stays connected, idle: SIGINT ends it
    c.stop()
    return c


def gst_publish(directory, src, port, streamid, passphrase=None, name="gst-pub"):
    """GStreamer demuxes src and muxes it again with its own mpegtsmux, paced by the clock, to
    srtsink: another TS muxer than ffmpeg's, with the same frames."""
    sink = ["srtsink", f"uri=srt://127.0.0.1:{port}", f'streamid="{streamid}"', f"latency={LATENCY_MS}",
            "auto-reconnect=false"]
    if passphrase:
        sink.append(f"passphrase={passphrase}")
    cmd = (["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "tsdemux", "name=d", "d.", "!", "queue", "!",
            "h264parse", "!", "mpegtsmux", "name=m", "alignment=7", "!"] + sink +
           ["d.", "!", "queue", "!", "aacparse", "!", "m."])
    return Client(name, cmd, directory)


def gst_read(directory, port, streamid, out, seconds, passphrase=None, name="gst-read"):
    """GStreamer's srtsrc reads an SRT stream for `seconds` into out, the bytes as received."""
    src = ["srtsrc", f"uri=srt://127.0.0.1:{port}", f'streamid="{streamid}"', f"latency={LATENCY_MS}",
           "auto-reconnect=false"]
    if passphrase:
        src.append(f"passphrase={passphrase}")
    cmd = ["timeout", "-s", "INT", "-k", "2", str(seconds), "gst-launch-1.0", "-q", "-e"] + src + [
        "!", "filesink", f"location={out}"]
    return Client(name, cmd, directory)


# ------------------------------------------------------------------------------------ libsrt

_SRTO_RCVTIMEO, _SRTO_LATENCY, _SRTO_PASSPHRASE, _SRTO_CONNTIMEO, _SRTO_STREAMID = 14, 23, 26, 36, 46
_SRTS = {1: "init", 2: "opened", 3: "listening", 4: "connecting", 5: "connected", 6: "broken", 7: "closing",
         8: "closed", 9: "nonexist"}
_lib = None


def libsrt():
    global _lib
    if _lib is None:
        for name in ("libsrt.so.1.5", "libsrt-gnutls.so.1.5", ctypes.util.find_library("srt")):
            try:
                _lib = ctypes.CDLL(name)
                break
            except (OSError, TypeError):
                continue
        if _lib is None:
            fail("libsrt is not installed")
        _lib.srt_startup()
        _lib.srt_rejectreason_str.restype = ctypes.c_char_p
        _lib.srt_getlasterror_str.restype = ctypes.c_char_p
    return _lib


class _SrtMsgCtrl(ctypes.Structure):
    # SRT_MSGCTRL (srt/srt.h)
    _fields_ = [("flags", ctypes.c_int), ("msgttl", ctypes.c_int), ("inorder", ctypes.c_int),
                ("boundary", ctypes.c_int), ("srctime", ctypes.c_int64), ("pktseq", ctypes.c_int32),
                ("msgno", ctypes.c_int32), ("grpdata", ctypes.c_void_p), ("grpdata_size", ctypes.c_size_t)]


class SrtCaller:
    """A libsrt caller (ctypes): connects with a stream id (and passphrase); `reject` is the reject
    reason libsrt reports when the listener refused (e.g. 1403, or 10 for a wrong passphrase)."""

    def __init__(self, port, streamid, passphrase=None, timeout_ms=3000):
        lib = libsrt()
        self.lib = lib
        self.sock = lib.srt_create_socket()
        sid = streamid.encode()
        lib.srt_setsockflag(self.sock, _SRTO_STREAMID, ctypes.c_char_p(sid), len(sid))
        if passphrase:
            pw = passphrase.encode()
            lib.srt_setsockflag(self.sock, _SRTO_PASSPHRASE, ctypes.c_char_p(pw), len(pw))
        t = ctypes.c_int(timeout_ms)
        lib.srt_setsockflag(self.sock, _SRTO_CONNTIMEO, ctypes.byref(t), 4)
        lat = ctypes.c_int(LATENCY_MS)
        lib.srt_setsockflag(self.sock, _SRTO_LATENCY, ctypes.byref(lat), 4)
        addr = struct.pack("<H", socket.AF_INET) + struct.pack(">H", port) + socket.inet_aton("127.0.0.1") + bytes(8)
        self.connected = lib.srt_connect(self.sock, ctypes.create_string_buffer(addr, 16), 16) == 0
        self.reject = 0 if self.connected else lib.srt_getrejectreason(self.sock)
        self.reject_text = "" if self.connected else lib.srt_rejectreason_str(self.reject).decode()

    def state(self):
        return _SRTS.get(self.lib.srt_getsockstate(self.sock), "?")

    def send(self, data):
        """Sends data in messages of at most 1316 bytes; False once the connection is gone."""
        for i in range(0, len(data), 1316):
            part = data[i:i + 1316]
            if self.lib.srt_sendmsg(self.sock, part, len(part), -1, 0) < 0:
                return False
        return True

    def wait_closed(self, timeout, send=False):
        """Seconds until the listener's close reaches this caller, or None. send: meanwhile send
        null TS packets, as a publisher would. (libsrt 1.5.1: a caller that sends learns at once;
        an idle one whose peer closed within a millisecond of accepting learns only at its peer idle
        timeout, 5 s, as a plain libsrt listener shows too.)"""
        t0 = time.time()
        null = (b"\x47\x1f\xff\x10" + b"\xff" * 184) * 7
        while time.time() - t0 < timeout:
            if self.state() in ("broken", "closed", "nonexist"):
                return time.time() - t0
            if send:
                self.send(null)
            time.sleep(0.02)
        return None

    def recv(self, timeout_ms=1000):
        """The next message libsrt delivers and its source time: (bytes, microseconds), or
        (None, 0) after timeout_ms or once the connection is gone. The source time is when the
        sender handed the message to libsrt, on libsrt's clock here: unlike the moment this
        process reads it, a busy machine does not move it."""
        t = ctypes.c_int(timeout_ms)
        self.lib.srt_setsockflag(self.sock, _SRTO_RCVTIMEO, ctypes.byref(t), 4)
        buf = ctypes.create_string_buffer(1500)
        ctrl = _SrtMsgCtrl(msgttl=-1)
        n = self.lib.srt_recvmsg2(self.sock, buf, 1500, ctypes.byref(ctrl))
        return (buf.raw[:n], ctrl.srctime) if n > 0 else (None, 0)

    def close(self):
        self.lib.srt_close(self.sock)
