#!/usr/bin/python3
"""Hot reload (docs/configuration.md, "Reload") under load, on a server with two loops.

About 300 players (rtmpdump, ffmpeg and curl ones whose bytes are compared with the source, and
sluice-bench's RTMP, HTTP-FLV and HLS players) watch 3 live streams while the test edits the YAML:
- SIGHUP: an app added, a stream key rotated, a push target added (a second Sluice), the HLS window
  changed, the log level raised, the file watch turned on. The push target is live within 2 s, the
  old key is refused and the new one accepted, the new app plays, debug lines appear, a stream
  started after the reload has the new window while one started before keeps the old one.
- the file watch: the key rotated again by saving the file; then the watch turned off by a save.
- the API: the key rotated once more with POST /api/v1/config/reload, an app with an always-on pull
  added (it pulls at once) and removed (the pull ends); then reload.recheck on: the
  publisher admitted with the first key (kept by the reloads so far) is ended, one with the key in
  force goes on.
- refused, whole: a broken YAML (422, file:line:column), an RTMP port already taken (409), an
  HTTP one (409: the RTMP listener the same file added closes again), a changed worker count
  (409); each time the counter moves and the old configuration stays in force.
- new RTMP and HTTP listeners (the HTTP one on both loops) opened by a reload, closed by the next.
Then 100 reloads in a row, 10 a second, with 100 players more: descriptors, memory and the
configuration snapshots in memory stay flat, and no reload takes any loop 50 ms of CPU (the server
measures each loop's CPU time spent on it: wall time would count the machine's other processes,
91 ms once in a loaded full suite). Through all of it the server closes nobody and drops no
frame: no sluice-bench player fails, no player was cut back to a keyframe, and the compared players
got the publishers' packets byte for byte.

How long a loop was held is measured in the server, not from a player's gaps: a player's stall
counts every process between the encoder and it (on a loaded 2-core machine one run had 5 of 250
players 1 s late, with the bench itself 437 ms late), so the players' stalls are printed, not
judged."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "rtmpdump", "curl")
BENCH = binary("bench/load/sluice-bench")
PLAY_S = 50

b = Server("config_reload_b", apps="  mirror: { type: live }\n").start()
http_port = free_port()
a = Server("config_reload_a", env=SMALL_QUARANTINE)


def write_config(key="old-key", window=3, level="info", news=False, push=False, watch=False, extra_apps="",
                 listen=(), http_listen=(), workers=2, broken=False, recheck=False, pull=False):
    listen_all = ", ".join([f"127.0.0.1:{a.port}"] + [f"127.0.0.1:{p}" for p in listen])
    push_yaml = f"    push:\n      - url: rtmp://127.0.0.1:{b.port}/mirror/\n" if push else ""
    news_yaml = "  news: { type: live }\n" if news else ""
    if pull:  # an always-on pull of the stream A pushes to B, back from B
        news_yaml += (f"  pulled:\n    type: live\n    pull: {{ upstreams: [\"rtmp://127.0.0.1:{b.port}/mirror\"], "
                      "on_demand: false, streams: [a] }\n")
    text = (f"rtmp:\n  listen: [{listen_all}]\nworkers: {workers}\n"
            f"http: {{ listen: [{', '.join(f'127.0.0.1:{p}' for p in (http_port,) + tuple(http_listen))}] }}\n"
            f"reload: {{ watch: {'true' if watch else 'false'}, recheck: {'true' if recheck else 'false'} }}\n"
            f"apps:\n  live:\n    type: live\n    hls: {{ enabled: true, segment: 1s, window: {window} }}\n{push_yaml}"
            f"  keyed:\n    type: live\n    publish: {{ keys: [{key}] }}\n{news_yaml}{extra_apps}"
            f"log:\n  level: {level}\n")
    if broken:
        text = text.replace("type: live\n    publish", "type: lvie\n    publish")
    # Written whole and renamed over, as configuration tools do.
    tmp = a.config + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.config)


def api(path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{http_port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return r.status, (json.loads(body) if path.startswith("/api") else body.decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def metric(name):
    text = api("/metrics")[1]
    m = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def stall_report(what, summary):
    """The players' stalls and the bench's own lateness, for the reader (see the docstring)."""
    stalled = [(c["index"], c["url_index"], c["bytes_in"]) for c in summary.get("clients", []) if c["stalls"]]
    return (f"{what}: {summary['players']['stalls']} stalls (players, stream: {stalled[:10]}); the bench's own loop "
            f"lag max {summary.get('bench_cpu', {}).get('loop_lag_max_ms')} ms; the server's loop 0 lag max "
            f"{metric('sluice_loop_lag_seconds{quantile=' + chr(34) + '1' + chr(34) + '}')} s")


def generation():
    return api("/api/v1/config/reload")[1]["generation"]


def video_packets(path):
    return sum(1 for row in ffprobe_packets(path) if row[0] == "video") if os.path.exists(path) else 0


def plays(path, out, seconds=2):
    """An ffmpeg player of `path` for `seconds`: the video packets it got."""
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", a.url(path), "-t", str(seconds), "-c", "copy",
                    "-f", "flv", "-y", out], capture_output=True, timeout=30)
    return video_packets(out)


def publish_short(path, src):
    """A 3 s publish: its exit status (ffmpeg fails when the server refuses the publish)."""
    return subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src, "-c", "copy", "-f", "flv",
                           a.url(path)], capture_output=True, timeout=30).returncode


write_config()
a.start()
d = a.dir
src = make_media(os.path.join(d, "src.flv"), seconds=PLAY_S + 45, vbitrate="300k")
short = make_media(os.path.join(d, "short.flv"), seconds=3, vbitrate="200k")
source_tags = flv_tags(src)
publishers = [publish_ffmpeg(src, a.url(f"live/{s}")) for s in "abc"]
time.sleep(2)

# The players: compared ones first, then sluice-bench's crowd.
outs, compared = [], []
for i, s in enumerate("abc"):
    out = os.path.join(d, f"rtmpdump_{s}.flv")
    compared.append(subprocess.Popen(["timeout", "-s", "INT", "-k", "3", str(PLAY_S), "rtmpdump", "-q", "--live", "-r",
                                      a.url(f"live/{s}"), "-o", out],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    outs.append(("rtmpdump " + s, out))
for s in "ab":
    out = os.path.join(d, f"ffmpeg_{s}.flv")
    compared.append(subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", a.url(f"live/{s}"), "-t",
                                      str(PLAY_S - 5), "-c", "copy", "-f", "flv", "-y", out],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    outs.append(("ffmpeg " + s, out))
    out = os.path.join(d, f"curl_{s}.flv")
    compared.append(subprocess.Popen(["curl", "-s", "--max-time", str(PLAY_S - 5), "-o", out,
                                      f"http://127.0.0.1:{http_port}/live/{s}.flv"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    outs.append(("curl " + s, out))
rtmp_urls = [a.url(f"live/{s}") for s in "abc"]
flv_urls = [f"http://127.0.0.1:{http_port}/live/{s}.flv" for s in "abc"]
hls_urls = [f"http://127.0.0.1:{http_port}/live/{s}/index.m3u8" for s in "abc"]
benches = []
for mode, n, urls in (("play", 250, rtmp_urls), ("http-flv", 25, flv_urls), ("hls", 20, hls_urls)):
    summary = os.path.join(d, f"bench_{mode}.json")
    benches.append((mode, n, summary, subprocess.Popen(
        [BENCH, mode, "-q", "-n", str(n), "--rate", "100", "-d", str(PLAY_S - 8), "--per-client", "--json", summary] +
        urls,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
# The crowd ramps up at 100 a second; on a loaded machine the bench may take longer to start.
wait_for(lambda: len(api("/api/v1/clients")[1]) >= 300, 20, step=0.5)
players_before = len(api("/api/v1/clients")[1])
check(players_before >= 300, f"300 clients before the reload ({players_before})")

# 1. SIGHUP: app added, key rotated, push target, HLS window, log level, file watch on.
check("event=accept" not in a.log_text(), "no debug lines at log level info")
held = publish_ffmpeg(src, a.url("keyed/held?key=old-key"))  # admitted under the key the reload replaces
time.sleep(1.5)
check(held.poll() is None, "a publisher with the first key is live")
write_config(key="new-key", window=5, level="debug", news=True, push=True, watch=True)
reload_at = time.time()
a.proc.send_signal(signal.SIGHUP)
check(wait_for(lambda: 'result=applied trigger="SIGHUP"' in a.log_text(), 3), "SIGHUP: the reload is applied")
check(wait_for(lambda: all(f"app=mirror stream={s}" in b.log_text() for s in "abc"), 2.0),
      f"the new push target has the 3 live streams within 2 s ({time.time() - reload_at:.2f} s)")
late = publish_ffmpeg(src, a.url("live/d"))  # started after the reload: the new HLS window
news_pub = publish_ffmpeg(src, a.url("news/n"))
check(publish_short("keyed/s?key=old-key", short) != 0, "the old key is refused")
check("event=publish_rejected app=keyed" in a.log_text(), "... with a log line")
keyed = publish_ffmpeg(src, a.url("keyed/s?key=new-key"))
time.sleep(1.5)
check(keyed.poll() is None, "the new key publishes")
check(plays("keyed/s", os.path.join(d, "keyed.flv")) >= 20, "the stream published with the new key plays")
check(plays("news/n", os.path.join(d, "news.flv")) >= 20, "the new app plays")
check("event=accept" in a.log_text(), "debug lines at log level debug")
check(held.poll() is None, "the publisher admitted with the old key goes on (reload.recheck is off)")
stop_proc(keyed)

# 2. The file watch: a save rotates the key again; a second save turns the watch off.
write_config(key="newer-key", window=5, level="debug", news=True, push=True, watch=True)
check(wait_for(lambda: generation() == 2, 3), "a saved file is reloaded (file watch)")
check(publish_short("keyed/s?key=new-key", short) != 0, "the replaced key is refused")
keyed = publish_ffmpeg(src, a.url("keyed/s?key=newer-key"))
time.sleep(1.5)
check(keyed.poll() is None, "the key from the saved file publishes")
stop_proc(keyed)
write_config(key="newer-key", window=5, level="debug", news=True, push=True, watch=False)
check(wait_for(lambda: generation() == 3, 3), "the save that turns the watch off is reloaded")

# 3. The API.
write_config(key="api-key", window=5, level="debug", news=True, push=True)
time.sleep(0.5)
check(generation() == 3, "with the watch off a save alone changes nothing")
status, r = api("/api/v1/config/reload", "POST")
check(status == 200 and r["result"] == "applied", f"POST applies the file ({status} {r})")
check("apps.keyed: changed (publish)" in r["changes"], f"the answer lists the change ({r['changes']})")
status, r = api("/api/v1/config/reload", "POST")
check(status == 200 and r["result"] == "unchanged", f"the same file again changes nothing ({r})")
keyed = publish_ffmpeg(src, a.url("keyed/s?key=api-key"))
time.sleep(1.5)
check(keyed.poll() is None, "the key from the API reload publishes")
stop_proc(keyed)
# An always-on pull added, then removed.
write_config(key="api-key", window=5, level="debug", news=True, push=True, pull=True)
status, r = api("/api/v1/config/reload", "POST")
check(status == 200 and "apps.pulled: added" in r["changes"], f"an app with an always-on pull is added ({r})")
check(plays("pulled/a", os.path.join(d, "pulled.flv")) >= 20, "its pull starts at once: the pulled stream plays")
write_config(key="api-key", window=5, level="debug", news=True, push=True)
status, r = api("/api/v1/config/reload", "POST")
check(status == 200 and "apps.pulled: removed" in r["changes"], f"... and removed ({r})")
check(wait_for(lambda: "its app no longer pulls" in a.log_text(), 3), "... which ends its pull")

# reload.recheck: the sessions admitted under keys no longer valid end; one with the key in force stays.
fresh = publish_ffmpeg(src, a.url("keyed/fresh?key=api-key"))
time.sleep(1.5)
write_config(key="api-key", window=5, level="debug", news=True, push=True, recheck=True)
status, r = api("/api/v1/config/reload", "POST")
check(status == 200 and r["result"] == "applied", f"a reload with reload.recheck ({r})")
check(wait_for(lambda: held.poll() is not None, 5), "the publisher admitted with the old key is ended")
check(re.search(r"event=access_recheck_failed action=publish app=keyed stream=held", a.log_text()),
      "... with a log line that says why")
check(fresh.poll() is None, "the publisher with the key in force goes on")
check(plays("keyed/fresh", os.path.join(d, "fresh.flv")) >= 20, "... and plays")
stop_proc(fresh)

# 4. Refused, whole: the counter moves, the configuration in force stays.
errors0 = metric('sluice_config_reloads_total{result="error"}')
write_config(key="broken-key", window=5, level="debug", news=True, push=True, broken=True)
status, r = api("/api/v1/config/reload", "POST")
check(status == 422 and r["result"] == "invalid", f"a broken file: 422 ({status} {r})")
check(re.search(r"sluice\.yaml:\d+:\d+: apps\.keyed\.type", r.get("error", "")), f"... file:line:column ({r})")
check(re.search(r'result=invalid trigger="api" kept=previous error=".*sluice\.yaml:\d+:\d+', a.log_text()),
      "... and in the log")
taken = socket.socket()
taken.bind(("127.0.0.1", 0))
taken.listen()
taken_port = taken.getsockname()[1]
write_config(key="taken-key", window=5, level="debug", news=True, push=True, listen=[taken_port])
status, r = api("/api/v1/config/reload", "POST")
check(status == 409 and f"127.0.0.1:{taken_port}" in r.get("error", ""), f"a port already taken: 409 ({r})")
# A free RTMP port with a taken HTTP one: the RTMP listener the reload had opened closes again.
free_rtmp = free_port()
write_config(key="taken-key", window=5, level="debug", news=True, push=True, listen=[free_rtmp],
             http_listen=[taken_port])
status, r = api("/api/v1/config/reload", "POST")
check(status == 409 and f"127.0.0.1:{taken_port}" in r.get("error", ""), f"an HTTP port already taken: 409 ({r})")
try:
    socket.create_connection(("127.0.0.1", free_rtmp), timeout=2).close()
    check(False, "the RTMP listener of the refused reload is closed again")
except OSError:
    pass
write_config(key="workers-key", window=5, level="debug", news=True, push=True, workers=3)
status, r = api("/api/v1/config/reload", "POST")
check(status == 409 and "workers: 2 -> 3" in r.get("error", ""), f"a changed worker count: 409 ({r})")
check(metric('sluice_config_reloads_total{result="error"}') == errors0 + 4, "the error counter moved 4 times")
check(metric("sluice_config_last_reload_successful") == 0, "the last reload failed")
check(generation() == 7, "none of the four was applied")
check(publish_short("keyed/s?key=workers-key", short) != 0, "a refused file's key is not in force")
keyed = publish_ffmpeg(src, a.url("keyed/s?key=api-key"))
time.sleep(1.5)
check(keyed.poll() is None, "the key in force still publishes")
stop_proc(keyed)

# 5. Listeners opened by a reload and closed by the next: RTMP (worker 0's) and HTTP (every loop's).
extra, extra_http = free_port(), free_port()
write_config(key="api-key", window=5, level="debug", news=True, push=True, listen=[extra], http_listen=[extra_http])
status, r = api("/api/v1/config/reload", "POST")
check(status == 200 and wait_port(extra, 2), f"a new RTMP listener is opened ({r})")
rtmp_handshake(extra).close()
# The kernel spreads an HTTP port's connections over the loops' sockets: each answers.
answers = [urllib.request.urlopen(f"http://127.0.0.1:{extra_http}/healthz", timeout=5).status for _ in range(20)]
check(answers == [200] * 20, f"a new HTTP listener answers ({answers.count(200)} of 20)")
joined = a.log_text().count(f"event=listen proto=http address=127.0.0.1:{extra_http}")
check(joined == 2, f"... with a socket on each of the 2 loops ({joined})")
write_config(key="api-key", window=5, level="debug", news=True, push=True)
status, r = api("/api/v1/config/reload", "POST")
check(status == 200, f"the listeners are dropped again ({r})")
for port in (extra, extra_http):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        check(False, f"the removed listener {port} is closed")
    except OSError:
        pass

# The HLS windows: the stream started before the first reload keeps 3 segments, the later one has 5.
def segments(stream):
    status, text = api(f"/live/{stream}/index.m3u8")
    return text.count("#EXTINF") if status == 200 else 0


check(wait_for(lambda: segments("d") == 5, 15), f"a stream started after the reload lists 5 segments ({segments('d')})")
check(segments("a") == 3, f"one started before keeps its window of 3 ({segments('a')})")

# Nobody was closed: the crowd, and the compared players byte for byte. The crowd ends here
# (SIGINT: the benches still write their summaries, the players their files) so that the 100
# reloads below count descriptors and memory under a load that stays the same.
for mode, n, summary, p in benches:
    p.send_signal(signal.SIGINT)
for p in compared:
    p.send_signal(signal.SIGINT)
for p in compared:
    try:
        p.wait(timeout=PLAY_S + 10)
    except subprocess.TimeoutExpired:
        p.kill()
for mode, n, summary, p in benches:
    p.wait(timeout=PLAY_S + 10)
    s = json.load(open(summary))
    role = s["players"]
    check(p.returncode == 0 and role["failed"] == 0, f"sluice-bench {mode}: none of {n} failed ({role['failed']}, "
          f"{role.get('failure_reasons')})")
    if mode != "hls":
        print(stall_report(mode, s))
check(metric("sluice_dropped_frames_total") == 0, "no player was cut back to a keyframe (slow-player drops: "
      f"{metric('sluice_dropped_frames_total')})")
for name, out in outs:
    check_same_packets(name, out, source_tags, min_video=400, min_audio=400, trim_tail=2)

# 100 reloads in a row under load, one every 100 ms, with 100 players (read as they arrive, so that
# their stalls of 100 ms are printed): descriptors and memory (ASan's quarantine kept small, so that
# RSS means something) and the configuration snapshots in memory stay flat; no reload holds a loop
# for 50 ms of CPU (the server's own measure, in each answer).
load = subprocess.Popen([BENCH, "play", "-q", "-n", "100", "--rate", "100", "-d", "20", "--stall-ms", "100",
                         "--read-batch-ms", "0", "--per-client", "--json", os.path.join(d, "bench_reloads.json")] + rtmp_urls,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
time.sleep(4)
fds0, rss0 = len(os.listdir(f"/proc/{a.proc.pid}/fd")), a.rss_kb()
slowest, held = 0.0, []
for i in range(100):
    write_config(key="api-key", window=5, level="debug" if i % 2 else "info", news=True, push=True,
                 extra_apps=f"  app{i % 2}: {{ type: live }}\n")
    t0 = time.time()
    status, r = api("/api/v1/config/reload", "POST")
    slowest = max(slowest, time.time() - t0)
    if status != 200 or r["result"] != "applied":
        fail(f"reload {i}: applied ({status} {r})")
    held.append(r["loop_cpu_ms"])
    time.sleep(0.1)
time.sleep(1)
fds1, rss1 = len(os.listdir(f"/proc/{a.proc.pid}/fd")), a.rss_kb()
alive = api("/api/v1/config/reload")[1]["snapshots_alive"]
print(f"100 reloads: fds {fds0} -> {fds1}; RSS {rss0} -> {rss1} KiB; slowest POST {slowest * 1000:.0f} ms; "
      f"a loop's CPU per reload: median {sorted(held)[50]:.1f} ms, max {max(held):.1f} ms; snapshots alive {alive}")
check(abs(fds1 - fds0) <= 2, "descriptors flat")
check(rss1 - rss0 < 8 * 1024, "memory flat (less than 8 MiB more)")
check(alive <= 3, "no old snapshot kept: the one in force, the start's and the first reload's (held by the HLS muxers of the streams started under them)")
check(max(held) < 50, f"no reload took a loop 50 ms of CPU ({max(held):.1f})")

load.wait(timeout=60)
s = json.load(open(os.path.join(d, "bench_reloads.json")))
role = s["players"]
check(load.returncode == 0 and role["failed"] == 0, f"the 100 players under the reloads: none failed ({role['failed']})")
print(stall_report("100 players under the reloads", s))
check(metric("sluice_dropped_frames_total") == 0, "... and none was cut back to a keyframe")

for p in publishers + [late, news_pub]:
    stop_proc(p)
check(a.stop() == 0, "server A exits cleanly")
b.stop()
print("config_reload_test: OK")
