#!/usr/bin/env python3
"""Writes the synthetic part of the seed corpus of mp4_layout_fuzz: small finished FLV files with
every form media/flv/flv_tag_head.hpp knows (legacy and Enhanced RTMP H.264/HEVC, AAC, MP3),
composition times, late tracks, sequence headers sent again, changed or late, decode times that go
back, codecs an MP4 cannot hold, multitrack and ModEx packets. Each is under 4 KB. The ffmpeg-made
FLV files of corpus/flv_reader/ are copied next to them (they are real programs' output).

usage: tests/fuzz/mp4_layout_seeds.py [DIR]   (default: tests/fuzz/corpus/mp4_layout)
"""
import os
import shutil
import struct
import sys


def flv_header(audio=True, video=True):
    return b"FLV\x01" + bytes([(4 if audio else 0) | (1 if video else 0)]) + struct.pack(">II", 9, 0)


def tag(kind, ts, body):
    header = bytes([kind]) + struct.pack(">I", len(body))[1:] + struct.pack(">I", ts & 0xFFFFFF)[1:]
    return header + bytes([ts >> 24 & 0xFF]) + b"\x00\x00\x00" + body + struct.pack(">I", 11 + len(body))


def si24(v):
    return struct.pack(">i", v)[1:]


AVC_RECORD = bytes([1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE])
HVCC = bytes([1, 1, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 0x5D, 0xF0, 0, 0xFC, 0xFD, 0xF8, 0xF8, 0, 0, 0x0F, 0])
ASC = bytes([0x12, 0x10])  # AAC-LC, 44.1 kHz, stereo
MP3_HEADER = bytes([0xFF, 0xFB, 0x90, 0x64])  # MPEG-1 layer III, 44.1 kHz, joint stereo


def avc_config(record=AVC_RECORD, codec=7):
    return bytes([0x10 | codec, 0]) + si24(0) + record


def avc_frame(key, cts, payload, codec=7):
    return bytes([(0x10 if key else 0x20) | codec, 1]) + si24(cts) + payload


def hevc_start():
    return bytes([0x90]) + b"hvc1" + HVCC


def hevc_frame(key, cts, payload, x=False):
    frame = 0x10 if key else 0x20
    if x:
        return bytes([0x80 | frame | 3]) + b"hvc1" + payload
    return bytes([0x80 | frame | 1]) + b"hvc1" + si24(cts) + payload


def aac_config():
    return bytes([0xAF, 0]) + ASC


def aac_frame(payload):
    return bytes([0xAF, 1]) + payload


def mp3_frame(payload):
    return bytes([0x2F]) + MP3_HEADER + payload


def interleaved(video_frame, audio_frame, frames=16, audio_from=0, fps_ms=40):
    out = b""
    audio_ms = audio_from
    for i in range(frames):
        ms = i * fps_ms
        out += tag(9, ms, video_frame(i, ms))
        while audio_frame and audio_ms <= ms + fps_ms:
            out += tag(8, audio_ms, audio_frame(audio_ms))
            audio_ms += 23
    return out


def b_frame_cts(i):
    return [80, 200, 40, 40, 120][i % 5]


def avc_aac():
    body = flv_header() + tag(9, 0, avc_config()) + tag(8, 0, aac_config())
    body += interleaved(lambda i, ms: avc_frame(i % 8 == 0, b_frame_cts(i), bytes([i]) * (20 if i % 8 == 0 else 6)),
                        lambda ms: aac_frame(bytes([ms & 0xFF]) * 5))
    return body + tag(9, 640, bytes([0x17, 2, 0, 0, 0]))  # end of sequence, as ffmpeg writes it


def hevc_enhanced():
    body = flv_header() + tag(9, 0, hevc_start()) + tag(8, 0, aac_config())
    body += interleaved(lambda i, ms: hevc_frame(i % 8 == 0, 40 if i % 3 else 0, bytes([i]) * 9, x=i % 3 == 0),
                        lambda ms: aac_frame(bytes([ms & 0xFF]) * 4), audio_from=57)
    return body + tag(9, 640, bytes([0x82]) + b"hvc1")  # SequenceEnd


def legacy_hevc_mp3():
    body = flv_header() + tag(9, 0, avc_config(HVCC, codec=12))
    body += interleaved(lambda i, ms: avc_frame(i % 5 == 0, 0, bytes([i]) * 7, codec=12),
                        lambda ms: mp3_frame(bytes([ms & 0xFF]) * 8))
    return body


def config_changes():
    body = flv_header() + tag(9, 0, avc_config()) + tag(8, 0, aac_config())
    changed = bytearray(AVC_RECORD)
    changed[1] = 0x4D
    for i in range(20):
        ms = i * 40
        if i == 6:
            body += tag(9, ms, avc_config())  # the same again: ignored
        if i == 12:
            body += tag(9, ms, avc_config(bytes(changed)))  # a different one: the track ends
        body += tag(9, ms, avc_frame(i % 6 == 0, 0, bytes([i]) * 6))
        if i >= 5:
            body += tag(8, ms + 11, aac_frame(bytes([i]) * 3))
    return body


def late_config_backwards():
    body = flv_header()
    for i in range(3):
        body += tag(9, i * 40, avc_frame(i == 0, 0, bytes([i]) * 5))  # before any configuration
    body += tag(9, 120, avc_config())
    for i, (ms, cts) in enumerate([(120, 0), (160, -40), (150, 40), (200, 80), (240, -20), (230, 0)]):
        body += tag(9, ms, avc_frame(i == 0, cts, bytes([i]) * 6))
    body += tag(9, 280, bytes([0x27, 1, 0, 0, 0]))  # an empty frame
    return body


def unsupported():
    vp6 = flv_header()
    for i in range(8):
        vp6 += tag(9, i * 40, bytes([0x14 if i == 0 else 0x24, 0]) + bytes([i]) * 6)  # VP6
        vp6 += tag(8, i * 40, bytes([0xB2]) + bytes([i]) * 10)  # Speex
    nelly = flv_header() + tag(9, 0, avc_config())
    nelly += interleaved(lambda i, ms: avc_frame(i % 4 == 0, 0, bytes([i]) * 5),
                         lambda ms: bytes([0x6E]) + bytes([ms & 0xFF]) * 6, frames=10)  # Nellymoser
    return vp6, nelly


def enhanced_audio_multitrack():
    body = flv_header() + tag(9, 0, bytes([0x90]) + b"avc1" + AVC_RECORD)
    body += tag(8, 0, bytes([0x90]) + b"mp4a" + ASC)
    for i in range(12):
        ms = i * 40
        body += tag(9, ms, bytes([0x91 if i % 4 == 0 else 0xA1]) + b"avc1" + si24(40) + bytes([i]) * 6)
        body += tag(8, ms, bytes([0x91]) + b"mp4a" + bytes([i]) * 5)
        if i == 5:
            body += tag(9, ms, bytes([0x96, 0x01]) + b"hvc1" + bytes([0, 0, 0, 5]) + bytes(5))  # multitrack
            body += tag(9, ms, bytes([0xA7, 0x03, 0, 0, 0, 0x01]) + b"avc1" + bytes(4))  # ModEx
            body += tag(8, ms, bytes([0x91]) + b".mp3" + MP3_HEADER + bytes(6))  # another codec
    return body


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "corpus", "mp4_layout")
    os.makedirs(target, exist_ok=True)
    vp6, nelly = unsupported()
    seeds = {
        "avc-aac-bframes.flv": avc_aac(),
        "hevc-enhanced-late-audio.flv": hevc_enhanced(),
        "hevc-legacy-mp3.flv": legacy_hevc_mp3(),
        "config-resent-then-changed.flv": config_changes(),
        "late-config-backwards-dts.flv": late_config_backwards(),
        "vp6-speex.flv": vp6,
        "avc-nellymoser.flv": nelly,
        "enhanced-avc-aac-multitrack-modex.flv": enhanced_audio_multitrack(),
    }
    for name, data in seeds.items():
        assert len(data) < 4096, name
        with open(os.path.join(target, name), "wb") as f:
            f.write(data)
    for name in ("avc-aac.flv", "aac.flv", "hevc-vod.flv"):
        shutil.copy(os.path.join(root, "corpus", "flv_reader", name), os.path.join(target, "ffmpeg-" + name))


if __name__ == "__main__":
    main()
