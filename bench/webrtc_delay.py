#!/usr/bin/python3
"""bench/webrtc_delay.py: WebRTC delay on the release build, measured on the decoded pictures
(docs/benchmarks.md, "WebRTC delay", has the method and the latest figures; issue 36's bars:
glass-to-glass WHIP in, WHEP out p95 < 300 ms; RTMP in, WHEP out added delay p95 < 150 ms beyond
the GOP start).

  bench/webrtc_delay.py [--reps 3] [--glass-seconds 20] [--rtmp-seconds 20] [--audio-seconds 40]
                        [--phases glass,glass+audio,rtmp,rtmp+audio] [--no-build] [--out DIR]

Each repetition starts a fresh server (two worker loops, as the CI test) and measures, each with
a Chromium of its own (tests/integration/webrtc_glass_browser.js; the pattern, the paced RTMP
publisher and the analysis are tests/integration/webrtc_glass_test.py's):
  glass        a canvas showing performance.now() published over WHIP and played over WHEP in the
               same page: expectedDisplayTime - the time drawn (--glass-seconds);
  glass+audio  the same with an oscillator's audio track published beside it (Opus -> AAC in the
               hub -> Opus to the player);
  rtmp         an H.264 FLV over RTMP (paced: each picture written at its timestamp, its send time
               recorded; 30 fps, keyframe every 2 s, ~1 Mb/s, no audio), joined 3.3 s after the
               publisher started (mid-GOP), played over WHEP: expectedDisplayTime - send time
               (--rtmp-seconds);
  rtmp+audio   the same FLV with AAC audio (the AAC -> Opus bridge), for --audio-seconds: Chromium
               syncs video to the audio, whose jitter buffer the GOP cache's burst fills; the second
               half of the window is reported apart as "steady".
Only live frames count (drawn or sent after the WHEP connection was up): the GOP cache's frames
are old by design and are shown apart. The figures are nearest-rank percentiles of each run,
then the median of the runs.

Sluice is the working tree's release build: `flock /tmp/sluice-release.lock make release` (the
lock other benches take), then copied so that a concurrent rebuild cannot change it mid-run;
--no-build takes build/release as it is; SLUICE_BIN names another binary. Chromium drives through
playwright-core from a test build's web/node_modules (SLUICE_NODE_MODULES, or build/asan's; copied
into --out first).
Results (every frame of every run, JSON) go to --out (default /tmp/sluice-webrtc-delay-DATE).
BENCH_NICE (e.g. -10): the bench and everything it starts (server, Chromium, publishers) at that
nice level, on a machine shared with CPU-bound work of others (the report says so), as
bench/srt.sh does. Each run prints the stalls of the machine and of the page that fell in it.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import common  # noqa: E402
import webrtc_glass_test as glass  # noqa: E402
from srt_tools import free_udp_port  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--glass-seconds", type=int, default=20)
ap.add_argument("--rtmp-seconds", type=int, default=20)
ap.add_argument("--audio-seconds", type=int, default=40)
ap.add_argument("--no-build", action="store_true")
ap.add_argument("--out", default="")
ap.add_argument("--phases", default="glass,glass+audio,rtmp,rtmp+audio",
                help="the phases to run, comma-separated (default: all four)")
args = ap.parse_args()
phases = set(args.phases.split(","))

if os.environ.get("BENCH_NICE"):
    os.setpriority(os.PRIO_PROCESS, 0, int(os.environ["BENCH_NICE"]))
out = args.out or f"/tmp/sluice-webrtc-delay-{time.strftime('%Y%m%d-%H%M%S')}"
os.makedirs(out, exist_ok=True)
work = os.path.join(out, "bin")
os.makedirs(os.path.join(work, "server"), exist_ok=True)

sluice = os.environ.get("SLUICE_BIN")
if not sluice:
    if not args.no_build:
        print("webrtc_delay: make release (flock /tmp/sluice-release.lock)", flush=True)
        subprocess.run(["flock", "/tmp/sluice-release.lock", "make", "release"], cwd=ROOT, check=True)
    sluice = os.path.join(ROOT, "build", "release", "server", "sluice")
shutil.copy2(sluice, os.path.join(work, "server", "sluice"))
common.BUILD_DIR = work  # Server() starts BUILD_DIR/server/sluice
node_modules = os.environ.get("SLUICE_NODE_MODULES") or glass.find_node_modules(
    os.path.join(ROOT, "build", "asan"), os.path.join(ROOT, "build", "release"))
if not node_modules:
    sys.exit("webrtc_delay: no playwright-core: set SLUICE_NODE_MODULES to a test build's web/node_modules")
# A copy (it has no dependencies of its own): a rebuild of that test build reinstalls its
# node_modules, and the runs after it would find none.
shutil.copytree(os.path.join(node_modules, "playwright-core"), os.path.join(out, "node_modules", "playwright-core"),
                dirs_exist_ok=True)
node_modules = os.path.join(out, "node_modules")

commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", "server", "media",
                        "protocol", "base", "config"], capture_output=True, text=True).stdout.strip()
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
chromium = subprocess.run([shutil.which("chromium") or "chromium", "--version"], capture_output=True,
                          text=True).stdout.strip()
meta = {"sluice": commit + (" (server tree modified)" if dirty else ""), "machine": f"{os.cpu_count()} cores, {cpu}",
        "chromium": chromium, "reps": args.reps, "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "load_start": open("/proc/loadavg").read().split()[:3], "nice": os.getpriority(os.PRIO_PROCESS, 0)}
print("webrtc_delay: " + json.dumps(meta), flush=True)

flv = glass.make_index_flv(os.path.join(out, "index.flv"), 20)
flv_audio = glass.make_index_flv(os.path.join(out, "index-audio.flv"), 20, audio=True)


def browser(base, phases, seconds):
    results, err = glass.run_browser(base, node_modules, phases, seconds + 60)
    if not results:
        print(f"webrtc_delay: the browser printed nothing: {err}", flush=True)
    return results


def figures(label, r, a, seconds, watch, publisher=None):
    stalls = glass.stalls_in(r, watch)
    glass.report(label, r, a, seconds, stalls)
    f = {"live": glass.summary(a["live"]), "receive": glass.summary(a["live_receive"]), "presented": a["presented"],
         "unreadable": a["unreadable"], "unknown": a["unknown"], "backwards": a["backwards"],
         "cached": len(a["cached"]), "cached_oldest": max(a["cached"], default=0), "stalls": stalls}
    if publisher is not None:
        late = publisher.lateness(r)
        f["sender_late_p99"] = round(glass.percentile(late, 99), 1)
        f["sender_late_max"] = round(max(late), 1)
    w = (r.get("whep") or {}).get("stats") or {}
    st = w.get("in") or {}
    emitted = max(st.get("jitterBufferEmittedCount", 1), 1)
    f["jitter_buffer_ms"] = round(1000 * st.get("jitterBufferDelay", 0) / emitted, 1)
    au = w.get("audio") or {}
    if au.get("jitterBufferEmittedCount"):
        f["audio_jitter_buffer_ms"] = round(1000 * au["jitterBufferDelay"] / au["jitterBufferEmittedCount"], 1)
    return f


def steady(r, a, publisher):
    """The live frames of the window's second half."""
    frames = r.get("frames") or []
    if not frames:
        return glass.summary([])
    half = dict(r)
    cut = frames[0][1] + (frames[-1][1] - frames[0][1]) / 2
    half["frames"] = [f for f in frames if f[1] >= cut]
    return glass.summary(glass.analyse(half, publisher)["live"])


def server_figures(log):
    """From the server's log: each WebRTC session's time from ICE to DTLS connected, in the order
    they came (the first of a process also runs srtp_init, which loads NSS), and the timestamp
    jumps it closed up."""
    import datetime
    ice, gaps = {}, []
    for line in log.splitlines():
        if "event=ice_connected" not in line and "event=dtls_connected" not in line:
            continue
        t = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f").timestamp()
        sid = next((w.split("=", 1)[1] for w in line.split() if w.startswith("webrtc=")), None)
        if "event=ice_connected" in line:
            ice.setdefault(sid, t)
        elif sid in ice:
            gaps.append(round(1000 * (t - ice[sid])))
    return {"ice_to_dtls_ms": gaps, "timestamp_jumps": log.count("event=timestamp_jump ")}


runs = []
for rep in range(1, args.reps + 1):
    hport, uport = common.free_port(), free_udp_port(2)
    server = common.Server(f"webrtc-delay-{rep}", extra_yaml=glass.server_yaml(hport, uport)).start()
    common.wait_port(hport)
    base = f"http://127.0.0.1:{hport}"
    run = {"rep": rep, "load": open("/proc/loadavg").read().split()[:3]}
    watch = glass.StallWatch()
    watch.start()
    print(f"webrtc_delay: repetition {rep}, load {' '.join(run['load'])}", flush=True)
    res = browser(base, [f"glass:live/glass:{args.glass_seconds}"], args.glass_seconds) if "glass" in phases else None
    if res:
        run["glass"] = figures("glass", res[0], glass.analyse(res[0]), args.glass_seconds, watch)
    res = None
    if "glass+audio" in phases:
        res = browser(base, [f"glass:live/glassa:{args.glass_seconds}:audio"], args.glass_seconds)
    if res:
        a = glass.analyse(res[0])
        run["glass+audio"] = figures("glass+audio", res[0], a, args.glass_seconds, watch)
        run["glass+audio"]["steady"] = steady(res[0], a, None)
    for name, media, seconds in (("rtmp", flv, args.rtmp_seconds), ("rtmp+audio", flv_audio, args.audio_seconds)):
        if name not in phases:
            continue
        stream = "live/" + name.replace("+", "")
        pub = glass.PacedPublisher(server.port, stream, media)
        pub.start()
        time.sleep(3.3)  # joined mid-GOP: the cache holds 1.3 s
        res = browser(base, [f"play:{stream}:{seconds}"], seconds)
        pub.stop()
        if pub.error:
            print(f"webrtc_delay: the publisher of {stream} failed: {pub.error}", flush=True)
        if res:
            a = glass.analyse(res[0], pub)
            run[name] = figures(name, res[0], a, seconds, watch, pub)
            run[name]["steady"] = steady(res[0], a, pub)
        with open(os.path.join(out, f"{name}-{rep}.json"), "w") as f:
            json.dump({"result": res, "sent": pub.sent}, f)
    watch.stop()
    server.stop()
    shutil.copy(server.log_path, os.path.join(out, f"server-{rep}.log"))
    run["server"] = server_figures(server.log_text())
    print(f"webrtc_delay: server: {json.dumps(run['server'])}", flush=True)
    runs.append(run)
    with open(os.path.join(out, "runs.json"), "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)


def med(scenario, key, part="live"):
    vals = [r[scenario][part][key] for r in runs if scenario in r and key in r[scenario].get(part, {})]
    return f"{statistics.median(vals):.0f}" if vals else "-"


print(f"\nWebRTC delay, ms: medians of {args.reps} runs of each run's percentiles (live frames only); "
      f"sluice {meta['sluice']}, {meta['machine']}, {chromium}")
print("| scenario | window | p50 | p95 | p99 | max | to the browser's receipt p50 / p95 | second half p50 / p95 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
windows = {"glass": args.glass_seconds, "glass+audio": args.glass_seconds, "rtmp": args.rtmp_seconds,
           "rtmp+audio": args.audio_seconds}
for s in ("glass", "glass+audio", "rtmp", "rtmp+audio"):
    half = f"{med(s, 'p50', 'steady')} / {med(s, 'p95', 'steady')}" if s.endswith("audio") or s == "rtmp" else "-"
    print(f"| {s} | {windows[s]} s | {med(s, 'p50')} | {med(s, 'p95')} | {med(s, 'p99')} | {med(s, 'max')} | "
          f"{med(s, 'p50', 'receive')} / {med(s, 'p95', 'receive')} | {half} |")
print("per run: " + json.dumps(runs))
print(f"(every frame of every run: {out})")
