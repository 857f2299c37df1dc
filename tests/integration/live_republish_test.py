#!/usr/bin/python3
"""A publisher killed mid-stream: its players are told (UnpublishNotify, StreamEOF), the server keeps
running, players keep waiting, and a new publisher on the same name reaches both the waiting players
(PublishNotify, fresh sequence headers, a keyframe first) and new ones. A player that starts before
anyone publishes waits and starts when the publisher comes."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
server = Server("republish").start()
src = make_media(os.path.join(server.dir, "src.flv"), seconds=30)
url = server.url("live/re")
early = probe_async(url, "--duration", "14")  # before any publisher
time.sleep(0.5)
pub1 = publish_ffmpeg(src, url)
time.sleep(4)
waiting = probe_async(url, "--duration", "10")
time.sleep(1.5)
pub1.send_signal(signal.SIGKILL)  # killed mid-stream: no FCUnpublish, just a dead socket
pub1.wait()
time.sleep(2)
check(server.alive(), "server survives the publisher's death")
pub2 = publish_ffmpeg(src, url)
time.sleep(4)
late = probe(url, "--duration", "2")
stop_proc(pub2)
early_lines = early.lines()
waiting_lines = waiting.lines()
rc = server.stop()

for name, lines in (("early player", early_lines), ("waiting player", waiting_lines)):
    statuses = [l.split()[2] for l in lines if l.startswith("status")]
    check("NetStream.Play.UnpublishNotify" in statuses, f"{name}: told the publisher left")
    check("NetStream.Play.PublishNotify" in statuses, f"{name}: told a new publisher came")
    i_un = statuses.index("NetStream.Play.UnpublishNotify")
    check(statuses.index("NetStream.Play.PublishNotify") > i_un, f"{name}: PublishNotify after UnpublishNotify")
    check(any(l.startswith("uc ") and "StreamEOF" in l for l in lines), f"{name}: got StreamEOF")
    # Split the media at the PublishNotify line: after it come fresh sequence headers, then a keyframe.
    idx = next(i for i, l in enumerate(lines) if "NetStream.Play.PublishNotify" in l)
    after = [l for l in lines[idx:] if l.startswith(("video", "audio"))]
    check(len(after) > 50, f"{name}: receives the new publication ({len(after)} packets)")
    check(any("seq=1" in l for l in after[:4]), f"{name}: fresh sequence headers after republish")
    first_frame = next(l for l in after if l.startswith("video") and "seq=0" in l)
    check("key=1" in first_frame, f"{name}: first new video frame is a keyframe")
    stamps = [int(f["ts"]) for _, f, _ in probe_events(lines, "video") if f.get("seq") == "0"]
    check(all(b >= a for a, b in zip(stamps, stamps[1:])), f"{name}: video timestamps keep rising across republish")
before_first_pub = [l for l in early_lines if l.startswith("video")]
check(len(before_first_pub) > 0, "player that started before the publisher received video")
videos = [v for v in probe_events(late, "video") if v[1]["seq"] == "0"]
check(len(videos) > 10 and videos[0][1]["key"] == "1", "a new player of the new publication starts on a keyframe")
check(rc == 0, "server exits 0")
print("PASS")
