#!/usr/bin/env python3
"""Cuts the recordings of tools/record-fuzz-seeds.sh into seed files for the fuzz targets.

Usage: cut-fuzz-seeds.py RECORDINGS_DIR CORPUS_DIR

RECORDINGS_DIR holds what the shell script recorded: the raw client bytes of real RTMP sessions
(*.rtmp, handshake included) and small FLV/MP4 files. For each target in TARGETS this writes
CORPUS_DIR/<target>/<name> (the directory is emptied first). Everything here is deterministic, so
the same recordings give the same seeds.
"""
import os
import re
import struct
import sys

HANDSHAKE = 1 + 1536 + 1536  # C0 + C1 + C2
TARGETS = ("amf0", "amf3", "chunk_reader", "codec", "commands", "flv_parser", "flv_reader", "mp4_demuxer")


def dechunk(stream):
    """The messages of a client's chunk stream, as (type, timestamp, payload). Set Chunk Size is
    applied; the extended timestamp is read on type-3 chunks after a header that had one (what
    FFmpeg sends, see docs/protocol.md, "Extended timestamp")."""
    chunk_size, pos, state, out = 128, 0, {}, []
    while pos < len(stream):
        start = pos
        b0 = stream[pos]
        fmt, csid = b0 >> 6, b0 & 0x3F
        pos += 1
        if csid == 0:
            csid, pos = 64 + stream[pos], pos + 1
        elif csid == 1:
            csid, pos = 64 + stream[pos] + 256 * stream[pos + 1], pos + 2
        s = state.setdefault(csid, {"ts": 0, "delta": 0, "len": 0, "type": 0, "ext": False, "body": None})
        if fmt < 3:
            field = int.from_bytes(stream[pos:pos + 3], "big")
            if fmt < 2:
                s["len"] = int.from_bytes(stream[pos + 3:pos + 6], "big")
                s["type"] = stream[pos + 6]
            pos += (11, 7, 3)[fmt]
            s["ext"] = field == 0xFFFFFF
            if s["ext"]:
                field, pos = int.from_bytes(stream[pos:pos + 4], "big"), pos + 4
            s["ts"] = field if fmt == 0 else (s["ts"] + field) & 0xFFFFFFFF
            s["delta"] = field
            s["body"] = bytearray()
        else:
            if s["ext"]:
                pos += 4
            if s["body"] is None:
                s["ts"] = (s["ts"] + s["delta"]) & 0xFFFFFFFF
                s["body"] = bytearray()
        take = min(chunk_size, s["len"] - len(s["body"]))
        if pos + take > len(stream):
            break  # the recording ends inside a chunk
        s["body"] += stream[pos:pos + take]
        pos += take
        if len(s["body"]) == s["len"]:
            body = bytes(s["body"])
            s["body"] = None
            out.append((s["type"], s["ts"], body))
            if s["type"] == 1:
                chunk_size = int.from_bytes(body[:4], "big") & 0x7FFFFFFF
        assert pos > start
    return out


# AMF0 decoding, just enough for what clients send (docs/protocol.md, "AMF0").
def amf0_value(b, p):
    m = b[p]
    p += 1
    if m == 0x00:
        return struct.unpack(">d", b[p:p + 8])[0], p + 8
    if m == 0x01:
        return b[p] != 0, p + 1
    if m == 0x02:
        n = int.from_bytes(b[p:p + 2], "big")
        return b[p + 2:p + 2 + n].decode(), p + 2 + n
    if m in (0x03, 0x08):
        if m == 0x08:
            p += 4
        obj = {}
        while True:
            n = int.from_bytes(b[p:p + 2], "big")
            if n == 0 and b[p + 2] == 0x09:
                return ({"ecma": obj} if m == 0x08 else obj), p + 3
            key = b[p + 2:p + 2 + n].decode()
            obj[key], p = amf0_value(b, p + 2 + n)
    if m in (0x05, 0x06):
        return None, p
    if m == 0x0A:
        n, p, items = int.from_bytes(b[p:p + 4], "big"), p + 4, []
        for _ in range(n):
            v, p = amf0_value(b, p)
            items.append(v)
        return items, p
    raise ValueError("AMF0 marker %#x" % m)


def amf0_values(b):
    out, p = [], 0
    while p < len(b):
        v, p = amf0_value(b, p)
        out.append(v)
    return out


class Amf3Encoder:
    """AMF3 with string and trait references, as one message shares them (docs/protocol.md, "AMF3")."""

    def __init__(self):
        self.strings, self.traits = {}, {}

    @staticmethod
    def u29(n):
        if n < 0x80:
            return bytes([n])
        if n < 0x4000:
            return bytes([0x80 | n >> 7, n & 0x7F])
        if n < 0x200000:
            return bytes([0x80 | n >> 14, 0x80 | (n >> 7) & 0x7F, n & 0x7F])
        return bytes([0x80 | n >> 22, 0x80 | (n >> 15) & 0x7F, 0x80 | (n >> 8) & 0x7F, n & 0xFF])

    def string(self, s):
        if s == "":
            return b"\x01"
        if s in self.strings:
            return self.u29(self.strings[s] << 1)
        self.strings[s] = len(self.strings)
        raw = s.encode()
        return self.u29(len(raw) << 1 | 1) + raw

    def value(self, v):
        if v is None:
            return b"\x01"
        if v is True or v is False:
            return b"\x03" if v else b"\x02"
        if isinstance(v, float):
            if v.is_integer() and -(1 << 28) <= v < (1 << 28):
                return b"\x04" + self.u29(int(v) & 0x1FFFFFFF)
            return b"\x05" + struct.pack(">d", v)
        if isinstance(v, str):
            return b"\x06" + self.string(v)
        if isinstance(v, list):  # dense array
            return b"\x09" + self.u29(len(v) << 1 | 1) + b"\x01" + b"".join(self.value(x) for x in v)
        if "ecma" in v:  # associative array
            body = b"".join(self.string(k) + self.value(x) for k, x in v["ecma"].items())
            return b"\x09" + self.u29(1) + body + b"\x01"
        # An anonymous dynamic object; its traits are referenced after the first one.
        if "" in self.traits:
            head = self.u29(self.traits[""] << 2 | 1)
        else:
            self.traits[""] = len(self.traits)
            head = self.u29(0x0B) + self.string("")
        body = b"".join(self.string(k) + self.value(x) for k, x in v.items())
        return b"\x0A" + head + body + b"\x01"


def amf0_switched(values):
    """AMF0 values where each object goes behind the 0x11 switch, as an AMF3 client sends them."""
    out = bytearray()
    for v in values:
        if isinstance(v, str):
            raw = v.encode()
            out += b"\x02" + len(raw).to_bytes(2, "big") + raw
        elif isinstance(v, float):
            out += b"\x00" + struct.pack(">d", v)
        elif v is None:
            out += b"\x05"
        else:
            out += b"\x11" + Amf3Encoder().value(v)
    return bytes(out)


def flv_tags(data):
    """(type, body) of each tag of an FLV file."""
    pos, out = int.from_bytes(data[5:9], "big") + 4, []
    while pos + 11 <= len(data):
        size = int.from_bytes(data[pos + 1:pos + 4], "big")
        out.append((data[pos] & 0x1F, data[pos + 11:pos + 11 + size]))
        pos += 11 + size + 4
    return out


def mp4_box(data, name):
    """The payload of the first box called `name`, searched for as bytes (enough for ffmpeg's files)."""
    at = data.index(name) - 4
    return data[at + 8:at + int.from_bytes(data[at:at + 4], "big")]


def main():
    rec, corpus = sys.argv[1], sys.argv[2]
    seeds = {t: {} for t in TARGETS}

    def read(name):
        with open(os.path.join(rec, name), "rb") as f:
            return f.read()

    # Real RTMP sessions: the chunk stream after the handshake, and the messages in it.
    sessions = {}
    for name in sorted(os.listdir(rec)):
        if name.endswith(".rtmp"):
            # GStreamer's flvmux puts the wall-clock time in onMetaData: a fixed date of the same
            # length keeps the seeds reproducible (and every length field right).
            fixed = {23: b"Thu Jan 1 00:00:00 1970", 24: b"Thu Jan 01 00:00:00 1970"}
            stream = re.sub(rb"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]?\d \d\d:\d\d:\d\d \d{4}",
                            lambda m: fixed[len(m.group())], read(name)[HANDSHAKE:])
            client = name[:-len(".rtmp")]
            # Byte 0 of a chunk_reader input picks the split seed and the ext-ts mode (0 = auto).
            seeds["chunk_reader"][client] = b"\x00" + stream
            sessions[client] = dechunk(stream)

    command_values, seen = {}, set()
    for client in sorted(sessions, key=lambda c: (len(c), c)):  # a plain recording names the seed
        for type_, _, body in sessions[client]:
            if type_ in (18, 20) and body not in seen:
                seen.add(body)
                values = amf0_values(body)
                label = "%s-%s" % (client, values[0].lstrip("@").replace("|", ""))
                if type_ == 20:
                    seeds["commands"][label] = body
                    command_values[label] = values
                seeds["amf0"][label] = body
    # The same commands as an AMF3 client sends them: type 17 (a format byte, then AMF0 values with
    # the objects behind the 0x11 switch), and the values on their own in AMF3.
    for label, values in command_values.items():
        if values[0] in ("connect", "publish", "play"):
            switched = amf0_switched(values)
            seeds["commands"][label + "-amf3"] = b"\x00" + switched
            seeds["amf0"][label + "-switch"] = switched
            enc = Amf3Encoder()
            seeds["amf3"][label] = b"".join(enc.value(v) for v in values)

    # Media: tag bodies from ffmpeg's FLV and from the server's VOD of an x265 MP4 (rtmpdump's
    # recording). codec inputs start with a byte that picks the message type: 0 audio, 1 video,
    # 2 AMF0 data, 3 AMF3 data.
    selector = {8: b"\x00", 9: b"\x01", 18: b"\x02"}
    for flv in ("avc-aac.flv", "hevc-vod.flv"):
        first = {}  # the first tag of each kind
        for type_, body in flv_tags(read(flv)):
            if type_ == 18:
                kind = "metadata"
            elif type_ == 8:
                kind = "aac-config" if body[1] == 0 else "aac-frame"
            elif body[0] & 0x80:  # Enhanced: the packet type is the low nibble
                kind = "video-config" if body[0] & 0x0F == 0 else "video-frame"
            else:  # legacy AVC: AVCPacketType
                kind = "video-config" if body[1] == 0 else "video-frame"
            first.setdefault(kind, (type_, body))
        clip = flv[:-len(".flv")]
        for kind, (type_, body) in first.items():
            seeds["codec"]["%s-%s" % (clip, kind)] = selector[type_] + body
        metadata = amf0_values(first["metadata"][1])
        seeds["amf3"][clip + "-metadata"] = Amf3Encoder().value(metadata[1])
        seeds["codec"][clip + "-metadata-amf3"] = b"\x03\x00" + amf0_switched(metadata)

    # The configuration records and parameter sets on their own, for the record parsers.
    avc_tags = dict(reversed(flv_tags(read("avc-aac.flv"))))  # type -> first tag: the sequence headers
    avcc = avc_tags[9][5:]
    seeds["codec"]["avcC"] = avcc
    seeds["codec"]["avc-sps"] = avcc[8:8 + int.from_bytes(avcc[6:8], "big")]
    seeds["codec"]["aac-AudioSpecificConfig"] = avc_tags[8][2:]
    hevc = read("hevc.mp4")
    hvcc = mp4_box(hevc, b"hvcC")
    seeds["codec"]["hvcC"] = hvcc
    # hvcC arrays: VPS, SPS, PPS after the 23-byte fixed part; take the SPS.
    pos, nals = 23, {}
    for _ in range(hvcc[22]):
        nal_type, count, pos = hvcc[pos] & 0x3F, int.from_bytes(hvcc[pos + 1:pos + 3], "big"), pos + 3
        for _ in range(count):
            n = int.from_bytes(hvcc[pos:pos + 2], "big")
            nals.setdefault(nal_type, hvcc[pos + 2:pos + 2 + n])
            pos += 2 + n
    seeds["codec"]["hevc-sps"] = nals[33]

    # Enhanced RTMP forms no client here sends, built around the real records above
    # (docs/protocol.md, "ExVideoTagHeader", "ExAudioTagHeader", "Multitrack", "ModEx").
    asc = avc_tags[8][2:]
    avc_frame = next(b for t, b in flv_tags(read("avc-aac.flv")) if t == 9 and b[1] == 1)
    seeds["codec"]["ex-avc1-config"] = b"\x01\x90avc1" + avcc
    seeds["codec"]["ex-hevc-legacy-id12-config"] = b"\x01\x1c\x00\x00\x00\x00" + hvcc
    tracks = b"avc1\x00" + len(avcc).to_bytes(3, "big") + avcc + b"hvc1\x01" + len(hvcc).to_bytes(3, "big") + hvcc
    seeds["codec"]["ex-multitrack-many-codecs-config"] = b"\x01\x96\x20" + tracks
    seeds["codec"]["ex-multitrack-one-track-frame"] = b"\x01\x96\x01avc1\x01" + avc_frame[2:]
    modex = b"\x02" + (123456).to_bytes(3, "big") + b"\x01"  # 3 bytes of ModEx data, then type 0 / CodedFrames
    seeds["codec"]["ex-modex-nano-offset-frame"] = b"\x01\x97" + modex + b"avc1" + avc_frame[2:]
    seeds["codec"]["ex-mp4a-config"] = b"\x00\x90mp4a" + asc
    # ManyTracks of CodedFrames: track 0 empty, track 1 with some bytes.
    seeds["codec"]["ex-audio-multitrack-frame"] = b"\x00\x95\x11mp4a" + b"\x00\x00\x00\x00" + \
        b"\x01" + len(asc).to_bytes(3, "big") + asc
    seeds["codec"]["ex-video-command"] = b"\x01\xd0\x00"

    for name in ("avc-aac.flv", "avc-aac-keyframe-index.flv", "aac.flv", "hevc-vod.flv"):
        seeds["flv_parser"][name] = seeds["flv_reader"][name] = read(name)
    for name in ("avc-aac.mp4", "avc-aac-faststart.mp4", "hevc.mp4", "aac.m4a"):
        seeds["mp4_demuxer"][name] = read(name)

    for target, files in seeds.items():
        d = os.path.join(corpus, target)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            os.remove(os.path.join(d, old))
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("%-13s %3d seeds, %6d bytes" % (target, len(files), sum(len(x) for x in files.values())))


if __name__ == "__main__":
    main()
