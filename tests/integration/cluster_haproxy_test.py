#!/usr/bin/python3
"""Three Sluice nodes behind a real HAProxy (TCP mode, PROXY protocol v2, health checks on
/readyz), with a real redis-server (docs/cluster.md, "HAProxy in front"):

- ffmpeg publishes through HAProxy and lands on some node, which claims the stream; the node logs
  the publisher's own address (PROXY protocol), not HAProxy's (`source 127.0.0.3`). Only HAProxy's
  address must send the header (`proxy_protocol_from`): players and the nodes' pulls connect directly.
- ffmpeg plays from each node directly and three times through HAProxy: A's packets byte for byte
  everywhere; the owner has exactly one player of the stream per other node (one pull per node).
- The owner is killed (-9): the publisher reconnects through HAProxy, lands on a live node once the
  lease expired, and plays through HAProxy and on each live node work again within lease + a few
  seconds; the registry never names two owners."""
import atexit
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from cluster_ownership_test import Redis, PASSWORD  # noqa: E402

require_tools("ffmpeg", "haproxy", "redis-server", "redis-cli")

LEASE_S = 2
KEY = "sluice:stream:live/cam"


def node(name, redis, http_port, extra="", lease_s=LEASE_S):
    port = free_port()
    yaml = (f"rtmp:\n  listen: 127.0.0.1:{port}\n  proxy_protocol: true\n"
            f"  proxy_protocol_from: [127.0.0.3/32]\n"
            f"http:\n  listen: 127.0.0.1:{http_port}\n"
            f"cluster:\n  registry: redis://127.0.0.1:{redis.port}/1\n  node_id: {name}\n"
            f"  advertise: rtmp://127.0.0.1:{port}\n  password: {PASSWORD}\n  token: haproxy-test-token\n"
            f"  lease: {lease_s}s\n{extra}")
    s = Server(f"cluster-ha-{name}", port=port)
    # The generated config has its own rtmp section: this one replaces it.
    with open(s.config, "w") as f:
        f.write(yaml + "apps:\n  live: { type: live, gop_cache: true }\nlog:\n  level: info\n")
    s.name = name
    s.http = http_port
    return s


class HAProxy:
    def __init__(self, d, nodes, backups=()):
        """backups: nodes used only while every one of `nodes` is down."""
        self.port = free_port()
        self.path = os.path.join(d, "haproxy.cfg")
        servers = "".join(f"  server {n.name} 127.0.0.1:{n.port} send-proxy-v2 check port {n.http} inter 300 fall 1 rise 1"
                          f"{' backup' if n in backups else ''}\n" for n in list(nodes) + list(backups))
        with open(self.path, "w") as f:
            f.write("global\n  maxconn 2000\n"
                    "defaults\n  mode tcp\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n"
                    "  retries 2\n  option redispatch\n"
                    f"frontend rtmp\n  bind 127.0.0.1:{self.port}\n  default_backend nodes\n"
                    "backend nodes\n  balance roundrobin\n  source 127.0.0.3\n"
                    "  option httpchk\n  http-check send meth GET uri /readyz\n" + servers)
        check(subprocess.run(["haproxy", "-c", "-f", self.path], capture_output=True).returncode == 0,
              "haproxy accepts the recipe's configuration")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", self.path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        atexit.register(lambda: self.proc.poll() is None and (self.proc.kill(), self.proc.wait()))
        check(wait_port(self.port), "haproxy listens")

    def url(self, path):
        return f"rtmp://127.0.0.1:{self.port}/{path}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def record(url, seconds, out):
    return subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-rw_timeout", "15000000", "-i", url, "-t",
                           str(seconds), "-c", "copy", "-f", "flv", "-y", out], capture_output=True, timeout=40)


def owner_of(redis):
    return redis.cli("GET", KEY).split(" ")[0]


def players_on(n):
    import json
    with urllib.request.urlopen(f"http://127.0.0.1:{n.http}/api/v1/clients", timeout=5) as r:
        return [c for c in json.loads(r.read()) if "live/cam" in c.get("playing", [])]


def publish_until_accepted(ha, src, deadline_s):
    """A publisher that reconnects like OBS does: again until one attempt stays up."""
    t0 = time.time()
    while time.time() - t0 < deadline_s:
        p = publish_ffmpeg(src, ha.url("live/cam"))
        time.sleep(1.2)
        if p.poll() is None:
            return p
    return None


def main():
    d = workdir("cluster-haproxy")
    src = make_media(os.path.join(d, "src.flv"), seconds=60)
    source_tags = flv_tags(src)
    redis = Redis(d).start()
    nodes = [node(n, redis, free_port()) for n in ("a", "b", "c")]
    for n in nodes:
        n.start()
    ha = HAProxy(d, nodes)
    time.sleep(1)  # the first health checks
    by_name = {n.name: n for n in nodes}

    pub = publish_ffmpeg(src, ha.url("live/cam"))
    check(wait_for(lambda: owner_of(redis) in by_name, 10), f"the publish through HAProxy claims the stream ({redis.cli('GET', KEY)!r})")
    owner = by_name[owner_of(redis)]
    others = [n for n in nodes if n is not owner]
    log = owner.log_text()
    pub_line = next((l for l in log.splitlines() if "event=publish" in l and "stream=cam" in l), "")
    check("peer=127.0.0.1:" in pub_line and "127.0.0.3" not in pub_line,
          f"the owner logs the publisher's own address from the PROXY header ({pub_line})")
    time.sleep(1)

    for n in nodes:
        out = os.path.join(d, f"direct-{n.name}.flv")
        r = record(n.url("live/cam"), 4, out)
        check(r.returncode == 0, f"ffmpeg plays from node {n.name} directly ({r.stderr.decode()[-300:]})")
        check_same_packets(f"direct from {n.name}", out, source_tags, min_video=60, min_audio=60)
    for i in range(3):
        out = os.path.join(d, f"haproxy-{i}.flv")
        r = record(ha.url("live/cam"), 3, out)
        check(r.returncode == 0, f"ffmpeg plays through HAProxy ({r.stderr.decode()[-300:]})")
        check_same_packets(f"through HAProxy #{i}", out, source_tags, min_video=40, min_audio=40)
    # Both other nodes still hold their pull (idle 10 s): one player each on the owner.
    pulls = players_on(owner)
    check(len(pulls) == 2, f"the owner has one player of live/cam per other node ({len(pulls)})")

    # The owner dies; the publisher comes back through HAProxy on another node.
    t_kill = time.time()
    owner.stop(sig=signal.SIGKILL)
    stop_proc(pub)
    pub = publish_until_accepted(ha, src, LEASE_S + 15)
    check(pub is not None, "the publisher reconnecting through HAProxy is accepted on a live node")
    new_owner = owner_of(redis)
    check(new_owner in by_name and new_owner != owner.name, f"a live node owns the stream now ({new_owner})")
    print(f"publisher back on {new_owner} {time.time() - t_kill:.1f} s after the kill (lease {LEASE_S} s)")
    time.sleep(1)
    for n in others:
        out = os.path.join(d, f"after-{n.name}.flv")
        r = record(n.url("live/cam"), 3, out)
        check(r.returncode == 0, f"node {n.name} plays the stream again ({r.stderr.decode()[-300:]})")
        check_same_packets(f"after the failover, from {n.name}", out, source_tags, min_video=40, min_audio=40)
    out = os.path.join(d, "after-haproxy.flv")
    r = record(ha.url("live/cam"), 3, out)
    check(r.returncode == 0, "and through HAProxy")
    print(f"plays work again {time.time() - t_kill:.1f} s after the kill")
    claims = [l for n in nodes for l in n.log_text().splitlines() if "stream_lost" in l]
    check(not claims, f"no node ever lost a claim to another (two owners): {claims[:3]}")

    stop_proc(pub)
    ha.stop()
    for n in others:
        check(n.alive(), f"node {n.name} is alive")
        n.stop(sig=signal.SIGKILL)
    redis.kill()
    print("PASS: cluster behind HAProxy")


if __name__ == "__main__":
    main()
