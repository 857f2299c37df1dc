#!/usr/bin/python3
"""Draining on SIGTERM (shutdown.drain, docs/cluster.md "Draining"): the real binary, ffmpeg
publishing a live stream, raw RTMP players (rtmp_client.py).

1. Grace: two players of the stream, one announcing Enhanced RTMP reconnect (capsEx 0x01) in its
   connect, one not. After SIGTERM the first gets NetConnection.Connect.ReconnectRequest on stream 0
   with its own tcUrl, the second gets nothing; both keep receiving the stream; a new TCP connection
   to the RTMP port is refused; /readyz says 503 (and /healthz 200); the process is still there
   shortly before the drain period ends and exits 0 soon after it, having told its players.
2. Early end: the sessions end during the drain (the player leaves after its request, the publisher
   stops): the process exits then, long before the drain period. A client connected before the
   signal whose connect comes after it is asked to reconnect as soon as it is accepted. HTTP sessions count too: an
   HTTP-FLV reader waiting for its stream holds the drain, an idle keep-alive connection does not.
3. A second signal during the drain stops the server at once.
4. Cluster: a draining node marks its claims; its publisher reconnecting to another node (a new
   connection while the old one still publishes) is taken there at once, and the draining node
   ends the old publish at its next refresh, logged as a handover.
"""
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient  # noqa: E402
from cluster_ownership_test import PASSWORD, Redis, probe_status as http_status  # noqa: E402

require_tools("ffmpeg", "curl", "redis-server", "redis-cli")

RECONNECT = "NetConnection.Connect.ReconnectRequest"


def rtmp_port_refuses(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True


def player(port, name, caps_ex=None):
    """A raw RTMP player of live/NAME; caps_ex None sends no capsEx at all."""
    c = RtmpClient(port)
    obj = {"app": "live", "tcUrl": f"rtmp://127.0.0.1:{port}/live?via=lb", "flashVer": "FMLE/3.0",
           "objectEncoding": 0}
    if caps_ex is not None:
        obj["capsEx"] = caps_ex
    c.command("connect", obj, None, txn=1)
    c.tc_url = obj["tcUrl"]
    c.create_stream()
    c.play(name)
    if not c.wait_status("NetStream.Play.Start", timeout=10):
        fail("player: no NetStream.Play.Start")
    return c


def connect_result(c):
    """The properties object of the server's _result to connect."""
    for m in c.messages:
        cmd = m.command()
        if cmd and cmd[0] == "_result" and cmd[1] == 1:
            return cmd[2][0] if cmd[2] and isinstance(cmd[2][0], dict) else {}
    return None


def pump(clients, seconds):
    end = time.time() + seconds
    while time.time() < end:
        for c in clients:
            if not c.closed:
                c.read_some(0.02)


def video_count(c, since=0):
    return sum(1 for m in c.messages[since:] if m.type == 9)


def reconnect_requests(c):
    out = []
    for m in c.messages:
        cmd = m.command()
        if cmd and cmd[0] == "onStatus" and m.status_code() == RECONNECT:
            info = next((a for a in cmd[2] if isinstance(a, dict)), {})
            out.append((m.stream_id, info))
    return out


def wait_published(c, seconds=15):
    check(c.wait_for(lambda m: m.type == 9, timeout=seconds) is not None, "the player receives video")


def start_publisher(server, src, name="live/cam"):
    return publish_ffmpeg(src, server.url(name), loop=True)


def case_grace(src):
    drain_s = 8
    hport = free_port()
    server = Server("drain-grace", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\nshutdown:\n  drain: {drain_s}s\n")
    server.start()
    pub = start_publisher(server, src)
    a = player(server.port, "cam", caps_ex=1)
    b = player(server.port, "cam")
    wait_published(a)
    wait_published(b)
    check(connect_result(a).get("capsEx") == 1, "the server names capsEx Reconnect to the client that sent capsEx")
    check("capsEx" not in connect_result(b), "... and nothing new to the client that did not")
    check(http_status(hport, "/readyz")[0] == 200, "/readyz is 200 before the signal")
    pump([a, b], 1.0)
    check(not reconnect_requests(a), "no reconnect request before the signal")

    server.proc.send_signal(signal.SIGTERM)
    signalled = time.time()
    got = a.wait_status(RECONNECT, timeout=3)
    check(got is not None, "the capsEx Reconnect player gets NetConnection.Connect.ReconnectRequest")
    sid, info = reconnect_requests(a)[0]
    check(sid == 0, f"... on message stream 0 (got {sid})")
    check(info.get("level") == "status", f"... level status ({info.get('level')})")
    check(info.get("tcUrl") == a.tc_url, f"... with the tcUrl it connected with ({info.get('tcUrl')})")
    check(bool(info.get("description")), "... and a description")

    check(rtmp_port_refuses(server.port), "a new TCP connection to the RTMP port is refused during the drain")
    st, body = http_status(hport, "/readyz")
    check(st == 503 and body.get("reason") == "draining", f"/readyz is 503 during the drain ({st} {body})")
    check(http_status(hport, "/healthz")[0] == 200, "/healthz stays 200 during the drain")

    a_before, b_before = len(a.messages), len(b.messages)
    pump([a, b], 3.0)
    check(not a.closed and not b.closed, "both players are still connected 3 s into the drain")
    check(video_count(a, a_before) >= 25, f"the stream keeps flowing to the reconnect player "
          f"({video_count(a, a_before)} video messages in 3 s)")
    check(video_count(b, b_before) >= 25, f"the stream keeps flowing to the other player "
          f"({video_count(b, b_before)} video messages in 3 s)")
    check(not reconnect_requests(b), "the player without capsEx gets no reconnect request")
    check(len(reconnect_requests(a)) == 1, "the reconnect player is asked once")

    pump([a, b], max(0.0, signalled + drain_s - 1.5 - time.time()))
    check(server.alive(), "the process is still serving 1.5 s before the drain period ends")
    check(not a.closed and not b.closed, "... and so are both players")
    deadline = signalled + drain_s + 8
    while server.alive() and time.time() < deadline:
        pump([a, b], 0.2)
    exited = time.time() - signalled
    check(not server.alive(), f"the process exits after the drain period ({exited:.1f} s after SIGTERM)")
    check(exited >= drain_s - 0.5, f"... not before it ({exited:.1f} s >= {drain_s} s)")
    code = server.stop()
    check(code == 0, f"exit code 0 (got {code})")
    pump([a, b], 0.5)
    check("NetStream.Play.UnpublishNotify" in b.statuses(), "the player left alone is told the stream ended")
    check(a.closed and b.closed, "both players are disconnected at the end")
    log = server.log_text()
    check("event=drain_start" in log and " rtmp=3 " in log, "log: drain start with the session count (3 RTMP)")
    check(f"drain_ms={drain_s * 1000}" in log, "log: drain start with the drain period")
    check(log.count("event=reconnect_request ") == 1, "log: one reconnect request")
    check('event=drain_end reason="drain period over"' in log, "log: drain end, the period is over")
    stop_proc(pub)
    a.close()
    b.close()


def case_early_end(src):
    drain_s = 30
    hport = free_port()
    server = Server("drain-early", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\nshutdown:\n  drain: {drain_s}s\n")
    server.start()
    pub = start_publisher(server, src)
    a = player(server.port, "cam", caps_ex=1)
    wait_published(a)
    late = RtmpClient(server.port)  # handshake done, connect only once the drain has begun
    server.proc.send_signal(signal.SIGTERM)
    signalled = time.time()
    check(a.wait_status(RECONNECT, timeout=3) is not None, "early end: the player is asked to reconnect")
    late.command("connect", {"app": "live", "tcUrl": f"rtmp://127.0.0.1:{server.port}/live", "capsEx": 1}, None, txn=1)
    check(late.wait_status(RECONNECT, timeout=3) is not None and connect_result(late) is not None,
          "early end: a client whose connect comes during the drain is accepted and asked at once")
    late.close()
    check(http_status(hport, "/readyz")[0] == 503, "early end: /readyz is 503")
    pump([a], 1.0)
    check(server.alive(), "early end: the process waits while the sessions go on")
    # The player has reconnected elsewhere and leaves; the publisher stops.
    a.close()
    stop_proc(pub)
    ended = time.time()
    check(wait_for(lambda: not server.alive(), 10), "early end: the process exits once the sessions have ended")
    took = time.time() - ended
    check(took < 5, f"... long before the drain period ({time.time() - signalled:.1f} s "
          f"after SIGTERM, {took:.1f} s after the last session)")
    check(server.stop() == 0, "early end: exit code 0")
    check('event=drain_end reason="sessions ended"' in server.log_text(), "log: drain end, the sessions ended")


def case_http_sessions():
    drain_s = 30
    hport = free_port()
    server = Server("drain-http", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\nshutdown:\n  drain: {drain_s}s\n")
    server.start()
    # An idle keep-alive connection (a metrics scraper's, say): one answered request, then silence.
    idle = socket.create_connection(("127.0.0.1", hport), timeout=5)
    idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: sluice\r\n\r\n")
    check(b"200" in idle.recv(4096).split(b"\r\n")[0], "http sessions: the keep-alive connection got its answer")
    # An HTTP-FLV reader of a stream not published yet: its request is held (wait_for_publisher).
    reader = subprocess.Popen(["curl", "-s", "-o", os.devnull, f"http://127.0.0.1:{hport}/live/later.flv"])
    time.sleep(1.0)
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(2.0)
    check(server.alive(), "http sessions: the waiting HTTP-FLV reader holds the drain")
    check(reader.poll() is None, "http sessions: ... and is still being served")
    reader.kill()
    reader.wait()
    left = time.time()
    check(wait_for(lambda: not server.alive(), 10), "http sessions: the process exits once the reader has gone")
    check(time.time() - left < 5, f"http sessions: ... at once, the idle keep-alive connection does not hold it "
          f"({time.time() - left:.1f} s; it would be closed after 15 s idle)")
    check(server.stop() == 0, "http sessions: exit code 0")
    log = server.log_text()
    check("event=drain_start" in log and " rtmp=0 http=1 " in log, "log: drain start counts the HTTP-FLV reader only")
    idle.close()


def case_second_signal(src):
    server = Server("drain-twice", extra_yaml="shutdown:\n  drain: 60s\n")
    server.start()
    pub = start_publisher(server, src)
    b = player(server.port, "cam")
    wait_published(b)
    server.proc.send_signal(signal.SIGTERM)
    pump([b], 1.5)
    check(server.alive() and not b.closed, "second signal: the first SIGTERM drains (the player stays)")
    server.proc.send_signal(signal.SIGINT)
    t = time.time()
    check(wait_for(lambda: not server.alive(), 8), "second signal: SIGINT during the drain stops the server")
    check(time.time() - t < 8, f"... at once ({time.time() - t:.1f} s)")
    check(server.stop() == 0, "second signal: exit code 0")
    pump([b], 0.5)
    check(b.closed and "NetStream.Play.UnpublishNotify" in b.statuses(), "second signal: the player was told and closed")
    log = server.log_text()
    check('event=drain_end reason="second signal"' in log, "log: drain end by the second signal")
    stop_proc(pub)
    b.close()




def case_cluster(src):
    redis = Redis(workdir("drain-redis")).start()
    rport = redis.port
    cli = redis.cli

    def node(name, extra=""):
        port = free_port()
        yaml = (f"cluster:\n  registry: redis://127.0.0.1:{rport}/1\n  node_id: {name}\n"
                f"  advertise: rtmp://127.0.0.1:{port}\n  password: {PASSWORD}\n  token: internal-token\n"
                f"  lease: 30s\n{extra}")
        return Server(f"drain-cluster-{name}", extra_yaml=yaml, port=port).start()

    a = node("a", "shutdown:\n  drain: 30s\n")
    b = node("b")
    pub = start_publisher(a, src)
    check(wait_for(lambda: cli("GET", "sluice:stream:live/cam").startswith("a "), 10), "cluster: A owns live/cam")
    a.proc.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    check(a.alive(), "cluster: A drains with its publisher on")
    claim = cli("GET", "sluice:stream:live/cam")
    check(claim.startswith("a ") and claim.endswith(" draining"),
          f"cluster: A keeps its claim while its publisher is on, marked as draining ({claim!r})")
    # The publisher moves the way a reconnect request asks: a new connection to B first, while the
    # old one on A is still publishing. B takes the draining claim at once.
    moved = time.time()
    pub_b = start_publisher(b, src)
    check(wait_for(lambda: cli("GET", "sluice:stream:live/cam").startswith("b "), 8),
          f"cluster: B takes the draining claim while A's publisher is still on ({time.time() - moved:.1f} s)")
    time.sleep(1)
    check(pub_b.poll() is None, "cluster: B's publisher is accepted and publishing")
    check("event=claim_handover stream=live/cam from=a" in b.log_text(), "cluster: B logs the handover")
    check(wait_for(lambda: pub.poll() is not None, 14),
          "cluster: A ends its old publish at its next refresh (a third of the 30 s lease)")
    check("event=stream_handed_over stream=live/cam" in a.log_text() and "stream_lost" not in a.log_text(),
          "cluster: A logs a handover, not a lost stream")
    check(cli("GET", "sluice:stream:live/cam").startswith("b "), "cluster: B still owns the name")
    check(wait_for(lambda: not a.alive(), 10), "cluster: A exits once its sessions have ended")
    check(a.stop() == 0, "cluster: A's exit code is 0")
    stop_proc(pub_b)
    b.stop()
    redis.kill()


def main():
    d = workdir("drain-media")
    src = make_media(os.path.join(d, "src.flv"), seconds=4, gop=25)
    case_grace(src)
    case_early_end(src)
    case_http_sessions()
    case_second_signal(src)
    case_cluster(src)
    print("PASS")


main()
