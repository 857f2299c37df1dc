#!/usr/bin/python3
"""A WHEP player's keyframe request reaches a WHIP publisher (docs/webrtc.md, "Keyframes"): a
player that lost a picture sends an RTCP PLI, and the publisher's encoder is asked for a keyframe
at once instead of at its next GOP.

webrtc_whip_gst.py publishes over WHIP with a keyframe only every 1000 frames (40 s): past 2 s
without one the server asks for one itself, so keyframes come every 2 s without the players.
WHEP players (webrtc_whep_gst.py: GStreamer's webrtcbin) ask for a keyframe 0.6 s after each they
get; two workers, and players are started until one is on the publisher's loop and one on the
other (the request then goes through the owner). Checks:
  - every request (5 and more per player) is answered by a keyframe within 0.6 s: without the
    forwarding the next came 1.4 s after it (2 s after the last keyframe). The publisher is asked
    at most twice a second, so a request made within 0.55 s after a keyframe (another player's
    request made it) is not judged;
  - the WHEP sessions' close lines count the requests, and /metrics has
    sluice_keyframe_requests_total at least their sum.

Like webrtc_whip_test, in a network namespace of its own (libnice offers no loopback address)."""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

if os.environ.get("SLUICE_WHIP_NETNS") != "1":
    os.environ["SLUICE_WHIP_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "--net", "--", sys.executable, os.path.abspath(__file__)] + sys.argv[1:])

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ip", "gst-launch-1.0")
for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
            ["ip", "addr", "add", "10.99.0.1/24", "dev", "v0"], ["ip", "link", "set", "v0", "up"],
            ["ip", "link", "set", "v1", "up"]):
    subprocess.run(cmd, check=True)
t_start = time.time()
here = os.path.dirname(__file__)
hport = free_port()
server = Server("webrtc-keyframe", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                              "webrtc:\n  listen: 10.99.0.1:8189\nworkers: 2\n").start()
check(wait_port(hport), "the HTTP listener is up")
base = f"http://127.0.0.1:{hport}/live/cam"
PLAY_S = 12
publisher = subprocess.Popen([sys.executable, os.path.join(here, "webrtc_whip_gst.py"), base + "/whip", "40", "", "1000"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def loop_of(event):
    """The worker loops of the WebRTC sessions whose `event` line names live/cam, in order."""
    return [int(m) for m in re.findall(r"webrtc=(\d+)-\S+ event=" + event + r" app=live stream=cam proto=webrtc",
                                       server.log_text())]


players = []
try:
    check(wait_for(lambda: loop_of("publish"), 15), "the WHIP publish is logged")
    home = loop_of("publish")[0]
    time.sleep(2.5)  # the publisher's first keyframes have come
    for _ in range(6):
        players.append(subprocess.Popen([sys.executable, os.path.join(here, "webrtc_whep_gst.py"), base + "/whep",
                                         str(PLAY_S), "0.6"], stdout=subprocess.PIPE,
                                        stderr=open(os.path.join(server.dir, f"whep{len(players)}.stderr"), "w"),
                                        text=True))
        if not wait_for(lambda: len(loop_of("play")) == len(players), 15):
            players[-1].kill()
            fail(f"WHEP player {len(players)} does not play: {players[-1].communicate()[0][-1500:]}")
        loops = loop_of("play")
        if home in loops and any(w != home for w in loops):
            break
    loops = loop_of("play")
    print(f"INFO publisher on loop {home}, players on loops {loops}")
    check(home in loops and any(w != home for w in loops),
          "players on the publisher's loop and on the other one (started until both were)")
    outputs = [p.communicate(timeout=PLAY_S + 30)[0] for p in players]
finally:
    # A failed check must not leave a publisher (or a player) running after the test.
    for p in players + ([publisher] if sys.exc_info()[0] is not None else []):
        if p.poll() is None:
            p.kill()
requests = 0
for i, (out, loop) in enumerate(zip(outputs, loops)):
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    keyframes = [line["keyframe"] for line in lines if "keyframe" in line]
    asked = [line["asked"] for line in lines if "asked" in line]
    # The publisher is asked at most twice a second, whoever asks: a request that came within
    # 0.55 s of a keyframe (another player's, whose request was just sent) may be left out.
    judged = [a for a in asked if not any(a - 0.55 < k < a for k in keyframes)]
    late = []
    for a in judged:
        after = [k for k in keyframes if k > a]
        if after and after[0] - a > 0.6:
            late.append((a, round(after[0] - a, 3)))
    answered = [a for a in asked if any(k > a for k in keyframes)]
    judged_answered = [a for a in judged if any(k > a for k in keyframes)]
    print(f"INFO player {i} (loop {loop}): keyframes at {keyframes}, asked at {asked}")
    check(len(judged_answered) >= 5, f"player {i} (loop {loop}) asked for a keyframe {len(judged_answered)} times "
          "(>= 5) with none in the 0.55 s before, and got one")
    check(not late, f"player {i}: each such request answered by a keyframe within 0.6 s (late: {late})")
    requests += len(answered)  # a last request may not have left before the player ended


def counted():
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{hport}/metrics", timeout=10).read().decode()
    m = re.search(r"^sluice_keyframe_requests_total (\S+)$", metrics, re.M)
    return float(m.group(1)) if m else None


# The other loop's count reaches /metrics in its next snapshot (every 250 ms): a request made
# just before the players ended may be in it only then.
total = counted()
deadline = time.time() + 2
while (total is None or total < requests) and time.time() < deadline:
    time.sleep(0.1)
    total = counted()
check(total is not None and total >= requests, f"sluice_keyframe_requests_total counts them ({total} >= {requests})")
publisher.kill()
publisher.communicate(timeout=10)
check(wait_for(lambda: len(re.findall(r"event=webrtc_close stream=live/cam reason=\S.*? keyframe_requests=([1-9]\d*)",
                                      server.log_text())) >= len(players), 10),
      "each WHEP session's close line counts its requests")
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
