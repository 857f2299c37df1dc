"""Helpers the WebRTC tests share (docs/webrtc.md): a STUN Binding request built the way a
browser builds it."""
import hashlib
import hmac
import os
import struct
import zlib

MAGIC = 0x2112A442


def stun_request(username, password, controlling=True, nominate=True):
    tid = os.urandom(12)
    attrs = b""

    def add(t, v):
        nonlocal attrs
        attrs += struct.pack(">HH", t, len(v)) + v + b"\0" * ((4 - len(v) % 4) % 4)

    add(0x0006, username.encode())
    add(0x0024, struct.pack(">I", 1853824767))  # PRIORITY
    add(0x802A if controlling else 0x8029, os.urandom(8))
    if nominate:
        add(0x0025, b"")  # USE-CANDIDATE
    head = struct.pack(">HHI", 0x0001, len(attrs) + 24, MAGIC) + tid
    mac = hmac.new(password.encode(), head + attrs, hashlib.sha1).digest()
    attrs += struct.pack(">HH", 0x0008, 20) + mac
    head = struct.pack(">HHI", 0x0001, len(attrs) + 8, MAGIC) + tid
    crc = (zlib.crc32(head + attrs) ^ 0x5354554E) & 0xFFFFFFFF
    attrs += struct.pack(">HHI", 0x8028, 4, crc)
    head = struct.pack(">HHI", 0x0001, len(attrs), MAGIC) + tid
    return tid, head + attrs
