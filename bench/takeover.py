#!/usr/bin/env python3
"""Publisher takeover under load (docs/live.md, "A second publisher of the same name").

One release server (workers: 2, the default on these machines, so takeovers cross loops half of the
time), PLAYERS RTMP players of live/t (sluice-bench play) and one rtmp-probe player that records every
video packet. TAKEOVERS times in a row: the current ffmpeg publisher is frozen with SIGSTOP (a network
drop: no FIN), and a new one publishes the same name, alternating between two sources that differ in
picture size and tone, so that every packet the probe gets names its publisher.

Reported, as the issue's bars ask:
- reconnect-to-live: from the new publisher's Publish accepted (the API's publisher.since_unix_ms) to its
  first frame at the probe (rtmp-probe --epoch), p50/p95/max over the first 20 takeovers and over all;
  bar p95 <= 300 ms over 20;
- players disconnected (sluice-bench's failed, the probe ending early) and frames interleaved (the
  probe's runs of packets: one run per publisher, in turn, each a contiguous run of its source); bar 0;
- the largest gap between two video frames at the probe, beside the time between freezing the old
  publisher and the new one's first frame (the reconnect itself), and the source's GOP (2 s).

Usage: bench/takeover.py [TAKEOVERS] [PLAYERS]  (defaults 100 200)
Environment: NO_BUILD=1 (use build/release as it is), INTERVAL (seconds per publisher, 3).
Prints the figures and writes WORK/takeover.json; the work dir is kept."""
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay_figures import fmt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "release")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def make_source(path, size, tone, seconds=60):
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    f"testsrc=size={size}:rate=25:duration={seconds}", "-f", "lavfi", "-i",
                    f"sine=frequency={tone}:duration={seconds}", "-vf", "noise=alls=20:allf=t", "-c:v", "libx264",
                    "-preset", "ultrafast", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-b:v", "1500k",
                    "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-f", "flv", path], check=True)
    return path


def video_md5s(path):
    """md5 of every non-sequence-header video tag body of an FLV file, in order."""
    data = open(path, "rb").read()
    off = int.from_bytes(data[5:9], "big") + 4
    out = []
    while off + 11 <= len(data):
        t = data[off] & 0x1F
        size = int.from_bytes(data[off + 1:off + 4], "big")
        body = data[off + 11:off + 11 + size]
        if len(body) < size:
            break
        if t == 9 and not ((body[0] & 0x0F) == 7 and body[1] == 0):
            out.append(hashlib.md5(body).hexdigest())
        off += 11 + size + 4
    return out


def api_stream(hport, name):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{hport}/api/v1/streams", timeout=2) as r:
            for s in json.loads(r.read()):
                if s.get("name") == name:
                    return s
    except OSError:
        pass
    return None


def quantile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def main():
    takeovers = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    players = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    interval = float(os.environ.get("INTERVAL", "3"))
    if os.environ.get("NO_BUILD") != "1":
        subprocess.run(["make", "-C", ROOT, "release"], check=True, stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="sluice-bench-takeover-")
    port, hport = free_port(), free_port()
    with open(f"{work}/sluice.yaml", "w") as f:
        f.write(f"workers: 2\nrtmp:\n  listen: 127.0.0.1:{port}\nhttp: {{ listen: 127.0.0.1:{hport} }}\n"
                "apps:\n  live: { type: live }\nlog:\n  level: warn\n")
    sources = [make_source(f"{work}/a.flv", "640x360", 440), make_source(f"{work}/b.flv", "704x396", 660)]
    owner = {}
    for i, src in enumerate(sources):
        for m in video_md5s(src):
            owner.setdefault(m, i)
    log = open(f"{work}/server.log", "w")
    server = subprocess.Popen([f"{BIN}/server/sluice", "--config", f"{work}/sluice.yaml"], stdout=log,
                              stderr=subprocess.STDOUT)
    procs, publishers = [], []
    try:
        assert wait_port(port) and wait_port(hport), "the server did not start"
        url = f"rtmp://127.0.0.1:{port}/live/t"
        # Each takeover also waits for the API to show the new publisher (about 0.3 s): counted, with room.
        seconds = int(takeovers * (interval + 1) + 15)

        def publish(i):
            p = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-stream_loop", "-1", "-i",
                                  sources[i % 2], "-c", "copy", "-f", "flv", url], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            procs.append(p)
            publishers.append(p)
            return p

        current = publish(0)
        time.sleep(2)
        bench = subprocess.Popen([f"{BIN}/bench/load/sluice-bench", "play", "-n", str(players), "--rate", "200", "-d",
                                  str(seconds), "-q", "--json", f"{work}/play.json", url],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe_out = open(f"{work}/probe.txt", "w")
        probe = subprocess.Popen([f"{BIN}/tools/rtmp-probe", url, "--duration", str(seconds), "--epoch"],
                                 stdout=probe_out)
        procs += [bench, probe]
        time.sleep(4)
        events = []  # per takeover: when the old one froze, when the new one was accepted
        for n in range(1, takeovers + 1):
            current.send_signal(signal.SIGSTOP)
            frozen = time.time()
            current = publish(n)
            accepted = None
            end = time.time() + 10
            while time.time() < end:
                s = api_stream(hport, "live/t") or {}
                if s.get("takeovers") == n and s.get("publisher"):
                    accepted = s["publisher"]["since_unix_ms"] / 1000
                    break
                time.sleep(0.05)
            events.append({"n": n, "frozen": frozen, "accepted": accepted})
            print(f"  takeover {n}: accepted {fmt(accepted and accepted - frozen, '.3f')} s after the freeze",
                  flush=True)
            # The frozen one wakes up: what it sends now must reach nobody (its publisher is gone, its
            # connection closes within two seconds), and it exits.
            for p in publishers[:-1]:
                if p.poll() is None:
                    p.send_signal(signal.SIGCONT)
            time.sleep(interval)
        bench.wait(timeout=seconds + 60)
        probe.wait(timeout=seconds + 60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
                p.wait()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)

    lines = open(f"{work}/probe.txt").read().splitlines()
    play_sent = next(int(l.split("epoch_ms=")[1]) for l in lines if l.startswith("play ")) / 1000
    frames = []  # (wall time, source index or None)
    for l in lines:
        if not l.startswith("video "):
            continue
        f = dict(p.split("=", 1) for p in l.split()[2:] if "=" in p)
        if f.get("seq") == "1":
            continue
        frames.append((play_sent + int(l.split()[1].lstrip("+")) / 1000, owner.get(f["md5"])))
    runs = []  # [source, first frame time, count]
    for t, src in frames:
        if not runs or runs[-1][0] != src:
            runs.append([src, t, 0])
        runs[-1][2] += 1
    expected = [n % 2 for n in range(runs[0][0] if runs else 0, takeovers + 1)]
    unknown = sum(1 for _, s in frames if s is None)
    interleaved = max(0, len(runs) - (takeovers + 1)) + unknown
    live = []
    for ev, run in zip(events, runs[1:]):
        if ev["accepted"] is not None:
            live.append((run[1] - ev["accepted"]) * 1000)
    gaps = [(b[0] - a[0]) * 1000 for a, b in zip(frames, frames[1:])]
    play = json.load(open(f"{work}/play.json")).get("players", {})
    probe_end = lines[-1] if lines else ""
    result = {
        "takeovers": takeovers, "players": players, "interval_s": interval,
        "reconnect_to_live_ms": {"first20": {"p50": quantile(live[:20], 0.5), "p95": quantile(live[:20], 0.95),
                                             "max": max(live[:20], default=None)},
                                 "all": {"p50": quantile(live, 0.5), "p95": quantile(live, 0.95),
                                         "max": max(live, default=None), "n": len(live)}},
        "runs": len(runs), "runs_as_expected": [r[0] for r in runs] == expected[:len(runs)],
        "interleaved_or_unknown_frames": interleaved,
        "players_failed": play.get("failed"), "players_ok": play.get("ok"), "stalls": play.get("stalls"),
        "probe_end": probe_end, "max_gap_ms": max(gaps, default=None),
        "freeze_to_accept_ms_max": max(((e["accepted"] - e["frozen"]) * 1000 for e in events if e["accepted"]),
                                       default=None),
    }
    with open(f"{work}/takeover.json", "w") as f:
        json.dump(result, f, indent=2)
    r = result["reconnect_to_live_ms"]
    print(f"\nreconnect-to-live (accept -> first frame at a player), ms: first 20 p50 {fmt(r['first20']['p50'], '.0f')} "
          f"p95 {fmt(r['first20']['p95'], '.0f')} max {fmt(r['first20']['max'], '.0f')} (bar p95 <= 300); "
          f"all {r['all']['n']}: p50 {fmt(r['all']['p50'], '.0f')} p95 {fmt(r['all']['p95'], '.0f')} "
          f"max {fmt(r['all']['max'], '.0f')}")
    print(f"players: {result['players_ok']} ok, {result['players_failed']} failed, {result['stalls']} stalls; "
          f"probe: {probe_end}")
    print(f"probe runs: {result['runs']} (expected {takeovers + 1}, in turn: {result['runs_as_expected']}); "
          f"interleaved or unknown frames: {interleaved} (bar 0)")
    print(f"largest gap between video frames at the probe: {fmt(result['max_gap_ms'], '.0f')} ms; freeze to the "
          f"new publisher's accept, at most {fmt(result['freeze_to_accept_ms_max'], '.0f')} ms; GOP 2000 ms")
    print(f"work dir: {work}")


if __name__ == "__main__":
    main()
