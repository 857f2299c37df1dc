"""A raw RTMP client for the hostile tests: handshake, chunking, AMF0 commands and media with
any stream id, timestamps and order, and a reader that reports what the server said.

It does what a real client does on the wire and nothing more, so a test can misbehave in one
precise way (never read, play on ids nobody created, jump timestamps) and check the answer.
"""
import os
import socket
import struct
import time

from common import flv_tag_bodies

# ---- AMF0 ----


def amf_encode(v):
    if v is None:
        return b"\x05"
    if isinstance(v, bool):
        return b"\x01" + (b"\x01" if v else b"\x00")
    if isinstance(v, (int, float)):
        return b"\x00" + struct.pack(">d", float(v))
    if isinstance(v, str):
        raw = v.encode()
        if len(raw) > 0xFFFF:
            return b"\x0c" + struct.pack(">I", len(raw)) + raw
        return b"\x02" + struct.pack(">H", len(raw)) + raw
    if isinstance(v, dict):
        out = b"\x03"
        for k, x in v.items():
            kb = k.encode()
            out += struct.pack(">H", len(kb)) + kb + amf_encode(x)
        return out + b"\x00\x00\x09"
    raise TypeError(f"cannot encode {type(v)}")


def _amf_decode(b, i):
    t = b[i]
    i += 1
    if t == 0x00:
        return struct.unpack(">d", b[i:i + 8])[0], i + 8
    if t == 0x01:
        return b[i] != 0, i + 1
    if t == 0x02:
        n = struct.unpack(">H", b[i:i + 2])[0]
        return b[i + 2:i + 2 + n].decode(errors="replace"), i + 2 + n
    if t == 0x0C:
        n = struct.unpack(">I", b[i:i + 4])[0]
        return b[i + 4:i + 4 + n].decode(errors="replace"), i + 4 + n
    if t in (0x05, 0x06):
        return None, i
    if t in (0x03, 0x08):
        if t == 0x08:
            i += 4
        obj = {}
        while True:
            n = struct.unpack(">H", b[i:i + 2])[0]
            i += 2
            if n == 0 and b[i] == 0x09:
                return obj, i + 1
            k = b[i:i + n].decode(errors="replace")
            i += n
            obj[k], i = _amf_decode(b, i)
    if t == 0x0A:
        n = struct.unpack(">I", b[i:i + 4])[0]
        i += 4
        arr = []
        for _ in range(n):
            x, i = _amf_decode(b, i)
            arr.append(x)
        return arr, i
    raise ValueError(f"AMF0 type {t:#x} not handled")


def amf_decode_all(b):
    out, i = [], 0
    while i < len(b):
        v, i = _amf_decode(b, i)
        out.append(v)
    return out


# ---- Messages ----


class Message:
    def __init__(self, csid, mtype, ts, sid, payload):
        self.csid, self.type, self.timestamp, self.stream_id, self.payload = csid, mtype, ts, sid, payload

    def command(self):
        """(name, transaction, [args]) of an AMF0 command or data message, else None."""
        if self.type not in (18, 20):
            return None
        vals = amf_decode_all(self.payload)
        if self.type == 18:
            return vals[0], 0, vals[1:]
        return vals[0], vals[1], vals[2:]

    def status_code(self):
        c = self.command()
        if not c or c[0] not in ("onStatus", "onPlayStatus"):
            return None
        args = [a for a in c[2] if isinstance(a, dict)]
        if c[0] == "onPlayStatus":
            args = [a for a in [c[1]] + c[2] if isinstance(a, dict)]
        return args[0].get("code") if args else None

    def user_control(self):
        """(event, value) of a user control message, else None."""
        if self.type != 4 or len(self.payload) < 6:
            return None
        return struct.unpack(">HI", self.payload[:6])


class RtmpClient:
    def __init__(self, port, host="127.0.0.1", timeout=10.0, handshake=True, source=None, first=b""):
        """source: the local address to connect from ("127.0.0.2"); first: bytes sent before the
        handshake (a PROXY header)."""
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        if first:
            self.sock.sendall(first)
        self.out_chunk = 128
        self.in_chunk = 128
        self.buf = b""
        self.prev = {}  # csid -> [ts, length, type, sid, delta] of the last header read
        self.partial = {}  # csid -> bytes of the message being assembled
        self.messages = []
        self.txn = 1
        self.bytes_read = 0
        self.closed = False
        if handshake:
            self.handshake()

    # -- writing --
    def handshake(self):
        c1 = bytes(8) + os.urandom(1528)
        self.sock.sendall(b"\x03" + c1)
        need = 1 + 1536 * 2
        got = b""
        while len(got) < need:
            chunk = self.sock.recv(need - len(got))
            if not chunk:
                raise ConnectionError("server closed during handshake")
            got += chunk
        self.sock.sendall(got[1:1537])

    def chunks(self, csid, mtype, ts, sid, payload):
        """Wire bytes of one message: a type-0 header, then type-3 continuations."""
        ext = ts >= 0xFFFFFF
        head = bytes([csid & 0x3F]) + struct.pack(">I", min(ts, 0xFFFFFF))[1:] + \
            struct.pack(">I", len(payload))[1:] + bytes([mtype]) + struct.pack("<I", sid)
        if ext:
            head += struct.pack(">I", ts)
        out = bytearray(head)
        for off in range(0, max(len(payload), 1), self.out_chunk):
            if off:
                out += bytes([0xC0 | (csid & 0x3F)])
                if ext:
                    out += struct.pack(">I", ts)
            out += payload[off:off + self.out_chunk]
        return bytes(out)

    def send_raw(self, data):
        self.sock.sendall(data)

    def command_bytes(self, name, args=(), sid=0, txn=None, csid=3):
        if txn is None:
            self.txn += 1
            txn = self.txn
        payload = amf_encode(name) + amf_encode(txn) + b"".join(amf_encode(a) for a in args)
        return self.chunks(csid, 20, 0, sid, payload)

    def command(self, name, *args, sid=0, txn=None):
        self.send_raw(self.command_bytes(name, args, sid, txn))

    def set_chunk_size(self, n):
        self.send_raw(self.chunks(2, 1, 0, 0, struct.pack(">I", n)))
        self.out_chunk = n

    def connect(self, app, tc_url=None):
        self.command("connect", {"app": app, "tcUrl": tc_url or f"rtmp://127.0.0.1/{app}",
                                 "flashVer": "FMLE/3.0", "objectEncoding": 0}, None, txn=1)

    def create_stream(self):
        self.command("createStream", None)

    def play(self, name, sid=1, start=-2000, duration=-1, reset=True):
        self.send_raw(self.command_bytes("play", (None, name, start, duration, reset), sid=sid, txn=0, csid=8))

    def publish(self, name, sid=1, kind="live"):
        self.send_raw(self.command_bytes("publish", (None, name, kind), sid=sid, txn=0, csid=8))

    def media(self, mtype, ts, payload, sid=1):
        self.send_raw(self.chunks(6 if mtype == 9 else 4, mtype, ts, sid, payload))

    # -- reading --
    def read_some(self, timeout=1.0):
        """Reads what arrives within timeout (or until the server closes); parses messages."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 20)
        except socket.timeout:
            return 0
        except (ConnectionResetError, BrokenPipeError):
            self.closed = True
            return 0
        if not data:
            self.closed = True
            return 0
        self.bytes_read += len(data)
        self.buf += data
        self._parse()
        return len(data)

    def read_for(self, seconds):
        end = time.time() + seconds
        while time.time() < end and not self.closed:
            self.read_some(max(0.01, min(0.5, end - time.time())))

    def wait_for(self, pred, timeout=10.0):
        """Reads until pred(message) holds for a new message; returns it or None."""
        start = len(self.messages)
        end = time.time() + timeout
        while True:
            for m in self.messages[start:]:
                if pred(m):
                    return m
            start = len(self.messages)
            if self.closed or time.time() >= end:
                return None
            self.read_some(min(0.5, max(0.01, end - time.time())))

    def wait_status(self, code, timeout=10.0):
        return self.wait_for(lambda m: m.status_code() == code, timeout)

    def statuses(self):
        return [m.status_code() for m in self.messages if m.status_code()]

    def _parse(self):
        b = self.buf
        i = 0
        while True:
            start = i
            if i >= len(b):
                break
            fmt = b[i] >> 6
            csid = b[i] & 0x3F
            i += 1
            if csid == 0:
                if i >= len(b):
                    i = start
                    break
                csid = 64 + b[i]
                i += 1
            elif csid == 1:
                if i + 1 >= len(b):
                    i = start
                    break
                csid = 64 + b[i] + 256 * b[i + 1]
                i += 2
            hl = (11, 7, 3, 0)[fmt]
            if i + hl > len(b):
                i = start
                break
            p = self.prev.get(csid, [0, 0, 0, 0, 0, False])
            ts, length, mtype, sid, delta, ext = p
            if fmt <= 2:
                t = int.from_bytes(b[i:i + 3], "big")
                ext = t == 0xFFFFFF
            if fmt == 0:
                length = int.from_bytes(b[i + 3:i + 6], "big")
                mtype = b[i + 6]
                sid = struct.unpack("<I", b[i + 7:i + 11])[0]
            elif fmt == 1:
                length = int.from_bytes(b[i + 3:i + 6], "big")
                mtype = b[i + 6]
            i += hl
            if ext:
                if i + 4 > len(b):
                    i = start
                    break
                t = struct.unpack(">I", b[i:i + 4])[0]
                i += 4
            have = self.partial.get(csid, b"")
            take = min(self.in_chunk, length - len(have))
            if i + take > len(b):
                i = start
                break
            if fmt == 0:
                ts, delta = t, 0
            elif fmt in (1, 2):
                delta = t
                if not have:
                    ts = ts + delta
            elif fmt == 3 and not have:
                ts = ts + delta
            have += b[i:i + take]
            i += take
            self.prev[csid] = [ts, length, mtype, sid, delta, ext]
            if len(have) >= length:
                self.partial[csid] = b""
                m = Message(csid, mtype, ts & 0xFFFFFFFF, sid, have)
                if mtype == 1 and len(have) >= 4:
                    self.in_chunk = struct.unpack(">I", have[:4])[0] & 0x7FFFFFFF
                self.messages.append(m)
            else:
                self.partial[csid] = have
        self.buf = b[i:]

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def flv_media_messages(path):
    """[(type, timestamp, payload)] of an FLV file's audio, video and script tags."""
    return flv_tag_bodies(path)


def is_keyframe(mtype, payload):
    return mtype == 9 and len(payload) > 0 and (payload[0] >> 4) == 1
