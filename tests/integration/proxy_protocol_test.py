#!/usr/bin/python3
"""The PROXY protocol (docs/proxy_protocol.md) behind a real HAProxy in TCP mode.

One Sluice (two worker loops, so RTMP sockets are handed between loops with their header still
unread) has rtmp and http listeners with proxy_protocol: true. HAProxy listens on four loopback
ports: RTMP and HTTP, each with send-proxy (v1) and send-proxy-v2, and connects to Sluice from
127.0.0.3 (`source`); the v2 HTTP backend is health-checked on /readyz with check-send-proxy (v2
LOCAL). Clients connect to HAProxy from other loopback addresses (127.0.0.1, .2, .4, .5, .6), so a
server that took the socket's peer would report 127.0.0.3 everywhere.

Asserted: HAProxy's LOCAL health check passes; ffmpeg publishes through HAProxy and the stream
plays back byte-exact through HAProxy over RTMP (ffmpeg), RTMPS (ffmpeg; the header comes before
the ClientHello) and HTTP-FLV (curl from 127.0.0.2); HTTPS reads a header before its TLS;
the hook server gets 127.0.0.2 with the client's own port on publish and play; the publish log
line says peer=127.0.0.2:<port>; /api/v1/clients lists 127.0.0.x client addresses, none
127.0.0.3; http.api.allow (127.0.0.2 only) and an app's publish deny rule (127.0.0.2 only) act on
the client address; limits.per_ip counts client addresses; a LOCAL header keeps the socket's
address (its address block is ignored), UNKNOWN too; a malformed header, a missing one (RTMP or
TLS-less HTTP straight to the port) and one that never completes close that connection only,
with one log line each, the missing one at the PROXY timeout (half of rtmp.handshake_timeout),
not the handshake timeout; a second Sluice without the setting closes a connection that starts
with a PROXY header (RTMP and HTTP) and keeps serving its publisher and a new player."""
import atexit
import json
import os
import re
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg", "ffprobe", "curl", "haproxy")

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
BALANCER = "127.0.0.3"


def v1_header(src, src_port, dst="127.0.0.1", dst_port=1935):
    return f"PROXY TCP4 {src} {dst} {src_port} {dst_port}\r\n".encode()


def v2_header(command, src, src_port, dst="127.0.0.1", dst_port=8080):
    body = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack(">HH", src_port, dst_port)
    return V2_SIG + bytes([0x20 | command, 0x11]) + struct.pack(">H", len(body)) + body


# ---- the hook server: records on_publish / on_play bodies ----

hooks = HookRecorder()
H = hooks.url


def hook_calls(kind, stream):
    return hooks.bodies(kind, stream)


# ---- Sluice with proxy_protocol on rtmp and http ----

http_port, rtmps_port, https_port = free_port(), free_port(), free_port()
extra = (f"  proxy_protocol: true\n  handshake_timeout: 4s\n"
         f"workers: 2\n"
         f"limits: {{ per_ip: 4 }}\n"
         f"http:\n  listen: 127.0.0.1:{http_port}\n  proxy_protocol: true\n"
         f"  proxy_protocol_from: [127.0.0.1/32, 127.0.0.2/32, {BALANCER}/32]\n  api: {{ allow: [127.0.0.2/32] }}\n"
         f"hooks:\n  on_publish: {H}/publish\n  on_play: {H}/play\n  timeout: 2s\n"
         f"rtmps: {{ listen: 127.0.0.1:{rtmps_port}, cert: cert.pem, key: cert-key.pem, proxy_protocol: true }}\n"
         f"https: {{ listen: 127.0.0.1:{https_port}, cert: cert.pem, key: cert-key.pem, proxy_protocol: true }}\n")
apps = ("  live: { type: live, gop_cache: true }\n"
        "  guarded: { type: live, publish: { deny: [127.0.0.2/32] } }\n")
server = Server("proxy-protocol", extra_yaml=extra, apps=apps)
make_cert(server.dir)  # cert.pem and cert-key.pem next to sluice.yaml
server.start()
PROXY_TIMEOUT = 2.0  # half of rtmp.handshake_timeout

# ---- HAProxy in front ----

ports = {name: free_port() for name in ("rtmp_v1", "rtmp_v2", "http_v1", "http_v2", "rtmps_v2")}
stats_sock = os.path.join(server.dir, "haproxy.sock")
haproxy_cfg = os.path.join(server.dir, "haproxy.cfg")
with open(haproxy_cfg, "w") as f:
    f.write(f"""global
    stats socket {stats_sock} level admin
defaults
    mode tcp
    timeout connect 5s
    timeout client 1m
    timeout server 1m
frontend rtmp_v1
    bind 127.0.0.1:{ports['rtmp_v1']}
    default_backend rtmp_v1
backend rtmp_v1
    server s1 127.0.0.1:{server.port} send-proxy source {BALANCER}
frontend rtmp_v2
    bind 127.0.0.1:{ports['rtmp_v2']}
    default_backend rtmp_v2
backend rtmp_v2
    option httpchk GET /readyz
    server s1 127.0.0.1:{server.port} send-proxy-v2 check port {http_port} check-send-proxy inter 500ms rise 2 fall 2 source {BALANCER}
frontend http_v1
    bind 127.0.0.1:{ports['http_v1']}
    default_backend http_v1
backend http_v1
    server s1 127.0.0.1:{http_port} send-proxy source {BALANCER}
frontend rtmps_v2
    bind 127.0.0.1:{ports['rtmps_v2']}
    default_backend rtmps_v2
backend rtmps_v2
    server s1 127.0.0.1:{rtmps_port} send-proxy-v2 source {BALANCER}
frontend http_v2
    bind 127.0.0.1:{ports['http_v2']}
    default_backend http_v2
backend http_v2
    option httpchk GET /readyz
    server s1 127.0.0.1:{http_port} send-proxy-v2 check check-send-proxy inter 500ms rise 2 fall 2 source {BALANCER}
""")
haproxy_log = open(os.path.join(server.dir, "haproxy.log"), "w")
haproxy = subprocess.Popen(["haproxy", "-f", haproxy_cfg, "-db"], stdout=haproxy_log, stderr=subprocess.STDOUT)
atexit.register(lambda: (haproxy.poll() is None) and (haproxy.kill(), haproxy.wait()))
check(all(wait_port(p) for p in ports.values()), "haproxy listens on its five frontends")


def haproxy_status(backend):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(stats_sock)
            s.sendall(b"show stat\n")
            out = b""
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
    except OSError:
        return None
    for line in out.decode().splitlines():
        cols = line.split(",")
        if len(cols) > 17 and cols[0] == backend and cols[1] == "s1":
            return cols[17]
    return None


def rtmp_url(frontend, path):
    return f"rtmp://127.0.0.1:{ports[frontend]}/{path}"


def http_get(frontend_port, path, source=None, timeout=10):
    """(status code, body) of a curl GET, from `source` when given."""
    cmd = ["curl", "-s", "-m", str(timeout), "-o", "-", "-w", "\n%{http_code}"]
    if source:
        cmd += ["--interface", source]
    out = subprocess.run(cmd + [f"http://127.0.0.1:{frontend_port}{path}"], capture_output=True, timeout=timeout + 5)
    body, _, code = out.stdout.rpartition(b"\n")
    return int(code or b"0"), body


def raw_exchange(port, data, source=None, timeout=5.0):
    """Sends data on a fresh connection and reads until the server closes: (bytes, seconds, closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0) if source else None)
    t0 = time.time()
    if data:
        s.sendall(data)
    got, closed = b"", False
    s.settimeout(0.2)
    while time.time() - t0 < timeout:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            closed = True
            break
        if not d:
            closed = True
            break
        got += d
    s.close()
    return got, time.time() - t0, closed


def api_clients():
    code, body = http_get(ports["http_v1"], "/api/v1/clients", source="127.0.0.2")
    return json.loads(body) if code == 200 else None


def log_lines(pattern):
    return [line for line in server.log_text().splitlines() if re.search(pattern, line)]


src = make_media(os.path.join(server.dir, "src.flv"), seconds=40)
source_tags = flv_tags(src)
pub = None
try:
    # 1. HAProxy's health check (v2 LOCAL, then GET /readyz) finds the server up.
    for backend in ("http_v2", "rtmp_v2"):
        check(wait_for(lambda: haproxy_status(backend) == "UP", 15),
              f"{backend}: haproxy's LOCAL health check on /readyz passes (status {haproxy_status(backend)})")

    # 2. ffmpeg publishes through HAProxy (v2); the hook and the log see 127.0.0.1, not the balancer.
    pub = publish_ffmpeg(src, rtmp_url("rtmp_v2", "live/cam"))
    check(wait_for(lambda: hook_calls("publish", "cam"), 15), "on_publish called for ffmpeg's publish through haproxy")
    body = hook_calls("publish", "cam")[0]
    check(body.get("address") == "127.0.0.1", f"on_publish: the client's address 127.0.0.1 (got {body.get('address')})")
    wait_for(lambda: log_lines(r"event=publish app=live stream=cam"), 5)
    check(log_lines(r"event=publish app=live stream=cam") and
          all("peer=127.0.0.1:" in line for line in log_lines(r"event=publish app=live stream=cam")),
          "the publish log line has peer=127.0.0.1:<port>")
    time.sleep(1.5)

    # 3. Byte-exact playback through HAProxy: RTMP (v1 frontend) with ffmpeg, HTTP-FLV with curl.
    rtmp_out = os.path.join(server.dir, "rtmp_play.flv")
    flv_out = os.path.join(server.dir, "http_play.flv")
    curl = subprocess.Popen(["curl", "-s", "--interface", "127.0.0.2", "-m", "6", "-o", flv_out,
                             f"http://127.0.0.1:{ports['http_v2']}/live/cam.flv"])
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", rtmp_url("rtmp_v1", "live/cam"), "-t", "5",
                    "-c", "copy", "-f", "flv", rtmp_out], timeout=60)
    curl.wait(timeout=20)
    check_same_packets("RTMP through haproxy (send-proxy)", rtmp_out, source_tags, min_video=50, min_audio=50)
    check_same_packets("HTTP-FLV through haproxy (send-proxy-v2)", flv_out, source_tags, min_video=50, min_audio=50)
    plays = hook_calls("play", "cam")
    check(any(b.get("address") == "127.0.0.2" for b in plays), "on_play (HTTP-FLV via curl) got 127.0.0.2")
    check(any(b.get("address") == "127.0.0.1" for b in plays), "on_play (RTMP via ffmpeg) got 127.0.0.1")
    check(not any(b.get("address") == BALANCER for b in hook_calls("play", "cam") + hook_calls("publish", "cam")),
          "no hook ever saw the balancer's address")

    # 3b. RTMPS through HAProxy: the header comes in clear before the ClientHello, on whichever loop
    #     the socket was handed to; the player's address reaches the hook.
    rtmps_out = os.path.join(server.dir, "rtmps_play.flv")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i",
                    f"rtmps://127.0.0.1:{ports['rtmps_v2']}/live/cam?via=rtmps", "-t", "3", "-c", "copy", "-f", "flv",
                    rtmps_out], timeout=60)
    check_same_packets("RTMPS through haproxy (send-proxy-v2)", rtmps_out, source_tags, min_video=30, min_audio=30)
    rtmps_plays = [b for b in hook_calls("play", "cam") if "via=rtmps" in b.get("query", "")]
    check(len(rtmps_plays) == 1 and rtmps_plays[0].get("address") == "127.0.0.1",
          f"on_play (RTMPS via ffmpeg) got 127.0.0.1 ({rtmps_plays})")
    #     HTTPS straight to its port, this test being the balancer: a v1 header claiming 127.0.0.2
    #     (the only address http.api.allow lets in), then TLS, then the API request.
    tls_ctx = ssl.create_default_context()
    tls_ctx.check_hostname = False
    tls_ctx.verify_mode = ssl.CERT_NONE
    for claimed, want in (("127.0.0.2", b"HTTP/1.1 200"), ("127.0.0.9", b"HTTP/1.1 403")):
        raw = socket.create_connection(("127.0.0.1", https_port), timeout=10)
        raw.sendall(v1_header(claimed, 6000, dst_port=https_port))
        with tls_ctx.wrap_socket(raw, server_hostname="localhost") as t:
            t.sendall(b"GET /api/v1/clients HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            answer = t.recv(64)
        check(answer.startswith(want), f"HTTPS after a v1 header claiming {claimed}: {want.decode()} ({answer[:20]})")

    # 4. A raw RTMP publisher from 127.0.0.2 through HAProxy (v1): hook, log and API have its port.
    c = RtmpClient(ports["rtmp_v1"], source="127.0.0.2")
    my_port = c.sock.getsockname()[1]
    c.connect("live")
    c.create_stream()
    c.publish("fromtwo")
    check(c.wait_status("NetStream.Publish.Start") is not None, "127.0.0.2 may publish live/fromtwo through haproxy")
    b = hook_calls("publish", "fromtwo")
    check(len(b) == 1 and b[0].get("address") == "127.0.0.2" and b[0].get("port") == my_port,
          f"on_publish: address 127.0.0.2 and the client's own port {my_port} (got {b})")
    wait_for(lambda: log_lines(r"event=publish app=live stream=fromtwo"), 5)
    check(any(f"peer=127.0.0.2:{my_port}" in line for line in log_lines(r"event=publish app=live stream=fromtwo")),
          f"the publish log line says peer=127.0.0.2:{my_port}")
    check(api_clients() is not None, "the API answers 127.0.0.2 through haproxy (http.api.allow has only 127.0.0.2)")
    # Other loops' clients are in the list within 250 ms (their snapshots).
    wait_for(lambda: f"127.0.0.2:{my_port}" in [x.get("address") for x in (api_clients() or [])], 3)
    addresses = [x.get("address", "") for x in (api_clients() or [])]
    check(f"127.0.0.2:{my_port}" in addresses, f"/api/v1/clients lists 127.0.0.2:{my_port} ({addresses})")
    check(any(a.startswith("127.0.0.1:") for a in addresses), "/api/v1/clients lists ffmpeg's 127.0.0.1")
    check(not any(a.startswith(BALANCER + ":") for a in addresses), "/api/v1/clients never shows the balancer")

    # 5. Address rules see the client: http.api.allow refuses 127.0.0.4, the deny rule 127.0.0.2 only.
    code, _ = http_get(ports["http_v2"], "/api/v1/clients", source="127.0.0.4")
    check(code == 403, f"the API refuses 127.0.0.4 through haproxy (got {code})")
    denied = RtmpClient(ports["rtmp_v2"], source="127.0.0.2")
    denied.connect("guarded")
    denied.create_stream()
    denied.publish("a")
    denied.read_for(2)
    check("NetStream.Publish.Start" not in denied.statuses(),
          f"publish deny [127.0.0.2/32] refuses 127.0.0.2 through haproxy ({denied.statuses()})")
    allowed = RtmpClient(ports["rtmp_v2"], source="127.0.0.4")
    allowed.connect("guarded")
    allowed.create_stream()
    allowed.publish("b")
    check(allowed.wait_status("NetStream.Publish.Start") is not None,
          "the same rule lets 127.0.0.4 publish through the same balancer")
    denied.close()
    allowed.close()

    # 6. limits.per_ip (4) counts client addresses: a fifth from 127.0.0.5 is refused, 127.0.0.6 is not.
    held = []
    for i in range(4):
        held.append(RtmpClient(ports["rtmp_v1" if i % 2 else "rtmp_v2"], source="127.0.0.5"))
    try:
        RtmpClient(ports["rtmp_v1"], source="127.0.0.5", timeout=5)
        fifth_refused = False
    except (ConnectionError, OSError):
        fifth_refused = True
    check(fifth_refused, "a fifth RTMP connection from 127.0.0.5 is refused (limits.per_ip=4)")
    other = RtmpClient(ports["rtmp_v1"], source="127.0.0.6")
    other.connect("live")
    check(other.wait_for(lambda m: m.command() and m.command()[0] == "_result", 5) is not None,
          "meanwhile 127.0.0.6 connects through the same balancer")
    for x in held + [other]:
        x.close()
    c.close()

    # 7. Headers sent straight to the port (this test is the balancer): v1 with a made-up client,
    #    v2 LOCAL (the block's address is ignored), v1 UNKNOWN.
    r = RtmpClient(server.port, first=v1_header("203.0.113.7", 40000))
    r.connect("live")
    r.create_stream()
    r.publish("direct")
    check(r.wait_status("NetStream.Publish.Start") is not None, "a v1 header then RTMP on the port itself: publishes")
    b = hook_calls("publish", "direct")
    check(b and b[0].get("address") == "203.0.113.7" and b[0].get("port") == 40000,
          f"on_publish got the header's 203.0.113.7:40000 ({b})")
    r.close()
    get = b"GET /api/v1/server HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    out, _, _ = raw_exchange(http_port, v2_header(1, "127.0.0.2", 5555) + get)
    check(out.startswith(b"HTTP/1.1 200"), f"v2 PROXY claiming 127.0.0.2: the API answers ({out[:20]})")
    out, _, _ = raw_exchange(http_port, v2_header(0, "127.0.0.2", 5555) + get)
    check(out.startswith(b"HTTP/1.1 403"),
          f"v2 LOCAL from 127.0.0.1: its block is ignored, the API refuses ({out[:20]})")
    out, _, _ = raw_exchange(http_port, v2_header(0, "127.0.0.9", 5555) + get, source="127.0.0.2")
    check(out.startswith(b"HTTP/1.1 200"),
          f"v2 LOCAL from 127.0.0.2: the socket's address, the API answers ({out[:20]})")
    out, _, _ = raw_exchange(http_port, b"PROXY UNKNOWN\r\n" + get, source="127.0.0.2")
    check(out.startswith(b"HTTP/1.1 200"), f"v1 UNKNOWN from 127.0.0.2: the socket's address ({out[:20]})")

    # 8. Broken or missing headers on the flagged listeners: closed at once (or at the PROXY
    #    timeout), with one log line, nothing sent back.
    before = len(log_lines("event=proxy_header_refused"))
    c0c1 = b"\x03" + bytes(1536)
    out, took, closed = raw_exchange(server.port, v1_header("127.0.0.300", 1) + c0c1)
    check(closed and out == b"" and took < 1.0, f"malformed v1 address: closed at once, nothing sent ({took:.2f}s)")
    out, took, closed = raw_exchange(server.port, c0c1)
    check(closed and out == b"" and took < 1.0, f"an RTMP handshake without a header: closed at once ({took:.2f}s)")
    out, took, closed = raw_exchange(http_port, b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    check(closed and out == b"" and took < 1.0, f"HTTP without a header: closed at once, no response ({out[:20]})")
    out, took, closed = raw_exchange(http_port, V2_SIG + b"\x21\x11\x00\x05abcde" + get)
    check(closed and out == b"", "v2 with a length shorter than its address block: closed, no response")
    out, took, closed = raw_exchange(server.port, b"", timeout=6)
    check(closed and PROXY_TIMEOUT - 0.5 <= took <= PROXY_TIMEOUT + 1.2,
          f"nothing sent: closed at the PROXY timeout ({took:.2f}s, not the 4 s handshake timeout)")
    out, took, closed = raw_exchange(http_port, b"PROXY TCP4 127.0.0.9 ", timeout=6)
    check(closed and out == b"" and PROXY_TIMEOUT - 0.5 <= took <= PROXY_TIMEOUT + 1.2,
          f"an incomplete header: closed at the PROXY timeout ({took:.2f}s)")
    out, took, closed = raw_exchange(http_port, v2_header(1, "127.0.0.2", 5555) + get, source="127.0.0.4")
    check(out.startswith(b"HTTP/1.1 400"),
          f"127.0.0.4 is not a balancer (proxy_protocol_from): its header is a bad request, not an address ({out[:40]})")
    out, took, closed = raw_exchange(http_port, b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                                     source="127.0.0.4")
    check(out.startswith(b"HTTP/1.1 200"), f"and a direct client from 127.0.0.4 is served without a header ({out[:40]})")
    time.sleep(0.3)
    refused = log_lines("event=proxy_header_refused")[before:]
    check(len(refused) == 6, f"one log line per refused connection ({len(refused)}):\n" + "\n".join(refused))
    check(any("no PROXY header within 2000 ms" in line for line in refused), "the timeout's line says why")
    check(any("bad PROXY header" in line for line in refused), "a malformed header's line says why")
    check(pub.poll() is None, "the publisher through haproxy kept streaming meanwhile")
    out_file = os.path.join(server.dir, "after.flv")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", rtmp_url("rtmp_v2", "live/cam"), "-t", "2",
                    "-c", "copy", "-f", "flv", out_file], timeout=60)
    check_same_packets("RTMP through haproxy after the refusals", out_file, source_tags, min_video=20, min_audio=20)
finally:
    if pub is not None:
        stop_proc(pub)

check(server.alive(), "the server is still running")
code = server.stop()
check(code == 0, f"the server stopped cleanly (exit {code})")
haproxy.terminate()
haproxy.wait(timeout=10)

# ---- a Sluice without proxy_protocol: a PROXY header is a bad handshake / bad request ----

http2 = free_port()
plain = Server("proxy-protocol-off", extra_yaml=f"http:\n  listen: 127.0.0.1:{http2}\n").start()
pub = publish_ffmpeg(src, plain.url("live/cam"))
try:
    time.sleep(2)
    out, took, closed = raw_exchange(plain.port, v1_header("203.0.113.7", 40000) + b"\x03" + bytes(1536))
    check(closed and out == b"", f"unflagged RTMP listener: a v1 header closes the connection ({took:.2f}s)")
    out, took, closed = raw_exchange(plain.port, v2_header(1, "203.0.113.7", 40000) + b"\x03" + bytes(1536))
    check(closed and out == b"", "unflagged RTMP listener: a v2 header closes the connection")
    out, took, closed = raw_exchange(http2, v1_header("203.0.113.7", 40000) +
                                     b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    check(closed and not out.startswith(b"HTTP/1.1 2"),
          f"unflagged HTTP listener: a v1 header is a bad request ({out[:24]})")
    out, took, closed = raw_exchange(http2, v2_header(1, "203.0.113.7", 40000) +
                                     b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    check(closed and not out.startswith(b"HTTP/1.1 2"),
          f"unflagged HTTP listener: a v2 header is a bad request ({out[:24]})")
    time.sleep(0.3)
    hints = [line for line in plain.log_text().splitlines() if "this listener has no proxy_protocol" in line]
    check(len([h for h in hints if "event=protocol_error" in h]) == 2 and
          len([h for h in hints if "event=bad_request" in h]) == 2,
          "each of the four log lines says a PROXY header came to a listener without proxy_protocol:\n" +
          "\n".join(hints))
    check(pub.poll() is None, "unflagged server: the publisher kept streaming")
    out_file = os.path.join(plain.dir, "after.flv")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", plain.url("live/cam"), "-t", "2",
                    "-c", "copy", "-f", "flv", out_file], timeout=60)
    check_same_packets("unflagged server: a new player", out_file, source_tags, min_video=20, min_audio=20)
finally:
    stop_proc(pub)
check(plain.stop() == 0, "the unflagged server stopped cleanly")
print("PASS")
