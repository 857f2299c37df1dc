#!/usr/bin/python3
"""HTTP on every loop (issue 16, docs/http.md "HTTP on every loop"): with `workers: 2` both loops
accept and serve HTTP on the same port, and what must be one thing stays one thing:

  - 24 kept-alive connections land on both loops (/api/v1/clients shows HTTP rows of worker 0
    and worker 1, every id once); each got a right API answer, the ones on loop 1 through
    worker 0; DELETE /api/v1/clients/{id} closes a connection on either loop;
  - 16 HTTP-FLV readers of a stream published over RTMP, spread over both loops, each receive the
    publisher's packets (a contiguous run of the source's payloads from a keyframe), and the
    stream's http_flv_players counts all 16;
  - one HLS viewer whose requests go over 20 fresh connections (so over both loops) is one
    session: the on_play hook of a real HTTP hook server is called once, viewers == 1;
  - an upload replaces a small file both loops had in memory: every download after the 204, on
    fresh connections (both loops), has the new bytes; while one upload of a file is in progress,
    12 other uploads of it from fresh connections are all refused 409 (the claim is shared);
  - rtmp.max_connections counts the HTTP connections of both loops: of 14 held connections opened
    one after another with max_connections 10, exactly 10 are served and 4 answered 503.
A server with per-loop state gets each of these wrong (two on_play calls, stale bytes, uploads
accepted twice, about 14 connections served, clients missing from the list)."""
import http.client
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "curl")

TOKEN = "every-loop-Token"
hooks = HookRecorder()
H = hooks.url

hport = free_port()
server = Server("http-every-loop",
                extra_yaml=(f"workers: 2\nhttp:\n  listen: 127.0.0.1:{hport}\n"
                            f"  upload: {{ token: {TOKEN}, max_size: 8MiB }}\n"
                            f"hooks:\n  on_play: {H}/play\n  on_play_done: {H}/play_done\n  timeout: 2s\n"),
                apps=("  live: { type: live, gop_cache: true, hls: { variant: mpegts, segment: 1s } }\n"
                      "  vod: { type: vod, root: ./media }\n"))
os.makedirs(os.path.join(server.dir, "media"))
old_bytes = b"FLV-old-" + bytes(range(256)) * 4
with open(os.path.join(server.dir, "media", "small.flv"), "wb") as f:
    f.write(old_bytes)
server.start()
check(wait_port(hport), "the HTTP port is open")


def get(path, method="GET", headers=None, body=None):
    c = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def api(path):
    status, data = get(path)
    return json.loads(data) if status == 200 else None


def http_rows():
    clients = api("/api/v1/clients") or []
    return [c for c in clients if c["protocol"] == "http"]


# --- 1. Connections on both loops, the API answered on both, ids unique, DELETE on either loop ---
held = []
answers_ok = 0
for _ in range(24):
    c = http.client.HTTPConnection("127.0.0.1", hport, timeout=10)
    c.request("GET", "/api/v1/server")
    r = c.getresponse()
    body = r.read()
    if r.status == 200 and json.loads(body).get("workers") == 2:
        answers_ok += 1
    held.append(c)
check(answers_ok == 24, f"24 kept-alive connections each got the server's API answer ({answers_ok})")
ports = {c.sock.getsockname()[1]: c for c in held}


def rows_of_held():
    return [r for r in http_rows() if int(r["address"].rsplit(":", 1)[1]) in ports]


check(wait_for(lambda: len(rows_of_held()) == 24, 5), "/api/v1/clients lists all 24 (every loop's, merged)")
rows = rows_of_held()
workers = {r["worker"] for r in rows}
check(workers == {0, 1}, f"the connections were accepted by both loops (workers {sorted(workers)})")
on1 = sum(1 for r in rows if r["worker"] == 1)
print(f"info: {on1} of 24 on loop 1", flush=True)
all_ids = [c["id"] for c in api("/api/v1/clients")]
check(len(all_ids) == len(set(all_ids)), "client ids are unique across the loops")
server_json = api("/api/v1/server")
check(server_json["connections"]["http"] >= 24, f"connections.http counts both loops ({server_json['connections']['http']})")
for w in (0, 1):
    row = next(r for r in rows if r["worker"] == w)
    victim = ports[int(row["address"].rsplit(":", 1)[1])]
    status, _ = get(f"/api/v1/clients/{row['id']}", method="DELETE")
    check(status == 204, f"DELETE of a client on loop {w} answers 204")
    # At once, before its loop may have closed it: not listed any more, and a second DELETE is a 404.
    listed = [c["id"] for c in api("/api/v1/clients")]
    again, _ = get(f"/api/v1/clients/{row['id']}", method="DELETE")
    check(row["id"] not in listed and again == 404,
          f"right after the DELETE the client on loop {w} is not listed and a second DELETE answers 404 ({again})")
    check(closed_by_peer(victim.sock, 3.0), f"the client on loop {w} is closed")
    held.remove(victim)
for c in held:
    c.close()

# --- 2. HTTP-FLV readers spread over both loops get the publisher's packets ---
src = make_media(os.path.join(server.dir, "src.flv"), seconds=60, gop=25)
pub = publish_ffmpeg(src, f"rtmp://127.0.0.1:{server.port}/live/cam", loop=True)
check(wait_for(lambda: any(s["name"] == "live/cam" and s["live"] for s in (api("/api/v1/streams") or [])), 15),
      "the stream is live")
readers = []
for i in range(16):
    out = os.path.join(server.dir, f"reader{i}.flv")
    readers.append((out, subprocess.Popen(["curl", "-s", "-N", "-o", out, f"http://127.0.0.1:{hport}/live/cam.flv"])))


def flv_players():
    s = next((s for s in (api("/api/v1/streams") or []) if s["name"] == "live/cam"), None)
    return s["http_flv_players"] if s else -1


check(wait_for(lambda: flv_players() == 16, 5), "http_flv_players counts the 16 readers of both loops")
flv_workers = {r["worker"] for r in http_rows() if r.get("stream") == "live/cam"}
check(flv_workers == {0, 1}, f"the readers are on both loops ({sorted(flv_workers)})")
time.sleep(3)
for _, p in readers:
    p.terminate()
    p.wait(5)
source_tags = flv_tags(src)
for i, (out, _) in enumerate(readers):
    check_same_packets(f"reader {i}", out, source_tags, min_video=40, min_audio=40)

# --- 3. One HLS viewer over many connections is one session ---
hooks.clear()
check(wait_for(lambda: get("/live/cam/index.m3u8")[0] == 200, 10), "the HLS playlist is served")
statuses = []
for _ in range(10):
    status, playlist = get("/live/cam/index.m3u8")
    statuses.append(status)
    segs = [ln for ln in playlist.decode().splitlines() if ln and not ln.startswith("#")]
    if segs:
        statuses.append(get("/live/cam/" + segs[-1])[0])
check(all(s == 200 for s in statuses), f"{len(statuses)} HLS requests on fresh connections answered 200")
hls_plays = [b for b in hooks.bodies("play") if b.get("protocol") == "hls"]
check(len(hls_plays) == 1, f"on_play was called once for the HLS viewer ({len(hls_plays)})")
stream = next(s for s in api("/api/v1/streams") if s["name"] == "live/cam")
check(stream["hls"] is not None and stream["hls"]["viewers"] == 1, f"one HLS viewer ({stream['hls']})")
stop_proc(pub)

# --- 4. Uploads: the new bytes on every loop at once; one upload of a file at a time ---
url = "/vod/small.flv"
primed = [get(url)[1] for _ in range(16)]
check(all(b == old_bytes for b in primed), "16 downloads (both loops) have the old bytes")
new_bytes = b"FLV-new-" + bytes(reversed(range(256))) * 5
status, _ = get(url, method="PUT", headers={"Authorization": f"Bearer {TOKEN}"}, body=new_bytes)
check(status == 204, f"the upload replacing it answers 204 ({status})")
after = [get(url)[1] for _ in range(16)]
check(all(b == new_bytes for b in after), "every download right after the upload, on both loops, has the new bytes")

slow = socket.create_connection(("127.0.0.1", hport))
slow.sendall((f"PUT /vod/claimed.flv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
              "Content-Length: 2000\r\n\r\n").encode() + b"x" * 100)
time.sleep(0.5)
refused = [get("/vod/claimed.flv", method="PUT", headers={"Authorization": f"Bearer {TOKEN}"}, body=b"y" * 50)[0]
           for _ in range(12)]
check(refused == [409] * 12, f"12 other uploads of the file in progress are refused 409 ({refused})")
slow.sendall(b"x" * 1900)
slow.settimeout(10)
check(slow.recv(100).startswith(b"HTTP/1.1 201"), "the first upload completes (201)")
slow.close()
with open(os.path.join(server.dir, "media", "claimed.flv"), "rb") as f:
    check(f.read() == b"x" * 2000, "the stored file is the first upload's")

check(server.alive(), "the server is still running")
server.stop()

# --- 5. rtmp.max_connections counts the HTTP connections of every loop ---
lport = free_port()
limited = Server("http-every-loop-limit", extra_yaml=f"  max_connections: 10\nworkers: 2\nhttp:\n  listen: 127.0.0.1:{lport}\n")
limited.start()
check(wait_port(lport), "the limited server's HTTP port is open")
# wait_port's probes may still be counted for a moment.
time.sleep(0.5)
conns, served = [], []
for _ in range(14):
    c = http.client.HTTPConnection("127.0.0.1", lport, timeout=10)
    c.request("GET", "/nothing-here")
    r = c.getresponse()
    r.read()
    served.append(r.status)
    conns.append(c)
check(served.count(404) == 10 and served.count(503) == 4,
      f"with max_connections 10, 10 of 14 held connections are served and 4 refused ({served})")
for c in conns:
    c.close()
limited.stop()
