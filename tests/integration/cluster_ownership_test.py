#!/usr/bin/python3
"""Stream ownership in a cluster (docs/cluster.md): two Sluice nodes and a real redis-server started
here, ffmpeg publishing, `duplicate_publish: refuse` (the takeover across nodes, the default, is
cluster_takeover_test.py's).

- A publish on node A claims the name in Redis ("a EPOCH", with the lease as expiry); the same name
  published on node B is refused (NetStream.Publish.BadName, a log line naming the owner).
- When A's publisher leaves, the claim is deleted at once and B can publish it.
- When the owner dies (kill -9), its claim expires after the lease and A can publish the name.
- Redis killed while A publishes: the publisher goes on; Redis restarted (empty), A writes its
  claim again within a second or two.
- Two publishers of one name on A and B at the same moment: exactly one wins.
- /api/v1/server's cluster object shows the node, its connection and what it owns."""
import atexit
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "redis-server", "redis-cli")

PASSWORD = "cluster-test-pw"
LEASE_S = 2


class Redis:
    def __init__(self, d):
        self.port = free_port()
        self.dir = d
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                                      "--appendonly", "no", "--requirepass", PASSWORD, "--dir", self.dir],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # A failed check exits the test at once: the server must not outlive it.
        atexit.register(self._kill_if_running)
        check(wait_port(self.port), f"redis-server listens on {self.port}")
        return self

    def _kill_if_running(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def cli(self, *args):
        p = subprocess.run(["redis-cli", "-p", str(self.port), "--no-auth-warning", "-a", PASSWORD, "-n", "1"] +
                           list(args), capture_output=True, text=True, timeout=10)
        return p.stdout.strip()


def node(name, redis, http_port):
    port = free_port()
    yaml = (f"http:\n  listen: 127.0.0.1:{http_port}\n"
            f"cluster:\n  registry: redis://127.0.0.1:{redis.port}/1\n  node_id: {name}\n"
            f"  advertise: rtmp://127.0.0.1:{port}\n  password: {PASSWORD}\n  token: internal-token\n"
            f"  lease: {LEASE_S}s\n  duplicate_publish: refuse\n")
    server = Server(f"cluster-{name}", extra_yaml=yaml, port=port).start()
    # Its RTMP port may answer before its HTTP one (a loaded machine): the API is asked only then.
    check(wait_port(http_port), f"node {name}'s HTTP listener is up")
    return server


def cluster_view(http_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/v1/cluster", timeout=5) as r:
        return json.loads(r.read())


def probe_status(http_port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port}{path}", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def api(http_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/v1/server", timeout=5) as r:
        return json.loads(r.read())


def main():
    d = workdir("cluster-ownership")
    src = make_media(os.path.join(d, "src.flv"), seconds=30)
    redis = Redis(d).start()
    ha, hb = free_port(), free_port()
    a, b = node("a", redis, ha), node("b", redis, hb)
    key = "sluice:stream:live/cam"

    check(wait_for(lambda: api(ha)["cluster"]["connected"] and api(hb)["cluster"]["connected"], 10),
          "both nodes are connected to the registry")
    pub_a = publish_ffmpeg(src, a.url("live/cam"))
    check(wait_for(lambda: redis.cli("GET", key).startswith("a "), 10), f"A's publish claims the name ({redis.cli('GET', key)!r})")
    ttl = int(redis.cli("PTTL", key))
    check(0 < ttl <= LEASE_S * 1000, f"the claim expires with the lease unless refreshed ({ttl} ms)")
    time.sleep(LEASE_S * 1.5)
    check(redis.cli("GET", key).startswith("a ") and int(redis.cli("PTTL", key)) > 0,
          "A keeps refreshing its claim past the first lease")
    cl = api(ha)["cluster"]
    check(cl["node_id"] == "a" and cl["owned"] == ["live/cam"] and cl["rtt_ms"] >= 0,
          f"A's API shows what it owns ({cl})")

    def view_ok():
        v = cluster_view(ha)
        nodes = {n["node_id"]: n for n in v["nodes"]}
        return (set(nodes) == {"a", "b"} and nodes["a"]["self"] and nodes["b"]["advertise"]["rtmp"] == f"rtmp://127.0.0.1:{b.port}"
                and {"name": "live/cam", "owner": "a"} in v["streams"])
    check(wait_for(view_ok, LEASE_S * 2), f"A's /api/v1/cluster lists both nodes and who owns live/cam ({cluster_view(ha)})")
    check(redis.cli("TTL", "sluice:node:b") != "-1", "node records expire unless refreshed")
    with urllib.request.urlopen(f"http://127.0.0.1:{ha}/metrics", timeout=5) as r:
        metrics = dict(line.rsplit(" ", 1) for line in r.read().decode().splitlines() if line.startswith("sluice_cluster"))
    check(metrics.get("sluice_cluster_registry_up") == "1" and metrics.get("sluice_cluster_streams_owned") == "1"
          and float(metrics.get("sluice_cluster_registry_rtt_seconds", "-1")) >= 0, f"/metrics has the registry's state ({metrics})")

    dup = publish_ffmpeg(src, b.url("live/cam"))
    code = dup.wait(timeout=20)
    check(code != 0, "the same name published on B is refused")
    check(wait_for(lambda: 'reason="owned by node a"' in b.log_text(), 5), "B says which node owns it")
    check(pub_a.poll() is None, "A's publisher is untouched")

    stop_proc(pub_a)
    check(wait_for(lambda: redis.cli("EXISTS", key) == "0", 3), "the claim is deleted when A's publisher leaves")
    pub_b = publish_ffmpeg(src, b.url("live/cam"))
    check(wait_for(lambda: redis.cli("GET", key).startswith("b "), 10), "then B can publish it")

    # The owner dies: its claim expires after the lease, then A may publish.
    t_kill = time.time()
    b.stop(sig=signal.SIGKILL)
    stop_proc(pub_b)
    check(wait_for(lambda: redis.cli("EXISTS", key) == "0", LEASE_S + 2),
          f"the dead owner's claim expired ({time.time() - t_kill:.1f} s after the kill, lease {LEASE_S} s)")
    pub_a = publish_ffmpeg(src, a.url("live/cam"))
    check(wait_for(lambda: redis.cli("GET", key).startswith("a "), 10), "A publishes the name the dead node had")
    check(wait_for(lambda: [n["node_id"] for n in cluster_view(ha)["nodes"]] == ["a"], LEASE_S * 3 + 3),
          "the dead node leaves A's cluster view once its record expired (3 leases)")

    # Redis dies and comes back empty: the publisher goes on, A writes its claim again.
    redis.kill()
    time.sleep(2)
    check(pub_a.poll() is None, "A's publisher goes on while Redis is down")
    check(wait_for(lambda: not api(ha)["cluster"]["connected"], 5), "A's API says the registry is unreachable")
    st, body = probe_status(ha, "/readyz")
    check(st == 503 and "registry" in body.get("reason", ""), f"A's /readyz is 503 without its registry ({st} {body})")
    check(probe_status(ha, "/healthz")[0] == 200, "but /healthz still 200: the node is alive")
    redis.start()
    t_back = time.time()
    check(wait_for(lambda: redis.cli("GET", key).startswith("a "), 10),
          f"A claims its stream again when Redis is back ({time.time() - t_back:.1f} s)")
    check(wait_for(lambda: probe_status(ha, "/readyz")[0] == 200, 5), "A is ready again")
    check("event=registry_unreachable" in a.log_text() and "event=registry_connected" in a.log_text(),
          "A logged the loss and the reconnection")
    stop_proc(pub_a)
    check(wait_for(lambda: redis.cli("EXISTS", key) == "0", 3), "released again")

    # Two publishers of one name at once on two nodes: exactly one wins.
    hb2 = free_port()
    b2 = node("b2", redis, hb2)
    check(wait_for(lambda: api(hb2)["cluster"]["connected"], 10), "a third node joins")
    p1 = publish_ffmpeg(src, a.url("live/race"))
    p2 = publish_ffmpeg(src, b2.url("live/race"))
    time.sleep(4)
    running = [p for p in (p1, p2) if p.poll() is None]
    check(len(running) == 1, f"exactly one of two simultaneous publishers wins ({len(running)} still publishing)")
    owner = redis.cli("GET", "sluice:stream:live/race").split(" ")[0]
    check(owner == ("a" if running[0] is p1 else "b2"), f"and the registry names the winner's node ({owner})")
    for p in (p1, p2):
        stop_proc(p)

    check(a.alive() and b2.alive(), "the nodes are alive")
    check(a.stop() == 0 and b2.stop() == 0, "clean shutdowns")
    redis.kill()
    print("PASS: cluster ownership")


if __name__ == "__main__":
    main()
