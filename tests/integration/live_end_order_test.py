#!/usr/bin/python3
"""Everything a publisher sent before it left reaches its players before the news that it left.

Players wait for the stream, then a publisher sends a known file in real time and leaves: a raw RTMP
client reading as bytes arrive, an ffmpeg recorder (`ffmpeg -i rtmp://... -c copy out.flv`, which
stops at NetStream.Play.UnpublishNotify) and an HTTP-FLV reader (curl). Each must receive every
audio and video message of the file, byte-exact, and the RTMP ones must receive all of it before
UnpublishNotify and StreamEOF, with nothing after them. Two rounds: a raw RTMP publisher that ends
with FCUnpublish + deleteStream, and ffmpeg, which ends by closing its connection. Both use the held
write path (a fixed 30 ms hold), where the last frames of a publication wait when the end comes."""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient, flv_media_messages  # noqa: E402

require_tools("ffmpeg", "curl")

STREAM_EOF = 1


class Reader(threading.Thread):
    """A raw RTMP player that reads as bytes arrive until StreamEOF (and a little after it)."""

    def __init__(self, port, name):
        super().__init__(daemon=True)
        self.c = RtmpClient(port)
        self.c.connect("live")
        self.c.create_stream()
        self.c.play(name)
        if not self.c.wait_status("NetStream.Play.Start"):
            fail("raw player: no NetStream.Play.Start")
        self.done = threading.Event()

    def run(self):
        deadline = time.time() + 60
        eof_at = None
        while time.time() < deadline and not self.c.closed:
            self.c.read_some(0.1)
            if eof_at is None and any(m.user_control() and m.user_control()[0] == STREAM_EOF for m in self.c.messages):
                eof_at = time.time()
            if eof_at is not None and time.time() - eof_at > 0.7:
                break  # anything sent late would have arrived by now
        self.done.set()


def media_of(messages):
    return [(m.type, m.payload) for m in messages if m.type in (8, 9)]


def check_rtmp_player(label, reader, source):
    msgs = reader.c.messages
    end = next((i for i, m in enumerate(msgs) if m.status_code() == "NetStream.Play.UnpublishNotify"), None)
    check(end is not None, f"{label}: NetStream.Play.UnpublishNotify arrived")
    eof = next((i for i, m in enumerate(msgs) if m.user_control() and m.user_control()[0] == STREAM_EOF), None)
    check(eof is not None and eof > end, f"{label}: StreamEOF follows UnpublishNotify")
    before = media_of(msgs[:end])
    after = media_of(msgs[end:])
    want = [(t, p) for t, _, p in source if t in (8, 9)]
    videos = sum(1 for t, _ in want if t == 9)
    got_videos = sum(1 for t, _ in before if t == 9)
    check(got_videos == videos, f"{label}: {got_videos} of {videos} video messages before UnpublishNotify")
    check(before == want, f"{label}: every audio/video message, byte-exact and in order, before UnpublishNotify")
    check(not after, f"{label}: no media after UnpublishNotify ({len(after)} messages)")


def start_recorder(url, out):
    return subprocess.Popen(["timeout", "-k", "2", "60", "ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                             "-i", url, "-c", "copy", "-f", "flv", out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def start_http_reader(port, name, out):
    return subprocess.Popen(["timeout", "-k", "2", "60", "curl", "-s", "-o", out,
                             f"http://127.0.0.1:{port}/live/{name}.flv"])


def publish_raw(port, name, source):
    """Sends the file's messages at their pace, then FCUnpublish and deleteStream."""
    c = RtmpClient(port)
    c.set_chunk_size(4096)
    c.connect("live")
    c.create_stream()
    c.publish(name)
    if not c.wait_status("NetStream.Publish.Start"):
        fail("raw publisher: no NetStream.Publish.Start")
    start = time.time()
    for t, ts, payload in source:
        delay = ts / 1000.0 - (time.time() - start)
        if delay > 0:
            time.sleep(delay)
        c.media(t, ts, payload)
    c.command("FCUnpublish", None, name)
    c.command("deleteStream", None, 1)
    c.read_for(0.5)
    c.close()


hport = free_port()
# A fixed hold (write_budget 0): with three players the adaptive hold would write at once.
server = Server("end-order", extra_yaml=("  player_queue: { write_delay: 30ms, write_budget: 0 }\n"
                                         f"http:\n  listen: 127.0.0.1:{hport}\n")).start()
check(wait_port(hport), "HTTP listener is up")
# 123 video frames (4.92 s at 25 fps) with audio: the reported case.
src = make_media(os.path.join(server.dir, "src.flv"), seconds=4.92, fps=25, gop=25)
source = flv_media_messages(src)
src_hashes = packet_hashes(src)
src_frames = sum(1 for r in src_hashes if r[0] == 0)
check(src_frames == 123, f"the source has {src_frames} video frames")


def round_(label, publish):
    name = "end_" + label
    url = server.url("live/" + name)
    reader = Reader(server.port, name)
    reader.start()
    rec_out = os.path.join(server.dir, f"rec_{label}.flv")
    http_out = os.path.join(server.dir, f"http_{label}.flv")
    recorder = start_recorder(url, rec_out)
    http_reader = start_http_reader(hport, name, http_out)
    time.sleep(1.0)  # every player waits for the publisher
    publish(name, url)
    reader.done.wait(30)
    try:
        recorder.wait(timeout=20)
    except subprocess.TimeoutExpired:
        recorder.kill()
        fail(f"{label}: the ffmpeg recorder did not stop after the publisher left")
    try:
        http_reader.wait(timeout=20)
    except subprocess.TimeoutExpired:
        http_reader.kill()
        fail(f"{label}: the HTTP-FLV response did not end after the publisher left")
    check(recorder.returncode == 0, f"{label}: the recorder ended cleanly at the end of the stream")
    check_rtmp_player(f"{label}: raw player", reader, source)
    rec = packet_hashes(rec_out)
    check(rec == src_hashes, f"{label}: the recorder kept every packet, byte-exact "
          f"({sum(1 for r in rec if r[0] == 0)} of {sum(1 for r in src_hashes if r[0] == 0)} video)")
    got = flv_media_messages(http_out)
    want = [(t, ts, p) for t, ts, p in source if t in (8, 9)]
    check([m for m in got if m[0] in (8, 9)] == want,
          f"{label}: the HTTP-FLV reader got every audio/video tag, byte-exact, before its response ended")
    check(packet_hashes(http_out) == src_hashes, f"{label}: HTTP-FLV packet hashes equal the source's")
    reader.c.close()


def raw_publisher(name, url):
    publish_raw(server.port, name, source)


def ffmpeg_publisher(name, url):
    pub = publish_ffmpeg(src, url)
    try:
        pub.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pub.kill()
        fail("ffmpeg publisher did not finish")


round_("raw", raw_publisher)
round_("ffmpeg", ffmpeg_publisher)
check(server.alive(), "server still running")
check(server.stop() == 0, "server exits 0")
print("PASS")
