#!/usr/bin/python3
"""A reconnecting publisher takes its stream back on another node (docs/cluster.md, "A second
publisher on another node"): two Sluice nodes with two loops each, a real redis-server, a real
HAProxy in front (PROXY protocol v2) that sends new connections to node 2 (node 1 is its backup).

ffmpeg A publishes to node 1. Players on both nodes: on node 1 an RTMP probe and a curl HTTP-FLV
reader, on node 2 (which pulls the stream from node 1) an RTMP probe and an ffmpeg RTMP player.
A is stopped with SIGSTOP (no FIN, as after a network drop); ffmpeg B, another source, publishes
the same name through HAProxy and lands on node 2, which takes the claim over. The lease is 30 s,
so node 1 refreshes its claim only every 10 s: it learns of the take on the registry's channel.

- B is accepted at once, and node 2 owns the name in Redis.
- Every player on both nodes follows within 2 s of B's acceptance: its capture is a run of A's
  video packets then a run of B's, byte for byte and contiguous in their sources, B starting on a
  keyframe, timestamps rising, no disconnect and no UnpublishNotify.
- SIGCONT A: none of its data reaches anyone (the runs above), and ffmpeg A exits with an error.
- Node 1 counts the takeover in /metrics and pulls the stream from node 2 for its players."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from cluster_haproxy_test import HAProxy, node  # noqa: E402
from cluster_ownership_test import Redis  # noqa: E402
from takeover_tools import Sources, capture_video, make_source, stream_info  # noqa: E402

require_tools("ffmpeg", "curl", "haproxy", "redis-server", "redis-cli")

LEASE_S = 30
KEY = "sluice:stream:live/cam"


def get(n, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{n.http}{path}", timeout=5) as r:
        return json.loads(r.read())


def stream_of(n, name):
    return stream_info(n.http, name)


def first_b_at(lines, src):
    """Wall-clock time at which a probe received B's first video frame (None: never)."""
    play_sent = int(probe_events(lines, "play")[0][1]["epoch_ms"]) / 1000
    ms = next((ms for ms, f, _ in probe_events(lines, "video") if src.owner_of.get(f["md5"]) == "B"), None)
    return None if ms is None else play_sent + ms / 1000


def check_probe(name, lines, src):
    statuses = [l.split()[2] for l in lines if l.startswith("status")]
    check("NetStream.Play.UnpublishNotify" not in statuses, f"{name}: never told of an end ({statuses})")
    check(lines and lines[-1] == "end reason=duration", f"{name}: stayed connected ({lines[-1:]})")
    video = [f for _, f, _ in probe_events(lines, "video") if f["seq"] == "0"]
    src.check_runs(name, [f["md5"] for f in video], [int(f["ts"]) for f in video], ["A", "B"])
    audio = [int(f["ts"]) for _, f, _ in probe_events(lines, "audio") if f["seq"] == "0"]
    check(all(b >= a for a, b in zip(audio, audio[1:])), f"{name}: audio timestamps keep rising")


def main():
    d = workdir("cluster-takeover")
    src = Sources({"A": make_source(os.path.join(d, "a.flv"), "320x240", 440, seconds=30),
                   "B": make_source(os.path.join(d, "b.flv"), "352x288", 660, seconds=30)})
    redis = Redis(d).start()
    n1 = node("tk1", redis, free_port(), extra="workers: 2\n", lease_s=LEASE_S).start()
    n2 = node("tk2", redis, free_port(), extra="workers: 2\n", lease_s=LEASE_S).start()
    ha = HAProxy(d, [n2], backups=[n1])
    check(wait_for(lambda: get(n1, "/api/v1/server")["cluster"]["connected"] and
                   get(n2, "/api/v1/server")["cluster"]["connected"], 10), "both nodes are connected to the registry")

    pub_a = publish_ffmpeg(src.paths["A"], n1.url("live/cam"))
    check(wait_for(lambda: redis.cli("GET", KEY).startswith("tk1 "), 10), "A's publish on node 1 claims the name")
    time.sleep(2.5)
    probes = {"node 1 probe": probe_async(n1.url("live/cam"), "--duration", "16", "--epoch"),
              "node 2 probe": probe_async(n2.url("live/cam"), "--duration", "16", "--epoch")}
    curl_out = os.path.join(d, "node1.flv")
    curl = subprocess.Popen(["curl", "-s", "-o", curl_out, f"http://127.0.0.1:{n1.http}/live/cam.flv"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ff_out = os.path.join(d, "node2-ffmpeg.flv")
    ff_player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", n2.url("live/cam"), "-c", "copy",
                                  "-f", "flv", ff_out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(5)
    pub_a.send_signal(signal.SIGSTOP)
    time.sleep(1)

    t_b = time.time()
    pub_b = publish_ffmpeg(src.paths["B"], ha.url("live/cam"))
    check(wait_for(lambda: redis.cli("GET", KEY).startswith("tk2 "), 3),
          f"B, through HAProxy on node 2, takes the claim over ({redis.cli('GET', KEY)!r})")
    check(wait_for(lambda: ((stream_of(n2, "live/cam") or {}).get("publisher") or {}).get("since_unix_ms"), 3),
          "node 2's API shows B publishing")
    b_since = stream_of(n2, "live/cam")["publisher"]["since_unix_ms"] / 1000
    check(b_since - t_b < 1.5, f"B's publish was accepted {b_since - t_b:.2f} s after it started (< 1.5)")
    time.sleep(6)
    pub_a.send_signal(signal.SIGCONT)  # a frozen encoder wakes up: its connection is gone
    pub_a.communicate(timeout=20)
    check(pub_a.returncode != 0, "ffmpeg A ends with an error: its connection is gone")

    lines = {name: p.lines() for name, p in probes.items()}
    check(ff_player.poll() is None, "node 2's ffmpeg player is still playing (no end of stream)")
    check(curl.poll() is None, "node 1's HTTP-FLV reader is still reading")
    stop_proc(ff_player)
    curl.send_signal(signal.SIGINT)
    curl.wait(timeout=10)
    for name, l in lines.items():
        check_probe(name, l, src)
        at = first_b_at(l, src)
        check(at is not None and at - b_since < 2.0,
              f"{name}: B's first frame came {at - b_since:.2f} s after B's publish was accepted (< 2)")
    for name, path in (("node 1 HTTP-FLV reader", curl_out), ("node 2 ffmpeg player", ff_out)):
        vid = capture_video(path)
        src.check_runs(name, [m for _, m in vid][:-2], [ts for ts, _ in vid], ["A", "B"])

    check(guard_events(n1.http).get("publish_takeover", 0) == 1, "node 1's /metrics: its publisher was replaced once")
    check("event=claim_handover stream=live/cam from=tk1" in n2.log_text(), "node 2 logs the take")
    pulls = get(n1, "/api/v1/relays")["pull"]
    check(any(p.get("stream") == "live/cam" and p.get("cluster") for p in pulls),
          f"node 1 pulls the stream from node 2 for its players ({pulls})")
    check(redis.cli("GET", KEY).startswith("tk2 "), "node 2 still owns the name")
    stop_proc(pub_b)
    check(n1.alive() and n2.alive(), "both nodes alive")
    check(n1.stop() == 0 and n2.stop() == 0, "clean shutdowns")
    ha.stop()
    redis.kill()
    print("PASS: takeover across nodes")


if __name__ == "__main__":
    main()
