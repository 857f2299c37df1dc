#!/usr/bin/python3
"""Recording an Enhanced RTMP stream (docs/recording.md): HEVC made by libx265 (with B-frames,
so composition times matter) is played from an MP4 through the VOD app, which sends it as
Enhanced RTMP ('hvc1' FourCC) tags, and published as such to a recording live app. The finished
FLV holds every published tag unchanged (payload and timestamp), its keyframes index points at
the HEVC keyframes, and the VOD app plays the recording back with the same payloads. With
record.mp4 the finished file also gets a faststart NAME.mp4 whose packets (ffprobe: data hashes,
pts and dts) are the source MP4's, for HEVC and for H.264 published by ffmpeg."""
import glob
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402

require_tools("ffmpeg", "ffprobe")

tmp = workdir("record-hevc")
media = os.path.join(tmp, "media")
rec = os.path.join(media, "rec")
os.makedirs(media)
src = os.path.join(media, "hevc.mp4")
p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                    "-t", "4", "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                    "keyint=25:min-keyint=25:bframes=2:log-level=error", "-tag:v", "hvc1", "-c:a", "aac", "-b:a", "64k",
                    "-movflags", "+faststart", src], capture_output=True, text=True)
check(p.returncode == 0, f"libx265 made the HEVC source ({p.stderr.strip()[:200]})")

apps = f"  vod: {{ type: vod, root: {media} }}\n  live: {{ type: live, record: {{ dir: {rec}, mp4: true }} }}\n"
server = Server("record-hevc", apps=apps).start()


def play_all(name, seconds=15):
    """The audio, video and data messages the VOD app sends for `name`, until Play.Complete."""
    c = RtmpClient(server.port)
    c.connect("vod")
    c.create_stream()
    c.play(name)
    c.wait_status("NetStream.Play.Complete", timeout=seconds)
    c.close()
    return [(m.type, m.timestamp, m.payload) for m in c.messages if m.type in (8, 9) or
            (m.type == 18 and m.payload.startswith(b"\x02\x00\x0aonMetaData"))]


def mp4_packets(path):
    """Per codec type, [(pts_ms, dts_ms, md5)] relative to the file's first decode time, by ffprobe."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_packets", "-show_data_hash", "md5", "-show_entries",
                          "packet=codec_type,pts_time,dts_time,data_hash", "-of", "json", path],
                         capture_output=True, text=True, timeout=60).stdout
    rows = json.loads(out or "{}").get("packets", [])
    t0 = min(float(r["dts_time"]) for r in rows)
    got = {}
    for r in rows:
        got.setdefault(r["codec_type"], []).append(
            (round((float(r["pts_time"]) - t0) * 1000), round((float(r["dts_time"]) - t0) * 1000), r["data_hash"]))
    return got


def check_mp4_copy(name, mp4, source):
    data = open(mp4, "rb").read(1 << 20)
    check(data[4:8] == b"ftyp" and 0 <= data.find(b"moov") < data.find(b"mdat"), f"{name}: faststart (moov before mdat)")
    got, want = mp4_packets(mp4), mp4_packets(source)
    for kind in ("video", "audio"):
        g, w = got.get(kind, []), want.get(kind, [])
        check([x[2] for x in g] == [x[2] for x in w], f"{name}: every {kind} packet of the source, byte for byte ({len(g)} of {len(w)})")
        off = max((abs(a[0] - b[0]), abs(a[1] - b[1])) for a, b in zip(g, w)) if g and w else None
        check(off is not None and max(off) <= 1, f"{name}: {kind} pts and dts within 1 ms of the source's ({off})")


def is_hevc(payload):
    return len(payload) >= 5 and payload[0] & 0x80 and payload[1:5] == b"hvc1"


def is_key(payload):
    return is_hevc(payload) and (payload[0] >> 4) & 7 == 1 and payload[0] & 0x0F != 0  # not SequenceStart


try:
    sent = play_all("hevc.mp4")
    video = [m for m in sent if m[0] == 9]
    check(len(video) >= 100 and all(is_hevc(m[2]) for m in video), f"the VOD app sends Enhanced RTMP HEVC ({len(video)})")
    check(any(m[2][0] & 0x0F == 1 and m[2][5:8] != b"\x00\x00\x00" for m in video[1:]),
          "with composition times (CodedFrames with a non-zero offset: B-frames)")

    pub = RtmpClient(server.port)
    pub.connect("live")
    pub.create_stream()
    pub.publish("hevc")
    check(pub.wait_status("NetStream.Publish.Start") is not None, "the HEVC publisher is accepted")
    for t, ts, payload in sent:
        if t == 18:
            pub.media(18, 0, b"\x02\x00\x0d@setDataFrame" + payload)
        else:
            pub.media(t, ts, payload)
    time.sleep(0.5)
    pub.close()
    deadline = time.time() + 15
    while time.time() < deadline and "event=record_done" not in server.log_text():
        time.sleep(0.2)
    files = glob.glob(os.path.join(rec, "live", "hevc-*.flv"))
    check(len(files) == 1, f"the recording is finished ({files})")

    tags = flv_tag_bodies(files[0])
    got = [(t, ts, hashlib.md5(b).hexdigest()) for t, ts, b in tags if t in (8, 9)]
    want = [(t, ts, hashlib.md5(b).hexdigest()) for t, ts, b in sent if t in (8, 9)]
    first = want[0][1]
    want = [(t, ts - first, h) for t, ts, h in want]
    check(got == want, f"every tag recorded unchanged, timestamps from the first frame ({len(got)} of {len(want)})")
    data = open(files[0], "rb").read()
    meta = tags[0][2]
    check(tags[0][0] == 18 and b"onMetaData" in meta, "the recording starts with onMetaData")
    keys = [i for i, (t, ts, b) in enumerate(tags) if t == 9 and is_key(b)]
    # filepositions: parse the tag offsets again and compare with the index.
    offsets, off = [], 13
    for t, ts, b in tags:
        offsets.append(off)
        off += 11 + len(b) + 4
    key_offsets = [offsets[i] for i in keys]
    k = meta.find(b"\x00\x0dfilepositions\x0a")
    n = int.from_bytes(meta[k + 16:k + 20], "big")
    positions = [int(__import__("struct").unpack(">d", meta[k + 21 + 9 * j:k + 29 + 9 * j])[0]) for j in range(n)]
    check(positions == key_offsets and len(positions) == 4,
          f"the keyframes index lists the {len(key_offsets)} HEVC keyframes at their tags ({positions})")
    check(all(data[p] == 9 and is_key(data[p + 11:p + 19]) for p in positions), "each position is an HEVC keyframe tag")

    rel = os.path.relpath(files[0], media)
    back = play_all(rel)
    back_media = [(t, hashlib.md5(b).hexdigest()) for t, ts, b in back if t in (8, 9)]
    check(back_media == [(t, h) for t, ts, h in want],
          f"the VOD app plays the recording with the same payloads ({len(back_media)})")
    mp4 = files[0][:-4] + ".mp4"
    check(os.path.exists(mp4) and "event=record_mp4 " in server.log_text(), "record.mp4 writes NAME.mp4 next to it")
    check_mp4_copy("HEVC MP4 copy", mp4, src)

    # H.264 from ffmpeg, compared with an MP4 ffmpeg makes from the same FLV.
    avc_flv = make_media(os.path.join(tmp, "avc.flv"), seconds=4)
    avc_ref = os.path.join(tmp, "avc.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", avc_flv, "-c", "copy", avc_ref], check=True)
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i", avc_flv, "-c", "copy", "-f", "flv",
                        server.url("live/avc")], capture_output=True, text=True, timeout=60)
    deadline = time.time() + 15
    while time.time() < deadline and not glob.glob(os.path.join(rec, "live", "avc-*.mp4")):
        time.sleep(0.2)
    avc = glob.glob(os.path.join(rec, "live", "avc-*.mp4"))
    check(len(avc) == 1, f"the H.264 recording has its MP4 copy ({avc})")
    check_mp4_copy("H.264 MP4 copy", avc[0], avc_ref)
finally:
    rc = server.stop()
check(rc == 0, "server exits 0")
print("PASS")
