#!/usr/bin/python3
"""HTTP listener basics and hostile clients: keep-alive, pipelining (answers in order), HTTP/1.0,
clean 4xx answers (400 garbage / unknown method / missing Host, 404, 405 with Allow, 413, 414,
417, 431, 505), the
slowloris limit (408 and close), idle connections closed, many connections at once; the server
stays up and exits 0 under ASan (no leaks)."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403


class Conn:
    """A raw HTTP/1.x client socket with a read buffer, so pipelined responses can be read one by one."""

    def __init__(self, port, timeout=5):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def _fill(self):
        chunk = self.s.recv(65536)
        if not chunk:
            raise EOFError("closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def response(self, head=False):
        """(status, headers dict with lower-case names, body)."""
        status_line = self._line().decode()
        status = int(status_line.split()[1])
        headers = {}
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.decode().split(":", 1)
            headers[k.strip().lower()] = v.strip()
        body = b""
        if head or status in (204, 304):
            return status, headers, body
        if headers.get("transfer-encoding") == "chunked":
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    self._line()
                    break
                body += self._take(size)
                self._line()
        elif "content-length" in headers:
            body = self._take(int(headers["content-length"]))
        else:
            try:
                while True:
                    self._fill()
            except (EOFError, ConnectionResetError):
                pass
            body, self.buf = self.buf, b""
        return status, headers, body

    def closed(self, timeout=5.0):
        self.s.settimeout(timeout)
        try:
            while True:
                data = self.s.recv(65536)
                if not data:
                    return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        self.s.close()


def get(path, host=True, extra=""):
    h = "Host: t\r\n" if host else ""
    return f"GET {path} HTTP/1.1\r\n{h}{extra}\r\n".encode()


require_tools("ffmpeg")
hport = free_port()
server = vod_server("http-errors")
with open(server.config) as f:
    cfg = f.read()
with open(server.config, "w") as f:
    f.write(cfg.replace("apps:\n", f"http:\n  listen: 127.0.0.1:{hport}\napps:\n", 1))
media = os.path.join(server.dir, "media")
with open(os.path.join(media, "small.mp4"), "wb") as f:
    f.write(os.urandom(1000))
server.start()
check(wait_port(hport), "HTTP listener is up")
log_before = server.log_text()
check(f"event=listen proto=http address=127.0.0.1:{hport}" in log_before, "log names the HTTP listen address")
try:
    small = open(os.path.join(media, "small.mp4"), "rb").read()

    # Keep-alive: several requests, one connection.
    c = Conn(hport)
    for i in range(3):
        c.send(get("/vod/small.mp4"))
        st, h, body = c.response()
        check(st == 200 and body == small, f"keep-alive request {i + 1}: 200 and the file's bytes")
    check(h.get("connection") != "close", "keep-alive: no Connection: close")

    # Pipelining: four requests in one write; the answers come in order.
    c.send(get("/vod/small.mp4") + get("/nope/x") + b"HEAD /vod/small.mp4 HTTP/1.1\r\nHost: t\r\n\r\n" +
           get("/vod/small.mp4", extra="Range: bytes=0-9\r\n"))
    r1 = c.response()
    r2 = c.response()
    r3 = c.response(head=True)
    r4 = c.response()
    check(r1[0] == 200 and r1[2] == small, "pipelined 1: 200 with the file")
    check(r2[0] == 404, "pipelined 2: 404")
    check(r3[0] == 200 and r3[1].get("content-length") == str(len(small)), "pipelined 3: HEAD 200 with Content-Length")
    check(r4[0] == 206 and r4[2] == small[:10], "pipelined 4: 206 with the first 10 bytes")
    # A pipelined burst split at awkward places still parses.
    burst = get("/vod/small.mp4") * 5
    for i in range(0, len(burst), 7):
        c.send(burst[i:i + 7])
    check(all(c.response()[2] == small for _ in range(5)), "five pipelined requests sent 7 bytes at a time")
    c.close()

    # Connection: close is honoured.
    c = Conn(hport)
    c.send(get("/vod/small.mp4", extra="Connection: close\r\n"))
    st, h, body = c.response()
    check(st == 200 and h.get("connection") == "close" and c.closed(), "Connection: close: answered, then closed")

    # HTTP/1.0: no keep-alive unless asked, no Host needed.
    c = Conn(hport)
    c.send(b"GET /vod/small.mp4 HTTP/1.0\r\n\r\n")
    st, h, body = c.response()
    check(st == 200 and body == small and c.closed(), "HTTP/1.0: 200, then closed")
    c = Conn(hport)
    c.send(b"GET /vod/small.mp4 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    st, h, body = c.response()
    check(st == 200 and h.get("connection") == "keep-alive", "HTTP/1.0 keep-alive: Connection: keep-alive")
    c.send(b"GET /vod/small.mp4 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    check(c.response()[0] == 200, "HTTP/1.0 keep-alive: second request answered")
    c.close()

    def one(request, expect, label, closes=True):
        c = Conn(hport)
        c.send(request)
        try:
            st, h, body = c.response()
        except (EOFError, ConnectionResetError) as e:
            fail(f"{label}: no response ({e})")
        check(st == expect, f"{label}: {expect} (got {st}: {body[:80]!r})")
        if closes:
            check(c.closed(), f"{label}: connection closed after the answer")
        c.close()
        return h

    one(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n", 400, "TLS/garbage bytes")
    one(b"GET /vod/small.mp4 HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 without Host")
    one(b"GET /vod/small.mp4 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Host headers")
    one(b"BREW /pot HTTP/1.1\r\nHost: t\r\n\r\n", 400, "unknown method")
    h = one(get("/vod/small.mp4").replace(b"GET", b"DELETE"), 405, "DELETE on a VOD file", closes=False)
    check("GET" in h.get("allow", ""), "405 carries Allow")
    one(get("/vod/" + "a" * 9000 + ".mp4"), 414, "9 KB URL")
    one(get("/vod/small.mp4", extra="X-Big: " + "b" * 20000 + "\r\n"), 431, "20 KB header")
    one(get("/vod/small.mp4", extra="".join(f"X-{i}: v\r\n" for i in range(150))), 431, "150 header fields")
    one(get("/vod/small.mp4", extra="Content-Length: 10000000\r\n"), 413, "GET with a 10 MB body")
    one(get("/vod/small.mp4", extra="Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), 400,
        "Content-Length and chunked together (smuggling)")
    one(b"GET /vod/small.mp4 HTTP/2.0\r\nHost: t\r\n\r\n", 505, "HTTP/2.0 request line")
    one(get("/vod/small.mp4", extra="Expect: tea\r\n"), 417, "unknown expectation")
    one(get("/unknown-app/x.flv"), 404, "unknown app", closes=False)
    one(get("/favicon.ico"), 404, "path without an app (/ is the browser page)", closes=False)
    # A small body on a GET is read and dropped, and the connection stays usable.
    c = Conn(hport)
    c.send(get("/vod/small.mp4", extra="Content-Length: 5\r\n") + b"hello" + get("/vod/small.mp4"))
    check(c.response()[0] == 200 and c.response()[0] == 200, "GET with a small body, then another request")
    c.close()

    # Slowloris: a head that never completes gets 408 and the connection is closed (10 s limit).
    t0 = time.time()
    slow = Conn(hport, timeout=20)
    slow.send(b"GET /vod/small.mp4 HTTP/1.1\r\nHost: t\r\n")
    idle = Conn(hport, timeout=20)  # connects and sends nothing
    ka = Conn(hport, timeout=20)  # keep-alive after one request, then silent
    ka.send(get("/vod/small.mp4"))
    check(ka.response()[0] == 200, "keep-alive client: first answer")
    for i in range(8):  # dribble: a byte a second does not reset the clock
        time.sleep(1)
        slow.send(b"X")
    try:
        st, h, body = slow.response()
    except (EOFError, ConnectionResetError):
        st = None
    took = time.time() - t0
    check(st == 408, f"slowloris: 408 after {took:.1f} s")
    check(9 <= took <= 14, "slowloris: within the 10 s limit (+ tick)")
    check(slow.closed(), "slowloris: connection closed")
    check(idle.closed(timeout=5), "a connection that sends nothing is closed")
    check(ka.closed(timeout=10), "an idle keep-alive connection is closed (15 s)")

    # Many connections at once, each with a request: all answered.
    conns = [Conn(hport) for _ in range(200)]
    for c in conns:
        c.send(get("/vod/small.mp4"))
    ok = sum(1 for c in conns if c.response()[2] == small)
    for c in conns:
        c.close()
    check(ok == 200, f"200 simultaneous connections answered ({ok})")
    check(server.alive(), "server still running")
    counts = guard_events(hport)
    for event, least in (("http_header_too_large", 2), ("http_url_too_long", 1), ("http_bad_request", 2),
                         ("http_timeout", 1)):
        check(counts.get(event, 0) >= least, f"/metrics counts {event} ({counts.get(event, 0)} >= {least})")
finally:
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc}; ASan reports leaks as a failure)")
log = server.log_text()
check("event=bad_request status=431" in log, "log has the 431")
check("event=timeout" in log, "log has the slowloris timeout")
print("PASS")
