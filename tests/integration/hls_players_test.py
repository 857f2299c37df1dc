#!/usr/bin/python3
"""HLS played by real players: GStreamer, VLC and hls.js in the built-in page (headless Chromium).

ffmpeg publishes a 1 s-GOP 320x240 H.264/AAC stream to three apps, one per HLS variant: `ll`
(low-latency: fMP4, 2 s segments, 200 ms parts), `fm` (fmp4, 1 s segments) and `ts` (mpegts, 1 s
segments). While they run, at the same time:
  - GStreamer (playbin with hlsdemux) plays the mpegts variant to fakesinks that print every
    decoded buffer: 320x240 frames come out, video timestamps step 40 ms
    with neither gap nor repeat across segment (and part) boundaries, audio runs without a hole, no
    element posts an error;
  - VLC (cvlc, its adaptive demuxer) records each variant to Matroska for some seconds: ffprobe
    finds video with 40 ms timestamp steps and audio, ffmpeg decodes it without an error, and for
    the fMP4 variants the video packets are byte for byte a contiguous run of the publisher's;
  - the built-in page (web/app.js with hls.js) plays each variant after a click on the stream's
    "Play HLS" button: the <video> shows 320x240 and its currentTime advances as fast as wall time,
    hls.js reports no ERROR event, no request fails; for `ll` hls.js uses blocking reloads and parts
    and plays less than 2 s behind the live edge (hls.latency), and less than 2.5 s behind the wall
    clock of the frames (EXT-X-PROGRAM-DATE-TIME, which the server takes from its clock).
The measured figures are printed (INFO lines)."""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

PLAY_S = 9  # how long each player plays
SEEK_BACK_S = 1.5  # how far the LL-HLS page is put behind, 2 s after its start


require_tools("ffmpeg", "ffprobe", "gst-launch-1.0", "gst-inspect-1.0", "cvlc", "node", "chromium")
node_modules = os.path.join(BUILD_DIR, "web", "node_modules")
if not os.path.isfile(os.path.join(node_modules, "playwright-core", "package.json")):
    fail(f"playwright-core is not installed in {node_modules} (the build's npm ci installs it with SLUICE_TESTS=ON)")
for element in ("hlsdemux", "playbin", "avdec_h264"):
    if subprocess.run(["gst-inspect-1.0", "--exists", element]).returncode != 0:
        skip(f"GStreamer element {element} is missing (run tools/install-deps.sh test)")


# ---- GStreamer ----

SINK_TIMES = re.compile(r"gst_base_sink_chain_unlocked:<vsink> got times start: (\d+):(\d+):(\d+\.\d+)")
GST_BUFFER = re.compile(r"\((vsink|asink):sink\) \((\d+) bytes, dts: [^,]+, pts: (\d+):(\d+):(\d+\.\d+), "
                        r"duration: (?:(\d+):(\d+):(\d+\.\d+)|none)")


def gst_play(url, log_path, legacy=False):
    """playbin3 on url with fakesinks that print each buffer; legacy: playbin with hlsdemux instead."""
    # basesink's debug line for every buffer a sink gets, written in the streaming thread: the
    # record of the video frames (gst-launch -v's prints of last-message can skip one).
    env = dict(os.environ, GST_DEBUG="basesink:5", GST_DEBUG_NO_COLOR="1")
    if legacy:
        env["GST_PLUGIN_FEATURE_RANK"] = "hlsdemux2:NONE,hlsdemux:MAX"
    # hlsdemux is not "streams-aware", which playbin3 requires: it plays under playbin.
    cmd = ["gst-launch-1.0", "-v", "playbin" if legacy else "playbin3", "uri=" + url,
           "video-sink=fakesink name=vsink sync=true silent=false",
           "audio-sink=fakesink name=asink sync=true silent=false"]
    return subprocess.Popen(cmd, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, env=env)


def gst_result(log_path):
    text = open(log_path, errors="replace").read()
    video, audio = [], []
    for m in GST_BUFFER.finditer(text):
        pts = int(m.group(3)) * 3600 + int(m.group(4)) * 60 + float(m.group(5))
        dur = int(m.group(6)) * 3600 + int(m.group(7)) * 60 + float(m.group(8)) if m.group(6) else None
        (video if m.group(1) == "vsink" else audio).append((pts, dur, int(m.group(2))))
    video_times = [int(h) * 3600 + int(m) * 60 + float(sec) for h, m, sec in SINK_TIMES.findall(text)]
    demuxers = sorted(set(re.findall(r"Gst(HLSDemux2?)", text)))
    errors = [line for line in text.splitlines() if line.startswith("ERROR") or "GST_MESSAGE_ERROR" in line]
    # The sink's caps, from basesink's debug line for the caps event it received (written in the
    # streaming thread, like the buffer lines): gst-launch -v's prints of the pad's caps and of the
    # sink's last-message come through deep-notify, which dropped both in a CI run with 199 frames.
    caps = re.search(r"gst_base_sink_event:<vsink> received event [^\n]*?caps=\(GstCaps\)\"(video/x-raw[^\"]*)",
                     text)
    decoded = re.findall(r"avdec_h264[^\n]*\.GstPad:src: caps = (video/x-raw[^\n]*)", text)
    return {"video": video, "video_times": video_times, "audio": audio, "demuxers": demuxers, "errors": errors,
            "caps": caps.group(1).replace("\\", "") if caps else "", "decoder_caps": decoded[:1]}


def check_gst(name, r, want_demuxer):
    check(not r["errors"], f"gst {name}: no error ({r['errors'][:2]})")
    check(r["demuxers"] == [want_demuxer], f"gst {name}: played by {want_demuxer} ({r['demuxers']})")
    check("width=(int)320" in r["caps"] and "height=(int)240" in r["caps"],
          f"gst {name}: decoded 320x240 frames (sink caps {r['caps'][:80]!r}, decoder {r['decoder_caps']}, "
          f"{len(r['video'])} video buffers printed)")
    # The video sink's every buffer, from basesink's debug line (gst-launch -v's prints of a
    # fakesink's last-message come from a notify that can skip a buffer: they once missed 4 of 192
    # with no frame lost). So every step is one frame: a lost or repeated frame or segment fails.
    raw = r["video_times"]
    check(len(raw) >= 25 * 5, f"gst {name}: {len(raw)} video frames decoded (>= 125)")
    back = [(i, round(b - a, 3)) for i, (a, b) in enumerate(zip(raw, raw[1:])) if b < a - 0.001]
    check(not back, f"gst {name}: video timestamps never go back ({back[:5]})")
    steps = [round((b - a) * 1000) for a, b in zip(raw, raw[1:])]
    bad = [(i, s) for i, s in enumerate(steps) if s != 40]
    check(not bad, f"gst {name}: video timestamps step 40 ms across segments ({bad[:5]} of {len(steps)} steps)")
    a = sorted(set(round(p, 4) for p, _, _ in r["audio"]))
    check(len(a) >= 40 * 5, f"gst {name}: {len(a)} audio buffers")
    holes = [round(p1 - p0, 3) for p0, p1 in zip(a, a[1:]) if p1 - p0 > 0.1]
    check(not holes, f"gst {name}: audio continuous, no hole above 100 ms ({holes[:5]})")
    span = raw[-1] - raw[0]
    print(f"INFO gst {name}: {len(raw)} frames, {span:.2f} s of video, {len(a)} audio buffers")
    return span


# ---- VLC ----

def vlc_record(url, out_path, seconds):
    """cvlc records url to a Matroska file for `seconds` of input. VLC refuses to run as root: then
    it runs as nobody (setpriv), with a HOME of its own and out_path in a folder it may write."""
    cmd = ["cvlc", "-q", "--no-video-title-show", "--play-and-exit", f"--run-time={seconds}", url,
           "--sout", f"#std{{access=file,mux=mkv,dst={out_path}}}"]
    home = os.path.dirname(out_path)
    env = dict(os.environ, HOME=home)
    if os.geteuid() == 0:
        os.chmod(home, 0o777)
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(out_path + ".log", "w"), env=env)


def probe_packets(path):
    """[(codec_type, pts seconds, md5, keyframe)] of every packet."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_packets", "-show_data_hash", "md5", "-show_entries",
                          "packet=codec_type,pts_time,flags,data_hash", "-of", "csv=p=0", path],
                         capture_output=True, text=True, timeout=60).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split(",")
        if len(parts) >= 4 and parts[1] not in ("", "N/A"):
            rows.append((parts[0], float(parts[1]), parts[3].replace("MD5:", ""), parts[2].startswith("K")))
    return rows


def check_vlc(name, path, src_video_hashes, same_bytes):
    check(os.path.exists(path) and os.path.getsize(path) > 10000,
          f"vlc {name}: wrote a recording ({os.path.getsize(path) if os.path.exists(path) else 0} bytes)")
    rows = probe_packets(path)
    video = [r for r in rows if r[0] == "video"]
    audio = [r for r in rows if r[0] == "audio"]
    check(len(video) >= 25 * 4, f"vlc {name}: {len(video)} video packets (>= 100)")
    check(len(audio) >= 40 * 4, f"vlc {name}: {len(audio)} audio packets")
    pts = sorted(r[1] for r in video)  # presentation order
    steps = [round((b - a) * 1000) for a, b in zip(pts, pts[1:])]
    bad = [(i, s) for i, s in enumerate(steps) if abs(s - 40) > 1]
    check(not bad, f"vlc {name}: video presentation times step 40 ms, no gap or repeat ({bad[:5]})")
    dec = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"], capture_output=True,
                         text=True, timeout=60)
    check(dec.returncode == 0 and not dec.stderr.strip(), f"vlc {name}: the recording decodes ({dec.stderr[-300:]})")
    if same_bytes:
        # VLC's Matroska muxer puts the parameter sets into keyframes: those differ from the
        # publisher's; every other packet is its packet at the same place of the run.
        first = next(i for i, r in enumerate(video) if not r[3])
        pos = src_video_hashes.index(video[first][2]) - first if video[first][2] in src_video_hashes else -1
        wrong = [i for i, r in enumerate(video) if not r[3] and (pos < 0 or pos + i >= len(src_video_hashes)
                                                                  or src_video_hashes[pos + i] != r[2])]
        keys = sum(1 for r in video if r[3])
        check(pos >= 0 and not wrong, f"vlc {name}: its {len(video) - keys} video packets between keyframes are the "
                                      f"publisher's, in order, byte for byte ({len(wrong)} differ)")
    print(f"INFO vlc {name}: {len(video)} video packets over {pts[-1] - pts[0]:.2f} s, {len(audio)} audio packets")


# ---- hls.js in the page ----

def check_page(name, r, low_latency):
    check(r.get("hlsLoaded"), f"page {name}: hls.js {r.get('hlsVersion')} is loaded and supported")
    last = r["last"] or {}
    check(r["firstFrameAfterS"] is not None, f"page {name}: the video starts ({r['firstFrameAfterS']} s after the click)")
    back = SEEK_BACK_S if "seekedBackAt" in r else 0
    kept_pace = r["advancedS"] >= PLAY_S - 0.5 and r["advancedS"] + back >= r["overWallS"] * 0.85
    if not kept_pace:  # where the time went: the page's samples, 4 a second
        print(f"INFO page {name}: seeked back at sample {r.get('seekedBackAt')} to {r.get('seekTarget')}")
        for s in r["samples"]:
            print(f"INFO page {name}: wall {s['wall']:6.2f} t {s['currentTime']:6.2f} buffered to "
                  f"{s['bufferedEnd']} ready {s['readyState']} waiting {s['waiting']} paused {s['paused']} "
                  f"rate {s['playbackRate']} latency {s['latency']}")
        print(f"INFO page {name}: hls.js events {r['hlsErrors'][:5]}")
    check(kept_pace,
          f"page {name}: currentTime advanced {r['advancedS']:.2f} s (+{back} s sought back) in "
          f"{r['overWallS']:.2f} s of wall time")
    check((last.get("videoWidth"), last.get("videoHeight")) == (320, 240), f"page {name}: the video is 320x240")
    after_seek = r.get("seekedBackAt", 0)
    times = [s["currentTime"] for s in r["samples"]]
    check(all(b >= a for a, b in zip(times[:after_seek], times[1:after_seek]))
          and all(b >= a for a, b in zip(times[after_seek:], times[after_seek + 1:])),
          f"page {name}: currentTime never goes back (but for the seek)")
    # One non-fatal stall nudge is tolerated: under the full suite on 2 cores, software decoding in
    # Chromium beside an ASan server can miss a deadline. Playback still has to keep pace with the
    # wall clock (the currentTime check above), and any other or any fatal error fails.
    nudges = [e for e in r["hlsErrors"] if not e.get("fatal") and e.get("details") in ("bufferNudgeOnStall",
                                                                                      "bufferStalledError")]
    # hls.js may also jump from 0 to the first buffered frame at the start of a live stream (its
    # media does not begin at 0): a start gap, reported as bufferSeekOverHole "seeking from 0 to".
    # A hole anywhere later is an error.
    start_gap = [e for e in r["hlsErrors"] if not e.get("fatal") and e.get("details") == "bufferSeekOverHole"
                 and (e.get("reason") or "").startswith("fragment loaded with buffer holes, seeking from 0 to")]
    others = [e for e in r["hlsErrors"] if e not in nudges and e not in start_gap]
    check(not others and len(nudges) <= 1 and len(start_gap) <= 1,
          f"page {name}: no hls.js ERROR event but one stall nudge and one start-gap jump at most ({r['hlsErrors'][:3]})")
    check(not r["pageErrors"] and not r["appErrors"] and not r["consoleErrors"],
          f"page {name}: no page error ({r['pageErrors'][:2]} {r['appErrors'][:2]} {r['consoleErrors'][:2]})")
    check(not r["failedRequests"] and not r["badResponses"],
          f"page {name}: no failed request ({r['failedRequests'][:2]} {r['badResponses'][:2]})")
    check(last.get("title", "").endswith("(HLS)") and "protocol=hls" in r.get("url", ""),
          f"page {name}: the page says it plays HLS ({last.get('title')}) and the address keeps it")
    played = [s for s in r["samples"][after_seek:] if s["currentTime"] > 0]
    settled = played[len(played) // 2:]  # the second half: hls.js has found its place
    lat = [s["latency"] for s in settled if s["latency"] is not None]
    wall = [s["wallLatency"] for s in settled if s["wallLatency"] is not None]
    check(len(lat) >= 5 and len(wall) >= 5, f"page {name}: hls.js reports its latency ({len(lat)} samples)")
    req = r["requests"]
    figures = (f"latency to the live edge median {statistics.median(lat):.2f} s (max {max(lat):.2f}, target "
               f"{settled[-1]['targetLatency']}), behind the wall clock median {statistics.median(wall):.2f} s; "
               f"first frame {r['firstFrameAfterS']:.2f} s after the click; stalls {r['stalls']}; requests {req}")
    print(f"INFO page {name}: {figures}")
    if low_latency:
        check(last.get("partTarget") and abs(last["partTarget"] - 0.2) < 0.01 and last.get("canBlockReload"),
              f"page {name}: hls.js sees the LL-HLS playlist (PART-TARGET {last.get('partTarget')}, blocking reload)")
        check(req["blocking"] >= 10 and req["parts"] >= 10,
              f"page {name}: hls.js plays it as LL-HLS ({req['blocking']} blocking reloads, {req['parts']} parts)")
        # The page was put SEEK_BACK_S further behind 2 s after its start: it is back near its
        # target only if it played faster meanwhile (hls.js maxLiveSyncPlaybackRate, web/app.js).
        seek = r.get("seekTarget") or {}
        check(any(a <= seek.get("to", -1) <= b for a, b in seek.get("ranges", [])),
              f"page {name}: the seek back lands inside what the page buffered ({seek})")
        rates = [s.get("playbackRate") or 1 for s in r["samples"][after_seek:]]
        check(after_seek > 0 and max(rates) > 1.05,
              f"page {name}: sought {SEEK_BACK_S} s back, it plays faster to catch up (up to {max(rates)}x)")
        check(statistics.median(lat) < 2.0 and max(lat) < 2.5,
              f"page {name}: {statistics.median(lat):.2f} s (median) behind the live edge, under 2 s")
        check(statistics.median(wall) < 2.5,
              f"page {name}: {statistics.median(wall):.2f} s (median) behind the frames' wall clock")
    else:
        check(req["segments"] >= 4 and req["parts"] == 0, f"page {name}: hls.js plays whole segments ({req})")
    return statistics.median(lat), statistics.median(wall)


def main():
    d = workdir("hls-players")
    src = make_media(os.path.join(d, "src.flv"), seconds=90, gop=25, size="320x240")
    src_video = [h for kind, _, h in ffprobe_packets(src) if kind == "video"]
    http_port = free_port()
    apps = ("  ll: { type: live, hls: { variant: low-latency, segment: 2s, part: 200ms } }\n"
            "  fm: { type: live, hls: { variant: fmp4, segment: 1s } }\n"
            "  ts: { type: live, hls: { variant: mpegts, segment: 1s } }\n")
    server = Server("hls-players", extra_yaml=f"http:\n  enabled: true\n  listen: 127.0.0.1:{http_port}\n",
                    apps=apps).start()
    base = f"http://127.0.0.1:{http_port}"
    pubs = [publish_ffmpeg(src, server.url(f"{app}/cam")) for app in ("ll", "fm", "ts")]
    procs = []

    def url(app):
        return f"{base}/{app}/cam/index.m3u8"

    try:
        time.sleep(2.5)  # a GOP or two in each stream's cache
        check(all(p.poll() is None for p in pubs), "three publishers are running")

        # hls.js in the page: one variant after the other, the low-latency one first.
        browser_out = {}

        def browser():
            specs = [{"stream": f"{app}/cam", "seconds": PLAY_S, **({"seekBackS": SEEK_BACK_S} if app == "ll" else {})}
                     for app in ("ll", "fm", "ts")]
            p = subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hls_page_browser.js"),
                                base, node_modules, shutil.which("chromium"), json.dumps(specs)],
                               capture_output=True, text=True, timeout=150)
            browser_out["proc"] = p
        bt = threading.Thread(target=browser)
        bt.start()

        # GStreamer and VLC, all variants at once, beside the browser.
        gst = {}
        # Only hlsdemux on MPEG-TS: on this GStreamer (1.22) hlsdemux2 never leaves buffering on a
        # live playlist under gst-launch (any variant), and hlsdemux starts no fMP4 live playlist
        # within the test's time (docs/hls.md, "Players").
        for name, app, legacy in (("ts-hlsdemux", "ts", True),):
            log = os.path.join(d, f"gst-{name}.log")
            gst[name] = (gst_play(url(app), log, legacy), log)
            procs.append(gst[name][0])
        vlc = {}
        for app in ("ll", "fm", "ts"):
            vdir = tempfile.mkdtemp(prefix="sluice-vlc-")  # not under d (0700): VLC may run as nobody
            out = os.path.join(vdir, f"{app}.mkv")
            vlc[app] = (vlc_record(url(app), out, PLAY_S), out)
            procs.append(vlc[app][0])

        time.sleep(PLAY_S + 5)
        for name, (p, _) in gst.items():
            check(p.poll() is None, f"gst {name} is still playing after {PLAY_S + 5} s")
            p.send_signal(signal.SIGINT)
        for name, (p, _) in gst.items():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for app, (p, _) in vlc.items():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                fail(f"vlc {app} did not stop after --run-time={PLAY_S}")
        bt.join(160)

        for name, (_, log) in gst.items():
            check_gst(name, gst_result(log), "HLSDemux" if name == "ts-hlsdemux" else "HLSDemux2")
        for app, (p, out) in vlc.items():
            if p.returncode != 0:
                print(open(out + ".log", errors="replace").read()[-2000:])
            check(p.returncode == 0, f"vlc {app}: exits 0 after --run-time")
            check_vlc(app, out, src_video, same_bytes=app in ("ll", "fm"))

        bp = browser_out.get("proc")
        check(bp is not None, "the browser driver ran")
        lines = [x for x in bp.stdout.splitlines() if x.startswith("[") or x.startswith("{")]
        try:
            results = json.loads(lines[-1])
        except (IndexError, ValueError):
            fail(f"the browser driver printed no result: rc {bp.returncode}\n{bp.stdout[-2000:]}\n{bp.stderr[-3000:]}")
        if isinstance(results, dict):
            fail("the browser driver failed: " + results.get("fatal", "?"))
        figures = {}
        for r in results:
            app = r["stream"].split("/")[0]
            figures[app] = check_page(app, r, low_latency=app == "ll")
        ll = figures["ll"]
        print(f"INFO hls.js LL-HLS latency: {ll[0]:.2f} s behind the live edge, {ll[1]:.2f} s behind the wall clock")
        check(all(p.poll() is None for p in pubs), "the publishers ran through")
        check(server.alive(), "the server is alive")
    finally:
        for p in procs + pubs:
            if p.poll() is None:
                p.kill()
                p.wait()
    check(server.stop() == 0, "clean shutdown")
    print("PASS: GStreamer, VLC and hls.js play HLS and LL-HLS")


main()
