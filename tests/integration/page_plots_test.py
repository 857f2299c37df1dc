#!/usr/bin/python3
"""The built-in page's plots (issue 38). ffmpeg publishes live/plots (640x360 H.264/AAC, 25 fps), an
RTMP player (ffmpeg) and an HTTP-FLV player (curl) play it, and a player waits for keyed/cam (an app
with a publish key). GET /api/v1/history answers the server's series and ?stream= a stream's; then
headless Chromium (playwright-core from the build's web/node_modules, through
page_plots_browser.js) opens the page: uPlot draws the five server charts, and the details of
live/plots its three charts. Every chart's points are checked against /api/v1/history fetched
here (same times, same values in the chart's unit), the CPU series is above 0, the players series
ends at the streams list's count. The OBS settings show rtmp://127.0.0.1:PORT/live and the key
field, with a placeholder (not the key) for keyed/cam. When the server answers
/live/plots/snapshot.jpg with 200, the thumbnail <img> loaded at 320 pixels wide; otherwise the
page asked for none and shows none. A screenshot of the page is saved in the test's directory.
No page error, console error or failed request."""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

STREAM = "live/plots"
KEYED = "keyed/cam"
SECRET = "k-plots-secret-1"


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get_json(port, path):
    status, body = get(port, path)
    if status != 200:
        fail(f"GET {path}: {status} {body[:200]!r}")
    return json.loads(body)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_chart(chart, history, what):
    """The chart's x values are points of the history, and each series at each of them is the
    history's column there, in the chart's unit."""
    xs = chart["data"][0]
    index = {t: i for i, t in enumerate(history["t"])}
    missing = [t for t in xs if t not in index]
    check(len(xs) >= 2 and not missing, f"{what} {chart['id']}: its {len(xs)} times are points of /api/v1/history")
    for k, col in enumerate(chart["columns"]):
        api = history["series"][col["column"]]
        plotted = chart["data"][k + 1]
        wrong = [(t, v, api[index[t]]) for t, v in zip(xs, plotted)
                 if not same(v, None if api[index[t]] is None else api[index[t]] * col["factor"])]
        check(not wrong, f"{what} {chart['id']}: {col['column']} x {col['factor']:.6g} plotted at each of its "
                         f"{len(xs)} times, last {plotted[-1]} ({wrong[:3]})")
    return {col["column"]: chart["data"][k + 1][-1] for k, col in enumerate(chart["columns"])}


require_tools("ffmpeg", "curl", "node", "chromium")
node_modules = os.path.join(BUILD_DIR, "web", "node_modules")
if not os.path.isfile(os.path.join(node_modules, "playwright-core", "package.json")):
    fail(f"playwright-core is not installed in {node_modules} (the build's npm ci installs it with SLUICE_TESTS=ON)")

hport = free_port()
server = Server("page-plots", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n",
                apps=f"  live: {{ type: live }}\n  keyed:\n    type: live\n    publish: {{ keys: [{SECRET}] }}\n")
server.start()
check(wait_port(hport), "HTTP listener is up")
status, body = get(hport, "/web/uplot.js")
check(status == 200 and b"uPlot" in body and len(body) > 30000, f"GET /web/uplot.js: uPlot ({len(body)} bytes)")
status, body = get(hport, "/web/uplot.css")
check(status == 200 and b".uplot" in body, "GET /web/uplot.css: its stylesheet")

src = make_media(os.path.join(server.dir, "src.flv"), seconds=10, size="640x360")
procs = [publish_ffmpeg(src, server.url(STREAM), loop=True)]
try:
    check(wait_for(lambda: any(s["name"] == STREAM and s["live"] and s["keyframes_in"] > 0
                               for s in get_json(hport, "/api/v1/streams")), 15), f"{STREAM} is live")
    procs.append(subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url(STREAM),
                                   "-c", "copy", "-f", "null", "-"], stdout=subprocess.DEVNULL))
    procs.append(subprocess.Popen(["curl", "-sS", "-o", "/dev/null", f"http://127.0.0.1:{hport}/{STREAM}.flv"]))
    procs.append(subprocess.Popen(["curl", "-sS", "-o", "/dev/null", f"http://127.0.0.1:{hport}/{KEYED}.flv"]))

    def players():
        streams = {s["name"]: s for s in get_json(hport, "/api/v1/streams")}
        return streams.get(STREAM, {}).get("players"), streams.get(KEYED, {}).get("players")
    check(wait_for(lambda: players() == (2, 1), 15), f"two players of {STREAM}, one waiting for {KEYED}: {players()}")

    # The API: the server's series and the stream's, sampled every 2 s; the last point taken with
    # the players there for all of its interval.
    since = time.time() + 2

    def sampled():
        t = get_json(hport, "/api/v1/history")["t"]
        return len(t) >= 3 and t[-1] > since
    check(wait_for(sampled, 15), "/api/v1/history: 3 points, the last 2 s after the players came")
    h = get_json(hport, "/api/v1/history")
    check(h["interval_s"] == 2 and h["window_s"] == 600 and STREAM in h["streams"] and KEYED in h["streams"],
          f"/api/v1/history: every 2 s over 10 minutes, both streams tracked ({h['streams']})")
    check(all(len(v) == len(h["t"]) for v in h["series"].values()) and len(h["series"]) == 11,
          f"/api/v1/history: 11 columns as long as t: {sorted(h['series'])}")
    check(h["series"]["bytes_in_per_s"][-1] > 10_000 and h["series"]["bytes_out_per_s"][-1] > 10_000,
          f"bytes in and out per second: {h['series']['bytes_in_per_s'][-1]}, {h['series']['bytes_out_per_s'][-1]}")
    check(h["series"]["rss_bytes"][-1] > 10 * 2**20, f"resident memory: {h['series']['rss_bytes'][-1]} bytes")
    hs = get_json(hport, "/api/v1/history?stream=" + urllib.request.quote(STREAM, safe=""))
    check(hs["stream"] == STREAM and 15 <= hs["series"]["fps"][-1] <= 35 and hs["series"]["ingest_kbps"][-1] > 50,
          f"the stream's history: fps {hs['series']['fps'][-1]}, ingest {hs['series']['ingest_kbps'][-1]} kbit/s")
    status, _ = get(hport, "/api/v1/history?stream=live/none")
    check(status == 404, f"no history for a stream never seen: 404 ({status})")
    ingest = get_json(hport, "/api/v1/ingest")
    check(ingest["rtmp_ports"] == [server.port] and SECRET not in json.dumps(ingest) and
          {a["name"]: a["publish_credential"] for a in ingest["apps"]} == {"live": "none", "keyed": "key"},
          f"/api/v1/ingest: the RTMP port and which app needs a key, not the key: {ingest}")
    metrics = get(hport, "/metrics")[1].decode()
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                 "process_start_time_seconds"):
        line = next((l for l in metrics.splitlines() if l.startswith(name + " ")), "")
        check(line and float(line.split()[1]) > 0, f"/metrics: {line}")

    snap_status, snap = get(hport, f"/{STREAM}/snapshot.jpg?width=320")
    thumbnails = snap_status == 200 and snap[:2] == b"\xff\xd8"
    print(f"GET /{STREAM}/snapshot.jpg: {snap_status}" + ("" if thumbnails else ": snapshots not available"), flush=True)

    shot = os.path.join(server.dir, "page_plots.png")
    cmd = ["timeout", "-k", "5", "60", "node", os.path.join(os.path.dirname(__file__), "page_plots_browser.js"),
           f"http://127.0.0.1:{hport}", STREAM, KEYED, node_modules, shutil.which("chromium"), shot,
           "1" if thumbnails else "0"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=75)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        fail(f"the browser script printed no result (rc {out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
    r = json.loads(lines[-1])
    check("fatal" not in r, f"the browser script ran {r.get('fatal', '')}")
    print("browser steps: " + json.dumps(r["steps"]), flush=True)
    check(r["pageStatus"] == 200 and r["uplotLoaded"], "the page loaded, with uPlot")

    # What the charts plot, against the API now (a point's values never change once taken).
    history = get_json(hport, "/api/v1/history")
    stream_history = get_json(hport, "/api/v1/history?stream=" + urllib.request.quote(STREAM, safe=""))
    streams = get_json(hport, "/api/v1/streams")
    ids = sorted(c["id"] for c in r["serverCharts"])
    check(ids == ["bitrate", "cpu", "lag", "memory", "players"] and all(c["rendered"] for c in r["serverCharts"]),
          f"the server's charts are drawn: {ids}")
    last = {}
    for c in r["serverCharts"]:
        last.update(check_chart(c, history, "server chart"))
    check(last["cpu_cores"] > 0, f"the CPU chart ends above 0: {last['cpu_cores']:.2f} % of a core")
    total_players = sum(s["players"] for s in streams)
    check(last["players"] == total_players == 3,
          f"the players chart ends at the streams list's players: {last['players']} = {total_players}")
    check(last["bytes_in_per_s"] > 80 and last["rss_bytes"] > 10, f"bitrate in {last['bytes_in_per_s']:.0f} kbit/s, "
          f"memory {last['rss_bytes']:.0f} MiB")
    ids = sorted(c["id"] for c in r["streamCharts"])
    check(ids == ["fps", "ingest", "players"] and all(c["rendered"] for c in r["streamCharts"]),
          f"{STREAM}'s charts are drawn: {ids}")
    last = {}
    for c in r["streamCharts"]:
        last.update(check_chart(c, stream_history, f"{STREAM} chart"))
    check(last["players"] == 2 and 15 <= last["fps"] <= 35 and last["ingest_kbps"] > 50,
          f"{STREAM}'s charts end at 2 players, {last['fps']} fps, {last['ingest_kbps']} kbit/s")

    check(r["obs"] == {"server": f"rtmp://127.0.0.1:{server.port}/live", "key": "plots"},
          f"OBS settings of {STREAM}: {r['obs']}")
    check(r["keyedObs"] == {"server": f"rtmp://127.0.0.1:{server.port}/keyed", "key": "cam?key=YOUR_PUBLISH_KEY"},
          f"OBS settings of {KEYED}: a placeholder for the key: {r['keyedObs']}")
    check(SECRET not in r["pageText"], "the page never shows the publish key")

    mine = [t for t in r["thumbnails"] if t["stream"] == STREAM]
    if thumbnails:
        check(len(mine) == 1 and mine[0]["naturalWidth"] == 320 and not mine[0]["hidden"],
              f"the thumbnail of {STREAM} is shown, 320 pixels wide: {mine}")
    else:
        check(not r["ingest"]["snapshots"] and all(t["hidden"] for t in r["thumbnails"]),
              f"snapshots not available: the page asked for none and shows none: {r['thumbnails']}")
    check(not [t for t in r["thumbnails"] if t["stream"] == KEYED and not t["hidden"]],
          f"no thumbnail for {KEYED}, which has no publisher")
    check(not r["pageErrors"] and not r["appErrors"] and not r["plotErrors"],
          f"no page errors: {r['pageErrors']} {r['appErrors']} {r['plotErrors']}")
    check(not r["consoleErrors"] and not r["failedRequests"],
          f"no console errors or failed requests: {r['consoleErrors']} {r['failedRequests']}")
    check(os.path.getsize(shot) > 20_000, f"screenshot: {shot} ({os.path.getsize(shot)} bytes)")
    check(server.alive(), "server still running")
finally:
    for p in procs:
        stop_proc(p)
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
print(f"screenshot: {shot}")
print("PASS")
