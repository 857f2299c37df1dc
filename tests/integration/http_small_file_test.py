#!/usr/bin/python3
"""Small files answered from memory (server/http/small_file_cache.hpp, docs/http.md "Small files
from memory"): repeated GETs byte-exact (keep-alive, new connections, pipelined, HTTP/1.0), HEAD,
Range, If-None-Match, If-Match, If-Range and 416 on cached entries exactly as from the disk; a file
rewritten, replaced or grown past the cache's limit is served new within the revalidation
interval (1 s) plus a margin, a removed one turns into 404, a missing one that appears is served
within the interval too, and an upload is downloaded at once; a symlink swapped to point outside
the root is never followed to serve the outside bytes, and an app with follow_symlinks: false does
not serve what another app cached through a symlink. Every request is in the access log; no file
descriptor is left open."""
import http.client
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

# Revalidation interval (SmallFileCache::kValidMs) and the margin a loaded CI machine gets.
VALID_S = 1.0
MARGIN_S = 2.0

hport = free_port()
TOKEN = "small-file-test"
server = Server("http-small-file",
                extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n  upload:\n    token: {TOKEN}\n",
                apps="  vod: { type: vod, root: ./media }\n"
                     "  strict: { type: vod, root: ./media, follow_symlinks: false }\n")
media = os.path.join(server.dir, "media")
outside = os.path.join(server.dir, "outside")
os.makedirs(media)
os.makedirs(outside)
rnd = random.Random(16)
files = {
    "tiny.mp4": b"hello!!!\n",                      # the 9-byte answer of the seeds' benchmarks
    "small.mp4": rnd.randbytes(4096),
    "edge.m4a": rnd.randbytes(64 * 1024),           # the largest file the cache takes
    "over.m4a": rnd.randbytes(64 * 1024 + 1),       # sent from the disk
    "empty.mp3": b"",
}
for name, data in files.items():
    with open(os.path.join(media, name), "wb") as f:
        f.write(data)
with open(os.path.join(media, "inside.mp4"), "wb") as f:
    f.write(b"INSIDE-THE-ROOT")
with open(os.path.join(outside, "secret.mp4"), "wb") as f:
    f.write(b"SECRET-OUTSIDE-THE-ROOT")
os.symlink("inside.mp4", os.path.join(media, "link.mp4"))


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def get(path, headers=None, method="GET", conn=None):
    """(status, headers dict lower-cased, body) over conn (keep-alive) or a new connection."""
    c = conn or http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, body)
    if conn is None:
        c.close()
    return out


def raw_exchange(data, timeout=10):
    """Sends data as is and reads until the server closes (or the timeout)."""
    s = socket.create_connection(("127.0.0.1", hport), timeout=timeout)
    s.sendall(data)
    got = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        got += chunk
    s.close()
    return got


def poll_until(path, want, timeout):
    """GETs path until pred(status, body) holds; returns (seconds it took, every (status, body) seen)."""
    t0 = time.time()
    seen = []
    while True:
        status, _, body = get(path)
        seen.append((status, body))
        if want(status, body):
            return time.time() - t0, seen
        if time.time() - t0 > timeout:
            return None, seen
        time.sleep(0.05)


server.start()
try:
    check(wait_port(hport), "HTTP listener is up")
    get("/vod/small.mp4")  # the threadpool exists from here
    settle_descriptors(server)
    fds_at_start = fd_count(server.proc.pid)

    # Repeated GETs: the first from the disk, the rest from memory; all byte-exact.
    keep = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
    for name, data in files.items():
        bodies = [get(f"/vod/{name}", conn=keep) for _ in range(50)]
        check(all(s == 200 and b == data and h["content-length"] == str(len(data)) for s, h, b in bodies),
              f"{name}: 50 keep-alive GETs, 200 and byte-exact ({len(data)} bytes)")
        check(len({h["etag"] for _, h, _ in bodies}) == 1, f"{name}: one ETag throughout")
        fresh = [get(f"/vod/{name}") for _ in range(20)]
        check(all(s == 200 and b == data for s, _, b in fresh), f"{name}: 20 GETs on new connections byte-exact")

    # HEAD, Range, conditional requests on a cached entry: as from the disk.
    status, h, body = get("/vod/small.mp4", conn=keep)
    etag, last_modified = h["etag"], h["last-modified"]
    check(h["content-type"] == "video/mp4" and h["accept-ranges"] == "bytes" and
          h["access-control-allow-origin"] == "*", "cached answer: Content-Type, Accept-Ranges, CORS")
    status, hh, body = get("/vod/small.mp4", method="HEAD", conn=keep)
    check(status == 200 and body == b"" and hh["content-length"] == "4096" and hh["etag"] == etag and
          hh["last-modified"] == last_modified, "HEAD: the GET's head, no body")
    data = files["small.mp4"]
    status, hr, body = get("/vod/small.mp4", {"Range": "bytes=100-199"}, conn=keep)
    check(status == 206 and body == data[100:200] and hr["content-range"] == "bytes 100-199/4096",
          "Range bytes=100-199: 206 with those bytes")
    status, hr, body = get("/vod/small.mp4", {"Range": "bytes=-10"}, conn=keep)
    check(status == 206 and body == data[-10:] and hr["content-range"] == "bytes 4086-4095/4096", "Range bytes=-10")
    status, hr, body = get("/vod/tiny.mp4", {"Range": "bytes=3-"}, conn=keep)
    check(status == 206 and body == b"lo!!!\n", "Range bytes=3- of the 9-byte file")
    status, hr, body = get("/vod/small.mp4", {"Range": "bytes=5000-"}, conn=keep)
    check(status == 416 and hr["content-range"] == "bytes */4096", "Range past the end: 416 with bytes */4096")
    status, hr, body = get("/vod/empty.mp3", {"Range": "bytes=0-"}, conn=keep)
    check(status == 416 and hr["content-range"] == "bytes */0", "any Range of an empty file: 416")
    status, hr, body = get("/vod/small.mp4", {"Range": "bytes=0-9", "If-Range": '"stale"'}, conn=keep)
    check(status == 200 and body == data, "If-Range with another ETag: the whole file")
    status, hr, body = get("/vod/small.mp4", {"Range": "bytes=0-9", "If-Range": etag}, conn=keep)
    check(status == 206 and body == data[:10], "If-Range with the ETag: the range")
    status, hr, body = get("/vod/small.mp4", {"If-None-Match": etag}, conn=keep)
    check(status == 304 and body == b"" and hr["etag"] == etag, "If-None-Match with the ETag: 304, no body")
    status, hr, body = get("/vod/small.mp4", {"If-Modified-Since": last_modified}, conn=keep)
    check(status == 304, "If-Modified-Since its Last-Modified: 304")
    status, hr, body = get("/vod/small.mp4", {"If-None-Match": '"other"'}, conn=keep)
    check(status == 200 and body == data, "If-None-Match with another ETag: 200")
    status, hr, body = get("/vod/small.mp4", {"If-Match": '"other"'}, conn=keep)
    check(status == 412, "If-Match with another ETag: 412")
    status, hr, body = get("/vod/small.mp4", {"Range": "bytes=0-0"}, method="HEAD", conn=keep)
    check(status == 200 and body == b"" and hr["content-length"] == "4096", "HEAD ignores Range")
    keep.close()

    # Pipelined: answers in order, each body right after its own head.
    reqs = (b"GET /vod/tiny.mp4 HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /vod/small.mp4 HTTP/1.1\r\nHost: t\r\nRange: bytes=10-19\r\n\r\n"
            b"HEAD /vod/small.mp4 HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /vod/edge.m4a HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /vod/tiny.mp4 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    raw = raw_exchange(reqs)
    answers = []  # (status, headers, body); the third is the HEAD's: a Content-Length and no body
    rest = raw
    for i in range(5):
        head, tail = rest.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        hdrs = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
        n = 0 if i == 2 else int(hdrs.get("content-length", "0"))
        answers.append((int(lines[0].split(" ")[1]), hdrs, tail[:n]))
        rest = tail[n:]
    check(rest == b"", "pipelined: nothing after the five answers")
    check([a[0] for a in answers] == [200, 206, 200, 200, 200], f"pipelined: statuses {[a[0] for a in answers]}")
    check(answers[0][2] == files["tiny.mp4"] and answers[1][2] == files["small.mp4"][10:20] and
          answers[2][2] == b"" and answers[3][2] == files["edge.m4a"] and answers[4][2] == files["tiny.mp4"],
          "pipelined: every body byte-exact and in order")
    check(answers[4][1].get("connection") == "close", "pipelined: the last answer closes")

    # HTTP/1.0 without keep-alive: the answer, then the server closes (cleanly: the whole body).
    raw = raw_exchange(b"GET /vod/small.mp4 HTTP/1.0\r\n\r\n")
    check(raw.endswith(b"\r\n\r\n" + files["small.mp4"]) and b"Connection: close" in raw,
          "HTTP/1.0: whole answer, then the connection closes")
    many = [raw_exchange(b"GET /vod/tiny.mp4 HTTP/1.0\r\n\r\n") for _ in range(30)]
    check(all(r.endswith(b"\r\n\r\nhello!!!\n") for r in many), "30 HTTP/1.0 requests, each answered whole")

    # A file rewritten on disk is served new within the interval (+ margin), and never old after.
    path = os.path.join(media, "small.mp4")
    check(get("/vod/small.mp4")[2] == files["small.mp4"], "small.mp4 cached")
    new = rnd.randbytes(4096)
    with open(path, "r+b") as f:  # in place, same size
        f.write(new)
    took, seen = poll_until("/vod/small.mp4", lambda s, b: b == new, VALID_S + MARGIN_S)
    check(took is not None, f"rewritten in place: served new after {took} s (at most {VALID_S} + margin)")
    check(all(b in (files["small.mp4"], new) for _, b in seen), "rewritten: only the old or the new bytes")
    after = [get("/vod/small.mp4")[2] for _ in range(10)]
    check(all(b == new for b in after), "rewritten: never the old bytes again")
    # Replaced by a rename (what an upload does), with another size.
    newer = rnd.randbytes(1000)
    with open(os.path.join(media, ".tmp-upload"), "wb") as f:
        f.write(newer)
    os.replace(os.path.join(media, ".tmp-upload"), path)
    took, _ = poll_until("/vod/small.mp4", lambda s, b: b == newer, VALID_S + MARGIN_S)
    check(took is not None, f"replaced by a rename: served new after {took} s")
    status, h, _ = get("/vod/small.mp4")
    check(h["content-length"] == "1000", "replaced: the new Content-Length")
    # Grown past what the cache takes: served from the disk, whole.
    grown = rnd.randbytes(200_000)
    with open(path, "wb") as f:
        f.write(grown)
    took, _ = poll_until("/vod/small.mp4", lambda s, b: b == grown, VALID_S + MARGIN_S)
    check(took is not None, f"grown to 200 kB: served whole from the disk after {took} s")
    # Removed: 404 within the interval.
    check(get("/vod/tiny.mp4")[2] == files["tiny.mp4"], "tiny.mp4 cached")
    os.unlink(os.path.join(media, "tiny.mp4"))
    took, seen = poll_until("/vod/tiny.mp4", lambda s, b: s == 404, VALID_S + MARGIN_S)
    check(took is not None, f"removed: 404 after {took} s")
    check(all(get("/vod/tiny.mp4")[0] == 404 for _ in range(5)), "removed: 404 from then on")
    # A missing name (404s are remembered for the interval too) that appears is served within it.
    check(all(get("/vod/later.mp4")[0] == 404 for _ in range(5)), "later.mp4: 404 while it does not exist")
    with open(os.path.join(media, "later.mp4"), "wb") as f:
        f.write(b"I AM HERE NOW")
    took, seen = poll_until("/vod/later.mp4", lambda s, b: s == 200 and b == b"I AM HERE NOW", VALID_S + MARGIN_S)
    check(took is not None and all(s in (200, 404) for s, _ in seen), f"appeared: served after {took} s")
    # An upload over a cached file, and of a name just found missing: downloaded new at once.
    for name, old in (("edge.m4a", files["edge.m4a"]), ("fresh.mp4", None)):
        status, _, body = get(f"/vod/{name}")
        check((status, body) == ((200, old) if old else (404, body)), f"{name}: {status} before the upload")
        upload = rnd.randbytes(5000)
        c = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
        c.request("PUT", f"/vod/{name}", body=upload, headers={"Authorization": f"Bearer {TOKEN}"})
        r = c.getresponse()
        r.read()
        c.close()
        check(r.status in (201, 204), f"{name}: uploaded ({r.status})")
        status, _, body = get(f"/vod/{name}")
        check(status == 200 and body == upload, f"{name}: the upload is served at once")

    # A symlink swapped to point outside the root: the outside bytes are never served.
    check(get("/vod/link.mp4")[2] == b"INSIDE-THE-ROOT", "link.mp4 (inside the root) served and cached")
    check(get("/strict/link.mp4")[0] == 404, "follow_symlinks: false does not serve what another app cached")
    tmp = os.path.join(media, ".swap")
    os.symlink(os.path.join(outside, "secret.mp4"), tmp)
    os.replace(tmp, os.path.join(media, "link.mp4"))
    took, seen = poll_until("/vod/link.mp4", lambda s, b: s == 404, VALID_S + MARGIN_S)
    check(all(b"SECRET" not in b for _, b in seen), f"swapped symlink: never the outside bytes ({len(seen)} GETs)")
    check(took is not None, f"swapped symlink: 404 after {took} s")
    check(all(get("/vod/link.mp4")[0] == 404 and get("/strict/link.mp4")[0] == 404 for _ in range(5)),
          "swapped symlink: 404 from then on, in both apps")

    # The access log has a line per request, cached or not.
    time.sleep(0.2)
    lines = [l for l in server.log_text().splitlines() if "event=request" in l and 'path="/vod/edge.m4a"' in l]
    lines = [l for l in lines if "method=GET" in l][:71]  # before the upload replaced it
    check(len(lines) == 71 and all("status=200" in l and f"bytes={64 * 1024}" in l for l in lines),
          f"access log: {len(lines)} lines for edge.m4a, status and bytes right")

    check(server.alive(), "server still running")
    deadline = time.time() + 5
    while fd_count(server.proc.pid) > fds_at_start and time.time() < deadline:
        time.sleep(0.2)
    check(fd_count(server.proc.pid) <= fds_at_start, "no file descriptor left open")
finally:
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
print("PASS")
