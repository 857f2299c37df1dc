#!/usr/bin/env python3
"""Writes the seed corpus of flv_repair_fuzz: small .part recordings as the recorder writes them
(media/flv/flv.hpp framing), whole, torn, corrupted, without metadata, audio only. Each is under 4 KB.

usage: tests/fuzz/flv_repair_seeds.py [DIR]   (default: tests/fuzz/corpus/flv_repair)
"""
import os
import struct
import sys


def amf_string(s):
    b = s.encode()
    return b"\x02" + struct.pack(">H", len(b)) + b


def on_metadata(props):
    out = amf_string("onMetaData") + b"\x08" + struct.pack(">I", len(props))
    for name, value in props:
        out += struct.pack(">H", len(name)) + name.encode()
        out += amf_string(value) if isinstance(value, str) else b"\x00" + struct.pack(">d", value)
    return out + b"\x00\x00\x09"


def flv_header(audio=True, video=True):
    return b"FLV\x01" + bytes([(4 if audio else 0) | (1 if video else 0)]) + struct.pack(">II", 9, 0)


def tag(kind, ts, body):
    header = bytes([kind]) + struct.pack(">I", len(body))[1:] + struct.pack(">I", ts & 0xFFFFFF)[1:]
    return header + bytes([ts >> 24 & 0xFF]) + b"\x00\x00\x00" + body + struct.pack(">I", 11 + len(body))


AVC_CONFIG = bytes([0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE])
HEVC_START = bytes([0x90]) + b"hvc1" + bytes([1, 1, 0x60, 0, 0, 0])
AAC_CONFIG = bytes([0xAF, 0, 0x15, 0x88])


def recording(frames=24, hevc=False, metadata=True, audio=True, video=True):
    out = flv_header(audio, video)
    if metadata:
        out += tag(18, 0, on_metadata([("duration", 0), ("width", 64), ("height", 48), ("encoder", "seed")]))
    if video:
        out += tag(9, 0, HEVC_START if hevc else AVC_CONFIG)
    if audio:
        out += tag(8, 0, AAC_CONFIG)
    for i in range(frames):
        key = i % 8 == 0
        if video:
            if hevc:
                body = bytes([0x91 if key else 0xA1]) + b"hvc1" + b"\x00\x00\x00"
            else:
                body = bytes([0x17 if key else 0x27, 1, 0, 0, 0])
            out += tag(9, i * 100, body + bytes([i]) * (24 if key else 8))
        if audio:
            out += tag(8, i * 100 + 20, bytes([0xAF, 1]) + bytes([i]) * 6)
    return out


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "corpus", "flv_repair")
    os.makedirs(target, exist_ok=True)
    whole = recording()
    # The PreviousTagSize of the 10th tag off by one.
    bad_size = bytearray(whole)
    pos, count = 13, 0
    while count < 10:
        size = int.from_bytes(bad_size[pos + 1 : pos + 4], "big")
        pos += 11 + size + 4
        count += 1
    bad_size[pos - 1] ^= 1
    seeds = {
        "complete.part": whole,
        "torn.part": whole[: len(whole) - 7],
        "bad-previous-tag-size.part": bytes(bad_size),
        "hevc-no-metadata-zero-tail.part": recording(hevc=True, metadata=False) + bytes(64),
        "audio-only.part": recording(frames=16, video=False),
    }
    for name, data in seeds.items():
        assert len(data) < 4096, name
        with open(os.path.join(target, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
