#!/usr/bin/python3
"""HTTPS (docs/tls.md, "HTTPS"): with `https: { listen, cert, key }` beside `http:`, the HTTP side
answers over TLS. curl verifying the test's certificate reads the API; a VOD file downloads whole
and by Range byte for byte (through user-space pieces, since sendfile cannot encrypt); an upload
over HTTPS lands byte for byte; ffmpeg reads HTTP-FLV over HTTPS with the publisher's packets. A
client that verifies refuses the certificate for another name, and plain HTTP on the HTTPS port is
closed."""
import hashlib
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "openssl", "curl")

tmp = workdir("https")
cert, key = make_cert(tmp)
hport, sport = free_port(), free_port()
TOKEN = "upload-secret-1234567890"
server = Server("https", extra_yaml=(f"http: {{ listen: 127.0.0.1:{hport}, upload: {{ token: {TOKEN}, extensions: [bin, flv] }} }}\n"
                                     f"https: {{ listen: 127.0.0.1:{sport}, cert: {cert}, key: {key} }}\n"),
                apps="  vod: { type: vod, root: ./media }\n  live: { type: live }\n")
os.makedirs(os.path.join(server.dir, "media"), exist_ok=True)
server.start()
check(wait_port(sport), "the HTTPS listener accepts")
base = f"https://localhost:{sport}"


def curl(*args):
    return subprocess.run(["curl", "-s", "--cacert", cert, "--resolve", f"localhost:{sport}:127.0.0.1"] + list(args),
                          capture_output=True, timeout=60)


try:
    r = curl(f"{base}/api/v1/server")
    check(r.returncode == 0 and json.loads(r.stdout)["version"], "curl verifying the certificate reads the API over HTTPS")

    # A file of several pieces (256 KiB each), whole and by Range.
    media = os.path.join(server.dir, "media", "blob.flv")
    data = os.urandom(3 * 1024 * 1024 + 12345)
    open(media, "wb").write(data)
    out = os.path.join(tmp, "whole.bin")
    r = curl("-o", out, f"{base}/vod/blob.flv")
    check(r.returncode == 0 and open(out, "rb").read() == data, "a 3 MiB download over HTTPS is byte for byte the file")
    r = curl("-r", "1000000-2500000", f"{base}/vod/blob.flv")
    check(r.stdout == data[1000000:2500001], "a Range over HTTPS is byte for byte that part")

    # Upload over HTTPS.
    up = os.path.join(tmp, "up.bin")
    updata = os.urandom(700_000)
    open(up, "wb").write(updata)
    r = curl("-X", "PUT", "-H", f"Authorization: Bearer {TOKEN}", "--data-binary", f"@{up}", "-o", "/dev/null",
             "-w", "%{http_code}", f"{base}/vod/uploaded.flv")
    check(r.stdout.decode() in ("201", "204"), f"an upload over HTTPS is taken ({r.stdout.decode()})")
    check(open(os.path.join(server.dir, "media", "uploaded.flv"), "rb").read() == updata, "byte for byte")

    # HTTP-FLV over HTTPS.
    src = make_media(os.path.join(tmp, "src.flv"), seconds=20)
    pub = publish_ffmpeg(src, server.url("live/cam"))
    time.sleep(1.5)
    flv = os.path.join(tmp, "https.flv")
    r = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-tls_verify", "1", "-ca_file", cert, "-i",
                        f"https://localhost:{sport}/live/cam.flv", "-t", "4", "-c", "copy", "-f", "flv", "-y", flv],
                       capture_output=True, timeout=60)
    check(r.returncode == 0, f"ffmpeg verifying the certificate reads HTTP-FLV over HTTPS ({r.stderr[-200:]})")
    check_same_packets("HTTP-FLV over HTTPS", flv, flv_tags(src), min_video=50, min_audio=50)
    stop_proc(pub)

    # Verification by name, plain HTTP on the HTTPS port.
    r = subprocess.run(["curl", "-s", "--cacert", cert, f"https://127.0.0.1:{sport}/api/v1/server"], capture_output=True)
    check(r.returncode != 0, "curl refuses the certificate for 127.0.0.1, a name it does not have")
    s = socket.create_connection(("127.0.0.1", sport), timeout=5)
    s.sendall(b"GET /api/v1/server HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        got = s.recv(4096)
    except (ConnectionResetError, socket.timeout):
        got = b""
    s.close()
    check(b"HTTP/1.1 200" not in got, "plain HTTP on the HTTPS port gets no answer")
    r = subprocess.run(["curl", "-s", f"http://127.0.0.1:{hport}/api/v1/server"], capture_output=True)
    check(r.returncode == 0 and b"version" in r.stdout, "plain HTTP still answers on the HTTP port")
    check(server.alive(), "the server still runs")
    print("https_test: OK")
finally:
    server.stop()
