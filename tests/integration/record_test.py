#!/usr/bin/python3
"""Recording (docs/recording.md): ffmpeg and GStreamer publish to a live app with record: true.
After unpublish, the finished FLV (no .part left) holds every published packet with the same
payloads and timestamps, ffprobe reads the right duration, and onMetaData carries duration,
filesize and a keyframes index whose filepositions point at keyframe tags. The file plays at
once through a VOD app over RTMP. kill -9 mid-recording leaves a .part; the next start repairs
it (logged) into a file that plays up to the last complete tag."""
import glob
import json
import os
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from record_tools import check_recording  # noqa: E402

require_tools("ffmpeg", "ffprobe", "gst-launch-1.0", "rtmpdump")

record_done = []


class Hook(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        record_done.append(body)
        self.send_response(204)
        self.end_headers()


hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
threading.Thread(target=hook.serve_forever, daemon=True).start()
hport = free_port()
tmp = workdir("record")
rec = os.path.join(tmp, "rec")
apps = (f"  live: {{ type: live, record: true, record_path: {rec} }}\n  vod: {{ type: vod, root: {rec} }}\n"
        f"  seg: {{ type: live, record: {{ dir: {rec}, segment: {{ duration: 2s }}, mp4: true }} }}\n")
extra = (f"hooks: {{ on_record_done: 'http://127.0.0.1:{hook.server_address[1]}/record_done' }}\n"
         f"http: {{ listen: 127.0.0.1:{hport} }}\n")
server = Server("record", apps=apps, extra_yaml=extra).start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=8)


def wait_log(text, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if text in server.log_text():
            return True
        time.sleep(0.2)
    return False


try:
    # ffmpeg publishes the whole file.
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src, "-c", "copy", "-f", "flv",
                        server.url("live/cam")], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "ffmpeg published the file")
    check(wait_log("event=record_done"), "the recording is finished (record_done logged)")
    files = glob.glob(os.path.join(rec, "live", "cam-*.flv"))
    check(len(files) == 1 and not glob.glob(os.path.join(rec, "live", "*.part")), f"one cam-*.flv, no .part ({files})")
    check_recording("ffmpeg recording", files[0], flv_tags(src))
    time.sleep(0.5)
    done = [d for d in record_done if d.get("path") == files[0]]
    check(len(done) == 1, f"one record_done hook for it ({len(done)})")
    d = done[0]
    check(d["action"] == "record_done" and d["app"] == "live" and d["stream"] == "cam" and
          d["bytes"] == os.path.getsize(files[0]) and abs(d["duration_ms"] - 8011) <= 40 and
          d["start"] <= d["end"] and d["reason"] == "unpublish", f"with app, stream, path, bytes, duration, start, end ({d})")
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{hport}/metrics", timeout=5).read().decode()
    check('sluice_record_files_total{result="ok"} 1' in metrics, "/metrics counts the finished file")

    # Playable at once through the VOD app whose root holds the recordings.
    rel = os.path.relpath(files[0], rec)
    out = os.path.join(tmp, "vod.flv")
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", server.url(f"vod/{rel}"), "-c", "copy",
                        "-f", "flv", "-y", out], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"the recording plays over RTMP from the VOD app ({p.stderr.strip()[:80]})")
    check_same_packets("recording via VOD", out, flv_tags(src), min_video=150, min_audio=150, trim_tail=0)

    # rtmpdump seeks into it (-A 4: from 4 s) by the index, with no re-encoding or remux.
    seek = os.path.join(tmp, "seek.flv")
    subprocess.run(["timeout", "20", "rtmpdump", "-q", "-r", server.url(f"vod/{rel}"), "-A", "4", "-o", seek],
                   capture_output=True)
    stags = flv_tags(seek)
    first = next((t for t in stags if t[0] == 9 and t[4][1] != 0), None)
    check(first is not None and (first[4][0] >> 4) == 1, "rtmpdump -A 4 starts on a keyframe")
    # The keyframe at or before 4 s (the source's first video frame is at 23 ms: keyframes at n s + 23).
    src_video = [t for t in flv_tags(src) if t[0] == 9 and t[4][1] != 0]
    want = max(i for i, t in enumerate(src_video) if (t[4][0] >> 4) == 1 and t[1] <= 4000)
    pos = contiguous_in(media_runs(stags)[9], media_runs(flv_tags(src))[9])
    check(pos == want, f"from the source's keyframe at or before 4 s (video packet {want}) on ({pos})")
    # rtmpdump rewrites timestamps in what it saves; the server's own are read with the probe.
    v = [f for _, f, _ in probe_events(probe(server.url(f"vod/{rel}"), "--start", "4000", "--duration", "3"), "video")
         if f["seq"] == "0"]
    check(v and v[0]["key"] == "1" and int(v[0]["ts"]) == src_video[want][1],
          f"the server seeks to that keyframe ({v[0]['ts'] if v else None} ms)")

    # Segments of 2 s: cut at the first keyframe past 2 s, each file whole on its own, nothing
    # lost or repeated across the cuts.
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src, "-c", "copy", "-f", "flv",
                        server.url("seg/cam")], capture_output=True, text=True, timeout=60)
    time.sleep(2)

    def order(path):
        stem = os.path.basename(path)[len("cam-"):-len(".flv")]
        parts = stem.split("-")
        return (parts[0], parts[1], int(parts[2]) if len(parts) > 2 else 0)
    segs = sorted(glob.glob(os.path.join(rec, "seg", "cam-*.flv")), key=order)
    check(len(segs) == 4, f"8 s in 2 s segments with 1 s GOPs: 4 files ({[os.path.basename(x) for x in segs]})")
    joined = {8: [], 9: []}
    src_runs = media_runs(flv_tags(src))
    for i, path in enumerate(segs):
        tags = flv_tags(path)
        kinds = [t[0] for t in tags[:3]]
        check(kinds[0] == 18 and 9 in kinds and 8 in kinds, f"segment {i}: onMetaData and both sequence headers first")
        first_frame = next(t for t in tags if t[0] == 9 and t[4][1] != 0)
        src_first = next(t for t in flv_tags(src) if t[0] == 9 and t[4][1] != 0)[1]
        want = src_first if i == 0 else 0  # a cut starts its file's clock at its keyframe
        check((first_frame[4][0] >> 4) == 1 and first_frame[1] == want,
              f"segment {i}: starts on a keyframe at {first_frame[1]} ms ({want})")
        runs = media_runs(tags)
        for t in (8, 9):
            joined[t] += runs[t]
        last = max(t[1] for t in tags if t[0] in (8, 9))
        if i < len(segs) - 1:
            check(1900 <= last <= 3100, f"segment {i}: {last} ms, within a GOP of 2 s")
        check_recording(f"segment {i}", path, flv_tags(src), exact=False)
    for t, label in ((9, "video"), (8, "audio")):
        check(joined[t] == src_runs[t], f"segments together: every {label} packet once, in order ({len(joined[t])})")
    # record.mp4: each segment has its MP4 copy with the segment's packets.
    for i, path in enumerate(segs):
        mp4 = path[:-4] + ".mp4"
        got = [h for _, _, h in ffprobe_packets(mp4)] if os.path.exists(mp4) else []
        want = [h for _, _, h in ffprobe_packets(path)]
        check(got and sorted(got) == sorted(want), f"segment {i}: its .mp4 holds the same packets ({len(got)} of {len(want)})")

    # GStreamer publishes too.
    g = subprocess.run(["timeout", "30", "gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "flvdemux", "name=d",
                        "flvmux", "name=m", "streamable=true", "!", "rtmp2sink", f"location={server.url('live/gst')}",
                        "d.video", "!", "queue", "!", "h264parse", "!", "m.", "d.audio", "!", "queue", "!", "aacparse",
                        "!", "m."], capture_output=True, text=True)
    check(wait_log("event=record_done file=\"" + os.path.join(rec, "live", "gst-")), "the GStreamer stream is recorded")
    gfiles = glob.glob(os.path.join(rec, "live", "gst-*.flv"))
    check(len(gfiles) == 1, f"one gst-*.flv ({gfiles})")
    gtags = flv_tags(gfiles[0])
    check(contiguous_in(media_runs(gtags)[9][2:-2], media_runs(flv_tags(src))[9]) >= 0,
          "the GStreamer recording's video is the source's")
    check_recording("GStreamer recording", gfiles[0], flv_tags(src), exact=False)

    # kill -9 in the middle of a recording, then a new start repairs the .part.
    pub = publish_ffmpeg(src, server.url("live/crash"), loop=True)
    time.sleep(5)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    stop_proc(pub)
    parts = glob.glob(os.path.join(rec, "live", "crash-*.flv.part"))
    check(len(parts) == 1 and os.path.getsize(parts[0]) > 100000, f"kill -9 leaves the .part ({parts})")
    # Tear the last tag as a crash mid-write would.
    with open(parts[0], "r+b") as f:
        f.truncate(os.path.getsize(parts[0]) - 7)
    server.log.close()
    server.start()
    check(wait_log("event=record_repaired"), "the next start repairs it and says so")
    fixed = glob.glob(os.path.join(rec, "live", "crash-*.flv"))
    check(len(fixed) == 1 and not glob.glob(os.path.join(rec, "live", "crash-*.part")), f"repaired into {fixed}")
    tags = check_recording("repaired recording", fixed[0], flv_tags(src), exact=False)
    check(contiguous_in(media_runs(tags)[9], media_runs(flv_tags(src))[9]) == 0,
          "it holds the stream from its start up to the last complete tag")
    check("dropped_bytes=" in server.log_text(), "the log says what the repair cut")

    # SIGTERM while recording: the server finishes the file before it exits.
    last = publish_ffmpeg(src, server.url("live/last"), loop=True)
    time.sleep(3)
    clients = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{hport}/api/v1/clients", timeout=5).read())
    recs = [r for c in clients for r in c.get("recordings", [])]
    check(len(recs) == 1 and recs[0]["stream"] == "live/last" and recs[0]["path"].endswith(".flv.part") and
          recs[0]["bytes"] > 10000 and 1 <= recs[0]["duration_s"] <= 4,
          f"the API lists the recording in progress with its path, bytes and duration ({recs})")
finally:
    rc = server.stop()
check(rc == 0, "server exits 0")
stop_proc(last)
lastf = glob.glob(os.path.join(rec, "live", "last-*.flv"))
check(len(lastf) == 1 and not glob.glob(os.path.join(rec, "live", "last-*.part")),
      f"a recording under way when the server stops is finished, not left as .part ({lastf})")
check_recording("recording ended by SIGTERM", lastf[0], flv_tags(src), exact=False)
check(any(d.get("path") == lastf[0] for d in record_done), "and its record_done hook was sent before the exit")
hook.shutdown()
print("PASS")
