#!/usr/bin/python3
"""HTTP-FLV: ffmpeg publishes over RTMP; curl readers (chunked HTTP/1.1 and close-delimited
HTTP/1.0), a raw keep-alive client and an RTMP player (rtmp-probe) read the same stream at once.
Every capture decodes without errors, its audio/video payloads are a contiguous run of the source's
starting on a keyframe, the FLV header flags say audio+video, the response carries
Content-Type: video/x-flv and CORS. A reader waiting before the publisher receives the whole stream;
when the publisher leaves every response ends cleanly (last chunk or close) and a keep-alive
connection serves its next request."""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403


def read_chunked_flv(port, path, out_path, result):
    """GET path on a raw socket, read the chunked body until its last chunk, save it, then send a
    second request on the same connection and record its status."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=40)
        f = s.makefile("rb")
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        status = f.readline().decode()
        headers = {}
        while True:
            line = f.readline().decode().strip()
            if not line:
                break
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        body = bytearray()
        while True:
            size = int(f.readline().strip().split(b";")[0], 16)
            if size == 0:
                f.readline()
                break
            body += f.read(size)
            f.readline()
        with open(out_path, "wb") as o:
            o.write(body)
        result["status"] = status
        result["headers"] = headers
        s.sendall(b"GET /nowait/none.flv HTTP/1.1\r\nHost: t\r\n\r\n")
        result["next"] = f.readline().decode()
        s.close()
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        result["error"] = repr(e)


def whole_tags(path):
    """Copy of the FLV cut after its last complete tag (a reader stopped by a timeout ends mid-tag)."""
    data = open(path, "rb").read()
    off = int.from_bytes(data[5:9], "big") + 4
    while off + 11 <= len(data):
        size = int.from_bytes(data[off + 1:off + 4], "big")
        if off + 11 + size + 4 > len(data):
            break
        off += 11 + size + 4
    cut = path + ".whole.flv"
    with open(cut, "wb") as o:
        o.write(data[:off])
    return cut


def decodes_cleanly(path):
    dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", whole_tags(path), "-f", "null", "-"],
                         capture_output=True, text=True, timeout=60)
    return dec.returncode == 0 and dec.stderr.strip() == "", dec.stderr[-300:]


def headers_of(path):
    out = {}
    for line in open(path, encoding="latin-1").read().splitlines()[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip().lower()] = v.strip()
    return out


require_tools("ffmpeg", "ffprobe", "curl")
hport = free_port()
server = Server("http-flv", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n",
                apps="  live: { type: live, gop_cache: true }\n  nowait: { type: live, wait_for_publisher: false }\n")
server.start()
check(wait_port(hport), "HTTP listener is up")
d = server.dir
src = make_media(os.path.join(d, "src.flv"), seconds=12)
source_tags = flv_tags(src)
src_runs = media_runs(source_tags)
base = f"http://127.0.0.1:{hport}"
flv_url = f"{base}/live/cam.flv"

code = subprocess.run(["curl", "-s", "-o", os.devnull, "-w", "%{http_code}", f"{base}/nowait/cam.flv"],
                      capture_output=True, text=True, timeout=10).stdout
check(code == "404", f"a stream that is not live, in an app that does not wait: 404 (got {code})")

# Readers that wait for the publisher: a raw keep-alive client (chunked) and curl over HTTP/1.0.
waiting = {}
waiter = threading.Thread(target=read_chunked_flv, args=(hport, "/live/cam.flv", os.path.join(d, "wait.flv"), waiting))
waiter.start()
http10_out = os.path.join(d, "http10.flv")
http10 = subprocess.Popen(["timeout", "-k", "2", "40", "curl", "-s", "--http1.0", "-D", http10_out + ".h", "-o",
                           http10_out, flv_url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
time.sleep(1)
pub = publish_ffmpeg(src, server.url("live/cam"))
try:
    time.sleep(3)  # the readers below join late: they must start on the cached keyframe
    outs = [os.path.join(d, f"curl{i}.flv") for i in range(4)]
    curls = [subprocess.Popen(["curl", "-s", "-m", "5", "-D", o + ".h", "-o", o, flv_url],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for o in outs]
    rtmp = probe_async(server.url("live/cam"), "--duration", "5")
    for c in curls:
        c.wait(timeout=20)
    probe_lines = rtmp.lines()

    for i, o in enumerate(outs):
        name = f"curl reader {i}"
        h = headers_of(o + ".h")
        check(h.get("content-type") == "video/x-flv", f"{name}: Content-Type: video/x-flv")
        check(h.get("access-control-allow-origin") == "*", f"{name}: Access-Control-Allow-Origin: *")
        check(h.get("transfer-encoding") == "chunked", f"{name}: chunked transfer coding")
        data = open(o, "rb").read()
        check(data[:3] == b"FLV" and data[4] == 0x05, f"{name}: FLV header with the audio and video flags")
        check_same_packets(name, o, source_tags, min_video=90, min_audio=150)
        ok, err = decodes_cleanly(o)
        check(ok, f"{name}: capture decodes without errors {err}")
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height", "-of",
                            "compact", whole_tags(outs[0])], capture_output=True, text=True, timeout=30).stdout
    check("codec_name=h264" in probe and "width=320" in probe and "codec_name=aac" in probe,
          "ffprobe: the capture is H.264 320x240 + AAC")

    check(any("NetStream.Play.Start" in l for l in probe_lines), "RTMP player alongside: Play.Start")
    rtmp_video = [v[1]["md5"] for v in probe_events(probe_lines, "video") if v[1]["seq"] == "0"]
    check(len(rtmp_video) >= 90, f"RTMP player alongside: {len(rtmp_video)} video packets")
    check(contiguous_in(rtmp_video, src_runs[9]) >= 0, "RTMP player alongside: payloads are a contiguous run")

    # The publisher reaches the end of its file and leaves: every waiting reader's response ends.
    pub.wait(timeout=30)
    waiter.join(timeout=20)
    check(not waiter.is_alive() and "error" not in waiting, f"raw reader: response ended with the last chunk {waiting}")
    check(waiting.get("headers", {}).get("transfer-encoding") == "chunked", "raw reader: chunked")
    check(waiting.get("next", "").startswith("HTTP/1.1 404"),
          "raw reader: the keep-alive connection answers its next request after the stream")
    wait_tags = check_same_packets("waiting reader", os.path.join(d, "wait.flv"), source_tags, min_video=250,
                                   min_audio=400, trim_tail=0)
    got = media_runs(wait_tags)
    check(got[9] == src_runs[9] and got[8] == src_runs[8],
          "waiting reader: every audio and video payload of the source, in order")
    ok, err = decodes_cleanly(os.path.join(d, "wait.flv"))
    check(ok, f"waiting reader: decodes without errors {err}")

    _, err = http10.communicate(timeout=20)
    check(http10.returncode == 0, f"HTTP/1.0 reader: curl ended cleanly when the stream ended (rc {http10.returncode})")
    h = headers_of(http10_out + ".h")
    check("transfer-encoding" not in h and h.get("connection") == "close", "HTTP/1.0 reader: close-delimited body")
    got = media_runs(flv_tags(http10_out))
    check(got[9] == src_runs[9] and got[8] == src_runs[8], "HTTP/1.0 reader: every payload of the source")
    check(server.alive(), "server still running")
finally:
    stop_proc(pub)
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
log = server.log_text()
check(log.count("event=play app=live stream=cam live=yes transfer=chunked") == 4, "log: a play line per late reader")
check("live=waiting transfer=close" in log, "log: the HTTP/1.0 reader waited, close-delimited")
print("PASS")
