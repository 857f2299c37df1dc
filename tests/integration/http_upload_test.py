#!/usr/bin/python3
"""Streamed upload (PUT /{vod-app}/{path}): curl uploads an FLV and an MP4 with a Bearer token (and
?token=), they are byte-exact, then play over RTMP (same packets as the source) and download over
HTTP; replacing answers 204; no token 401, wrong token 403, too large 413 (declared or chunked),
other extensions 415, traversal and control-character names 400, names too long for the file
system 414 (not 500), a missing folder 409, If-None-Match: * on an existing
file 412, two uploads of one file 409; an upload aborted mid-body leaves no file, the old file
intact and no temporary file; uploads off (no token configured) 405. No descriptor leaks."""
import hashlib
import os
import random
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

TOKEN = "s3cret-Token_1"
MAX = 8 * 1024 * 1024


def put(url, path=None, data=None, headers=(), token=TOKEN, extra=()):
    """curl PUT; returns (status, body)."""
    cmd = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "-X", "PUT", url]
    if token:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    for h in headers:
        cmd += ["-H", h]
    if path:
        cmd += ["-T", path]
    elif data is not None:
        cmd += ["--data-binary", "@-"]
    cmd += list(extra)
    out = subprocess.run(cmd, input=data, capture_output=True, timeout=60).stdout
    body, _, code = out.rpartition(b"\n")
    return int(code), body


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def fd_targets(pid):
    d = f"/proc/{pid}/fd"
    out = []
    for f in os.listdir(d):
        try:
            out.append(os.readlink(os.path.join(d, f)))
        except OSError:
            pass  # closed while listing
    return out


def leaked_fds(pid, baseline):
    """Descriptors opened since `baseline`, except the media file the RTMP VOD index cache keeps
    open on purpose (the index of a played file is shared and kept for the next player) and
    /dev/null, which libuv opens once per loop on its first socket (its reserve for EMFILE): with
    several worker loops, a loop's first connection may come after the baseline."""
    left = list(baseline)
    new = []
    for t in fd_targets(pid):
        if t in left:
            left.remove(t)
        elif not t.endswith("/media/clip.flv") and t != "/dev/null":
            new.append(t)
    return new


def hidden_files(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.startswith(".")]


require_tools("ffmpeg", "ffprobe", "curl", "rtmpdump")
hport = free_port()
server = vod_server("http-upload")
with open(server.config) as f:
    cfg = f.read()
with open(server.config, "w") as f:
    f.write(cfg.replace("apps:\n", f"http:\n  listen: 127.0.0.1:{hport}\n  upload: {{ token: {TOKEN}, max_size: 8MiB }}\n"
                                   "apps:\n", 1))
media = os.path.join(server.dir, "media")
os.makedirs(os.path.join(media, "sub"))
work = os.path.join(server.dir, "work")
os.makedirs(work)
src_flv = make_media(os.path.join(work, "clip.flv"), seconds=6)
src_mp4 = os.path.join(work, "clip.mp4")
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", src_flv, "-c", "copy", "-movflags", "+faststart",
                src_mp4], check=True)
blob = os.path.join(work, "blob.mp4")
with open(blob, "wb") as f:
    f.write(random.Random(5).randbytes(6_000_000))
old = os.path.join(media, "keep.mp4")
with open(old, "wb") as f:
    f.write(b"the old file, intact" * 1000)
old_sha = sha(old)
server.start()
check(wait_port(hport), "HTTP listener is up")
base = f"http://127.0.0.1:{hport}/vod"
settle_descriptors(server)
fds_at_start = fd_targets(server.proc.pid)
try:
    st, body = put(f"{base}/clip.flv", src_flv)
    check(st == 201, f"PUT clip.flv with a Bearer token: 201 ({st} {body[:80]!r})")
    check(sha(os.path.join(media, "clip.flv")) == sha(src_flv), "clip.flv on disk is byte-exact")
    st, body = put(f"{base}/sub/clip.mp4?token={TOKEN}", src_mp4, token=None)
    check(st == 201 and sha(os.path.join(media, "sub", "clip.mp4")) == sha(src_mp4), "PUT with ?token=: 201, byte-exact")
    st, body = put(f"{base}/blob.mp4", blob)  # > 1 MiB: curl sends Expect: 100-continue
    check(st == 201 and sha(os.path.join(media, "blob.mp4")) == sha(blob), "6 MB upload (100-continue): byte-exact")
    st, body = put(f"{base}/blob.mp4", blob, extra=["-H", "Transfer-Encoding: chunked"])
    check(st == 204 and sha(os.path.join(media, "blob.mp4")) == sha(blob), "chunked re-upload replaces: 204")

    # What was uploaded plays at once, over RTMP and HTTP.
    out = os.path.join(work, "played.flv")
    subprocess.run(["timeout", "-k", "2", "30", "rtmpdump", "-q", "-r", server.url("vod/clip.flv"), "-o", out])
    src_packets = ffprobe_packets(src_flv)
    check(len(src_packets) > 300 and ffprobe_packets(out) == src_packets,
          "the uploaded FLV plays over RTMP: every packet equals the source's")
    check(ffprobe_packets(f"{base}/sub/clip.mp4") == ffprobe_packets(src_mp4),
          "the uploaded MP4 plays over HTTP: every packet equals the source's")

    # Refusals: nothing is created.
    st, _ = put(f"{base}/new.mp4", blob, token=None)
    check(st == 401, f"no token: 401 ({st})")
    st, _ = put(f"{base}/new.mp4", blob, token="wrong")
    check(st == 403, f"wrong token: 403 ({st})")
    big = os.path.join(work, "big.mp4")
    with open(big, "wb") as f:
        f.write(os.urandom(MAX + 1))
    st, _ = put(f"{base}/new.mp4", big)
    check(st == 413, f"declared size over max_size: 413 ({st})")
    st, _ = put(f"{base}/new.mp4", big, extra=["-H", "Transfer-Encoding: chunked"])
    check(st == 413, f"chunked body over max_size: 413 ({st})")
    st, _ = put(f"{base}/new.txt", blob)
    check(st == 415, f"extension not in upload.extensions: 415 ({st})")
    for name in ("..%2Fescape.mp4", "%2e%2e/escape.mp4", ".hidden.mp4", "sub/..%2f..%2fescape.mp4", "a%5Cb.mp4"):
        st, _ = put(f"{base}/{name}", blob, extra=["--path-as-is"])
        check(st == 400, f"PUT {name}: 400 ({st})")
    # Issue 11, finding 9a: a name the file system cannot hold is the client's error, with the reason
    # (it was a 500); control characters are 400. Both are counted.
    names_before = guard_events(hport).get("upload_bad_name", 0)
    for name in ("a" * 296 + ".mp4", "b" * 227 + ".mp4", "d" * 256 + "/x.mp4"):
        st, body = put(f"{base}/{name}", blob)
        check(st == 414 and b"longer than" in body, f"PUT a {len(name)}-byte name: 414 with the reason ({st} {body!r})")
    st, _ = put(f"{base}/{'c' * 226}.mp4", blob)
    check(st == 201, f"PUT the longest file name that fits (230 bytes): 201 ({st})")
    check(os.path.exists(os.path.join(media, "c" * 226 + ".mp4")), "the longest name was stored")
    for name in ("nul%00.mp4", "soh%01.mp4", "line%0Afeed.mp4", "cr%0D.mp4", "esc%1B.mp4", "del%7F.mp4", "tab%09.mp4"):
        st, body = put(f"{base}/{name}", blob)
        check(st == 400 and b"invalid file name" in body, f"PUT {name}: 400 with the reason ({st} {body!r})")
    bad_names = guard_events(hport).get("upload_bad_name", 0) - names_before
    check(bad_names == 10, f"/metrics counts upload_bad_name ({bad_names})")
    check(hidden_files(media) == [], "refused names left no temporary file")
    st, _ = put(f"{base}/nofolder/x.mp4", blob)
    check(st == 409, f"a folder that does not exist: 409 ({st})")
    st, _ = put(f"{base}/keep.mp4", blob, headers=["If-None-Match: *"])
    check(st == 412 and sha(old) == old_sha, f"If-None-Match: * on an existing file: 412, file intact ({st})")
    check(not os.path.exists(os.path.join(media, "new.mp4")) and not os.path.exists(os.path.join(media, "new.txt")),
          "refused uploads created nothing")
    check(not os.path.exists(os.path.join(server.dir, "escape.mp4")), "nothing was written outside the root")

    # An upload aborted mid-body over an existing file: the old file stays, no temporary file is left.
    s = socket.create_connection(("127.0.0.1", hport))
    s.sendall(f"PUT /vod/keep.mp4 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\n"
              f"Content-Length: 5000000\r\n\r\n".encode() + os.urandom(2_000_000))
    time.sleep(0.5)
    check(len(hidden_files(media)) == 1, "during the upload, one hidden temporary file exists")
    # A second upload of the same file meanwhile: 409.
    st, _ = put(f"{base}/keep.mp4", blob)
    check(st == 409, f"a second upload of the same file meanwhile: 409 ({st})")
    s.close()
    time.sleep(0.5)
    check(sha(old) == old_sha, "aborted upload: the old file is intact")
    check(hidden_files(media) == [], "aborted upload: no temporary file left")
    # Same with a reset instead of a close, on a new name.
    s = socket.create_connection(("127.0.0.1", hport))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.sendall(f"PUT /vod/gone.mp4 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {TOKEN}\r\n"
              f"Content-Length: 5000000\r\n\r\n".encode() + os.urandom(1_000_000))
    time.sleep(0.3)
    s.close()
    time.sleep(0.5)
    check(not os.path.exists(os.path.join(media, "gone.mp4")) and hidden_files(media) == [],
          "reset mid-upload: no file, no temporary file")
    # The keep-alive connection serves more requests after an upload.
    fmt = "%{http_code}:%{num_connects} "
    code = subprocess.run(["curl", "-s", "-o", os.devnull, "-w", fmt, "-H", f"Authorization: Bearer {TOKEN}", "-T",
                           src_flv, f"{base}/again.flv", "--next", "-s", "-o", os.devnull, "-w", fmt,
                           f"{base}/again.flv"], capture_output=True, text=True, timeout=30).stdout
    check(code == "201:1 200:0 ", f"upload, then a GET on the same kept-alive connection ({code!r})")
    check(server.alive(), "server still running")
    # Closing is asynchronous (the peer's FIN, threadpool jobs): give it a few seconds under load.
    deadline = time.time() + 5
    leaked = leaked_fds(server.proc.pid, fds_at_start)
    while leaked and time.time() < deadline:
        time.sleep(0.2)
        leaked = leaked_fds(server.proc.pid, fds_at_start)
    check(not leaked, f"no file descriptor left open (new since start: {leaked})")
finally:
    rc = server.stop()
check(rc == 0, f"server exited 0 (got {rc})")
log = server.log_text()
check("event=upload_done" in log and "event=upload_aborted" in log, "log: upload_done and upload_aborted lines")

# Uploads are off when no token is configured.
hport2 = free_port()
off = vod_server("http-upload-off")
with open(off.config) as f:
    cfg = f.read()
with open(off.config, "w") as f:
    f.write(cfg.replace("apps:\n", f"http:\n  listen: 127.0.0.1:{hport2}\napps:\n", 1))
off.start()
check(wait_port(hport2), "second server up")
try:
    st, _ = put(f"http://127.0.0.1:{hport2}/vod/x.mp4", blob)
    check(st == 405 and not os.path.exists(os.path.join(off.dir, "media", "x.mp4")), f"no upload token: 405 ({st})")
finally:
    rc = off.stop()
check(rc == 0, "second server exited 0")
print("PASS")
