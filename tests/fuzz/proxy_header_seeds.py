#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/proxy_header/: the first bytes a Sluice listener with the PROXY protocol
receives, in the input format of tests/fuzz/proxy_header_fuzz.cpp (the raw bytes of a connection).

Two kinds of seeds:
  haproxy_*  captured from Debian's haproxy in TCP mode: a small client connects to a frontend on a
             loopback port and sends the first bytes of an RTMP handshake or an HTTP request; the
             backend server line has send-proxy (v1) or send-proxy-v2 (v2, also with the crc32c and
             unique-id TLVs) and points at a listener in this script that records what arrives.
             Health checks with check-send-proxy give the forms a proxy uses for its own
             connections (v2 LOCAL; v1 with the checker's addresses).
  *          (other names) built here for the forms haproxy does not send: v1 UNKNOWN, v2 over UDP
             and AF_UNIX, AF_UNSPEC, a NOOP TLV, and malformed headers the parser must refuse.

The client binds fixed source ports and the frontends listen on fixed ports
(SLUICE_PROXY_SEED_PORT, default 19400, and the next few), so a run writes the same bytes again
unless haproxy changes. Without haproxy only the built seeds are written and the captured ones
are kept. --print-cpp prints the captured seeds as the C++ arrays of
tests/unit/protocol/proxy_header_test.cpp."""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "proxy_header")
BASE = int(os.environ.get("SLUICE_PROXY_SEED_PORT", "19400"))
V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"

# What clients send first: an RTMP C0 and the start of an FFmpeg-style C1 (time 0, version
# 9.0.124.2), and an HTTP-FLV request. They stay after the header, untouched by the parser.
RTMP_FIRST = b"\x03" + b"\x00\x00\x00\x00" + bytes([9, 0, 124, 2]) + bytes(range(1, 8))
HTTP_FIRST = b"GET /live/stream.flv HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"


class Recorder:
    """Accepts on a loopback port and keeps each connection's bytes once the peer closes."""

    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.captures = []
        self.cond = threading.Condition()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn):
        data = b""
        conn.settimeout(3)
        try:
            while True:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        conn.close()
        with self.cond:
            self.captures.append(data)
            self.cond.notify_all()

    def next(self, timeout=5.0):
        deadline = time.time() + timeout
        with self.cond:
            while not self.captures:
                left = deadline - time.time()
                if left <= 0:
                    raise RuntimeError("nothing arrived at the recorder on port %d" % self.port)
                self.cond.wait(left)
            return self.captures.pop(0)


def haproxy_config(app_port, check_v1_port, check_v2_port):
    fronts = [
        ("v1_tcp4", "127.0.0.1:%d" % BASE, "b_v1"),
        ("v1_tcp6", "[::1]:%d" % (BASE + 1), "b_v1"),
        # A dual-stack listener: an IPv4 client is seen as ::ffff:127.0.0.1.
        ("v1_mapped", "[::ffff:127.0.0.1]:%d" % (BASE + 2), "b_v1"),
        ("v2_tcp4", "127.0.0.1:%d" % (BASE + 3), "b_v2"),
        ("v2_tcp6", "[::1]:%d" % (BASE + 4), "b_v2"),
        ("v2_tlv", "127.0.0.1:%d" % (BASE + 5), "b_v2_tlv"),
    ]
    lines = [
        "global",
        "  log stderr format raw local0 emerg",
        "defaults",
        "  mode tcp",
        "  timeout connect 2s",
        "  timeout client 5s",
        "  timeout server 5s",
    ]
    for name, bind, backend in fronts:
        lines += ["frontend %s" % name, "  bind %s" % bind, "  default_backend %s" % backend]
        if name == "v2_tlv":
            # No time or counter in the ID, so that the seed is the same on every run.
            lines.append("  unique-id-format %ci:%cp_%fi:%fp")
    lines += [
        "backend b_v1",
        "  server s 127.0.0.1:%d send-proxy" % app_port,
        "backend b_v2",
        "  server s 127.0.0.1:%d send-proxy-v2" % app_port,
        "backend b_v2_tlv",
        "  server s 127.0.0.1:%d send-proxy-v2 proxy-v2-options crc32c,unique-id" % app_port,
        "backend checks_v1",
        # A fixed source port: a v1 check carries the check connection's own addresses.
        "  server s 127.0.0.1:%d check send-proxy check-send-proxy inter 2s source 127.0.0.1:%d"
        % (check_v1_port, BASE + 23),
        "backend checks_v2",
        "  server s 127.0.0.1:%d check send-proxy-v2 check-send-proxy inter 2s" % check_v2_port,
    ]
    return "\n".join(lines) + "\n"


def client(family, src, dst, payload):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(src)
    s.connect(dst)
    s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    s.settimeout(5)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()


def capture_haproxy():
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None)
    if not haproxy:
        print("haproxy not found (apt-get install haproxy): captured seeds kept as they are", file=sys.stderr)
        return {}
    app, check_v1, check_v2 = Recorder(BASE + 20), Recorder(BASE + 21), Recorder(BASE + 22)
    work = tempfile.mkdtemp(prefix="sluice-proxy-seeds-")
    cfg = os.path.join(work, "haproxy.cfg")
    with open(cfg, "w") as f:
        f.write(haproxy_config(app.port, check_v1.port, check_v2.port))
    proc = subprocess.Popen([haproxy, "-f", cfg, "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seeds = {}
    try:
        # haproxy binds its frontends before it starts checking, so once both checks have arrived
        # the clients can connect. The first checks are spread over inter (2 s).
        seeds["haproxy_v1_check"] = check_v1.next(timeout=10)
        seeds["haproxy_v2_check_local"] = check_v2.next(timeout=10)
        runs = [
            ("haproxy_v1_tcp4_rtmp", socket.AF_INET, ("127.0.0.1", BASE + 50), ("127.0.0.1", BASE), RTMP_FIRST),
            ("haproxy_v1_tcp6_http", socket.AF_INET6, ("::1", BASE + 51), ("::1", BASE + 1), HTTP_FIRST),
            ("haproxy_v1_mapped_http", socket.AF_INET, ("127.0.0.1", BASE + 52), ("127.0.0.1", BASE + 2), HTTP_FIRST),
            ("haproxy_v2_tcp4_rtmp", socket.AF_INET, ("127.0.0.1", BASE + 53), ("127.0.0.1", BASE + 3), RTMP_FIRST),
            ("haproxy_v2_tcp6_http", socket.AF_INET6, ("::1", BASE + 54), ("::1", BASE + 4), HTTP_FIRST),
            ("haproxy_v2_tlv_rtmp", socket.AF_INET, ("127.0.0.1", BASE + 55), ("127.0.0.1", BASE + 5), RTMP_FIRST),
        ]
        for name, family, src, dst, payload in runs:
            client(family, src, dst, payload)
            data = app.next()
            if not data.endswith(payload):
                raise RuntimeError("%s: the capture does not end with what the client sent: %r" % (name, data))
            seeds[name] = data
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err = proc.stderr.read().decode(errors="replace").strip()
        if err:
            print("haproxy: " + err, file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    return seeds


def v2(ver_cmd, fam, body):
    return V2_SIG + bytes([ver_cmd, fam]) + struct.pack(">H", len(body)) + body


def tlv(kind, value):
    return bytes([kind]) + struct.pack(">H", len(value)) + value


def built_seeds():
    ip4 = socket.inet_aton("192.0.2.10") + socket.inet_aton("198.51.100.1") + struct.pack(">HH", 51234, 1935)
    ip6 = (socket.inet_pton(socket.AF_INET6, "2001:db8::10") + socket.inet_pton(socket.AF_INET6, "2001:db8::1")
           + struct.pack(">HH", 443, 8443))
    unix = b"/run/client.sock".ljust(108, b"\x00") + b"/run/sluice.sock".ljust(108, b"\x00")
    return {
        # Accepted forms no haproxy run above produces.
        "v1_unknown_short": b"PROXY UNKNOWN\r\n" + HTTP_FIRST,
        "v1_unknown_long": b"PROXY UNKNOWN ffff:f::1 ffff:f::2 65535 65535\r\n" + RTMP_FIRST,
        "v1_tcp4_max": b"PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n" + RTMP_FIRST,
        "v1_tcp6_max": b"PROXY TCP6 " + b":".join([b"ffff"] * 8) + b" " + b":".join([b"ffff"] * 8)
                       + b" 65535 0\r\n",
        "v2_udp4": v2(0x21, 0x12, ip4) + RTMP_FIRST,
        "v2_tcp6_noop_tlvs": v2(0x21, 0x21, ip6 + tlv(0x04, b"") + tlv(0x04, b"\x00" * 5)
                                + tlv(0x02, b"live.example.com")) + HTTP_FIRST,
        "v2_unix_stream": v2(0x21, 0x31, unix) + RTMP_FIRST,
        "v2_proxy_unspec": v2(0x21, 0x00, b"") + RTMP_FIRST,
        "v2_local_with_body": v2(0x20, 0x11, ip4) + RTMP_FIRST,
        # Refused forms: a bad version nibble, an unknown command, a length past the cap, a TLV
        # that runs past the end, an address block cut short, a v1 line without its CRLF, a port
        # with a leading zero, an IPv4 address with a leading zero.
        "bad_v2_version1": v2(0x11, 0x11, ip4),
        "bad_v2_command2": v2(0x22, 0x11, ip4),
        "bad_v2_length_cap": V2_SIG + b"\x21\x11\x04\x01" + ip4,
        "bad_v2_tlv_overrun": v2(0x21, 0x11, ip4 + b"\x05\x00\x10abc"),
        "bad_v2_short_block": v2(0x21, 0x21, ip4),
        "bad_v1_no_crlf": b"PROXY UNKNOWN " + b"x" * 100,
        "bad_v1_port_leading_zero": b"PROXY TCP4 192.0.2.10 198.51.100.1 051234 1935\r\n",
        "bad_v1_octal": b"PROXY TCP4 192.0.2.010 198.51.100.1 51234 1935\r\n",
        "bad_v1_lf_only": b"PROXY TCP4 192.0.2.10 198.51.100.1 51234 1935\n",
        "bad_rtmp_without_header": RTMP_FIRST,
    }


def print_cpp(seeds):
    for name in sorted(seeds):
        data = seeds[name]
        print("// tests/fuzz/corpus/proxy_header/%s" % name)
        print("const uint8_t k%s[] = {" % "".join(p.capitalize() for p in name.split("_")))
        for i in range(0, len(data), 16):
            print("    " + ", ".join("0x%02x" % b for b in data[i:i + 16]) + ",")
        print("};")


def main():
    os.makedirs(OUT, exist_ok=True)
    captured = capture_haproxy()
    for name, data in list(captured.items()) + list(built_seeds().items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    if "--print-cpp" in sys.argv:
        if not captured:
            captured = {n: open(os.path.join(OUT, n), "rb").read() for n in os.listdir(OUT) if n.startswith("haproxy_")}
        print_cpp(captured)


if __name__ == "__main__":
    main()
