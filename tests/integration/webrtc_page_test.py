#!/usr/bin/python3
"""WebRTC from the built-in pages (docs/webrtc.md, "In the browser"), in headless Chromium driven by
webrtc_page_browser.js:
  - play: ffmpeg publishes an H.264/AAC stream over RTMP; on the page (GET /) the stream's row has
    a "Play WebRTC" button; clicked, the page makes a plain RTCPeerConnection WHEP session and the
    <video> plays (currentTime advances 2 s or more, at the source's width), the status line says
    "Playing ... over WebRTC", the address bar keeps ?protocol=webrtc; Stop DELETEs the session
    (200, the server logs its close). An offer the server refuses (an app that does not exist):
    the status shows the server's reason (404).
  - publish: GET /publish.html and /web/publish.js are served (CSP on the page); with Chromium's
    fake camera and microphone the page publishes to /live/NAME/whip: the offer is sendonly with
    H.264 first (setCodecPreferences) and carries the key as Authorization: Bearer; the answer is
    201, ICE and DTLS connect (the server logs dtls_connected for the WHIP session) and the
    browser sends H.264 frames; an RTMP player of live/NAME decodes the browser's video
    (check_rtmp_player_decodes); Stop DELETEs the session (200)."""
import json
import os
import shutil
import subprocess
import sys
import time
import http.client

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import free_udp_port  # noqa: E402

require_tools("ffmpeg", "node", "chromium")
t_start = time.time()
BUILD_DIR = os.environ.get("SLUICE_BUILD_DIR", BUILD_DIR)
node_modules = os.path.join(BUILD_DIR, "web", "node_modules")
if not os.path.isfile(os.path.join(node_modules, "playwright-core", "package.json")):
    fail(f"playwright-core is not installed in {node_modules} (the build's npm ci installs it with SLUICE_TESTS=ON)")
SCRIPT = os.path.join(os.path.dirname(__file__), "webrtc_page_browser.js")
WIDTH = 640
PLAYED, PUBLISHED, KEY = "live/pagertc", "live/frombrowser", "k3y-from-page"


def request(port, method, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path)
    r = c.getresponse()
    body = r.read()
    h = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    return r.status, h, body


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def check_rtmp_player_decodes(server, name, width):
    """An RTMP player of the browser's stream decodes its video (H.264 at the fake camera's width)."""
    p = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-rw_timeout", "10000000", "-i", server.url(name),
                        "-map", "0:v:0", "-frames:v", "50", "-f", "null", "-"],
                       capture_output=True, text=True, timeout=40)
    info = [line.strip() for line in p.stderr.splitlines() if "Video:" in line or line.startswith("frame=")]
    frames = 0
    for line in p.stderr.replace("\r", "\n").splitlines():
        if line.startswith("frame="):
            frames = int(line.split("=")[1].split()[0])
    check(p.returncode == 0 and frames >= 50, f"an RTMP player of {name} decodes 50 frames ({frames}; rc {p.returncode})")
    # The browser adapts its picture size to its bandwidth estimate: the size is shown, not compared.
    check(any("h264" in line for line in info), f"the RTMP player sees the browser's H.264 (sent at {width} wide): {info[:2]}")


hport, uport = free_port(), free_udp_port(2)  # two loops: two ports
server = Server("webrtc-page", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                          f"webrtc:\n  listen: 127.0.0.1:{uport}\nworkers: 2\n").start()
check(wait_port(hport), "the HTTP listener is up")

# The publish page and its script, from memory.
status, h, page = request(hport, "GET", "/publish.html")
check(status == 200 and h.get("content-type") == "text/html; charset=utf-8" and b"web/publish.js" in page,
      f"GET /publish.html: 200, the page loading web/publish.js ({status})")
check("content-security-policy" in h and "etag" in h, "GET /publish.html: CSP and ETag")
status, h, js = request(hport, "GET", "/web/publish.js")
check(status == 200 and h.get("content-type") == "text/javascript; charset=utf-8" and b"setCodecPreferences" in js,
      f"GET /web/publish.js: 200 JavaScript ({status})")
status, _, page = request(hport, "GET", "/")
check(b'href="publish.html"' in page and b'value="webrtc"' in page,
      "GET /: the page links to publish.html and offers WebRTC")

# ---- Play WebRTC on the built-in page ----
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30, size=f"{WIDTH}x360", vbitrate="800k")
pub = publish_ffmpeg(src, server.url(PLAYED), loop=True)
try:
    check(wait_for(lambda: "event=publish" in server.log_text(), 10), f"ffmpeg publishes {PLAYED} over RTMP")
    time.sleep(1.0)
    out = subprocess.run(["timeout", "-k", "5", "75", "node", SCRIPT, "play", f"http://127.0.0.1:{hport}", PLAYED,
                          node_modules, shutil.which("chromium"), "25"], capture_output=True, text=True, timeout=90)
finally:
    stop_proc(pub)
lines = json_lines(out.stdout)
if not lines:
    fail(f"the browser script printed no result (rc {out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
r = lines[-1]
print("play: " + json.dumps({k: v for k, v in r.items() if k != "samples"}), flush=True)
print("play samples (s after the click, currentTime, readyState): " + json.dumps(r.get("samples")), flush=True)
check("fatal" not in r, f"the browser script ran {r.get('fatal', '')}")
check(r.get("buttonText") == "Play WebRTC", f"the stream's row has a Play WebRTC button ({r.get('buttonText')!r})")
w = r.get("webrtc") or {}
check(w.get("httpStatus") == 201 and (w.get("location") or "").startswith(f"http://127.0.0.1:{hport}/{PLAYED}/whep/"),
      f"the page's WHEP offer is answered: 201 with a Location ({w})")
check(w.get("connectionState") == "connected", f"ICE and DTLS connect ({w.get('connectionState')})")
check(r["advancedS"] >= 2.0 and r.get("hasSrcObject"),
      f"the <video> plays the WebRTC stream: currentTime advanced {r['advancedS']:.2f} s over {r['overWallS']:.2f} s "
      f"(first frame {r['firstFrameAfterS']} s after the click)")
check(r.get("videoWidth") == WIDTH, f"the video is the source's width: {r.get('videoWidth')}x{r.get('videoHeight')}")
statuses = r.get("statuses") or []
check(any(s.startswith("Connecting to") and "WebRTC" in s for s in statuses) and
      any(f"Playing {PLAYED} over WebRTC: {WIDTH}x" in s for s in statuses),
      f"the status line says connecting, then playing: {statuses}")
check(f"Playing {PLAYED} (WebRTC)" == r.get("playerTitle") and r.get("playingButton") == "Playing WebRTC",
      f"the title and the row say what plays: {r.get('playerTitle')!r}, {r.get('playingButton')!r}")
check(r.get("protocolSelect") == "webrtc" and "protocol=webrtc" in (r.get("pageUrl") or ""),
      f"the protocol field and the address bar say WebRTC ({r.get('protocolSelect')}, {r.get('pageUrl')})")
check(r.get("deleteStatuses") == [200], f"Stop: the page DELETEs the session: {r.get('deleteStatuses')}")
stopped = r.get("afterStop") or {}
check(stopped.get("status") == "Stopped." and not stopped.get("hasSrcObject") and stopped.get("webrtc") is None,
      f"Stop: the player is stopped ({stopped})")
check(r.get("requests", [])[:1] == [f"POST /{PLAYED}/whep"] and any(q.startswith("DELETE ") for q in r.get("requests", [])),
      f"the page's WHEP requests: {r.get('requests')}")
check("WebRTC failed: 404 Not Found: no such app" in (r.get("absentStatus") or "") and "Trying again" in r["absentStatus"],
      f"a refused offer: the status shows the server's reason and retries: {r.get('absentStatus')!r}")
check(not r["pageErrors"] and not r.get("appErrors") and not r["consoleErrors"],
      f"no page or console errors: {r['pageErrors']} {r.get('appErrors')} {r['consoleErrors']}")
log = server.log_text()
check("event=dtls_connected" in log, "the server logs the WHEP session's dtls_connected")
check(wait_for(lambda: server.log_text().count("event=webrtc_close") >= 1, 5), "the server logs the session's close")

# ---- Publish from the browser (publish.html) ----
n_dtls = server.log_text().count("event=dtls_connected")
cmd = ["timeout", "-k", "5", "90", "node", SCRIPT, "publish", f"http://127.0.0.1:{hport}", PUBLISHED, node_modules,
       shutil.which("chromium"), "30", KEY]
browser = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
first = None
try:
    line = browser.stdout.readline()  # {"phase": "publishing"} once connected (or failed), within 30 s
    first = json.loads(line) if line.startswith("{") else None
    if first is None:
        fail(f"the publish script printed no result: {line!r}")
    print("publish: " + json.dumps(first), flush=True)
    check("fatal" not in first, f"the publish script ran {first.get('fatal', '')}")
    s = first.get("publishing") or {}
    offer = first.get("offer") or {}
    check(first.get("secureContext") is True, "the page is a secure context (localhost): getUserMedia is there")
    check(offer.get("contentType") == "application/sdp" and offer.get("authorization") == f"Bearer {KEY}",
          f"the offer is application/sdp with the key as Authorization: Bearer ({offer.get('authorization')})")
    check(offer.get("sendonly") == 2 and (offer.get("firstVideoCodec") or "").startswith("H264/"),
          f"the offer is sendonly video and audio, H.264 first ({offer.get('sendonly')}, {offer.get('firstVideoCodec')})")
    check(s.get("httpStatus") == 201 and (s.get("location") or "").startswith(f"http://127.0.0.1:{hport}/{PUBLISHED}/whip/"),
          f"the WHIP offer is answered: 201 with a Location ({s.get('httpStatus')}, {s.get('location')}; {s.get('error')})")
    check(s.get("connectionState") == "connected", f"ICE and DTLS connect ({s.get('connectionState')}, "
          f"{first.get('connectedAfterS')} s after opening the page)")
    check(s.get("videoCodec") == "video/H264" and s.get("framesSent", 0) > 0 and s.get("previewWidth", 0) > 0,
          f"the browser sends H.264 ({s.get('videoCodec')}, {s.get('framesSent')} frames, {s.get('width')}x{s.get('height')}) "
          f"and shows its preview ({s.get('previewWidth')} wide)")
    check(s.get("status", "").startswith(f"Publishing {PUBLISHED}: H264") and not s.get("watchHidden"),
          f"the status says it publishes: {s.get('status')!r}")
    check(wait_for(lambda: server.log_text().count("event=dtls_connected") > n_dtls, 5),
          "the server logs dtls_connected for the WHIP session")
    check_rtmp_player_decodes(server, PUBLISHED, s.get("width") or 640)
    browser.stdin.write("stop\n")
    browser.stdin.flush()
    rest, err = browser.communicate(timeout=30)
finally:
    if browser.poll() is None:
        browser.kill()
        browser.wait()
last = json_lines(rest)
check(last and last[-1].get("phase") == "stopped", f"the publish script finished: {rest[-500:]} {err[-1000:]}")
end = last[-1]
print("publish stopped: " + json.dumps({k: end.get(k) for k in ("stopped", "pageErrors", "consoleErrors", "fatal")}))
check("fatal" not in end, f"the publish script ran to the end {end.get('fatal', '')}")
st = end.get("stopped") or {}
check(st.get("deletes") == [200] and st.get("status") == "Stopped." and not st.get("startDisabled"),
      f"Stop: the page DELETEs the WHIP session (200) and can start again ({st.get('deletes')}, {st.get('status')!r})")
check(not end["pageErrors"] and not end["consoleErrors"] and not st.get("errors"),
      f"no page or console errors: {end['pageErrors']} {end['consoleErrors']} {st.get('errors')}")
check(wait_for(lambda: server.log_text().count("event=webrtc_close") >= 2, 5), "the server logs the WHIP session's close")
check(server.alive(), "the server is still running")
rc = server.stop()
check(rc == 0, f"the server exited 0 on SIGTERM (got {rc})")
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
