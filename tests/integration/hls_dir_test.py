#!/usr/bin/python3
"""HLS written to a directory as well (apps.NAME.hls.dir), for a CDN origin (docs/hls.md).

ffmpeg publishes to an MPEG-TS app and an LL-HLS (fMP4) app that both have `dir`; nobody asks the
server for HLS. Then:
  - the files appear anyway (dir starts the muxer at publish);
  - each on-disk playlist passes the RFC 8216 checker of hls_tools.py, lists only segments that
    exist, and has no parts (a standard playlist);
  - every listed segment file is byte for byte what the HTTP side serves under the same name,
    and the fMP4 app's init segment too;
  - old segments are removed as the window moves (at most window + 2 on disk);
  - ffmpeg reads the on-disk playlist as a file and its video packets are the publisher's;
  - files of these names left by an earlier run are removed at start, other files are kept;
  - a stream whose directory cannot be made logs hls_write_failed and is still served from memory.
"""
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from hls_tools import PlaylistChecker, parse_playlist  # noqa: E402

require_tools("ffmpeg", "ffprobe")


def fetch(url):
    with urllib.request.urlopen(url, timeout=15) as r:
        return r.read()


def listed_files(stream_dir):
    text = open(os.path.join(stream_dir, "index.m3u8")).read()
    return text, parse_playlist(text)


def main():
    d = workdir("hls_dir")
    src = make_media(os.path.join(d, "src.flv"), seconds=30, gop=25)
    out = os.path.join(d, "hls")
    # An earlier run's leftovers, and a file of the user's that must stay.
    ts_dir = os.path.join(out, "ts", "cam")
    os.makedirs(ts_dir)
    for name in ("seg999.ts", "index.m3u8.tmp", "notes.txt"):
        open(os.path.join(ts_dir, name), "w").write("old")
    # A regular file where the stream "ll/bad" would need a directory.
    os.makedirs(os.path.join(out, "ll"))
    open(os.path.join(out, "ll", "bad"), "w").write("in the way")

    http_port = free_port()
    apps = (f"  ts: {{ type: live, hls: {{ variant: mpegts, segment: 1s, window: 3, dir: {out} }} }}\n"
            f"  ll: {{ type: live, hls: {{ variant: low-latency, segment: 1s, part: 250ms, window: 3, dir: {out} }} }}\n")
    server = Server("hls_dir", extra_yaml=f"http:\n  enabled: true\n  listen: 127.0.0.1:{http_port}\n", apps=apps).start()
    base = f"http://127.0.0.1:{http_port}"
    pubs = [publish_ffmpeg(src, server.url("ts/cam")), publish_ffmpeg(src, server.url("ll/cam")),
            publish_ffmpeg(src, server.url("ll/bad"))]

    ll_dir = os.path.join(out, "ll", "cam")
    check(wait_for(lambda: os.path.exists(os.path.join(ts_dir, "index.m3u8"))
                   and os.path.exists(os.path.join(ll_dir, "index.m3u8")), 10),
          "the playlists are written without any HTTP request")
    check(not os.path.exists(os.path.join(ts_dir, "seg999.ts")) and not os.path.exists(os.path.join(ts_dir, "index.m3u8.tmp")),
          "an earlier run's segment and temporary file are removed")
    check(open(os.path.join(ts_dir, "notes.txt")).read() == "old", "a file of another name is kept")

    time.sleep(7)  # several window lengths: old segments must have gone
    checker = PlaylistChecker()
    for app, stream_dir, ext in (("ts", ts_dir, ".ts"), ("ll", ll_dir, ".m4s")):
        text, pl = listed_files(stream_dir)
        violations = checker.check(text, f"{app}/index.m3u8")
        check(not violations, f"{app}: the on-disk playlist follows RFC 8216 ({violations[:3]})")
        check(pl["part_inf"] is None and not pl["trailing_parts"] and pl["preload_hint"] is None,
              f"{app}: the on-disk playlist is a standard one, without parts")
        check(len(pl["segments"]) == 3, f"{app}: it lists the window of 3 segments ({len(pl['segments'])})")
        segs = sorted(n for n in os.listdir(stream_dir) if n.startswith("seg") and n.endswith(ext))
        check(len(segs) <= 5, f"{app}: old segments are removed ({len(segs)} on disk: {segs})")
        for s in pl["segments"]:
            on_disk = open(os.path.join(stream_dir, s["uri"]), "rb").read()
            served = fetch(f"{base}/{app}/cam/{s['uri']}")
            check(on_disk == served and len(on_disk) > 1000,
                  f"{app}: {s['uri']} on disk is what HTTP serves ({len(on_disk)} bytes)")
        if app == "ll":
            init = pl["segments"][0]["map"]
            check(init and open(os.path.join(stream_dir, init), "rb").read() == fetch(f"{base}/ll/cam/{init}"),
                  f"ll: the init segment {init} on disk is the served one")

    # ffmpeg reads the on-disk LL app's playlist as files: its video packets are the publisher's.
    # A live playlist (no ENDLIST): ffmpeg reads 4 s of it.
    probe_out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", os.path.join(ll_dir, "index.m3u8"),
                                "-t", "4", "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"],
                               capture_output=True, text=True, timeout=60)
    got = [ln.split(",")[-1].strip() for ln in probe_out.stdout.splitlines() if ln and not ln.startswith("#")]
    src_out = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", src, "-map", "0:v", "-c", "copy",
                              "-f", "framemd5", "-"], capture_output=True, text=True, timeout=60)
    want = [ln.split(",")[-1].strip() for ln in src_out.stdout.splitlines() if ln and not ln.startswith("#")]
    check(probe_out.returncode == 0 and len(got) >= 50 and contiguous_in(got, want) >= 0,
          f"ffmpeg reads the on-disk LL app's playlist: {len(got)} video packets, the publisher's in order "
          f"({probe_out.stderr[-200:]})")

    # The stream that cannot be written is still served from memory.
    check("event=hls_write_failed stream=ll/bad" in server.log_text(), "the unwritable stream logs hls_write_failed")
    pl = parse_playlist(fetch(f"{base}/ll/bad/index.m3u8").decode())
    seg = fetch(f"{base}/ll/bad/{pl['segments'][-1]['uri']}")
    check(len(pl["segments"]) >= 1 and len(seg) > 1000, "the unwritable stream is served over HTTP all the same")

    for p in pubs:
        stop_proc(p)
    check(server.alive(), "the server is alive")
    check(server.stop() == 0, "clean shutdown")
    print("PASS: HLS to a directory")


main()
