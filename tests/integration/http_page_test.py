#!/usr/bin/python3
"""The built-in browser page: GET / is the HTML page loading web/mpegts.js and web/app.js, served from
memory with ETag, 304 on If-None-Match, Cache-Control and 405 for other methods. Then ffmpeg publishes
an H.264/AAC stream and headless Chromium (Debian's, driven by playwright-core from the build's
web/node_modules through http_page_browser.js) opens /?stream=live/NAME: the <video> plays (its
currentTime advances by 2 s or more, at the published size), the stream is in the page's list with
its codecs and resolution, the server figures are shown, and no page error happens. With the API
refused (403) the page says why."""
import http.client
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

WIDTH, HEIGHT = 352, 288
STREAM = "live/pagecam"


def request(port, method, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    h = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, h, body


require_tools("ffmpeg", "node", "chromium")
node_modules = os.path.join(BUILD_DIR, "web", "node_modules")
if not os.path.isfile(os.path.join(node_modules, "playwright-core", "package.json")):
    fail(f"playwright-core is not installed in {node_modules} (the build's npm ci installs it with SLUICE_TESTS=ON)")

hport = free_port()
dead = free_port()  # a push target where nothing listens: the page lists it as waiting
server = Server("http-page", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n",
                apps=f"  live:\n    type: live\n    push: [{{ url: 'rtmp://127.0.0.1:{dead}/in' }}]\n")
server.start()
check(wait_port(hport), "HTTP listener is up")

# The page and its scripts, from memory.
status, h, page = request(hport, "GET", "/")
check(status == 200 and h.get("content-type") == "text/html; charset=utf-8", f"GET /: 200 text/html ({status})")
html = page.decode()
check('<script src="web/mpegts.js"></script>' in html and '<script src="web/app.js"></script>' in html,
      "GET /: the page loads web/mpegts.js and web/app.js")
check("content-security-policy" in h and h.get("cache-control") == "no-cache", "GET /: CSP and Cache-Control: no-cache")
status, _, same = request(hport, "GET", "/index.html")
check(status == 200 and same == page, "GET /index.html: the same page")

status, h, js = request(hport, "GET", "/web/mpegts.js")
check(status == 200 and h.get("content-type") == "text/javascript; charset=utf-8", "GET /web/mpegts.js: 200 JavaScript")
check(len(js) > 100_000 and b"mpegts" in js and int(h.get("content-length", 0)) == len(js),
      f"GET /web/mpegts.js: the mpegts.js bundle ({len(js)} bytes)")
etag = h.get("etag", "")
check(len(etag) == 18 and etag.startswith('"') and h.get("cache-control") == "no-cache",
      f"GET /web/mpegts.js: ETag {etag}, Cache-Control: no-cache")
status, h, body = request(hport, "GET", "/web/mpegts.js", {"If-None-Match": etag})
check(status == 304 and body == b"" and h.get("etag") == etag, f"If-None-Match with its ETag: 304, no body ({status})")
status, _, body = request(hport, "GET", "/web/mpegts.js", {"If-None-Match": '"0000000000000000"'})
check(status == 200 and body == js, "If-None-Match with another ETag: 200 and the file")
status, h, body = request(hport, "HEAD", "/web/app.js")
check(status == 200 and body == b"" and int(h.get("content-length", 0)) > 1000 and h.get("etag") not in (None, etag),
      "HEAD /web/app.js: the head only, its own ETag")
status, h, _ = request(hport, "POST", "/")
check(status == 405 and h.get("allow") == "GET, HEAD", f"POST /: 405 with Allow: GET, HEAD ({status})")
status, _, _ = request(hport, "GET", "/web/nothing.js")
check(status == 404, f"GET /web/nothing.js: 404 ({status})")

src = make_media(os.path.join(server.dir, "src.flv"), seconds=10, size=f"{WIDTH}x{HEIGHT}")
pub = publish_ffmpeg(src, server.url(STREAM), loop=True)
try:
    deadline = time.time() + 15
    live = None
    while time.time() < deadline and not live:
        _, _, body = request(hport, "GET", "/api/v1/streams")
        live = next((s for s in json.loads(body) if s["name"] == STREAM and s["live"] and s["video"]), None)
        time.sleep(0.2)
    check(live is not None, f"{STREAM} is live")

    cmd = ["timeout", "-k", "5", "45", "node", os.path.join(os.path.dirname(__file__), "http_page_browser.js"),
           f"http://127.0.0.1:{hport}", STREAM, node_modules, shutil.which("chromium"), "30"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        fail(f"the browser script printed no result (rc {out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
    r = json.loads(lines[-1])
    print("browser: " + json.dumps({k: v for k, v in r.items() if k != "samples"}), flush=True)
    print("browser samples (wall s, currentTime, readyState): " + json.dumps(r.get("samples")), flush=True)
    check("fatal" not in r, f"the browser script ran {r.get('fatal', '')}")
    check(r["pageStatus"] == 200 and r["mpegtsLoaded"] and r["mseLivePlayback"],
          "the page loaded, with mpegts.js and MSE live playback")
    check(r["advancedS"] >= 2.0,
          f"the video plays: currentTime advanced {r['advancedS']:.2f} s over {r['overWallS']:.2f} s of wall time "
          f"(first frame {r['firstFrameAfterS']} s after opening the page)")
    check(r["videoWidth"] == WIDTH and r["videoHeight"] == HEIGHT,
          f"the video is the published size: {r['videoWidth']}x{r['videoHeight']}")
    row = r["listedRow"] or []
    check(len(row) >= 6 and row[0] == STREAM and row[1] == "live", f"the stream is listed as live: {row}")
    check(f"{WIDTH}x{HEIGHT}" in row[2] and row[2].startswith("H264") and row[3].startswith("AAC"),
          f"the list shows its codecs and resolution: {row[2]} / {row[3]}")
    check("kbit/s" in row[4] and (row[5] == "1" or row[5].startswith("1 (")),
          f"the list shows its bitrate and one player (the page's): {row[4]} / {row[5]}")
    check("Playing " + STREAM in r["playerTitle"], f"the player says what it plays: {r['playerTitle']}")
    check("Uptime" in r["serverFigures"] and "Connections" in r["serverFigures"] and "HTTP bytes" in r["serverFigures"],
          "the server figures are shown")
    check(not r["pageErrors"] and not r["appErrors"], f"no page errors: {r['pageErrors']} {r['appErrors']}")
    check(not r["consoleErrors"] and not r["failedRequests"],
          f"no console errors or failed requests: {r['consoleErrors']} {r['failedRequests']}")
    check("http.api.allow" in r["forbiddenMessage"] and "http.api.allow" in r["forbiddenServerMessage"],
          f"API refused (403): the page says why: {r['forbiddenMessage']!r}")
    relays = r.get("relays") or []
    check(any(row[0] == "push" and row[1] == STREAM and row[2].endswith(f":{dead}/in") and
              row[3] in ("waiting", "connecting") and "refused" in row[6] for row in relays),
          f"the page lists the push target that cannot connect, with its state and error: {relays}")
    check(server.alive(), "server still running")
finally:
    stop_proc(pub)
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
log = server.log_text()
check('path="/web/mpegts.js" status=304' in log, "log: the 304 is logged")
check("event=play app=live stream=pagecam" in log, "log: the browser played the stream over HTTP-FLV")
print("PASS")
