#!/usr/bin/python3
"""HLS from memory, both variants, read by real clients and our own demuxers.

ffmpeg publishes a 1 s-GOP H.264/AAC stream to an app with LL-HLS (fMP4, 2 s segments, 200 ms
parts) and to one with MPEG-TS HLS. While it plays:
  - an LL-HLS reader (blocking reloads, every part) and a standard reader (polling, segments) follow
    both; every playlist they see passes the RFC 8216 / 8216bis checker of hls_tools.py;
  - the media they fetched, demuxed by hls_tools.py, is byte for byte the publisher's: every video
    and audio payload in the covered span, in order, as a contiguous run of the source's (TS after
    removing the Annex B start codes, the inserted AUD/SPS/PPS and the ADTS headers), with
    continuous timestamps across segment and part boundaries;
  - ffmpeg reads both URLs (fMP4 packet hashes equal the source's payload hashes; TS decodes
    without an error);
  - blocking reloads are answered within the part target plus a margin; the newest part is
    available well within the latency bar (the method: media time vs wall time since publishing
    started, ffmpeg -re sends in real time).
Then the publisher leaves and comes back: the playlist gets exactly one discontinuity, sequence
numbers go on growing, and a reader across the republish sees continuous fMP4 times."""
import datetime
import hashlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from hls_tools import (HlsReader, PlaylistChecker, annexb_nals, avcc_nals, fmp4_fragments, parse_playlist,  # noqa: E402
                       strip_adts, ts_demux_many)

require_tools("ffmpeg", "ffprobe")


def source_payloads(path):
    """(video samples, audio samples) of an FLV: tag bodies without their FLV codec headers,
    sequence headers left out."""
    video, audio = [], []
    for t, ts, body in flv_tag_bodies(path):
        if t == 9 and len(body) > 5 and body[1] == 1:
            video.append(body[5:])
        elif t == 8 and len(body) > 2 and body[1] == 1:
            audio.append(body[2:])
    return video, audio


def check_run(name, got, src, minimum):
    check(len(got) >= minimum, f"{name}: {len(got)} samples (>= {minimum})")
    pos = contiguous_in([hashlib.md5(g).hexdigest() for g in got], [hashlib.md5(s).hexdigest() for s in src])
    check(pos >= 0, f"{name}: the payloads are a contiguous run of the publisher's (from sample {pos})")


def strip_inserted(nals):
    """The NAL units of an access unit without those the TS muxer adds (AUD, SPS, PPS)."""
    return [n for n in nals if n and (n[0] & 0x1F) not in (7, 8, 9)]


def get(url):
    with urllib.request.urlopen(url, timeout=15) as r:
        return r.status, r.read().decode(), dict(r.headers)


def main():
    d = workdir("hls")
    src = make_media(os.path.join(d, "src.flv"), seconds=40, gop=25)
    src_video, src_audio = source_payloads(src)
    http_port = free_port()
    apps = ("  live: { type: live, hls: { variant: low-latency, segment: 2s, part: 200ms } }\n"
            "  ts: { type: live, hls: { variant: mpegts, segment: 2s } }\n")
    server = Server("hls", extra_yaml=f"http:\n  enabled: true\n  listen: 127.0.0.1:{http_port}\n", apps=apps).start()
    base = f"http://127.0.0.1:{http_port}"
    t_publish = time.time()
    pubs = [publish_ffmpeg(src, server.url("live/cam")), publish_ffmpeg(src, server.url("ts/cam"))]
    time.sleep(1.0)

    # The first request starts the muxer and waits for a whole segment.
    t0 = time.time()
    status, text, headers = get(base + "/live/cam/index.m3u8")
    first_ms = (time.time() - t0) * 1000
    check(status == 200 and "#EXTINF" in text, f"the first playlist request is answered with a segment ({first_ms:.0f} ms)")
    check(headers.get("Content-Type") == "application/vnd.apple.mpegurl", "playlist Content-Type")
    check(headers.get("Access-Control-Allow-Origin") == "*", "playlist CORS header")

    # One checker per reader: its rules across reloads are per client (a query is in every URI).
    checkers = {name: PlaylistChecker() for name in ("ll", "ll-as-standard", "ts", "across")}
    readers = {
        "ll": HlsReader(base + "/live/cam/index.m3u8", checkers["ll"], low_latency=True),
        "ll-as-standard": HlsReader(base + "/live/cam/index.m3u8?p=1", checkers["ll-as-standard"], low_latency=False),
        "ts": HlsReader(base + "/ts/cam/index.m3u8", checkers["ts"], low_latency=False),
    }
    for r in readers.values():
        r.start(14)
    ff = {}

    def ffmpeg_read(tag, url, args):
        ff[tag] = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", url, "-t", "6"] + args,
                                 capture_output=True, text=True, timeout=60)
    threads = [threading.Thread(target=ffmpeg_read, args=("fmp4", base + "/live/cam/index.m3u8",
                                                          ["-c", "copy", "-f", "framemd5", "-"])),
               threading.Thread(target=ffmpeg_read, args=("ts", base + "/ts/cam/index.m3u8", ["-f", "null", "-"]))]
    for t in threads:
        t.start()
    for r in readers.values():
        r.join(40)
    for t in threads:
        t.join(70)

    for name, r in readers.items():
        check(not r.errors, f"{name}: no failed request ({r.errors[:3]})")
        check(len(r.segments_fetched()) >= 4, f"{name}: {len(r.segments_fetched())} whole segments read")
    for name, c in checkers.items():
        check(not c.violations, f"{name}: every playlist follows RFC 8216/8216bis ({len(c.violations)} violations: "
                                f"{c.violations[:5]})")

    # fMP4: our demuxer, through parts (LL) and through segments (standard).
    for name in ("ll", "ll-as-standard"):
        media = fmp4_fragments(readers[name].media_bytes())
        check(not media["errors"], f"{name}: fMP4 parses, times continuous ({media['errors'][:3]})")
        check_run(f"{name} video", [s["data"] for s in media["video"]], src_video, 200)
        check_run(f"{name} audio", [s["data"] for s in media["audio"]], src_audio, 300)
        check(media["video"][0]["key"], f"{name}: the first video sample is a keyframe")
    # MPEG-TS.
    ts = ts_demux_many(readers["ts"].media_pieces())
    check(not ts["errors"], f"ts: demuxes cleanly, continuity counters and CRCs right ({ts['errors'][:3]})")
    got_video = [b"".join(strip_inserted(annexb_nals(au["data"]))) for au in ts["video"]]
    want_video = [b"".join(strip_inserted(avcc_nals(s))) for s in src_video]
    check_run("ts video", got_video, want_video, 200)
    check_run("ts audio", [strip_adts(au["data"])[0] for au in ts["audio"]], src_audio, 300)
    dts = [au["dts"] for au in ts["video"]]
    check(all(b - a == 3600 for a, b in zip(dts, dts[1:])), "ts: video DTS step 40 ms across every segment")

    # ffmpeg as a client.
    check(ff["fmp4"].returncode == 0, f"ffmpeg reads the LL-HLS URL ({ff['fmp4'].stderr[-300:]})")
    ff_hashes = [line.split(",")[-1].strip() for line in ff["fmp4"].stdout.splitlines()
                 if line and not line.startswith("#") and line.split(",")[0].strip() == "0"]
    src_hashes = [hashlib.md5(s).hexdigest() for s in src_video]
    check(len(ff_hashes) >= 100 and contiguous_in(ff_hashes, src_hashes) >= 0,
          f"ffmpeg's {len(ff_hashes)} video packets from fMP4 HLS are the publisher's, in order")
    check(ff["ts"].returncode == 0 and not ff["ts"].stderr.strip(), f"ffmpeg decodes the TS HLS ({ff['ts'].stderr[-300:]})")

    # Blocking reloads and the live edge.
    waits = sorted(readers["ll"].blocking_seconds)
    p90 = waits[int(len(waits) * 0.9)]
    check(len(waits) >= 40 and p90 < 0.2 + 0.35, f"blocking reloads: {len(waits)}, median {statistics.median(waits)*1000:.0f} ms, "
                                                 f"p90 {p90*1000:.0f} ms (part target 200 ms + margin)")
    parts = [m for m in readers["ll"].media if m["index"] is not None]
    lags = []
    for m in parts[-20:]:
        # The part's end in media time since the first frame, against wall time since publishing.
        lags.append((m["time"] - t_publish) - (m["msn"] * 2.0 + (m["index"] + 1) * 0.2))
    edge = statistics.median(lags)
    check(edge < 1.2, f"a part is fetched {edge*1000:.0f} ms (median) after its last frame was sent "
                      "(plus PART-HOLD-BACK 0.6 s in a player: under the 2 s bar)")
    print(f"INFO first playlist {first_ms:.0f} ms; blocking median {statistics.median(waits)*1000:.0f} ms; edge {edge*1000:.0f} ms")

    # The stats API, /metrics and the log: figures a muxer that counted nothing would get wrong.
    read_bytes = sum(len(m["data"]) for r in readers.values() for m in r.media)
    st = json.loads(get(base + "/api/v1/streams/live/cam")[1])
    hls = st.get("hls") or {}
    check(st.get("hls_variant") == "low-latency" and hls.get("variant") == "low-latency" and hls.get("ready")
          and hls.get("segments", 0) >= 4,
          f"the stream's API entry shows its LL-HLS muxer ({hls})")
    check(hls.get("viewers", 0) >= 2 and hls.get("bytes_out", 0) >= read_bytes * 0.5 and hls.get("requests", 0) >= 100,
          f"the API counts the viewers, requests and bytes of live/cam ({hls}; readers got {read_bytes} bytes)")
    check(0 < hls.get("bytes_held", 0) < 40 * 1024 * 1024, f"the muxer holds a bounded window ({hls.get('bytes_held')} bytes)")
    srv = json.loads(get(base + "/api/v1/server")[1]).get("hls", {})
    check(srv.get("muxers") == 2 and srv.get("requests", 0) >= hls["requests"] and srv.get("bytes_out", 0) >= read_bytes,
          f"/api/v1/server totals both muxers ({srv})")
    metrics = {}
    for line in get(base + "/metrics")[1].splitlines():
        if line.startswith("sluice_hls_") or line.startswith("sluice_stream_hls_viewers"):
            name, value = line.rsplit(" ", 1)
            metrics[name] = float(value)
    check(metrics.get("sluice_hls_muxers") == 2 and metrics.get("sluice_hls_requests_total", 0) >= srv["requests"]
          and metrics.get('sluice_stream_hls_viewers{stream="live/cam"}', 0) >= 2,
          f"/metrics has the HLS series ({metrics})")
    request_lines = [l for l in server.log_text().splitlines() if "event=request" in l and "/live/cam/" in l]
    check(not request_lines, f"HLS requests are not logged one line each at info ({request_lines[:2]})")

    # The muxer started on a live stream: no discontinuity before the republish below, and
    # PROGRAM-DATE-TIME at the live edge is the wall clock when that media arrived, not the moment
    # the cached GOP was replayed to the muxer (up to a GOP later).
    t_fetch = time.time()
    pl = parse_playlist(get(base + "/live/cam/index.m3u8")[1])
    check(not any(seg["discontinuity"] for seg in pl["segments"]) and pl["discontinuity_sequence"] == 0
          and hls.get("discontinuity_sequence") == 0, "no EXT-X-DISCONTINUITY before any republish")
    if pl["trailing_program_date_time"]:
        edge_pdt, edge_media = pl["trailing_program_date_time"], 0.0
    else:
        edge_pdt, edge_media = pl["segments"][-1]["program_date_time"], pl["segments"][-1]["duration"]
    edge_media += sum(p["duration"] for p in pl["trailing_parts"])
    edge_wall = datetime.datetime.fromisoformat(edge_pdt.replace("Z", "+00:00")).timestamp() + edge_media
    check(-0.1 < t_fetch - edge_wall < 0.6, f"the live edge's PROGRAM-DATE-TIME is {(t_fetch - edge_wall)*1000:.0f} ms "
                                            "before the playlist was fetched")

    # Segments: Content-Length, Range, HEAD; a bad name.
    seg_url = base + "/live/cam/" + pl["segments"][-1]["uri"]
    whole = urllib.request.urlopen(seg_url, timeout=10).read()
    req = urllib.request.Request(seg_url, headers={"Range": "bytes=100-199"})
    with urllib.request.urlopen(req, timeout=10) as r:
        check(r.status == 206 and r.read() == whole[100:200], "a Range request gets those bytes of the segment")
    req = urllib.request.Request(seg_url, method="HEAD")
    with urllib.request.urlopen(req, timeout=10) as r:
        check(int(r.headers["Content-Length"]) == len(whole) and r.read() == b"", "HEAD gives the length, no body")
    for bad in ("/live/cam/seg999999.m4s", "/live/cam/part1.99999.m4s", "/live/cam/../cam/index.m3u8", "/live/nope/index.m3u8"):
        try:
            urllib.request.urlopen(base + bad, timeout=10)
            fail(f"{bad} should not be served")
        except urllib.error.HTTPError as e:
            check(e.code in (400, 404), f"{bad}: {e.code}")

    # A blocking request for a part far beyond the Advance Part Limit (3 s of 200 ms parts, 15 parts)
    # is a 400 at once, not a wait (RFC 8216bis 6.2.5.2); one part ahead waits for it.
    last = parse_playlist(get(base + "/live/cam/index.m3u8")[1])["segments"][-1]
    msn = int(last["uri"][3:].split(".")[0])
    t0 = time.time()
    try:
        urllib.request.urlopen(f"{base}/live/cam/index.m3u8?_HLS_msn={msn + 1}&_HLS_part=40", timeout=10)
        fail("a part 40 ahead is refused")
    except urllib.error.HTTPError as e:
        check(e.code == 400 and time.time() - t0 < 0.5,
              f"a part 40 ahead: {e.code} after {(time.time() - t0) * 1000:.0f} ms (400 at once)")

    # Republish: one discontinuity, sequence numbers go on, fMP4 times continuous across it.
    msn_before = parse_playlist(get(base + "/live/cam/index.m3u8")[1])["media_sequence"]
    across = HlsReader(base + "/live/cam/index.m3u8?r=1", checkers["across"], low_latency=True).start(12)
    time.sleep(2)
    stop_proc(pubs[0])
    time.sleep(1.5)
    pubs[0] = publish_ffmpeg(src, server.url("live/cam"))
    across.join(40)
    text = get(base + "/live/cam/index.m3u8")[1]
    check(text.count("#EXT-X-DISCONTINUITY\n") == 1, "the republish is one EXT-X-DISCONTINUITY")
    check(parse_playlist(text)["media_sequence"] >= msn_before, "media sequence numbers never go back")
    media = fmp4_fragments(across.media_bytes())
    # The new publication goes on where the old one ended, for both tracks with one offset (their
    # sync kept): a track that ended earlier than the other has a gap of less than a frame.
    gaps = [e for e in media["errors"] if "tfdt" in e and "previous sample ended at" in e]
    small = [e for e in gaps if 0 <= int(e.split("tfdt ")[1].split(",")[0]) - int(e.rsplit(" ", 1)[1]) < 9000]
    check(len(media["errors"]) == len(small) and len(small) <= 2,
          f"times stay continuous across the republish, one gap below 100 ms at most per track ({media['errors'][:3]})")
    check(len(media["video"]) >= 150, f"{len(media['video'])} video samples read across the republish")
    check(not checkers["across"].violations, f"no playlist violation across the republish ({checkers['across'].violations[:5]})")
    check(server.alive(), "the server is alive")
    for p in pubs:
        stop_proc(p)
    check(server.stop() == 0, "clean shutdown")
    print("PASS: HLS and LL-HLS")


main()
