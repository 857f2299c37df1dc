#!/usr/bin/python3
"""Stats API and metrics while ffmpeg publishes and an RTMP player (rtmp-probe) and an HTTP-FLV
reader (curl) play: /api/v1/server, /api/v1/streams, /api/v1/clients and /metrics reflect them
(counts, codecs, growing byte counters, bit rate); DELETE /api/v1/clients/{id} closes a reader and
then the publisher; method and id errors; http.api.allow refuses other addresses with 403."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403


def call(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def api(port, path):
    st, h, body = call(port, path)
    if st != 200:
        fail(f"GET {path}: {st} {body[:200]!r}")
    check(h.get("Content-Type") == "application/json" and "Access-Control-Allow-Origin" not in h,
          f"GET {path}: JSON, no CORS header")
    return json.loads(body)


def read_answers(sock, count, heads_only=()):
    """Reads `count` HTTP answers from sock; heads_only: the indexes that answer a HEAD (no body)."""
    buf = b""
    answers = []
    sock.settimeout(5)
    while len(answers) < count:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return answers
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
        length = 0 if len(answers) in heads_only else int(headers.get("content-length", "0"))
        while len(buf) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return answers
            buf += chunk
        answers.append((int(lines[0].split()[1]), headers, buf[:length]))
        buf = buf[length:]
    return answers


def check_shared_answers(port):
    """GET /api/v1/streams asked by several connections at once and pipelined on one: the requests
    read in one loop iteration share one answer buffer; each must still get it whole."""
    req = b"GET /api/v1/streams HTTP/1.1\r\nHost: x\r\n\r\n"
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    for s in socks:
        s.sendall(req)
    piped = socket.create_connection(("127.0.0.1", port))
    piped.sendall(req + req.replace(b"GET", b"HEAD", 1) + req + req)
    got = [read_answers(s, 1) for s in socks]
    piped_got = read_answers(piped, 4, heads_only=(1,))
    for s in socks + [piped]:
        s.close()
    bodies = [a[0][2] for a in got if a] + [a[2] for i, a in enumerate(piped_got) if i != 1]
    ok = len(bodies) == 11 and all(a[0][0] == 200 for a in got) and len(piped_got) == 4
    ok = ok and all(len(json.loads(b)) == 1 and json.loads(b)[0]["name"] == "live/cam" for b in bodies)
    check(ok, f"streams: 8 connections at once and 3 pipelined GETs, each answered whole ({len(bodies)} bodies)")
    check(piped_got[1][0] == 200 and piped_got[1][1]["content-length"] == piped_got[0][1]["content-length"],
          "streams: a pipelined HEAD between them: the GET's length, no body")


def metrics(port):
    st, h, body = call(port, "/metrics")
    check(st == 200 and h.get("Content-Type", "").startswith("text/plain; version=0.0.4"), "GET /metrics: text format")
    out = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            out[k] = float(v)
    return out


require_tools("ffmpeg", "curl")
hport = free_port()
server = Server("http-api", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n").start()
check(wait_port(hport), "HTTP listener is up")
src = make_media(os.path.join(server.dir, "src.flv"), seconds=20)
pub = publish_ffmpeg(src, server.url("live/cam"))
try:
    time.sleep(2)
    reader = subprocess.Popen(["curl", "-s", "-m", "15", "-o", os.devnull, f"http://127.0.0.1:{hport}/live/cam.flv"])
    rtmp = probe_async(server.url("live/cam"), "--duration", "14")
    time.sleep(3)

    s = api(hport, "/api/v1/server")
    check(s["version"] and s["uptime_s"] > 4, f"server: version {s['version']}, uptime {s['uptime_s']} s")
    check(s["connections"]["rtmp"] == 2, f"server: 2 RTMP connections (publisher + player): {s['connections']}")
    check(s["connections"]["http"] >= 2, "server: the HTTP-FLV reader and this request are HTTP connections")
    check(s["streams"] == {"total": 1, "live": 1}, "server: one live stream")

    streams = api(hport, "/api/v1/streams")
    check(len(streams) == 1 and streams[0]["name"] == "live/cam", "streams: live/cam")
    st = streams[0]
    check(st["live"] and st["publisher"] is not None, "streams: live, with its publisher")
    check(st["players"] == 2 and st["http_flv_players"] == 1, f"streams: 2 players, 1 of them HTTP-FLV ({st['players']})")
    check(st["video"]["codec"] == "H264" and st["video"]["width"] == 320 and st["video"]["height"] == 240,
          "streams: H.264 320x240")
    check(st["audio"]["codec"] == "AAC" and st["audio"]["sample_rate"] == 44100, "streams: AAC 44.1 kHz")
    check(100 < st["bitrate_in_kbps"] < 3000, f"streams: ingest bit rate {st['bitrate_in_kbps']} kbit/s")
    check(st["gop_cache"]["frames"] > 0, "streams: GOP cache filled")
    one = api(hport, "/api/v1/streams/live/cam")
    check(one["name"] == "live/cam", "streams/live/cam: one stream")
    check(one["hls_variant"] is None and one["hls"] is None, "streams/live/cam: the app has no HLS")
    check(call(hport, "/api/v1/streams/live/none")[0] == 404, "streams/live/none: 404")
    check_shared_answers(hport)

    clients = api(hport, "/api/v1/clients")
    publisher = [c for c in clients if c["protocol"] == "rtmp" and c["publishing"] == ["live/cam"]]
    flv = [c for c in clients if c["protocol"] == "http" and c.get("stream") == "live/cam"]
    check(len(publisher) == 1 and publisher[0]["id"] == st["publisher"]["id"], "clients: the publisher, same id")
    check(len(flv) == 1 and flv[0]["activity"] == "http-flv" and flv[0]["bytes_out"] > 10000,
          f"clients: the HTTP-FLV reader, {flv[0]['bytes_out'] if flv else 0} bytes out")
    check(len([c for c in clients if c["protocol"] == "rtmp"]) == 2, "clients: two RTMP connections")

    m1 = metrics(hport)
    check(m1.get('sluice_stream_players{stream="live/cam"}') == 2, "metrics: 2 players of live/cam")
    check(m1.get('sluice_connections{protocol="rtmp"}') == 2, "metrics: 2 RTMP connections")
    check(m1.get('sluice_stream_live{stream="live/cam"}') == 1, "metrics: live/cam is live")
    # Two players: the adaptive hold writes at once (docs/configuration.md, rtmp.player_queue).
    hold0 = m1.get('sluice_write_hold_seconds{worker="0"}')
    check(hold0 == 0, f"metrics: no write hold for two players ({hold0})")
    srv = api(hport, "/api/v1/server")
    check(srv["write_hold_ms"] and all(h == 0 for h in srv["write_hold_ms"]) and srv["cluster"] is None,
          f"server: write_hold_ms per loop, no cluster ({srv['write_hold_ms']}, {srv['cluster']})")
    time.sleep(2)
    m2 = metrics(hport)
    grow = m2['sluice_stream_ingest_bytes_total{stream="live/cam"}'] - m1['sluice_stream_ingest_bytes_total{stream="live/cam"}']
    check(grow > 20000, f"metrics: ingest bytes grow ({grow:.0f} in 2 s)")
    check(m2['sluice_http_bytes_total{direction="out"}'] > m1['sluice_http_bytes_total{direction="out"}'],
          "metrics: HTTP bytes out grow")
    flv2 = [c for c in api(hport, "/api/v1/clients") if c.get("stream") == "live/cam"][0]
    check(flv2["bytes_out"] > flv[0]["bytes_out"], "clients: the reader's bytes out grow")

    # Errors.
    check(call(hport, "/api/v1/clients/999999", "DELETE")[0] == 404, "DELETE an unknown client: 404")
    check(call(hport, "/api/v1/clients/abc", "DELETE")[0] == 404, "DELETE a non-numeric id: 404")
    check(call(hport, "/api/v1/server", "DELETE")[0] == 405, "DELETE /api/v1/server: 405")
    check(call(hport, "/metrics", "POST")[0] == 405, "POST /metrics: 405")
    check(call(hport, "/api/v2/what")[0] == 404, "unknown API path: 404")

    # Kick the HTTP-FLV reader, then the publisher.
    t0 = time.time()
    check(call(hport, f"/api/v1/clients/{flv[0]['id']}", "DELETE")[0] == 204, "DELETE the HTTP-FLV reader: 204")
    reader.wait(timeout=5)
    check(time.time() - t0 < 3, "the reader's connection ended at once")
    check(all(c["id"] != flv[0]["id"] for c in api(hport, "/api/v1/clients")), "clients: the reader is gone")
    check(api(hport, "/api/v1/streams/live/cam")["players"] == 1, "streams: 1 player left")
    check(call(hport, f"/api/v1/clients/{publisher[0]['id']}", "DELETE")[0] == 204, "DELETE the publisher: 204")
    time.sleep(0.5)
    st = api(hport, "/api/v1/streams/live/cam")
    check(not st["live"] and st["publisher"] is None, "streams: not live any more, the player waits")
    lines = rtmp.lines()
    check(any("UnpublishNotify" in l for l in lines), "the RTMP player was told the stream was unpublished")
    check("closed through the API" in server.log_text(), "log: closed through the API")
    check(server.alive(), "server still running")
finally:
    stop_proc(pub)
    rc = server.stop()
check(rc == 0, f"server exited 0 (got {rc})")

# http.api.allow without loopback: the API answers 403. rtmp.max_connections counts HTTP too: 503.
hport2 = free_port()
closed = Server("http-api-closed", extra_yaml=(
    f"  max_connections: 3\nhttp:\n  listen: 127.0.0.1:{hport2}\n  api: {{ allow: [10.0.0.0/8] }}\n"))
closed.start()
check(wait_port(hport2), "second server: HTTP listener is up")
try:
    for path in ("/api/v1/server", "/api/v1/clients", "/metrics"):
        check(call(hport2, path)[0] == 403, f"api.allow [10.0.0.0/8]: {path} from 127.0.0.1 is 403")
    check(call(hport2, "/api/v1/clients/1", "DELETE")[0] == 403, "api.allow: DELETE refused too")
    # The probes are open to every address: a load balancer asks them, and they tell nothing else.
    st, _, body = call(hport2, "/healthz")
    check(st == 200 and json.loads(body)["status"] == "ok", f"/healthz answers 200 where the API is closed ({st})")
    st, _, body = call(hport2, "/readyz")
    check(st == 200 and json.loads(body)["status"] == "ready", f"/readyz: ready ({st} {body!r})")
    time.sleep(0.5)
    held = [socket.create_connection(("127.0.0.1", hport2)) for _ in range(2)]
    rtmp_held = socket.create_connection(("127.0.0.1", closed.port))
    time.sleep(0.3)
    st, h, body = call(hport2, "/api/v1/server")
    check(st == 503 and h.get("Connection") == "close", f"max_connections 3 (2 HTTP + 1 RTMP held): 503 ({st})")
    for s in held + [rtmp_held]:
        s.close()
    time.sleep(0.5)
    check(call(hport2, "/api/v1/server")[0] == 403, "once they close, requests are served again")
finally:
    rc = closed.stop()
check(rc == 0, "second server exited 0")
print("PASS")
