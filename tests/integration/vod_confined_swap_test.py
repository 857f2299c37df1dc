#!/usr/bin/python3
"""Issue 11, finding 5: no time-of-check/time-of-use gap in VOD opens. A thread keeps swapping a
folder inside the media root for a symlink to a folder outside that holds a different file under
the same name, while the test plays that name hundreds of times over RTMP (play and
getStreamLength) and downloads it over HTTP. No answer may ever carry the outside file (told apart
by its duration, its size and its bytes); plays either get the inside file or are refused. After
the swapping, the legitimate path plays with exactly the file's packets, and an app with
follow_symlinks: false refuses even a symlink that stays inside the root."""
import os
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg", "ffprobe")
hport = free_port()
server = Server("vod-confined-swap", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n",
                apps="  vod: { type: vod, root: ./media }\n"
                     "  strict: { type: vod, root: ./media, follow_symlinks: false }\n")
media = os.path.join(server.dir, "media")
inside_dir = os.path.join(media, "shows")
outside_dir = os.path.join(server.dir, "outside")
os.makedirs(inside_dir)
os.makedirs(outside_dir)
inside = make_media(os.path.join(inside_dir, "clip.flv"), seconds=2, size="320x240")
outside = make_media(os.path.join(outside_dir, "clip.flv"), seconds=5, size="160x120")
inside_bytes = open(inside, "rb").read()
outside_bytes = open(outside, "rb").read()
check(inside_bytes != outside_bytes, "the two files differ")
os.symlink("shows", os.path.join(media, "inner-link"))  # stays inside the root
server.start()
check(wait_port(hport), "HTTP listener is up")

stop = threading.Event()
swaps = [0]


def swapper():
    """The attack: shows/ is moved away and a symlink to outside/ takes its name, then back."""
    hold = os.path.join(media, ".hold")
    while not stop.is_set():
        os.rename(inside_dir, hold)
        os.symlink(outside_dir, inside_dir)
        time.sleep(0.0005)
        os.unlink(inside_dir)
        os.rename(hold, inside_dir)
        swaps[0] += 1
        time.sleep(0.0005)


def metadata_of(msgs):
    for m in msgs:
        c = m.command()
        if m.type == 18 and c and c[0] == "onMetaData" and c[2] and isinstance(c[2][0], dict):
            return c[2][0]
    return None


def stream_lengths(msgs):
    out = []
    for m in msgs:
        c = m.command()
        if m.type == 20 and c and c[0] == "_result" and c[1] >= 1000 and c[2] and isinstance(c[2][-1], float):
            out.append(c[2][-1])
    return out


thread = threading.Thread(target=swapper, daemon=True)
thread.start()
RTMP_PLAYS = 400
c = RtmpClient(server.port)
c.connect("vod")
c.create_stream()
check(c.wait_for(lambda m: m.command() and m.command()[0] == "_result" and m.command()[1] == 2) is not None,
      "createStream answered")
served = refused = outside_seen = 0
for i in range(RTMP_PLAYS):
    start = len(c.messages)
    c.send_raw(c.command_bytes("getStreamLength", (None, "shows/clip.flv"), txn=1000 + i))
    c.play("shows/clip.flv", reset=True)
    got = c.wait_for(lambda m: m.status_code() in ("NetStream.Play.Start", "NetStream.Play.StreamNotFound"), 10)
    check(got is not None, f"play {i}: answered")
    if got.status_code() == "NetStream.Play.StreamNotFound":
        refused += 1
        continue
    meta = metadata_of(c.messages[start:])
    deadline = time.time() + 5
    while meta is None and time.time() < deadline and not c.closed:
        c.read_some(0.05)
        meta = metadata_of(c.messages[start:])
    check(meta is not None, f"play {i}: onMetaData")
    if round(meta.get("duration", 0)) == 5 or meta.get("width") == 160:
        outside_seen += 1
    else:
        served += 1
    # Video payloads must be inside's bytes (FLV: the message is the tag body, a slice of the file).
    for m in c.messages[start:]:
        if m.type == 9 and len(m.payload) > 64 and m.payload not in inside_bytes:
            outside_seen += 1
            break
c.read_for(0.5)
lengths = stream_lengths(c.messages)
print(f"RTMP: {served} served, {refused} refused, {swaps[0]} swaps so far; lengths {sorted(set(lengths))}", flush=True)
check(outside_seen == 0, f"RTMP never played the outside file ({outside_seen} times)")
check(all(l < 4.0 for l in lengths), "getStreamLength never measured the outside file")
check(served > 0, "the legitimate file still played during the swapping")

HTTP_GETS = 300
ok = missing = 0
for i in range(HTTP_GETS):
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{hport}/vod/shows/clip.flv", timeout=10).read()
    except urllib.error.HTTPError as e:
        check(e.code == 404, f"download {i}: refused with 404 ({e.code})")
        missing += 1
        continue
    check(body != outside_bytes, f"download {i}: never the outside file")
    check(body == inside_bytes, f"download {i}: the inside file, whole")
    ok += 1
    # A Range request must come from the same confined open.
    req = urllib.request.Request(f"http://127.0.0.1:{hport}/vod/shows/clip.flv", headers={"Range": "bytes=100-199"})
    try:
        part = urllib.request.urlopen(req, timeout=10).read()
        check(part == inside_bytes[100:200], f"range {i}: the inside file's bytes")
    except urllib.error.HTTPError as e:
        check(e.code == 404, f"range {i}: refused with 404 ({e.code})")
stop.set()
thread.join()
print(f"HTTP: {ok} downloads, {missing} refused; {swaps[0]} swaps in all", flush=True)
# The HTTP side remembers a name it found missing for up to a second (server/http/small_file_cache),
# so while the folder flaps every few ms its downloads may all be refused; what matters is that none
# carried the outside file, and that the legitimate file is served again once the swapping stops.
def legit_download():
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{hport}/vod/shows/clip.flv", timeout=10).read() == inside_bytes
    except urllib.error.HTTPError:
        return False
check(ok + missing == HTTP_GETS, f"every download was the inside file or a 404 ({ok} + {missing})")
check(wait_for(legit_download, 3), "after the swapping the legitimate file downloads again, whole, within the cache's second")
check(swaps[0] > 100, f"the swap really ran ({swaps[0]} swaps)")
events = guard_events(hport)
check(events.get("vod_outside_root", 0) > 0, f"refusals counted as vod_outside_root ({events.get('vod_outside_root')})")

# The path plays correctly once the attack is over: every packet equals the file's.
check_vod_plays_source("after the swapping", server.url("vod/shows/clip.flv"), inside,
                       os.path.join(server.dir, "copy.flv"))
# A symlink staying inside the root plays in the default app, not in the follow_symlinks: false one.
check_vod_plays_source("symlink inside the root", server.url("vod/inner-link/clip.flv"), inside,
                       os.path.join(server.dir, "copy-link.flv"))
s = RtmpClient(server.port)
s.connect("strict")
s.create_stream()
s.play("inner-link/clip.flv")
check(s.wait_status("NetStream.Play.StreamNotFound") is not None, "follow_symlinks: false refuses any symlink")
s.play("shows/clip.flv")
check(s.wait_status("NetStream.Play.Start") is not None, "follow_symlinks: false still plays real folders")
s.close()
try:
    urllib.request.urlopen(f"http://127.0.0.1:{hport}/strict/inner-link/clip.flv", timeout=10)
    check(False, "HTTP: follow_symlinks: false refuses a symlink")
except urllib.error.HTTPError as e:
    check(e.code == 404, f"HTTP: follow_symlinks: false refuses a symlink ({e.code})")
c.close()
check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
