#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/hls_segmenter/: streams as a publisher sends them, in the input format
of tests/fuzz/hls_segmenter_fuzz.cpp (25 fps video with a keyframe per second, 48 kHz AAC frames
interleaved by time), for each container, audio only, video only with a long GOP, and with a
republish (the clock back to 0) or a codec change in the middle."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "hls_segmenter")


def rec(op, step_ms, size):
    return bytes([op]) + struct.pack(">h", step_ms) + bytes([size])


def stream(seconds, gop=25, audio=True, insert=None):
    events = [(i * 40, "v", i % gop == 0) for i in range(seconds * 25)]
    if audio:
        t = 0.0
        while t < seconds * 1000:
            events.append((int(t), "a", True))
            t += 1024 * 1000 / 48000
    events.sort(key=lambda e: (e[0], e[1] != "v"))
    out, last = b"", 0
    for k, (t, kind, key) in enumerate(events):
        step, last = t - last, t
        out += rec(8 if key else 0, step, 120 if key else 30) if kind == "v" else rec(4, step, 20)
        if insert and k in insert:
            out += insert[k]
    return out


SEEDS = {
    "ll_av_2s": bytes([0x10]) + stream(8),
    "fmp4_av_2s": bytes([0x11]) + stream(8),
    "ts_av_2s": bytes([0x12]) + stream(8),
    "ll_audio_only": bytes([0x10 | 4]) + stream(6),
    "ll_video_only_long_gop": bytes([0x10 | 8]) + stream(10, gop=100, audio=False),
    "ll_republish": bytes([0x10]) + stream(8, insert={200: rec(7 | 8, -8000, 0)}),
    "ll_setup_change": bytes([0x10]) + stream(8, insert={150: rec(6 | 8, 0, 0)}),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
