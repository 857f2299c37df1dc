#!/usr/bin/python3
"""Several worker loops (workers: 3): connections go to the loops in turn, so the publisher and
its players sit on different loops. Players on every loop (rtmpdump, ffmpeg, late joiners) get the
source's packets from a keyframe on; the API merges every loop's players and clients; a second
publisher of the live name on another loop is refused; kicking a client on another loop through
the API works; after the publisher leaves, a new one on another loop reaches the waiting players;
SIGTERM stops every loop and the process exits 0."""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403


def call(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def api(port, path):
    st, body = call(port, path)
    check(st == 200, f"GET {path}: 200 (got {st})")
    return json.loads(body)


def wait_for(what, fn, timeout=8.0):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    fail(f"timed out waiting for {what}")


require_tools("ffmpeg", "rtmpdump")
hport = free_port()
# publish_conflict: reject: a second publisher on another loop is refused there while the first one
# sends (the takeover across loops is live_takeover_test's).
server = Server("workers", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n",
                apps="  live: { type: live, gop_cache: true, publish_conflict: reject }\n")
with open(server.config) as f:
    text = f.read()
with open(server.config, "w") as f:
    f.write("workers: 3\n" + text)
server.start()
check(wait_port(hport), "HTTP listener is up")
d = server.dir
src = make_media(os.path.join(d, "src.flv"), seconds=16)
src2 = make_media(os.path.join(d, "src2.flv"), seconds=16, size="352x288")
source_tags = flv_tags(src)
url = server.url("live/cam")
pub = publish_ffmpeg(src, url)
players = []
try:
    check(wait_for("the publisher on the API", lambda: [c for c in api(hport, "/api/v1/clients")
                                                       if c.get("publishing")]), "publisher is listed")
    time.sleep(2)  # late joiners: they start on the GOP cache, which other loops must mirror
    out = {}
    for i in range(5):
        out[f"rtmpdump{i}"] = os.path.join(d, f"rtmpdump{i}.flv")
        players.append(subprocess.Popen(["timeout", "-k", "2", "7", "rtmpdump", "-q", "--live", "-r", url,
                                         "-o", out[f"rtmpdump{i}"]], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        time.sleep(0.1)
    out["ffmpeg"] = os.path.join(d, "ffmpeg.flv")
    players.append(subprocess.Popen(["timeout", "-k", "2", "12", "ffmpeg", "-nostdin", "-loglevel", "error", "-i",
                                     url, "-c", "copy", "-t", "5", "-f", "flv", out["ffmpeg"]]))
    time.sleep(2)

    clients = api(hport, "/api/v1/clients")
    rtmp = [c for c in clients if c["protocol"] == "rtmp"]
    workers = {c["worker"] for c in rtmp}
    check(len(rtmp) == 7, f"API lists the publisher and 6 players across loops ({len(rtmp)})")
    check(workers == {0, 1, 2}, f"connections are spread over the 3 loops ({sorted(workers)})")
    publisher = next(c for c in rtmp if c["publishing"] == ["live/cam"])
    check(any(c["worker"] != publisher["worker"] for c in rtmp), "some players are on another loop than the publisher")
    stream = api(hport, "/api/v1/streams/live/cam")
    check(stream["players"] == 6, f"stream players merged across loops: {stream['players']} == 6")
    check(stream["live"] and stream["publisher"]["id"] == publisher["id"], "stream shows its publisher")
    check(stream["video"]["width"] == 320, "stream codec figures come from the publisher's loop")
    server_info = api(hport, "/api/v1/server")
    check(server_info["workers"] == 3 and server_info["connections"]["rtmp"] == 7,
          f"server figures: 3 workers, 7 RTMP connections ({server_info['connections']})")

    # A second publisher of the same name lands on another loop and is refused there (the loop that
    # publishes it answers that its publisher is not stale).
    dup = subprocess.run(["timeout", "-k", "2", "8", "ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", src2,
                          "-c", "copy", "-t", "3", "-f", "flv", url], capture_output=True, text=True)
    check(dup.returncode != 0, f"a second publisher of live/cam is refused (ffmpeg exit {dup.returncode})")

    for p in players:
        p.wait(timeout=20)
    for name, path in out.items():
        check_same_packets(name, path, source_tags, min_video=60, min_audio=90)

    # Kick a player that is not on the loop serving the API (loop 0): three probes land on three
    # different loops.
    victims = [probe_async(url, "--duration", "20") for _ in range(3)]
    def remote_players():
        rows = [c for c in api(hport, "/api/v1/clients") if c["protocol"] == "rtmp" and not c["publishing"]]
        return [c for c in rows if c["worker"] != 0] if len(rows) >= 3 else None
    row = wait_for("the probes on the API", remote_players)[0]
    st, _ = call(hport, f"/api/v1/clients/{row['id']}", "DELETE")
    check(st == 204, f"DELETE client {row['id']} on loop {row['worker']}: 204 (got {st})")
    wait_for("the kicked client to go", lambda: all(c["id"] != row["id"] for c in api(hport, "/api/v1/clients")))
    for v in victims:
        v.proc.kill()
        v.lines()

    # Republish from another loop: players waiting on every loop get the new publisher's stream.
    waiting = [probe_async(url, "--duration", "12") for _ in range(3)]
    time.sleep(1)
    stop_proc(pub)
    wait_for("the stream to stop being live", lambda: not api(hport, "/api/v1/streams/live/cam")["live"])
    pub = publish_ffmpeg(src2, url)
    wait_for("the new publisher", lambda: api(hport, "/api/v1/streams/live/cam")["live"])
    time.sleep(4)
    late_out = os.path.join(d, "late.flv")
    subprocess.run(["timeout", "-k", "2", "4", "rtmpdump", "-q", "--live", "-r", url, "-o", late_out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    check_same_packets("late joiner after republish", late_out, flv_tags(src2), min_video=40, min_audio=60)
    stream = api(hport, "/api/v1/streams/live/cam")
    check(stream["video"]["width"] == 352, f"the stream now has the new publisher's codecs ({stream['video']})")
    for i, w in enumerate(waiting):
        lines = w.lines()
        statuses = [l.split()[2] for l in lines if l.startswith("status")]
        check("NetStream.Play.UnpublishNotify" in statuses and "NetStream.Play.PublishNotify" in statuses,
              f"waiting player {i}: told the publisher left and a new one came")
        idx = next(j for j, l in enumerate(lines) if "NetStream.Play.PublishNotify" in l)
        after = [l for l in lines[idx:] if l.startswith(("video", "audio"))]
        check(len(after) > 50, f"waiting player {i}: receives the new publication ({len(after)} packets)")
        first_frame = next((l for l in after if l.startswith("video") and "seq=0" in l), "")
        check("key=1" in first_frame, f"waiting player {i}: first new video frame is a keyframe")
    check(server.alive(), "server still running")
finally:
    stop_proc(pub)
    for p in players:
        if p.poll() is None:
            p.kill()
    rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM with 3 loops (got {rc})")
log = server.log_text()
check("event=workers count=3" in log, "log says 3 workers")
check("ERROR" not in log and "runtime error" not in log, "no errors or sanitizer reports in the log")
print("PASS")
