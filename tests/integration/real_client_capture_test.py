#!/usr/bin/python3
"""Real clients against protocol::Session alone (tools/rtmp-capture): ffmpeg publishing (digest
handshake) and rtmpdump playing (simple handshake) must complete the handshake and have their
connect / createStream / publish / play commands decoded."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "rtmpdump")
d = workdir("capture")
media = make_media(os.path.join(d, "src.flv"), seconds=3)
capture = binary("tools/rtmp-capture")


def run_capture(client_cmd, media_count="30"):
    port = free_port()
    cap = subprocess.Popen([capture, str(port), "--media", media_count, "--timeout", "20",
                            "--save", os.path.join(d, f"capture-{port}.bin")],
                           stdout=subprocess.PIPE, text=True)
    line = cap.stdout.readline()
    check(line.startswith("listening"), "capture listener is up")
    client = subprocess.Popen([c.replace("PORT", str(port)) for c in client_cmd],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out, _ = cap.communicate(timeout=40)
    try:
        client.wait(timeout=10)
    except subprocess.TimeoutExpired:
        client.kill()
    print(out)
    return out.splitlines()


# ffmpeg publishes: digest C1, Set Chunk Size, connect, releaseStream, FCPublish, createStream, publish.
lines = run_capture(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", media, "-c", "copy",
                     "-f", "flv", "rtmp://127.0.0.1:PORT/live/cam1"])
check("handshake digest" in lines, "ffmpeg: digest handshake completed")
check(any(l.startswith("connect app=live tcUrl=rtmp://127.0.0.1:") for l in lines), "ffmpeg: connect decoded")
check(any(l.startswith("createStream id=1") for l in lines), "ffmpeg: createStream answered")
check(any(l.startswith("publish stream=1 name=cam1 type=live") for l in lines), "ffmpeg: publish decoded")
media_lines = [l for l in lines if l.startswith("media ")]
check(len(media_lines) >= 20, f"ffmpeg: media messages decoded ({len(media_lines)})")
check(any(l.startswith("media type=18") for l in media_lines), "ffmpeg: @setDataFrame metadata arrived")
check(any(l.startswith("media type=9") for l in media_lines), "ffmpeg: video arrived")
check(any(l.startswith("media type=8") for l in media_lines), "ffmpeg: audio arrived")
check(not any(l.startswith("error") for l in lines), "ffmpeg: no protocol error")

# rtmpdump plays: simple handshake, connect, createStream, play, SetBufferLength.
lines = run_capture(["timeout", "-k", "2", "15", "rtmpdump", "-q", "-r", "rtmp://127.0.0.1:PORT/live/cam2",
                     "--live", "-o", os.path.join(d, "out.flv")])
check("handshake simple" in lines, "rtmpdump: simple handshake completed")
check(any(l.startswith("connect app=live") for l in lines), "rtmpdump: connect decoded")
check(any(l.startswith("play stream=") and "name=cam2" in l for l in lines), "rtmpdump: play decoded")
check(not any(l.startswith("error") for l in lines), "rtmpdump: no protocol error")

# ffmpeg plays (validates our digest S1/S2 when we answer its digest C1).
lines = run_capture(["timeout", "-k", "2", "15", "ffmpeg", "-nostdin", "-loglevel", "error",
                     "-i", "rtmp://127.0.0.1:PORT/live/cam3", "-t", "1", "-f", "null", "-"])
check("handshake digest" in lines, "ffmpeg player: digest handshake completed (it verified our S1/S2)")
check(any(l.startswith("play stream=") and "name=cam3" in l for l in lines), "ffmpeg player: play decoded")
print("PASS")
