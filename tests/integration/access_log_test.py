#!/usr/bin/python3
"""The access log (docs/access_log.md) of the real server, against what the clients report.

Run 1, `format: combined`, `path: access.log` (relative: the configuration file's folder), two
worker loops:
  - curl GETs of the page (200) and of a missing path (404), with an agent and a referer holding
    quotes: each has its line, in nginx's combined format with the duration appended, the peer
    127.0.0.1, the status, bytes equal to curl's size_download, the quotes escaped as \\x22;
  - ffmpeg publishes 6 s of generated media over RTMP; meanwhile ffmpeg plays it over RTMP for
    3 s, curl reads it as HTTP-FLV over HTTP/1.0 (the response ends when the publisher leaves, so
    curl got every byte the server counted) and a viewer reads its HLS playlist and segments:
    the PUBLISH and PLAY session lines (rtmp://127.0.0.1:PORT/live/cam, RTMP, status 200, the
    flashVer, durations within the clients' own), the HTTP-FLV request's bytes equal curl's, the
    RTMP player's bytes at least the FLV it wrote;
  - the file renamed, SIGUSR1: the next request's line is in a new access.log (mode 0640), not in
    the renamed one; goaccess parses every line of both; the server stopped: the HLS viewer's session line (PLAY http://..., HLS, 503
    for the stop, from its first request) counts exactly the bytes of the playlists and segments
    it was sent.
Run 2, `format: json`, HTTP behind `proxy_protocol` (from 127.0.0.2), SRT and WebRTC: JSON lines
with the named fields; a request with a PROXY header from 203.0.113.9 is logged as that client; the
RTMP publisher's line has its app, stream, reason and bytes_in about the media it sent; an SRT
reader's line (srt://HOSTNAME/live/json: SRT names no host) has at least the bytes of the TS it
wrote; a WHEP player's (sluice-bench) line has at least the bytes it received and its DELETE as the
reason, beside the lines of its POST and DELETE; an RTMP publish without the app's key has its
refused line (403, duration 0).
"""
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import free_udp_port  # noqa: E402

require_tools("ffmpeg", "curl", "goaccess")

# nginx's combined format with $request_time appended (docs/access_log.md).
COMBINED = re.compile(r'^(?P<client>\S+) - - \[(?P<time>\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\] '
                      r'"(?P<method>[A-Z]+) (?P<target>\S+) (?P<protocol>\S+)" (?P<status>\d{3}) (?P<bytes>\d+) '
                      r'"(?P<referer>[^"]*)" "(?P<agent>[^"]*)" (?P<duration>\d+\.\d{3})$')


def read_lines(path):
    try:
        return [line for line in open(path, encoding="utf-8").read().split("\n") if line]
    except FileNotFoundError:
        return []


def parsed(path):
    out = []
    for line in read_lines(path):
        m = COMBINED.match(line)
        if m is None:
            fail(f"a line not in the combined format: {line[:200]}")
        out.append(m.groupdict())
    return out


def find(lines, **want):
    return [ln for ln in lines if all(ln.get(k) == v for k, v in want.items())]


def curl(url, *extra):
    """(status, size_download) as curl reports them."""
    p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}"] + list(extra) + [url],
                       capture_output=True, text=True, timeout=30)
    code, size = p.stdout.split()
    return int(code), int(size)


def http_get(port, path, proxy_from=None):
    """A GET on a raw socket, optionally behind a PROXY v1 header sent from 127.0.0.2: (status, body
    length)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    if proxy_from:
        s.bind(("127.0.0.2", 0))  # the balancer (proxy_protocol_from)
    s.connect(("127.0.0.1", port))
    head = f"PROXY TCP4 {proxy_from} 127.0.0.1 40000 {port}\r\n" if proxy_from else ""
    s.sendall((head + f"GET {path} HTTP/1.1\r\nHost: t\r\nUser-Agent: raw\r\nConnection: close\r\n\r\n").encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), len(body)


class HlsViewer(threading.Thread):
    """Reads the playlist and every segment it lists for `seconds`, counting the body bytes."""

    def __init__(self, base, seconds):
        super().__init__(daemon=True)
        self.base, self.seconds, self.bytes, self.segments, self.error = base, seconds, 0, 0, None

    def get(self, url):
        p = subprocess.run(["curl", "-s", "-f", "-o", "-", url], capture_output=True, timeout=20)
        if p.returncode != 0:
            raise RuntimeError(f"{url}: curl {p.returncode}")
        self.bytes += len(p.stdout)
        return p.stdout

    def run(self):
        try:
            seen = set()
            end = time.time() + self.seconds
            while time.time() < end:
                playlist = self.get(self.base + "/live/cam/index.m3u8").decode()
                for uri in [ln for ln in playlist.splitlines() if ln and not ln.startswith("#")]:
                    if uri not in seen:
                        seen.add(uri)
                        self.get(self.base + "/live/cam/" + uri.split("?")[0])
                        self.segments += 1
                time.sleep(0.5)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = repr(e)


def duration_of(line):
    return float(line["duration"])


start_time = time.time()
os.umask(0o022)  # the server's: its 0640 stays 0640
src = make_media(os.path.join(workdir("access-log-media"), "src.flv"), seconds=6)

# ---- Run 1: combined.
hport = free_port()
apps = "  live: { type: live, hls: { variant: mpegts, segment: 1s } }\n"
extra = (f"workers: 2\nhttp:\n  listen: 127.0.0.1:{hport}\n"
         "access_log:\n  path: access.log\n  format: combined\n")
server = Server("access-log", extra_yaml=extra, apps=apps).start()
check(wait_port(hport), "HTTP listener up")
log = os.path.join(server.dir, "access.log")
base = f"http://127.0.0.1:{hport}"
agent = 'test "agent" 1.0'
referer = 'http://ref.example/a"b'

code_ok, size_ok = curl(base + "/", "-A", agent, "-e", referer)
code_404, size_404 = curl(base + "/nosuch/thing.flv?key=secret", "-A", agent)
check(code_ok == 200 and code_404 == 404, f"curl: the page 200, a missing stream 404 ({code_ok}, {code_404})")
check(wait_for(lambda: len(read_lines(log)) >= 2, 5), "two request lines in access.log (relative path: the config's folder)")
lines = parsed(log)
page = find(lines, target="/")
missing = find(lines, target="/nosuch/thing.flv")
check(len(page) == 1 and page[0]["method"] == "GET" and page[0]["protocol"] == "HTTP/1.1" and page[0]["status"] == "200"
      and page[0]["client"] == "127.0.0.1", f"GET / 200 from 127.0.0.1 ({page})")
check(int(page[0]["bytes"]) == size_ok and size_ok > 0, f"its bytes are curl's size_download ({page[0]['bytes']} = {size_ok})")
check(page[0]["agent"] == r"test \x22agent\x22 1.0" and page[0]["referer"] == r"http://ref.example/a\x22b",
      f"agent and referer with their quotes escaped ({page[0]['agent']}, {page[0]['referer']})")
check(len(missing) == 1 and missing[0]["status"] == "404" and int(missing[0]["bytes"]) == size_404,
      f"GET of a missing stream: 404 with curl's {size_404} bytes, no query (key) in the line ({missing})")
check("secret" not in open(log).read(), "the query's key is not written")

publisher = publish_ffmpeg(src, server.url("live/cam"))
check(wait_for(lambda: "event=publish " in server.log_text(), 10), "the publisher is live")
flv = subprocess.Popen(["curl", "-s", "--http1.0", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                        base + "/live/cam.flv"], stdout=subprocess.PIPE, text=True)
play_out = os.path.join(server.dir, "play.flv")
play_start = time.time()
player = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url("live/cam"), "-t", "3",
                         "-c", "copy", "-f", "flv", "-y", play_out], capture_output=True, text=True, timeout=30)
play_wall = time.time() - play_start
check(player.returncode == 0, f"ffmpeg played 3 s over RTMP ({player.stderr[-200:]})")
hls_start = time.time()
viewer = HlsViewer(base, 2.0)
viewer.start()
viewer.join(30)
check(viewer.error is None and viewer.segments >= 1, f"the HLS viewer read the playlist and {viewer.segments} segments "
      f"({viewer.bytes} bytes; {viewer.error})")
publisher.wait(timeout=30)
flv_code, flv_size = flv.communicate(timeout=15)[0].split()
check(flv_code == "200" and int(flv_size) > 100_000, f"HTTP-FLV read the stream to its end ({flv_code}, {flv_size} B)")
check(wait_for(lambda: len(find(parsed(log), method="PUBLISH")) == 1, 5), "the publisher's line is written")

lines = parsed(log)
rtmp_url = f"rtmp://127.0.0.1:{server.port}/live/cam"
pub = find(lines, method="PUBLISH")[0]
check(pub["target"] == rtmp_url and pub["protocol"] == "RTMP" and pub["status"] == "200"
      and pub["client"] == "127.0.0.1", f"PUBLISH {rtmp_url} RTMP 200 from 127.0.0.1 ({pub})")
check(pub["agent"].startswith("FMLE/3.0 (compatible; Lavf"), f"the publisher's agent is ffmpeg's flashVer ({pub['agent']})")
check(5.0 <= duration_of(pub) <= 12.0, f"publish duration within 6 s of media sent in real time ({pub['duration']})")
plays = find(lines, method="PLAY", protocol="RTMP")
check(len(plays) == 1 and plays[0]["target"] == rtmp_url and plays[0]["status"] == "200",
      f"one RTMP PLAY line, status 200 ({plays})")
play_file = os.path.getsize(play_out)
# RTMP's chunk headers are smaller than FLV's tag headers, the handshake and what ffmpeg had not
# read yet add to the connection's count.
check(play_file * 0.9 <= int(plays[0]["bytes"]) <= play_file * 1.5 + 65536,
      f"the player's bytes: about the {play_file}-byte FLV it wrote ({plays[0]['bytes']})")
check(0.5 <= duration_of(plays[0]) <= play_wall + 0.5, f"play duration within ffmpeg's {play_wall:.2f} s ({plays[0]['duration']})")
flv_lines = find(lines, target="/live/cam.flv")
check(len(flv_lines) == 1 and flv_lines[0]["status"] == "200" and flv_lines[0]["protocol"] == "HTTP/1.0"
      and int(flv_lines[0]["bytes"]) == int(flv_size),
      f"the HTTP-FLV request's line has curl's {flv_size} bytes ({flv_lines})")
check(3.0 <= duration_of(flv_lines[0]) <= 12.0, f"HTTP-FLV lasted as the stream did ({flv_lines[0]['duration']})")
hls_requests = [ln for ln in lines if ln["target"].startswith("/live/cam/")]
check(len(hls_requests) >= 2 and all(ln["status"] == "200" for ln in hls_requests)
      and sum(int(ln["bytes"]) for ln in hls_requests) == viewer.bytes,
      f"the HLS requests' lines add up to the {viewer.bytes} bytes the viewer got ({len(hls_requests)} lines)")

# ---- Rotation: rename, SIGUSR1, the next line in a new file.
rotated = log + ".1"
os.rename(log, rotated)
before = len(read_lines(rotated))
server.proc.send_signal(signal.SIGUSR1)
check(wait_for(lambda: "event=access_log_reopened" in server.log_text(), 5), "SIGUSR1: the server reopened the file")
code, size = curl(base + "/api/v1/server")
check(code == 200, "a request after the reopen")
check(wait_for(lambda: len(read_lines(log)) == 1, 5), "its line is in the new access.log")
check(find(parsed(log), target="/api/v1/server", status="200")[0]["bytes"] == str(size), "with curl's bytes")
check(len(read_lines(rotated)) == before, "and not in the renamed file")
mode = stat.S_IMODE(os.stat(log).st_mode)
check(mode == 0o640, f"the new file's mode is 0640 ({oct(mode)})")

# goaccess (the log analyser the format is for) reads every line, requests and sessions alike.
combined_lines = read_lines(rotated) + read_lines(log)
with open(os.path.join(server.dir, "all.log"), "w") as f:
    f.write("\n".join(combined_lines) + "\n")
report = os.path.join(server.dir, "goaccess.json")
ga = subprocess.run(["goaccess", os.path.join(server.dir, "all.log"), "--log-format",
                     '%h %^[%d:%t %^] "%r" %s %b "%R" "%u" %T', "--date-format=%d/%b/%Y", "--time-format=%T",
                     "-o", report], capture_output=True, text=True, timeout=30)
general = json.load(open(report))["general"] if ga.returncode == 0 else {}
counts = {k: general.get(k) for k in ("total_requests", "failed_requests")}
if ga.returncode != 0:
    print(ga.stderr[-500:], flush=True)
check(general.get("total_requests") == len(combined_lines) and general.get("failed_requests") == 0,
      f"goaccess parses all {len(combined_lines)} lines ({counts})")

# The HLS viewer's session ends with the server (its 30 s idle end is longer than this test).
check(server.stop() == 0, "the server stops cleanly")
hls = find(parsed(log), method="PLAY", protocol="HLS")
check(len(hls) == 1 and hls[0]["target"] == f"http://127.0.0.1:{hport}/live/cam" and hls[0]["client"] == "127.0.0.1"
      and hls[0]["agent"].startswith("curl/") and hls[0]["status"] == "503",
      f"the HLS viewer's session line, ended by the stop (503) ({hls})")
check(2.0 <= duration_of(hls[0]) <= time.time() - hls_start, f"from its first request to the stop ({hls[0]['duration']})")
check(int(hls[0]["bytes"]) == viewer.bytes, f"it counts the {viewer.bytes} bytes of playlists and segments sent")

# ---- Run 2: json; HTTP behind the PROXY protocol from 127.0.0.2 (the balancer), SRT, WebRTC, refusals.
hport2 = free_port()
srt_port = free_udp_port()
webrtc_port = free_udp_port()
extra = (f"workers: 1\nhttp:\n  listen: 127.0.0.1:{hport2}\n  proxy_protocol: true\n"
         "  proxy_protocol_from: [127.0.0.2/32]\n"
         f"srt: {{ listen: 127.0.0.1:{srt_port}, latency: 200ms }}\n"
         f"webrtc: {{ listen: 127.0.0.1:{webrtc_port} }}\n"
         "access_log: { path: access.json, format: json }\n")
apps = ("  live: { type: live }\n"
        "  keyed: { type: live, publish: { keys: [k-1] } }\n")
server = Server("access-log-json", extra_yaml=extra, apps=apps).start()
check(wait_port(hport2) and wait_for(lambda: "event=srt_listening" in server.log_text(), 10),
      "run 2: HTTP and SRT listeners up")
log = os.path.join(server.dir, "access.json")
status, body = http_get(hport2, "/api/v1/server", proxy_from="203.0.113.9")
check(status == 403, f"a request behind a PROXY header from 203.0.113.9: refused by api.allow ({status})")
publisher = publish_ffmpeg(src, server.url("live/json"), extra=["-t", "4"])
check(wait_for(lambda: "event=publish " in server.log_text(), 10), "run 2: the publisher is live")
whep_json = os.path.join(server.dir, "whep.json")
whep = subprocess.Popen([binary("bench/load/sluice-bench"), "whep", "-n", "1", "-d", "2", "-q", "--json", whep_json,
                         f"http://127.0.0.1:{hport2}/live/json/whep"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, text=True)
srt_out = os.path.join(server.dir, "srt.ts")
srt_reader = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-srt_streamid", "read:live/json", "-i",
                             f"srt://127.0.0.1:{srt_port}?latency=200000", "-map", "0", "-c", "copy", "-t", "1",
                             "-f", "mpegts", "-y", srt_out], capture_output=True, text=True, timeout=20)
check(srt_reader.returncode == 0, f"ffmpeg read 1 s over SRT ({srt_reader.stderr[-200:]})")
whep_err = whep.communicate(timeout=30)[1]
check(whep.returncode == 0, f"a WHEP player (sluice-bench) played 2 s ({whep_err[-300:]})")
whep_player = json.load(open(whep_json))["players"]
refused_rtmp = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src, "-t", "1", "-c", "copy",
                               "-f", "flv", server.url("keyed/x")], capture_output=True, text=True, timeout=20)
check(refused_rtmp.returncode != 0, "an RTMP publish without its key is refused")
publisher.wait(timeout=30)
check(wait_for(lambda: len(read_lines(log)) >= 7, 5), f"run 2: seven lines ({len(read_lines(log))})")
records = []
for line in read_lines(log):
    try:
        records.append(json.loads(line))
    except ValueError:
        fail(f"not JSON: {line[:200]}")
check(len(records) == 7, f"every line is one JSON object ({len(records)})")
keys = ["time", "kind", "conn", "client", "method", "target", "protocol", "app", "stream", "status", "reason",
        "bytes_in", "bytes_out", "duration", "referer", "user_agent"]
check(all(list(r) == keys for r in records), f"the named fields, in order ({list(records[0])})")
srt_play = [r for r in records if r["protocol"] == "SRT" and r["stream"] == "json"]
host = socket.gethostname()
check(len(srt_play) == 1 and srt_play[0]["method"] == "PLAY" and srt_play[0]["target"] == f"srt://{host}/live/json"
      and srt_play[0]["status"] == 200 and srt_play[0]["client"] == "127.0.0.1",
      f"the SRT reader's line: PLAY srt://{host}/live/json (the host name: SRT names no host), 200 ({srt_play})")
ts_size = os.path.getsize(srt_out)
check(ts_size * 0.9 <= srt_play[0]["bytes_out"] <= ts_size * 3 + 262144 and 0.5 <= srt_play[0]["duration"] <= 10,
      f"its bytes_out ({srt_play[0]['bytes_out']}) at least the {ts_size}-byte TS it wrote; its duration "
      f"({srt_play[0]['duration']})")
keyless = [r for r in records if r["protocol"] == "RTMP" and r["app"] == "keyed"]
check(len(keyless) == 1 and keyless[0]["method"] == "PUBLISH" and keyless[0]["status"] == 403
      and keyless[0]["reason"].startswith("refused: ") and keyless[0]["stream"] == "x" and keyless[0]["duration"] == 0,
      f"the RTMP publish without its key: 403, refused ({keyless})")
whep_lines = [r for r in records if r["protocol"] == "WebRTC"]
check(len(whep_lines) == 1 and whep_lines[0]["method"] == "PLAY" and whep_lines[0]["target"] == f"webrtc://{host}/live/json"
      and whep_lines[0]["status"] == 200 and whep_lines[0]["client"] == "127.0.0.1"
      and whep_lines[0]["reason"] == "DELETE from the client",
      f"the WHEP player's line: PLAY webrtc://{host}/live/json, 200, ended by its DELETE ({whep_lines})")
# The player's count has the HTTP answer (the SDP, a few KB) too; the session's, the datagrams.
check(whep_player["bytes_in"] - 8192 <= whep_lines[0]["bytes_out"] <= whep_player["bytes_in"] * 1.5 + 65536
      and whep_player["bytes_in"] > 30000 and 1.5 <= whep_lines[0]["duration"] <= 10,
      f"its bytes_out ({whep_lines[0]['bytes_out']}) about what the player received ({whep_player['bytes_in']}, "
      f"with the SDP answer); its duration ({whep_lines[0]['duration']})")
signalling = sorted((r["method"], r["status"]) for r in records if r["kind"] == "http" and "/whep" in r["target"])
check(signalling == [("DELETE", 200), ("POST", 201)], f"the WHEP offer and DELETE have their request lines ({signalling})")
req = [r for r in records if r["kind"] == "http" and r["target"] == "/api/v1/server"][0]
check(req["client"] == "203.0.113.9" and req["method"] == "GET" and req["target"] == "/api/v1/server"
      and req["status"] == status and req["bytes_out"] == body and req["user_agent"] == "raw"
      and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", req["time"]),
      f"the request's line names the PROXY header's client, its status and body bytes ({req})")
pub = [r for r in records if r["method"] == "PUBLISH" and r["app"] == "live"][0]
check(pub["method"] == "PUBLISH" and pub["protocol"] == "RTMP" and pub["app"] == "live" and pub["stream"] == "json"
      and pub["client"] == "127.0.0.1" and pub["status"] == 200 and pub["reason"] in ("FCUnpublish", "deleteStream",
                                                                                       "peer closed"),
      f"the publisher's session line ({pub})")
media = os.path.getsize(src) * 4 / 6  # four of the six seconds
check(media * 0.8 <= pub["bytes_in"] <= media * 1.5 + 65536 and 3.5 <= pub["duration"] <= 9.0,
      f"its bytes_in ({pub['bytes_in']}) are about the 4 s of media it sent (~{media:.0f}), over about 4 s "
      f"({pub['duration']})")
check(server.stop() == 0, "run 2: the server stops cleanly")
print(f"access_log_test: {time.time() - start_time:.1f} s", flush=True)
