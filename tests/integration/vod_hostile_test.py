#!/usr/bin/python3
"""Hostile VOD names and broken files. Path traversal (../, absolute, URL-encoded, mp4:../,
backslashes, a symlink out of the root) is refused with StreamNotFound, nothing outside the root
leaks, and the connection stays usable. Truncated and lying files give the player a clean error
(or the intact part), and the server keeps serving others."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")
server = vod_server("vod-hostile")
media = os.path.join(server.dir, "media")
good = make_media(os.path.join(media, "good.flv"), seconds=3)
# A secret outside the root that must never be served, as an FLV and an MP4.
secret_flv = make_media(os.path.join(server.dir, "secret.flv"), seconds=2)
subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", secret_flv, "-c", "copy",
                os.path.join(server.dir, "secret.mp4")], check=True)
os.symlink(os.path.join(server.dir, "secret.flv"), os.path.join(media, "link.flv"))
os.symlink(server.dir, os.path.join(media, "up"))
# Broken files inside the root.
data = open(good, "rb").read()
open(os.path.join(media, "truncated.flv"), "wb").write(data[: len(data) // 2])
open(os.path.join(media, "notflv.flv"), "wb").write(b"this is not an flv file at all" * 100)
mp4 = open(os.path.join(server.dir, "secret.mp4"), "rb").read()
i = mp4.find(b"moov")
lying = bytearray(mp4)
lying[i - 4:i] = (0x7FFFFFF0).to_bytes(4, "big")  # moov claims to be 2 GB
open(os.path.join(media, "lying.mp4"), "wb").write(bytes(lying))
open(os.path.join(media, "empty.mp4"), "wb").write(b"")
j = mp4.find(b"stsz")
absurd = bytearray(mp4)
absurd[j + 12:j + 16] = (0x7FFFFFFF).to_bytes(4, "big")  # stsz sample count: 2^31
open(os.path.join(media, "absurd.mp4"), "wb").write(bytes(absurd))
server.start()

hostile = ["../secret.flv", "/etc/passwd", "%2e%2e/secret.flv", "..%2fsecret.flv", "mp4:../secret.mp4",
           "mp4:../secret", "sub/../../secret.flv", "..\\secret.flv", "link.flv", "up/secret.flv",
           "flv:../secret", "./../secret.flv", "mp4:/etc/passwd", "nosuch.flv"]
for name in hostile:
    # The hostile play, then a good one queued on the same connection: it must still work.
    lines = probe(server.url("vod/" + name), "--duration", "8", "--frames", "50", "--play2", "good.flv")
    codes = [f["_words"][0] for _, f, _ in probe_events(lines, "status")]
    check("NetStream.Play.StreamNotFound" in codes, f"'{name}': StreamNotFound")
    check(codes.index("NetStream.Play.StreamNotFound") == 0, f"'{name}': refused before anything played")
    videos = [f for _, f, _ in probe_events(lines, "video")]
    check(len(videos) >= 50, f"'{name}': the connection stays usable (next item played {len(videos)} video packets)")

for name, want in (("truncated.flv", "play"), ("notflv.flv", "error"), ("lying.mp4", "error"),
                   ("empty.mp4", "error"), ("absurd.mp4", "error")):
    lines = probe(server.url("vod/" + name), "--duration", "5")
    codes = [f["_words"][0] for _, f, _ in probe_events(lines, "status")]
    if want == "error":
        check("NetStream.Play.StreamNotFound" in codes or "NetStream.Play.Failed" in codes,
              f"{name}: clean error to the player ({codes})")
    else:
        videos = [f for _, f, _ in probe_events(lines, "video")]
        check(len(videos) > 10 and any("NetStream.Play.Stop" in l for l in lines),
              f"{name}: the intact part plays and ends cleanly ({len(videos)} video packets)")
    check(not any(l.startswith("end reason=protocol-error") for l in lines), f"{name}: no protocol error")

lines = probe(server.url("vod/good.flv"), "--duration", "5")
check(len(probe_events(lines, "video")) > 50, "the server still serves good files")
check(server.alive(), "server still running")
log = server.log_text()
check("secret" not in "".join(l for l in log.splitlines() if "event=vod_play" in l), "no file outside the root was played")
rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
