#!/usr/bin/python3
"""Issue 39: rtmp.limits.max_streams counts a name once across the worker loops. With workers: 2
and max_streams: 10, players of the same 10 names on both loops (each connection's loop read from
/api/v1/clients, so the test knows both were used) are all admitted: 10 names, not 20 streams.
An 11th name is then refused on either loop, to players (NetStream.Play.Failed) and publishers
(NetStream.Publish.BadName), and counted as streams_total; a publisher of one of the 10 names is
admitted and its media reaches the players on both loops. A name counts as long as any loop holds
it: when its player on one loop leaves, the 11th is still refused; when the last one leaves, the
11th name is admitted, and the limit holds again."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient, flv_media_messages  # noqa: E402

MAX = 10
CONNECTIONS = 32  # handed to the 2 loops in turn: 16 each, 10 players and spares on each


def api(path):
    with urllib.request.urlopen(f"http://127.0.0.1:{hport}{path}", timeout=5) as r:
        return json.loads(r.read())


def stream_players(name):
    """The merged player count of live/{name}, or None when no loop holds the stream."""
    try:
        return api(f"/api/v1/streams/live/{name}")["players"]
    except urllib.error.HTTPError as e:
        check_quiet(e.code == 404, f"GET /api/v1/streams/live/{name}: 200 or 404 ({e.code})")
        return None


def our_rows():
    """The API's rows of this test's connections (the other loop's are at most 0.25 s old)."""
    return [r for r in api("/api/v1/clients") if r["address"] in addresses]


def loops_playing():
    """{stream: the loops with a player of it}, from the API."""
    out = {}
    for r in our_rows():
        for p in r["playing"]:
            out.setdefault(p, set()).add(r["worker"])
    return out


def open_client():
    c = RtmpClient(server.port)
    c.connect("live")
    c.create_stream()
    check_quiet(c.wait_for(lambda m: m.command() and m.command()[0] == "_result" and m.command()[1] == 2) is not None,
                "connect and createStream answered")
    return c


def check_quiet(cond, msg):
    if not cond:
        fail(msg)


def play(c, name):
    """Plays live/{name}; the status code the server answers with (Play.Start or Play.Failed)."""
    c.play(name)
    m = c.wait_for(lambda m: m.status_code() in ("NetStream.Play.Start", "NetStream.Play.Failed"))
    return m.status_code() if m else None


def publish(c, name):
    c.publish(name)
    m = c.wait_for(lambda m: m.status_code() in ("NetStream.Publish.Start", "NetStream.Publish.BadName"))
    return m.status_code() if m else None


require_tools("ffmpeg")
hport = free_port()
server = Server("max-streams-workers",
                extra_yaml=f"  limits:\n    max_streams: {MAX}\nhttp:\n  listen: 127.0.0.1:{hport}\n")
with open(server.config) as f:
    text = f.read()
with open(server.config, "w") as f:
    f.write("workers: 2\n" + text)
src = make_media(os.path.join(server.dir, "src.flv"), seconds=2)
server.start()
check(wait_port(hport), "HTTP listener is up")
started = time.time()

clients = [open_client() for _ in range(CONNECTIONS)]
addresses = {"127.0.0.1:%d" % c.sock.getsockname()[1]: c for c in clients}
check(wait_for(lambda: len(our_rows()) == CONNECTIONS, 5), f"/api/v1/clients lists the {CONNECTIONS} connections")
loops = {0: [], 1: []}
for r in our_rows():
    loops[r["worker"]].append(addresses[r["address"]])
check(len(loops[0]) >= MAX + 5 and len(loops[1]) >= MAX + 5,
      f"the connections are spread over both loops ({len(loops[0])} on loop 0, {len(loops[1])} on loop 1)")
events_before = guard_events(hport).get("streams_total", 0)

# Every name played on both loops: 20 players, 10 names, all admitted.
names = [f"s{i}" for i in range(MAX)]
answers = [(w, n, play(loops[w][i], n)) for i, n in enumerate(names) for w in (0, 1)]
refused = [(w, n, a) for w, n, a in answers if a != "NetStream.Play.Start"]
check(not refused, f"the {2 * MAX} players of {MAX} names on both loops are admitted (refused: {refused})")
check(wait_for(lambda: all(loops_playing().get(f"live/{n}") == {0, 1} for n in names), 5),
      "the API shows each name played on loop 0 and on loop 1")
check(all(stream_players(n) == 2 for n in names), "each of the 10 streams has its 2 players, merged across loops")

# The 11th name: refused on either loop, to players and publishers.
check(play(loops[0][MAX], "s10") == "NetStream.Play.Failed", "an 11th name is refused to a player on loop 0")
check(play(loops[1][MAX], "s10") == "NetStream.Play.Failed", "an 11th name is refused to a player on loop 1")
check(publish(loops[0][MAX + 1], "s11") == "NetStream.Publish.BadName", "a 12th name is refused to a publisher on loop 0")
check(publish(loops[1][MAX + 1], "s10") == "NetStream.Publish.BadName", "an 11th name is refused to a publisher on loop 1")
check(stream_players("s10") is None and stream_players("s11") is None, "the refused names hold no stream")
refusals = guard_events(hport).get("streams_total", 0) - events_before
check(refusals == 4, f"the 4 refusals are counted as streams_total, once each ({refusals})")

# A name that exists is still admitted at the limit: a publisher of s3 (on loop 0) reaches the
# players on both loops.
pub = loops[0][MAX + 2]
check(publish(pub, "s3") == "NetStream.Publish.Start", "a publisher of one of the 10 names is admitted at the limit")
tags = flv_media_messages(src)
for t, ts, body in tags:
    if t in (8, 9):
        pub.media(t, ts, body)
video = [body for t, _, body in tags if t == 9]
for w in (0, 1):
    player = loops[w][3]
    player.wait_for(lambda m: m.type == 9 and m.payload == video[-1], 15)
    got = [m.payload for m in player.messages if m.type == 9]
    check(got == video, f"the player on loop {w} gets the publisher's {len(video)} video messages ({len(got)})")
pub.close()

# s0 is held while any loop has a player of it.
loops[0][0].close()
check(wait_for(lambda: stream_players("s0") == 1, 5), "s0's player on loop 0 left; its player on loop 1 stays")
check(play(loops[0][MAX + 3], "s10") == "NetStream.Play.Failed", "s0 still counts: an 11th name is still refused")
loops[1][0].close()
check(wait_for(lambda: stream_players("s0") is None, 5), "s0's last player left: no loop holds it")
check(play(loops[1][MAX + 3], "s10") == "NetStream.Play.Start", "with s0 gone the 11th name is admitted")
check(play(loops[0][MAX + 4], "s11") == "NetStream.Play.Failed", "and the limit holds again for a 12th")
print(f"{CONNECTIONS} connections ({len(loops[0])} on loop 0, {len(loops[1])} on loop 1), "
      f"{refusals} refusals counted; {time.time() - started:.1f} s", flush=True)
check(server.alive(), "server still running")
for c in clients:
    c.close()
rc = server.stop()
check(rc == 0, f"server exits 0 ({rc})")
print("PASS")
