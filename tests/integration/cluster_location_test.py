#!/usr/bin/python3
"""Playing a stream on a node that does not own it (docs/cluster.md, "Location"): a real
redis-server and three Sluice nodes (two loops each) started here, ffmpeg publishing on A.

- Plays need signed URLs on every node; B and C pull A's stream with the internal token, which A
  admits without a signature, while an unsigned play on A (or one with a wrong token) is refused.
- ffmpeg on B (RTMP) and curl on C (HTTP-FLV) get A's packets byte for byte; 60 players spread
  over B and C still make exactly one pull per node (A sees two players of the stream).
- Time from a play on a non-owner node to its first frame, with sluice-bench, on fresh streams.
- Redis is killed and restarted: a player on B never stalls, A claims the stream again.
- A is killed (-9): a player on B is told (UnpublishNotify) and stays; the publisher comes back on
  C once A's lease expired; the waiting player gets the stream again and a new play on B works
  within lease + a few seconds.
- The pulls end once their last player left."""
import hashlib
import hmac
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from cluster_ownership_test import Redis, PASSWORD  # noqa: E402

require_tools("ffmpeg", "curl", "redis-server", "redis-cli")

LEASE_S = 2
SECRET = "play-secret-0123456789"
TOKEN = "internal/token+=%&"  # needs escaping in a query


def signed(path):
    app, stream = path.split("/", 1)
    expires = int(time.time()) + 3600
    sig = hmac.new(SECRET.encode(), f"play\n{app}\n{stream}\n{expires}".encode(), hashlib.sha256).hexdigest()
    return f"{path}?expires={expires}&sign={sig}"


def node(name, redis, http_port, token=TOKEN):
    port = free_port()
    yaml = (f"workers: 2\nhttp:\n  listen: 127.0.0.1:{http_port}\n"
            f"cluster:\n  registry: redis://127.0.0.1:{redis.port}/1\n  node_id: {name}\n"
            f"  advertise: rtmp://127.0.0.1:{port}\n  password: {PASSWORD}\n  token: \"{token}\"\n"
            f"  lease: {LEASE_S}s\n")
    apps = f"  live:\n    type: live\n    gop_cache: true\n    hls: {{ enabled: true, idle_close: 5s }}\n    play:\n      signed: {{ secret: {SECRET} }}\n"
    return Server(f"cluster-loc-{name}", extra_yaml=yaml, apps=apps, port=port).start()


def get(http_port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}{path}", timeout=5) as r:
        return json.loads(r.read())


def players_of(http_port, key):
    return [c for c in get(http_port, "/api/v1/clients") if key in c.get("playing", [])]


def pulls(http_port):
    return get(http_port, "/api/v1/relays")["pull"]


def record(url, seconds, out):
    return subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", url, "-t", str(seconds), "-c", "copy",
                             "-f", "flv", "-y", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def main():
    d = workdir("cluster-location")
    src = make_media(os.path.join(d, "src.flv"), seconds=60)
    source_tags = flv_tags(src)
    bench = binary("bench/load/sluice-bench")
    redis = Redis(d).start()
    ha, hb, hc = free_port(), free_port(), free_port()
    a, b, c = node("a", redis, ha), node("b", redis, hb), node("c", redis, hc)
    check(wait_for(lambda: all(get(h, "/api/v1/server")["cluster"]["connected"] for h in (ha, hb, hc)), 10),
          "the three nodes are connected to the registry")

    pub = publish_ffmpeg(src, a.url("live/cam"))
    check(wait_for(lambda: redis.cli("GET", "sluice:stream:live/cam").startswith("a "), 10), "A owns live/cam")
    time.sleep(1)

    # The owner's own rules still hold for everybody else.
    lines = probe(a.url("live/cam"), "--duration", "2", timeout=10)
    check(any("NetStream.Play.Failed" in l or "Unauthorized" in l for l in lines) and not probe_events(lines, "video"),
          "an unsigned play on A is refused")
    wrong = probe(a.url("live/cam?sluice_cluster_token=wrong"), "--duration", "2", timeout=10)
    check(not probe_events(wrong, "video"), "a play with a wrong cluster token is refused too")

    # B over RTMP (ffmpeg), C over HTTP-FLV (curl): A's packets.
    out_b, out_c = os.path.join(d, "b.flv"), os.path.join(d, "c.flv")
    t0 = time.time()
    rec_b = record(b.url(signed("live/cam")), 6, out_b)
    curl_c = subprocess.Popen(["curl", "-s", "-m", "8", "-o", out_c, f"http://127.0.0.1:{hc}/{signed('live/cam')}".replace("/live/cam?", "/live/cam.flv?")])
    check(rec_b.wait(timeout=40) == 0, f"ffmpeg plays A's stream from B ({rec_b.stderr.read().decode()[-300:]})")
    print(f"ffmpeg on B done {time.time() - t0:.1f} s after its play")
    curl_c.wait(timeout=20)
    check_same_packets("RTMP on B", out_b, source_tags, min_video=100, min_audio=100)
    check_same_packets("HTTP-FLV on C", out_c, source_tags, min_video=100, min_audio=100)
    check(any(p["cluster"] and p["upstream"] == a.url("live") for p in pulls(hb)),
          f"B's pull names A as its upstream ({pulls(hb)})")

    # Many players on both loops of B and C: one pull per node.
    js_b, js_c = os.path.join(d, "b.json"), os.path.join(d, "c.json")
    runs = [subprocess.Popen([bench, "play", "-q", "-n", "30", "--rate", "0", "-d", "5", "--json", js, url],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for js, url in ((js_b, b.url(signed("live/cam"))), (js_c, c.url(signed("live/cam"))))]
    time.sleep(3)
    on_a = players_of(ha, "live/cam")
    check(len(on_a) == 2, f"A has exactly two players of live/cam, the pulls of B and C ({len(on_a)})")
    for r, js, n in zip(runs, (js_b, js_c), "BC"):
        out, err = r.communicate(timeout=30)
        check(r.returncode == 0, f"30 players on {n} played ({out[-300:]} {err[-300:]})")
        s = json.load(open(js))
        print(f"30 players on {n}: {json.dumps(s)[:300]}")
    plays = a.log_text().count("event=play app=live stream=cam")
    check(plays == 2, f"A saw two plays of live/cam in all, one per pulling node ({plays})")

    # HLS on a node without the stream starts the same pull (a stream new to C).
    hls_pub = publish_ffmpeg(src, a.url("live/h"))
    check(wait_for(lambda: redis.cli("EXISTS", "sluice:stream:live/h") == "1", 10), "live/h published on A")
    out_h = os.path.join(d, "c-hls.ts")
    hls_url = f"http://127.0.0.1:{hc}/{signed('live/h')}".replace("/live/h?", "/live/h/index.m3u8?")
    r = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", hls_url, "-t", "4", "-c", "copy", "-f", "mpegts",
                        "-y", out_h], capture_output=True, timeout=60)
    check(r.returncode == 0, f"ffmpeg plays live/h over HLS from C ({r.stderr.decode()[-300:]})")
    frames = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-count_packets", "-show_entries",
                             "stream=nb_read_packets", "-of", "csv=p=0", out_h], capture_output=True, text=True).stdout.split()[0]
    check(frames.isdigit() and int(frames) >= 75, f"C's HLS of A's stream has 4 s of video ({frames} frames)")
    check(any(p["stream"] == "live/h" and p["cluster"] for p in pulls(hc)), "HLS rides C's pull of live/h")
    stop_proc(hls_pub)

    # Time to first frame on a node that has no pull yet: each stream is new to B.
    ttff = []
    extra = []
    for i in range(5):
        extra.append(publish_ffmpeg(src, a.url(f"live/t{i}")))
    check(wait_for(lambda: all(redis.cli("EXISTS", f"sluice:stream:live/t{i}") == "1" for i in range(5)), 15),
          "five more streams published on A")
    time.sleep(1.5)
    for i in range(5):
        js = os.path.join(d, f"ttff{i}.json")
        r = subprocess.run([bench, "play", "-q", "-n", "1", "-d", "2", "--read-batch-ms", "0", "--json", js, b.url(signed(f"live/t{i}"))],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, f"a play of live/t{i} on B ({r.stdout[-200:]} {r.stderr[-200:]})")
        ttff.append(json.load(open(js))["players"]["ttff_ms"]["p50"])
    p50 = statistics.median(ttff)
    print(f"time to first frame on a non-owner node (lookup + pull + GOP cache), ASan build: {ttff} ms, p50 {p50:.0f} ms")
    check(p50 < 1500, f"first frame on a non-owner node within 1.5 s even under ASan (p50 {p50:.0f} ms)")
    for p in extra:
        stop_proc(p)

    # Redis dies and comes back (empty) while B's players watch A's stream: nobody stalls, A claims
    # the stream again, and B's pull never dropped.
    watcher = probe_async(b.url(signed("live/cam")), "--duration", "9", timeout=30)
    time.sleep(2)
    redis.kill()
    time.sleep(4)
    redis.start()
    check(wait_for(lambda: redis.cli("GET", "sluice:stream:live/cam").startswith("a "), 10),
          "A claims live/cam again once Redis is back")
    video = [ms for ms, _, _ in probe_events(watcher.lines(), "video")]
    gaps = [b2 - a2 for a2, b2 in zip(video, video[1:])]
    check(len(video) > 150 and max(gaps) < 500,
          f"a player on B never stalled while Redis was down ({len(video)} frames, largest gap {max(gaps or [0])} ms)")
    check(all(p["connects"] == 1 for p in pulls(hb) if p["stream"] == "live/cam"), "B's pull of live/cam never reconnected")

    # The owner dies: players on B are told and wait; the publisher comes back on C.
    watcher = probe_async(b.url(signed("live/cam")), "--duration", str(LEASE_S + 14), timeout=40)
    time.sleep(2)
    t_kill = time.time()
    a.stop(sig=signal.SIGKILL)
    stop_proc(pub)
    pub = None
    while time.time() - t_kill < LEASE_S + 8:
        p = publish_ffmpeg(src, c.url("live/cam"))
        time.sleep(1)
        if p.poll() is None:
            pub = p
            break
    check(pub is not None, "the publisher gets the stream back on C once A's lease expired")
    t_back = time.time()
    print(f"publisher back on C {t_back - t_kill:.1f} s after the kill (lease {LEASE_S} s)")
    out_b2 = os.path.join(d, "b2.flv")
    rec = record(b.url(signed("live/cam")), 3, out_b2)
    check(rec.wait(timeout=30) == 0, "a new play on B works")
    print(f"a new play on B finished {time.time() - t_kill:.1f} s after the kill")
    check_same_packets("RTMP on B after the failover", out_b2, source_tags, min_video=40, min_audio=40)
    lines = watcher.lines()
    unpub = [ms for ms, _, raw in probe_events(lines, "status") if "UnpublishNotify" in raw]
    check(unpub, f"the player on B was told when A died ({[l for l in lines if l.startswith('status')][:6]})")
    later_video = [ms for ms, _, _ in probe_events(lines, "video") if ms > unpub[0] + 500]
    check(len(later_video) > 25, f"and the same player gets the stream again from C ({len(later_video)} frames later)")

    stop_proc(pub)
    check(wait_for(lambda: pulls(hb) == [] and pulls(hc) == [], 25),
          f"the pulls end once nobody plays ({pulls(hb)} {pulls(hc)})")
    check(b.alive() and c.alive(), "B and C are alive")
    check(b.stop() == 0 and c.stop() == 0, "clean shutdowns")
    redis.kill()
    print("PASS: cluster location")


main()
