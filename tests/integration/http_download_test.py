#!/usr/bin/python3
"""Progressive download from a VOD app: whole files and random single ranges are byte-exact against
the file on disk (keep-alive, one connection), 416 with "Content-Range: bytes */size", HEAD,
ETag / Last-Modified and conditional requests (304, 412, If-Range), Content-Type per extension,
ffprobe/ffmpeg reading http:// URLs (they seek with Range) get the same packets as from the file,
curl resumes a download, parallel and aborted downloads, and traversal attempts (.., %2e%2e, %2f,
double encoding, absolute, symlink out, hidden, FIFO, directory) get 404 and leak nothing. No file
descriptor is left open afterwards."""
import hashlib
import http.client
import os
import random
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def raw_get(port, target):
    """A request with the target sent exactly as given (curl and http.client normalise paths)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return int(data.split(b" ", 2)[1]), data


require_tools("ffmpeg", "ffprobe", "curl")
hport = free_port()
server = vod_server("http-download")
with open(server.config) as f:
    cfg = f.read()
with open(server.config, "w") as f:
    f.write(cfg.replace("apps:\n", f"http:\n  listen: 127.0.0.1:{hport}\napps:\n", 1))
media = os.path.join(server.dir, "media")
os.makedirs(os.path.join(media, "sub"))
flv = make_media(os.path.join(media, "movie.flv"), seconds=8)
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", flv, "-c", "copy", "-movflags", "+faststart",
                os.path.join(media, "fast.mp4")], check=True)
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", flv, "-c", "copy",
                os.path.join(media, "sub", "end.mp4")], check=True)
rnd = random.Random(6)
blob = os.path.join(media, "blob.m4a")
with open(blob, "wb") as f:
    f.write(rnd.randbytes(3_000_001))
big = os.path.join(media, "big file.mov")  # a space: percent-encoded in the URL
with open(big, "wb") as f:
    for _ in range(100):
        f.write(rnd.randbytes(1 << 20))
with open(os.path.join(media, "empty.mp3"), "wb"):
    pass
# Things that must never be served.
with open(os.path.join(server.dir, "secret.mp4"), "wb") as f:
    f.write(b"SECRET-OUTSIDE-THE-ROOT")
os.symlink(os.path.join(server.dir, "secret.mp4"), os.path.join(media, "link-out.mp4"))
os.symlink(os.path.join(server.dir, "secret.mp4"), os.path.join(media, "sub", "rel-out.mp4"))
os.symlink(os.path.join(media, "fast.mp4"), os.path.join(media, "link-in.mp4"))
with open(os.path.join(media, ".hidden.mp4"), "wb") as f:
    f.write(b"SECRET-HIDDEN")
with open(os.path.join(media, "notes.txt"), "wb") as f:
    f.write(b"SECRET-TEXT")
os.mkfifo(os.path.join(media, "pipe.mp4"))
os.mkdir(os.path.join(media, "dir.mp4"))

server.start()
check(wait_port(hport), "HTTP listener is up")
base = f"http://127.0.0.1:{hport}"
socket.create_connection(("127.0.0.1", hport)).close()
settle_descriptors(server)
fds_at_start = fd_count(server.proc.pid)


def fd_table(pid):
    fd_dir = f"/proc/{pid}/fd"
    return {f: os.readlink(os.path.join(fd_dir, f)) for f in os.listdir(fd_dir)}


fd_table_at_start = fd_table(server.proc.pid)
try:
    data = open(blob, "rb").read()
    size = len(data)
    conn = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)

    def req(method, path, headers=None):
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r, r.read()

    r, body = req("GET", "/vod/blob.m4a")
    check(r.status == 200 and body == data, "GET: 200 and the whole file, byte-exact")
    check(r.getheader("Content-Type") == "audio/mp4", "Content-Type audio/mp4 for .m4a")
    check(r.getheader("Accept-Ranges") == "bytes", "Accept-Ranges: bytes")
    etag, last_modified = r.getheader("ETag"), r.getheader("Last-Modified")
    check(etag and etag.startswith('"') and last_modified and last_modified.endswith("GMT"), "ETag and Last-Modified")

    # Random single ranges, all on the same keep-alive connection.
    bad = 0
    for i in range(60):
        kind = i % 3
        a = rnd.randrange(size)
        if kind == 0:
            b = min(size - 1, a + rnd.randrange(1, 200_000))
            spec, want, first, last = f"bytes={a}-{b}", data[a:b + 1], a, b
        elif kind == 1:
            spec, want, first, last = f"bytes={a}-", data[a:], a, size - 1
        else:
            n = rnd.randrange(1, size + 100)
            first = max(0, size - n)
            spec, want, last = f"bytes=-{n}", data[first:], size - 1
        r, body = req("GET", "/vod/blob.m4a", {"Range": spec})
        if r.status != 206 or body != want or r.getheader("Content-Range") != f"bytes {first}-{last}/{size}":
            bad += 1
            print(f"range {spec}: {r.status} {r.getheader('Content-Range')} {len(body)} bytes")
    check(bad == 0, "60 random ranges (a-b, a-, -n): 206, byte-exact, right Content-Range, one connection")
    r, body = req("GET", "/vod/blob.m4a", {"Range": f"bytes=0-{size + 1000}"})
    check(r.status == 206 and body == data, "a range past the end is clamped")

    for spec in (f"bytes={size}-", f"bytes={size + 10}-{size + 20}", "bytes=-0"):
        r, body = req("GET", "/vod/blob.m4a", {"Range": spec})
        check(r.status == 416 and r.getheader("Content-Range") == f"bytes */{size}", f"{spec}: 416, bytes */{size}")
    for spec in ("bytes=0-1,5-6", "items=0-5", "bytes=9-3", "bytes=x-y"):
        r, body = req("GET", "/vod/blob.m4a", {"Range": spec})
        check(r.status == 200 and body == data, f"{spec}: ignored, 200 with the whole file")

    r, body = req("HEAD", "/vod/blob.m4a")
    check(r.status == 200 and body == b"" and r.getheader("Content-Length") == str(size) and r.getheader("ETag") == etag,
          "HEAD: 200, Content-Length and ETag, no body")
    r, body = req("GET", "/vod/blob.m4a", {"If-None-Match": etag})
    check(r.status == 304 and body == b"" and r.getheader("ETag") == etag, "If-None-Match with the ETag: 304")
    r, body = req("GET", "/vod/blob.m4a", {"If-None-Match": '"other", W/' + etag})
    check(r.status == 304, "If-None-Match list with a weak match: 304")
    r, body = req("GET", "/vod/blob.m4a", {"If-None-Match": '"other"'})
    check(r.status == 200 and body == data, "If-None-Match with another tag: 200")
    r, body = req("GET", "/vod/blob.m4a", {"If-Modified-Since": last_modified})
    check(r.status == 304, "If-Modified-Since = Last-Modified: 304")
    r, body = req("GET", "/vod/blob.m4a", {"If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"})
    check(r.status == 200 and body == data, "If-Modified-Since in 1994: 200")
    r, body = req("GET", "/vod/blob.m4a", {"If-Match": '"nope"'})
    check(r.status == 412, "If-Match with another tag: 412")
    r, body = req("GET", "/vod/blob.m4a", {"Range": "bytes=10-19", "If-Range": etag})
    check(r.status == 206 and body == data[10:20], "If-Range with the ETag: 206")
    r, body = req("GET", "/vod/blob.m4a", {"Range": "bytes=10-19", "If-Range": last_modified})
    check(r.status == 206 and body == data[10:20], "If-Range with Last-Modified: 206")
    r, body = req("GET", "/vod/blob.m4a", {"Range": "bytes=10-19", "If-Range": '"stale"'})
    check(r.status == 200 and body == data, "If-Range with a stale ETag: 200 with the whole file")
    r, body = req("GET", "/vod/empty.mp3")
    check(r.status == 200 and body == b"" and r.getheader("Content-Type") == "audio/mpeg", "an empty .mp3: 200, audio/mpeg")
    r, body = req("GET", "/vod/empty.mp3", {"Range": "bytes=0-"})
    check(r.status == 416, "any range of an empty file: 416")
    for path, ctype in (("/vod/movie.flv", "video/x-flv"), ("/vod/fast.mp4", "video/mp4"),
                        ("/vod/big%20file.mov", "video/quicktime"), ("/vod/link-in.mp4", "video/mp4")):
        r, body = req("HEAD", path)
        check(r.status == 200 and r.getheader("Content-Type") == ctype, f"HEAD {path}: 200 {ctype}")

    # The file changes: the old validators no longer match.
    time.sleep(0.01)
    with open(blob, "ab") as f:
        f.write(b"more")
    r, body = req("GET", "/vod/blob.m4a", {"If-None-Match": etag})
    check(r.status == 200 and body == data + b"more" and r.getheader("ETag") != etag,
          "after the file changed: a new ETag, and the old one gets 200")
    conn.close()

    # Real players over http:// (ffmpeg reads the moov at the end of sub/end.mp4 with a Range).
    for name in ("movie.flv", "fast.mp4", "sub/end.mp4"):
        local = ffprobe_packets(os.path.join(media, name))
        remote = ffprobe_packets(f"{base}/vod/{name}")
        check(len(local) > 300 and remote == local, f"ffprobe over HTTP: {name}: {len(remote)} packets equal the file's")
    dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", f"{base}/vod/sub/end.mp4", "-f", "null", "-"],
                         capture_output=True, text=True, timeout=60)
    check(dec.returncode == 0 and dec.stderr.strip() == "", "ffmpeg decodes the moov-at-end MP4 over HTTP")
    check('path="/vod/sub/end.mp4" status=206' in server.log_text(), "ffmpeg used Range requests (206 in the log)")

    # Large file: whole, resumed, and eight at once.
    big_sha = hashlib.sha256(open(big, "rb").read()).hexdigest()
    out = os.path.join(server.dir, "big.out")
    t0 = time.time()
    subprocess.run(["curl", "-s", "-o", out, f"{base}/vod/big%20file.mov"], check=True, timeout=120)
    took = time.time() - t0
    check(hashlib.sha256(open(out, "rb").read()).hexdigest() == big_sha,
          f"100 MiB file byte-exact ({100 / took:.0f} MiB/s on loopback, ASan build)")
    with open(out, "r+b") as f:
        f.truncate(37 * 1000 * 1000 + 7)
    subprocess.run(["curl", "-s", "-C", "-", "-o", out, f"{base}/vod/big%20file.mov"], check=True, timeout=120)
    check(hashlib.sha256(open(out, "rb").read()).hexdigest() == big_sha, "curl -C - resumes a download byte-exact")
    outs = [os.path.join(server.dir, f"par{i}.out") for i in range(8)]
    procs = [subprocess.Popen(["curl", "-s", "-o", o, f"{base}/vod/big%20file.mov"]) for o in outs]
    for p in procs:
        p.wait(timeout=180)
    same = sum(1 for o in outs if hashlib.sha256(open(o, "rb").read()).hexdigest() == big_sha)
    check(same == 8, f"eight parallel downloads byte-exact ({same}/8)")
    for o in outs + [out]:
        os.unlink(o)
    # Clients that vanish mid-transfer.
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", hport))
        s.sendall(b"GET /vod/big%20file.mov HTTP/1.1\r\nHost: t\r\n\r\n")
        s.recv(100_000)
        s.close()
    s = socket.create_connection(("127.0.0.1", hport))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
    s.sendall(b"GET /vod/big%20file.mov HTTP/1.1\r\nHost: t\r\n\r\n")
    s.recv(100_000)
    s.close()

    # Traversal and other things that are not media files under the root.
    secrets = (b"SECRET", b"root:", b"rtmp:")
    for target in ("/vod/../sluice.yaml", "/vod/%2e%2e/secret.mp4", "/vod/%2E%2E%2Fsecret.mp4",
                   "/vod/sub/..%2f..%2fsecret.mp4", "/vod/sub/%2e%2e/%2e%2e/secret.mp4", "/vod//etc/passwd",
                   "/vod/%2fetc%2fpasswd", "/vod/%252e%252e/secret.mp4", "/vod/..\\secret.mp4",
                   "/vod/link-out.mp4", "/vod/sub/rel-out.mp4", "/vod/.hidden.mp4", "/vod/notes.txt",
                   "/vod/pipe.mp4", "/vod/dir.mp4", "/vod/sub", "/vod/", "/vod/fast.mp4%00.txt",
                   "/vod/nothere.mp4", "http://evil/vod/../secret.mp4", "/vod/./fast.mp4"):
        status, raw = raw_get(hport, target)
        check(status in (400, 403, 404) and not any(s in raw for s in secrets),
              f"{target}: {status}, nothing leaked")
    check(server.alive(), "server still running")
    # Closing is asynchronous (the peer's FIN, threadpool jobs): wait up to 5 s under load.
    deadline = time.time() + 5
    fds_now = fd_count(server.proc.pid)
    while fds_now > fds_at_start and time.time() < deadline:
        time.sleep(0.2)
        fds_now = fd_count(server.proc.pid)
    if fds_now > fds_at_start:
        now = fd_table(server.proc.pid)
        print("descriptors opened since the start:", {f: t for f, t in now.items() if fd_table_at_start.get(f) != t})
    check(fds_now <= fds_at_start, f"no file descriptor left open ({fds_at_start} at start, {fds_now} now)")
finally:
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
print("PASS")
