#!/usr/bin/python3
"""Stream snapshots (docs/snapshots.md): GET /{app}/{stream}/snapshot.jpg decodes the
stream's latest keyframe and answers a JPEG.

- H.264 (libx264, testsrc2 1280x720 at 30 fps, -g 60) published over RTMP: the snapshot is a
  1280x720 JPEG (ffprobe) within 35 dB PSNR of the keyframe the server names
  (X-Sluice-Keyframe-Timestamp), decoded by ffmpeg from an HTTP-FLV recording of the same stream;
  width=320 gives 320x180; HEAD, and If-None-Match (304); snapshot.webp the same as a WebP.
- With the publisher paused (SIGSTOP: no new keyframe), 100 concurrent requests of a size not
  asked before get the same JPEG and cost one decode (sluice_snapshot_decodes_total moves by 1).
- width and quality out of range: 400 with the reason; an audio-only stream: 503 with a reason and
  Retry-After; a stream nobody publishes: 404.
- HEVC (libx265, MPEG-TS over SRT) snapshots too, within 35 dB of one of the source's keyframes;
  a WHEP offer for it is refused (406, naming HEVC: WebRTC players get H.264 only).
- An app whose play rules want a key: 401 without it, 403 with a wrong one, 200 with it.
- workers: 2: requests on fresh connections (the kernel spreads them over both loops) all get the
  JPEG of a stream published on one loop."""
import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import ffmpeg_publish, free_udp_port, srt_server  # noqa: E402

require_tools("ffmpeg", "ffprobe", "curl")

tmp = workdir("snapshot")
FF = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y"]

# The sources: H.264 720p with AAC (FLV, for RTMP), audio only (FLV), HEVC (MPEG-TS, for SRT).
h264 = os.path.join(tmp, "h264.flv")
subprocess.run(FF + ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=8", "-f", "lavfi", "-i",
                     "sine=frequency=440:sample_rate=44100:duration=8", "-c:v", "libx264", "-preset", "veryfast",
                     "-g", "60", "-keyint_min", "60", "-sc_threshold", "0", "-b:v", "3M", "-pix_fmt", "yuv420p",
                     "-c:a", "aac", "-b:a", "64k", "-f", "flv", h264], check=True, timeout=120)
audio = os.path.join(tmp, "audio.flv")
subprocess.run(FF + ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=8", "-c:a", "aac",
                     "-b:a", "64k", "-f", "flv", audio], check=True, timeout=60)
hevc = os.path.join(tmp, "hevc.ts")
subprocess.run(FF + ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=6", "-c:v", "libx265",
                     "-preset", "ultrafast", "-x265-params", "keyint=50:min-keyint=50:log-level=error",
                     "-pix_fmt", "yuv420p", "-f", "mpegts", hevc], check=True, timeout=120)

apps = ("  live: { type: live, gop_cache: true }\n"
        "  keyed: { type: live, gop_cache: true, play: { keys: [k-view] } }\n")
webrtc_port = free_udp_port()
server, srt_port, http_port = srt_server("snapshot", apps=apps, http=True, workers=1,
                                         extra_yaml=f"webrtc:\n  listen: 127.0.0.1:{webrtc_port}\n")
BASE = f"http://127.0.0.1:{http_port}"


def get(path, method="GET", headers=None, timeout=30):
    """(status, headers as a lower-case dict, body) of one request on a fresh connection."""
    c = http.client.HTTPConnection("127.0.0.1", http_port, timeout=timeout)
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def metric(name):
    _, _, body = get("/metrics")
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", body.decode(), re.M)
    return float(m.group(1)) if m else None


def probe_jpeg(path):
    """ffprobe's (codec, width, height) of an image file."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=codec_name,width,height", "-of", "csv=p=0", path],
                         capture_output=True, text=True, timeout=30).stdout.strip()
    parts = out.split(",")
    return (parts[0], int(parts[1]), int(parts[2])) if len(parts) == 3 else (out, 0, 0)


def psnr(a, b):
    """ffmpeg's average PSNR (dB) of picture a against picture b."""
    p = subprocess.run(["ffmpeg", "-nostdin", "-i", a, "-i", b, "-lavfi", "psnr", "-f", "null", "-"],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"average:(\S+)", p.stderr)
    return float(m.group(1)) if m and m.group(1) != "inf" else (99.0 if m else 0.0)


def save(name, body):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(body)
    return path


def flv_file(path, tags):
    """A minimal FLV file (video only) of (type, timestamp, body) tags."""
    out = bytearray(b"FLV\x01\x01\x00\x00\x00\x09\x00\x00\x00\x00")
    for t, ts, body in tags:
        out += bytes([t]) + len(body).to_bytes(3, "big") + (ts & 0xFFFFFF).to_bytes(3, "big") + bytes([ts >> 24])
        out += b"\x00\x00\x00" + body + (11 + len(body)).to_bytes(4, "big")
    with open(path, "wb") as f:
        f.write(out)
    return path


pubs = []
try:
    # ---- H.264 over RTMP, recorded over HTTP-FLV from before the snapshot is asked.
    pub = publish_ffmpeg(h264, server.url("live/cam"), loop=True)
    pubs.append(pub)
    check(wait_for(lambda: get("/live/cam/snapshot.jpg")[0] == 200, 15), "the H.264 stream gets a snapshot")
    rec = os.path.join(tmp, "rec.flv")
    recorder = subprocess.Popen(["curl", "-s", "--max-time", "6", "-o", rec, f"{BASE}/live/cam.flv"])
    time.sleep(2.5)
    status, hdrs, body = get("/live/cam/snapshot.jpg")
    check(status == 200 and hdrs.get("content-type") == "image/jpeg", f"200 image/jpeg ({status}, {hdrs})")
    check(hdrs.get("cache-control") == "no-cache" and hdrs.get("etag") and hdrs.get("last-modified"),
          f"Cache-Control: no-cache, an ETag and Last-Modified ({hdrs})")
    snap = save("snap.jpg", body)
    check(probe_jpeg(snap) == ("mjpeg", 1280, 720), f"ffprobe: mjpeg 1280x720 ({probe_jpeg(snap)})")
    kf_ts = int(hdrs.get("x-sluice-keyframe-timestamp", "-1"))
    status, whdrs, wbody = get("/live/cam/snapshot.webp")
    check(status == 200 and whdrs.get("content-type") == "image/webp", f"snapshot.webp: 200 image/webp ({status})")
    webp = save("snap.webp", wbody)
    check(probe_jpeg(webp) == ("webp", 1280, 720), f"ffprobe: webp 1280x720 ({probe_jpeg(webp)})")
    recorder.wait(timeout=20)
    tags = flv_tag_bodies(rec)
    seq = [b for t, _, b in tags if t == 9 and b[:2] == b"\x17\x00"]
    keyframes = [(ts, b) for t, ts, b in tags if t == 9 and b[:2] == b"\x17\x01"]

    def reference(ts, name):
        """The keyframe at ts in the recording, decoded by ffmpeg to a PNG."""
        key = [b for t, b in keyframes if t == ts]
        check(seq and len(key) == 1, f"the recording holds the keyframe at {ts} ms ({[t for t, _ in keyframes]})")
        ref_flv = flv_file(os.path.join(tmp, name + ".flv"), [(9, 0, seq[0]), (9, 0, key[0])])
        ref = os.path.join(tmp, name + ".png")
        subprocess.run(FF + ["-i", ref_flv, "-frames:v", "1", ref], check=True, timeout=60)
        return ref

    db = psnr(snap, reference(kf_ts, "ref"))
    print(f"PSNR of the 1280x720 snapshot (quality 80) against ffmpeg's decode of the keyframe: {db:.2f} dB")
    check(db >= 35, f"PSNR >= 35 dB ({db:.2f})")
    db = psnr(webp, reference(int(whdrs.get("x-sluice-keyframe-timestamp", "-1")), "ref-webp"))
    print(f"PSNR of the WebP snapshot (quality 80): {db:.2f} dB")
    check(db >= 35, f"WebP: PSNR >= 35 dB ({db:.2f})")

    status, hdrs, body = get("/live/cam/snapshot.jpg?width=320")
    small = save("small.jpg", body)
    check(status == 200 and probe_jpeg(small) == ("mjpeg", 320, 180), f"width=320: 320x180 ({probe_jpeg(small)})")
    for q in ("width=8", "width=3841", "width=abc", "quality=0", "quality=101", "quality=", "width=-5"):
        status, _, body = get(f"/live/cam/snapshot.jpg?{q}")
        check(status == 400 and (b"width" in body or b"quality" in body), f"{q}: 400 with the reason ({status} {body!r})")

    # ---- No new keyframe while the publisher is stopped: one decode for 100 requests.
    os.kill(pub.pid, signal.SIGSTOP)
    try:
        time.sleep(0.3)
        status, hdrs, _ = get("/live/cam/snapshot.jpg")
        etag = hdrs.get("etag")
        status, hdrs, body = get("/live/cam/snapshot.jpg", headers={"If-None-Match": etag})
        check(status == 304 and not body, f"If-None-Match with the ETag: 304 ({status})")
        status, hdrs, body = get("/live/cam/snapshot.jpg", method="HEAD")
        check(status == 200 and int(hdrs.get("content-length", "0")) > 1000 and not body,
              f"HEAD: 200 with the length, no body ({status}, {hdrs.get('content-length')})")
        before = metric("sluice_snapshot_decodes_total")
        results = [None] * 100
        go = threading.Event()

        def one(i):
            go.wait()
            try:
                results[i] = get("/live/cam/snapshot.jpg?width=640&quality=70", timeout=60)
            except OSError as e:
                results[i] = (0, {}, str(e).encode())

        threads = [threading.Thread(target=one, args=(i,)) for i in range(100)]
        for t in threads:
            t.start()
        t0 = time.time()
        go.set()
        for t in threads:
            t.join()
        took = time.time() - t0
        after = metric("sluice_snapshot_decodes_total")
        statuses = sorted({r[0] for r in results})
        bodies = {r[2] for r in results}
        check(statuses == [200] and len(bodies) == 1, f"100 concurrent requests: 200, one JPEG ({statuses}, {len(bodies)})")
        check(after - before == 1, f"100 concurrent requests cost one decode ({before} -> {after}, {took:.2f} s)")
        mid = save("mid.jpg", results[0][2])
        check(probe_jpeg(mid) == ("mjpeg", 640, 360), f"width=640: 640x360 ({probe_jpeg(mid)})")
    finally:
        os.kill(pub.pid, signal.SIGCONT)
    decode_s = metric("sluice_snapshot_decode_seconds_total")
    decodes = metric("sluice_snapshot_decodes_total")
    print(f"snapshot decodes: {decodes:.0f}, {1000 * decode_s / decodes:.1f} ms each on average (720p, ASan build)")

    # ---- No video, no stream.
    pubs.append(publish_ffmpeg(audio, server.url("live/radio"), loop=True))
    check(wait_for(lambda: "stream=radio" in server.log_text(), 10), "the audio-only stream is published")
    time.sleep(1)
    status, hdrs, body = get("/live/radio/snapshot.jpg")
    check(status == 503 and b"no video" in body and hdrs.get("retry-after"),
          f"audio only: 503 with the reason and Retry-After ({status} {body!r} {hdrs.get('retry-after')})")
    status, _, body = get("/live/nobody/snapshot.jpg")
    check(status == 404 and b"not live" in body, f"no such stream: 404 ({status} {body!r})")
    check(get("/nosuchapp/cam/snapshot.jpg")[0] == 404, "no such app: 404")

    # ---- HEVC over SRT.
    srt = ffmpeg_publish(tmp, hevc, srt_port, "publish:live/hevc")
    pubs.append(srt)
    check(wait_for(lambda: get("/live/hevc/snapshot.jpg")[0] == 200, 15), "the HEVC stream gets a snapshot")
    status, hdrs, body = get("/live/hevc/snapshot.jpg")
    hsnap = save("hevc.jpg", body)
    check(status == 200 and probe_jpeg(hsnap) == ("mjpeg", 640, 360), f"HEVC: mjpeg 640x360 ({probe_jpeg(hsnap)})")
    kf_dir = os.path.join(tmp, "hevc-keyframes")
    os.makedirs(kf_dir)
    subprocess.run(FF + ["-skip_frame", "nokey", "-i", hevc, "-vsync", "0", os.path.join(kf_dir, "k%02d.png")],
                   check=True, timeout=60)
    best = max(psnr(hsnap, os.path.join(kf_dir, f)) for f in os.listdir(kf_dir))
    print(f"PSNR of the HEVC snapshot against the closest keyframe of the source: {best:.2f} dB")
    check(best >= 35, f"HEVC: within 35 dB of a keyframe of the source ({best:.2f})")
    # WebRTC players get H.264 only: a WHEP offer (Chromium's) for the HEVC stream is refused
    # with the reason, not answered and then sent sound and a black picture.
    c = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
    c.request("POST", "/live/hevc/whep", open(os.path.join(SOURCE_DIR, "tests/fuzz/corpus/sdp/chromium_whep"), "rb").read(),
              {"Content-Type": "application/sdp"})
    r = c.getresponse()
    body = r.read()
    c.close()
    check(r.status == 406 and b"HEVC" in body and b"H.264" in body,
          f"WHEP of the HEVC stream: 406 naming HEVC ({r.status} {body[:160]!r})")

    # ---- Play rules: a snapshot shows the stream.
    pubs.append(publish_ffmpeg(h264, server.url("keyed/cam"), loop=True))
    check(wait_for(lambda: get("/keyed/cam/snapshot.jpg?key=k-view")[0] == 200, 15), "with the key: 200")
    status, _, body = get("/keyed/cam/snapshot.jpg")
    check(status == 401, f"without the key: 401 ({status} {body!r})")
    status, _, body = get("/keyed/cam/snapshot.jpg?key=wrong")
    check(status == 403, f"with a wrong key: 403 ({status} {body!r})")
finally:
    for p in pubs:
        stop_proc(p) if isinstance(p, subprocess.Popen) else p.stop()
check(server.alive(), "the server is still running")
check(server.stop() == 0, "the server stops cleanly")

# ---- workers: 2: the stream is published on one loop, requests come to both.
server, srt_port, http_port = srt_server("snapshot-workers", http=True, workers=2)
try:
    pub = publish_ffmpeg(h264, server.url("live/cam"), loop=True)
    check(wait_for(lambda: get("/live/cam/snapshot.jpg")[0] == 200, 15), "workers: 2: a snapshot")
    answers, slowest = [], 0
    for _ in range(20):
        t0 = time.time()
        answers.append(get("/live/cam/snapshot.jpg?width=320"))
        slowest = max(slowest, time.time() - t0)
    bad = [(s, b[:80]) for s, _, b in answers if s != 200]
    check(not bad, f"workers: 2: 20 requests on fresh connections all get the JPEG ({bad}, slowest {slowest:.2f} s)")
    # The ETag names the loop that answered: the publisher's, and the one that mirrors its stream.
    loops = {h.get("etag", "").split("-")[1] for _, h, _ in answers if h.get("etag")}
    check(loops == {"0", "1"}, f"workers: 2: both loops answered ({loops})")
    small = save("w2.jpg", answers[-1][2])
    check(probe_jpeg(small) == ("mjpeg", 320, 180), f"workers: 2: 320x180 ({probe_jpeg(small)})")
finally:
    stop_proc(pub)
check(server.alive(), "the server with two workers is still running")
check(server.stop() == 0, "the server with two workers stops cleanly")
print("PASS")
