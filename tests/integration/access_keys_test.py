#!/usr/bin/python3
"""Access control without a round trip (docs/security.md): stream keys (inline, file, environment,
per stream), signed URLs for publish and play over RTMP and HTTP-FLV and for downloads, address
rules, players-per-stream limits and the API token.

Real clients: ffmpeg and GStreamer publish with right, wrong and missing keys; ffmpeg must exit
with the server's reason on stderr (and not loop); ffmpeg (RTMP) and curl (HTTP-FLV) play with
and without signatures; the signature is checked against one computed by `openssl dgst -hmac`.
Refusals are counted in /metrics and never disturb another stream (its packets stay intact)."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "ffprobe", "rtmpdump", "openssl", "curl", "gst-launch-1.0")

SECRET = "play-secret-0123456789abcdef"
PUB_SECRET = "publish-secret-0123456789abcdef"
API_TOKEN = "api-token-42"
hport = free_port()
tmp = workdir("access-keys")
keys_file = os.path.join(tmp, "publish-keys")
with open(keys_file, "w") as f:
    f.write("# studio keys\nk-file-1\n\nk-file-2\n")
vod_root = os.path.join(tmp, "vod")
os.makedirs(vod_root)
apps = f"""  live:
    type: live
    publish:
      keys: [k-inline]
      keys_file: {keys_file}
      keys_env: SLUICE_TEST_KEYS
      stream_keys: {{ solo: k-solo }}
      signed: {{ secret: {PUB_SECRET} }}
    play:
      signed: {{ secret: {SECRET}, skew: 5s }}
    limits: {{ players_per_stream: 2 }}
  open:
    type: live
    publish:
      deny: [127.0.0.0/8]
  vod:
    type: vod
    root: {vod_root}
    play:
      signed: {{ secret_env: SLUICE_TEST_PLAY_SECRET }}
"""
extra = f"http:\n  listen: 127.0.0.1:{hport}\n  api: {{ token: {API_TOKEN} }}\n"
server = Server("access-keys", extra_yaml=extra, apps=apps,
                env={"SLUICE_TEST_KEYS": "k-env-1, k-env-2", "SLUICE_TEST_PLAY_SECRET": SECRET}).start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30)
clip = make_media(os.path.join(vod_root, "clip.flv"), seconds=4)


def sluice_sign(*args):
    out = subprocess.run([binary("server/sluice"), "sign", "--config", server.config] + list(args),
                         capture_output=True, text=True, env=server.env)
    return out.returncode, out.stdout.strip(), out.stderr.strip()


def openssl_sign(secret, action, app, stream, expires):
    msg = f"{action}\n{app}\n{stream}\n{expires}".encode()
    out = subprocess.run(["openssl", "dgst", "-sha256", "-hmac", secret], input=msg, capture_output=True)
    return out.stdout.decode().split("= ")[-1].strip()


def ffmpeg_publish_once(url, seconds=3):
    """ffmpeg publishing for a few seconds: (exit code, stderr, elapsed)."""
    t0 = time.time()
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-t", str(seconds), "-i", src, "-c", "copy",
                        "-f", "flv", url], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr, time.time() - t0


def http_get(url, headers=None, method="GET"):
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


try:
    # A reference stream that must stay intact while other clients are refused.
    ref = publish_ffmpeg(src, server.url("live/ref?key=k-inline"))
    time.sleep(1.5)
    ref_player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i",
                                   server.url(f"live/ref?{sluice_sign('--app', 'live', '--stream', 'ref')[1].split('?', 1)[1]}"),
                                   "-t", "12", "-c", "copy", "-f", "flv", "-y", os.path.join(tmp, "ref.flv")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    # ---- stream keys: the publishes that must succeed, at once (each streams 2 s in real time;
    # they are different streams, so one after the other would only wait).
    accepted = {key: server.url(f"live/k-{key}?key={key}") for key in ("k-inline", "k-file-2", "k-env-2")}
    accepted["solo"] = server.url("live/solo?key=k-solo")
    # OBS's fields: server rtmp://host/live, stream key "cam?key=..." is the same as the URL.
    accepted["k%2Dinline"] = server.url("live/cam?key=k%2Dinline")
    results = {}
    workers = [threading.Thread(target=lambda k=k, u=u: results.__setitem__(k, ffmpeg_publish_once(u, 2)))
               for k, u in accepted.items()]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for key in ("k-inline", "k-file-2", "k-env-2"):
        rc, err, _ = results[key]
        check(rc == 0, f"publish with key {key} (inline, file, env): ffmpeg exits 0 ({err.strip()[:120]})")
    check(results["solo"][0] == 0, "the per-stream key of 'solo' publishes 'solo'")
    check(results["k%2Dinline"][0] == 0, "a percent-encoded key is decoded once (k%2Dinline is k-inline)")
    rc, err, took = ffmpeg_publish_once(server.url("live/other?key=k-solo"))
    check(rc != 0 and "wrong key" in err, f"solo's key does not publish 'other' (ffmpeg: {err.strip()[:160]!r})")
    rc, err, took = ffmpeg_publish_once(server.url("live/cam?key=nope"))
    check(rc != 0 and "Server error" in err and "wrong key" in err,
          f"wrong key: ffmpeg exits {rc} and prints the server's reason ({err.strip()[:160]!r})")
    check(took < 5, f"a refused ffmpeg stops at once instead of retrying ({took:.1f} s)")
    rc, err, _ = ffmpeg_publish_once(server.url("live/cam"))
    check(rc != 0 and "a key or a signed URL is required" in err, f"no key: refused with the reason ({err.strip()[:160]!r})")

    # GStreamer's rtmp2sink with the key in the URL, and a wrong one.
    def gst_publish(url):
        return subprocess.run(["timeout", "20", "gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "flvdemux",
                               "name=d", "flvmux", "name=m", "streamable=true", "!", "rtmp2sink", f"location={url}",
                               "d.video", "!", "queue", "!", "h264parse", "!", "m.", "d.audio", "!", "queue", "!",
                               "aacparse", "!", "m."], capture_output=True, text=True)
    g = gst_publish(server.url("live/gst?key=k-file-1"))
    log = server.log_text()
    check("event=publish app=live stream=gst" in log, f"GStreamer with a right key publishes (rc {g.returncode})")
    g = gst_publish(server.url("live/gst2?key=bad"))
    check(g.returncode != 0 and "event=publish app=live stream=gst2 " not in server.log_text(),
          f"GStreamer with a wrong key is refused and stops (rc {g.returncode}: {(g.stderr or g.stdout).strip()[-160:]!r})")

    # ---- signed URLs
    now = int(time.time())
    rc, url, err = sluice_sign("--app", "live", "--stream", "cam", "--action", "publish", "--ttl", "10m", "--now", str(now))
    check(rc == 0 and url.startswith(server.url("live/cam?expires=")), f"sluice sign prints a URL ({url})")
    expires = now + 600
    check(url.endswith("sign=" + openssl_sign(PUB_SECRET, "publish", "live", "cam", expires)),
          "its signature is openssl's HMAC-SHA256 of publish\\nlive\\ncam\\nexpires")
    rc, err, _ = ffmpeg_publish_once(url, 2)
    check(rc == 0, f"a signed publish URL publishes ({err.strip()[:100]})")
    old = now - 100
    expired = server.url(f"live/cam?expires={old}&sign={openssl_sign(PUB_SECRET, 'publish', 'live', 'cam', old)}")
    rc, err, _ = ffmpeg_publish_once(expired)
    check(rc != 0 and "expired" in err, f"an expired signed URL is refused as expired ({err.strip()[:120]!r})")
    rc, err, _ = ffmpeg_publish_once(url.replace("/cam?", "/cam2?"))
    check(rc != 0 and "wrong signature" in err, "a signature for another stream is wrong")
    play_sig = openssl_sign(SECRET, "publish", "live", "cam", expires)  # the play secret, publish action
    rc, err, _ = ffmpeg_publish_once(server.url(f"live/cam?expires={expires}&sign={play_sig}"))
    check(rc != 0, "a URL signed with the play secret does not publish")

    # Play: RTMP with ffmpeg, HTTP-FLV with curl.
    cam = publish_ffmpeg(src, server.url("live/cam?key=k-env-1"))
    time.sleep(1.5)
    _, play_url, _ = sluice_sign("--app", "live", "--stream", "cam")
    out = os.path.join(tmp, "play.flv")
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", play_url, "-t", "3", "-c", "copy", "-f", "flv",
                        "-y", out], capture_output=True, text=True, timeout=40)
    check(p.returncode == 0, f"ffmpeg plays a signed RTMP URL ({p.stderr.strip()[:100]})")
    check_same_packets("signed RTMP play", out, flv_tags(src), min_video=40, min_audio=40)
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url("live/cam"), "-t", "2", "-f", "null",
                        "-"], capture_output=True, text=True, timeout=40)
    check(p.returncode != 0 and "signed URL is required" in p.stderr,
          f"unsigned RTMP play is refused with the reason ({p.stderr.strip()[:140]!r})")
    # rtmpdump (librtmp) and ffprobe, with and without the signature.
    rd = os.path.join(tmp, "rtmpdump.flv")
    p = subprocess.run(["timeout", "6", "rtmpdump", "-q", "-v", "-r", play_url, "-o", rd], capture_output=True, text=True)
    check_same_packets("rtmpdump with a signed URL", rd, flv_tags(src), min_video=40, min_audio=40)
    p = subprocess.run(["timeout", "6", "rtmpdump", "-v", "-r", server.url("live/cam"), "-o", os.path.join(tmp, "no.flv")],
                       capture_output=True, text=True)
    check("NetStream.Play.Failed" in p.stderr and p.returncode not in (0, 124),
          f"rtmpdump without a signature: Play.Failed and it stops (rc {p.returncode})")
    p = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", play_url],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0 and sorted(p.stdout.split()) == ["aac", "h264"], f"ffprobe of a signed URL: {p.stdout.split()}")
    p = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", server.url("live/cam")],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "signed URL is required" in p.stderr, "ffprobe without: refused with the reason")

    # Kicking a player through the API (token needed): find it by the stream it plays.
    kicked = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", play_url, "-f", "null", "-"],
                              stderr=subprocess.PIPE)
    time.sleep(2)
    auth = {"Authorization": f"Bearer {API_TOKEN}"}
    st, body = http_get(f"http://127.0.0.1:{hport}/api/v1/clients", auth)
    ids = [c["id"] for c in json.loads(body) if "live/cam" in c.get("playing", [])]
    check(len(ids) == 1, f"the API lists the RTMP player of live/cam ({ids})")
    st, _ = http_get(f"http://127.0.0.1:{hport}/api/v1/clients/{ids[0]}", method="DELETE")
    check(st == 401 and kicked.poll() is None, f"DELETE without the token: 401, the player stays ({st})")
    st, _ = http_get(f"http://127.0.0.1:{hport}/api/v1/clients/{ids[0]}", auth, method="DELETE")
    check(st == 204, f"DELETE with the token: 204 ({st})")
    try:
        kicked.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    check(kicked.poll() is not None, "the kicked player's ffmpeg ends")

    _, http_url, _ = sluice_sign("--app", "live", "--stream", "cam", "--url", f"http://127.0.0.1:{hport}/live/cam.flv")
    flv = os.path.join(tmp, "http.flv")
    p = subprocess.run(["curl", "-s", "-o", flv, "-w", "%{http_code}", "--max-time", "3", http_url], capture_output=True,
                       text=True)
    check(p.stdout == "200", f"curl plays a signed HTTP-FLV URL ({p.stdout})")
    check_same_packets("signed HTTP-FLV", flv, flv_tags(src), min_video=20, min_audio=20)
    st, body = http_get(f"http://127.0.0.1:{hport}/live/cam.flv")
    check(st == 401 and b"signed URL is required" in body, f"unsigned HTTP-FLV: 401 with the reason ({st} {body[:80]!r})")
    st, body = http_get(http_url.replace("sign=", "sign=0"))
    check(st == 403, f"a malformed signature: 403 ({st} {body[:80]!r})")

    # The per-stream player limit: the reference player and two more fill 'cam' (2 allowed).
    holders = [subprocess.Popen(["curl", "-s", "-o", "/dev/null", "--max-time", "6", http_url]) for _ in range(2)]
    time.sleep(1.5)
    st, body = http_get(http_url)
    check(st == 503 and b"players_per_stream=2" in body, f"a third player of one stream: 503 ({st} {body[:90]!r})")
    for h in holders:  # they leave
        h.terminate()
        h.wait()
    time.sleep(0.5)
    p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2", http_url],
                       capture_output=True, text=True)
    check(p.stdout == "200", f"seats come back when players leave ({p.stdout})")

    # Downloads of a VOD app with a signed URL (secret from the environment).
    _, dl, _ = sluice_sign("--app", "vod", "--stream", "clip.flv", "--url", f"http://127.0.0.1:{hport}/vod/clip.flv")
    st, body = http_get(dl)
    check(st == 200 and body == open(clip, "rb").read(), f"a signed download is the file ({st}, {len(body)} bytes)")
    st, _ = http_get(f"http://127.0.0.1:{hport}/vod/clip.flv")
    check(st == 401, f"an unsigned download: 401 ({st})")

    # Address rules: 'open' denies loopback publishers.
    rc, err, _ = ffmpeg_publish_once(server.url("open/x"))
    check(rc != 0 and "address denied" in err, f"publish.deny refuses 127.0.0.1 ({err.strip()[:100]!r})")

    # The API needs its token besides the address; kick the reference publisher's player at the end.
    st, _ = http_get(f"http://127.0.0.1:{hport}/api/v1/clients")
    check(st == 401, f"API without the token: 401 ({st})")
    st, _ = http_get(f"http://127.0.0.1:{hport}/api/v1/clients", {"Authorization": "Bearer wrong"})
    check(st == 403, f"API with a wrong token: 403 ({st})")
    st, body = http_get(f"http://127.0.0.1:{hport}/api/v1/clients", {"Authorization": f"Bearer {API_TOKEN}"})
    check(st == 200, f"API with the token: 200 ({st})")

    ref_player.wait(timeout=40)
    stop_proc(cam)
    events = guard_events_token = None
    req = urllib.request.Request(f"http://127.0.0.1:{hport}/metrics", headers={"Authorization": f"Bearer {API_TOKEN}"})
    metrics = urllib.request.urlopen(req, timeout=10).read().decode()
    counts = {}
    for line in metrics.splitlines():
        if line.startswith("sluice_guard_events_total{"):
            counts[line.split('event="', 1)[1].split('"', 1)[0]] = int(float(line.rsplit(" ", 1)[1]))
    check(counts.get("access_key", 0) >= 3, f"key refusals counted ({counts.get('access_key')})")
    check(counts.get("access_signature", 0) >= 3, f"signature refusals counted ({counts.get('access_signature')})")
    check(counts.get("access_address", 0) >= 1, f"address refusals counted ({counts.get('access_address')})")
    check(counts.get("app_players", 0) >= 1, f"limit refusals counted ({counts.get('app_players')})")
finally:
    for p in ("ref", "cam"):
        if p in dir() and globals()[p].poll() is None:
            stop_proc(globals()[p])
    rc = server.stop()
check_same_packets("the reference stream, meanwhile", os.path.join(tmp, "ref.flv"), flv_tags(src), min_video=200,
                   min_audio=200)
check(rc == 0, "server exits 0")
print("PASS")
