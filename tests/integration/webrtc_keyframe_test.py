#!/usr/bin/python3
"""A WHEP player's keyframe request reaches a WHIP publisher (docs/webrtc.md, "Keyframes"): a
player that lost a picture sends an RTCP PLI, and the publisher's encoder is asked for a keyframe
at once instead of at its next GOP.

webrtc_whip_gst.py publishes over WHIP with a keyframe only every 1000 frames (40 s): past 2 s
without one the server asks for one itself, so keyframes come every 2 s without the players.
WHEP players (webrtc_whep_gst.py: GStreamer's webrtcbin) ask for a keyframe 0.3 s after each they
get; two workers, and players are started until one is on the publisher's loop and one on the
other (the request then goes through the owner). Checks:
  - every request the server got (5 and more per player) is answered by a keyframe at the player
    within 0.25 s of the end of the PLI interval it came in (the publisher is asked at most twice
    a second); here every request comes inside that interval (0.3 s after the keyframe the last
    PLI brought), so the server holds it and sends the PLI when the interval ends. Without that
    each was dropped and waited for the server's own request 2 s after the last keyframe (1.7 s
    late); without the forwarding the same. Timed from the server's receipt (its debug lines):
    the player's own RTP session sends a PLI when RFC 4585's early-feedback rules let it;
  - the PLIs to the publisher are at least 0.5 s apart;
  - the WHEP sessions' close lines count the requests, and /metrics' sluice_keyframe_requests_total
    those passed on (a player's request within 200 ms of its last is not).

Like webrtc_whip_test, in a network namespace of its own (libnice offers no loopback address)."""
import datetime
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
# Debug: the server's keyframe_request, pli_sent and pli_held lines say where a late answer waited.
server = Server("webrtc-keyframe", extra_yaml=f"http:\n  listen: 127.0.0.1:{hport}\n"
                                              "webrtc:\n  listen: 10.99.0.1:8189\nworkers: 2\n",
                log_level="debug").start()
check(wait_port(hport), "the HTTP listener is up")
base = f"http://127.0.0.1:{hport}/live/cam"
PLAY_S = 12
ASK_AFTER = 0.3
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
                                         str(PLAY_S), str(ASK_AFTER)], stdout=subprocess.PIPE,
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
def wall(line):
    """A log line's time, in seconds."""
    return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f").timestamp()


# Timed from the server's receipt of each request, in each player's clock (seconds since its POST
# was answered, which is when the server logged the offer): how long the player's own RTP session
# takes to send a PLI is GStreamer's (RFC 4585 early feedback, once per RTCP interval) and not
# judged. A request is answered by the next keyframe within 0.25 s of the end of the PLI interval
# it came in (at once when it came after it); the PLIs to the publisher are 0.5 s apart or more.
log_lines = server.log_text().splitlines()
plis = [wall(line) for line in log_lines if "event=pli_sent" in line]
pli_gaps = [round(b - a, 3) for a, b in zip(plis, plis[1:])]
requests = 0
results = []
for i, (out, loop) in enumerate(zip(outputs, loops)):
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    keyframes = [line["keyframe"] for line in lines if "keyframe" in line]
    asked = [line["asked"] for line in lines if "asked" in line]
    session = next(line["location"] for line in lines if line.get("location")).rsplit("/", 1)[1]
    offered = next(wall(line) for line in log_lines if f"webrtc={session} event=webrtc_offer" in line)
    received = [round(wall(line) - offered, 3) for line in log_lines if f"webrtc={session} event=keyframe_request" in line]
    late = []
    for r in received:
        sent_before = [p - offered for p in plis if p - offered <= r]
        deadline = max(r, sent_before[-1] + 0.5 if sent_before else r) + 0.25
        after = [k for k in keyframes if k > r]
        if after and after[0] > deadline:
            late.append((r, round(after[0] - r, 3)))
    answered = [r for r in received if any(k > r for k in keyframes)]
    print(f"INFO player {i} (loop {loop}): keyframes at {keyframes}, asked at {asked}, the server got them at {received}")
    results.append((i, loop, answered, late))
    requests += sum(f"webrtc={session} event=keyframe_request forwarded=yes" in line for line in log_lines)
if any(late for _, _, _, late in results):
    print("INFO the server's keyframe lines:\n" + "\n".join(
        line for line in log_lines if re.search(r"event=(keyframe_request|pli_)", line)))
print(f"INFO PLIs to the publisher {len(plis)}, apart by {pli_gaps}")
# 0.5 s on the loop's clock (its iteration's start); a log line's time is when it was written.
check(pli_gaps and min(pli_gaps) >= 0.45, f"the publisher is asked at most twice a second ({min(pli_gaps or [0])} s apart)")
for i, loop, answered, late in results:
    check(len(answered) >= 5, f"player {i} (loop {loop}): the server got {len(answered)} requests (>= 5) answered")
    check(not late, f"player {i}: each request answered by a keyframe within 0.25 s of the end of its PLI interval "
          f"(late: {late})")


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
check(total is not None and total >= requests,
      f"sluice_keyframe_requests_total counts those passed on to the publisher ({total} >= {requests})")
publisher.kill()
publisher.communicate(timeout=10)
check(wait_for(lambda: len(re.findall(r"event=webrtc_close stream=live/cam reason=\S.*? keyframe_requests=([1-9]\d*)",
                                      server.log_text())) >= len(players), 10),
      "each WHEP session's close line counts its requests")
check(server.alive(), "the server is still running")
server.stop()
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
