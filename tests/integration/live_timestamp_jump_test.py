#!/usr/bin/python3
"""A jump of the publisher's clock in the middle of a GOP is closed up at ingest.

A raw RTMP publisher sends a file's messages and, in the middle of a GOP, moves its clock by +60 s
(the other case: back by 100 s). A player that joins right after the jump is replayed that GOP,
which spans the jump: it must not be closed as a slow player (the queue's media-time measure must
not read the jump as backlog), it must get the GOP's frames byte-exact from its key frame, and its
timestamps must be continuous and rising per track. A player that was already watching sees the
same continuous time. The jump is logged and counted in /metrics. The slow-player rule itself is
covered by live_slow_player_test."""
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from rtmp_client import RtmpClient, flv_media_messages, is_keyframe  # noqa: E402

require_tools("ffmpeg")

GOP_MS = 2000


def player(port, name):
    c = RtmpClient(port)
    c.connect("live")
    c.create_stream()
    c.play(name)
    if not c.wait_status("NetStream.Play.Start"):
        fail("player: no NetStream.Play.Start")
    return c


def publisher(port, name):
    c = RtmpClient(port)
    c.set_chunk_size(4096)
    c.connect("live")
    c.create_stream()
    c.publish(name)
    if not c.wait_status("NetStream.Publish.Start"):
        fail("publisher: no NetStream.Publish.Start")
    return c


def is_config(t, payload):
    return (t == 9 and len(payload) > 1 and payload[1] == 0 and (payload[0] & 0x0F) == 7) or \
        (t == 8 and len(payload) > 1 and (payload[0] >> 4) == 10 and payload[1] == 0)


def check_continuous(label, msgs):
    """Per track, timestamps rise and no step is larger than a frame or two."""
    for t, what in ((9, "video"), (8, "audio")):
        stamps = [m.timestamp for m in msgs if m.type == t and not is_config(t, m.payload)]
        steps = [((b - a + (1 << 31)) & 0xFFFFFFFF) - (1 << 31) for a, b in zip(stamps, stamps[1:])]  # modular
        check(len(stamps) > 10, f"{label}: {len(stamps)} {what} messages")
        check(min(steps) >= 0, f"{label}: {what} timestamps never go back (smallest step {min(steps)} ms)")
        check(max(steps) <= 100, f"{label}: {what} timestamps have no jump (largest step {max(steps)} ms)")


def run_case(label, server, source, shift_before, shift_after):
    """Publishes source with timestamp + shift_before up to the middle of the second GOP and
    + shift_after from there on; a player joins right after the jump."""
    name = "jump_" + label
    media = [m for m in source if m[0] in (8, 9, 18)]
    keyframes = [ts for t, ts, p in media if is_keyframe(t, p) and not is_config(t, p)]
    gop_start = next(k for k in keyframes if k >= GOP_MS)
    jump_at = gop_start + GOP_MS // 2  # the middle of that GOP
    joined_at = jump_at + 400          # the joiner comes 400 ms of media after the jump
    watcher = player(server.port, name)
    pub = publisher(server.port, name)
    joiner = None
    start = time.time()
    for t, ts, payload in media:
        if joiner is None and ts >= joined_at:
            joiner = player(server.port, name)
            start = time.time() - ts / 1000.0  # from here on, in real time
        if joiner is not None:
            delay = ts / 1000.0 - (time.time() - start)
            if delay > 0:
                time.sleep(delay)
            joiner.read_some(0.001)
        else:
            time.sleep(0.004)  # about 10x real time: fast, but no burst the watcher's queue must drop
        watcher.read_some(0.001)
        out_ts = (ts + (shift_before if ts < jump_at else shift_after)) & 0xFFFFFFFF
        pub.media(t, out_ts, payload)
    pub.command("deleteStream", None, 1)
    for c in (watcher, joiner):
        c.wait_status("NetStream.Play.UnpublishNotify", timeout=10)
    pub.close()

    check(not joiner.closed, f"{label}: the player that joined after the jump was not disconnected")
    got = [m for m in joiner.messages if m.type in (8, 9)]
    # From the GOP's key frame on, the joiner has every audio/video message of the source, byte-exact.
    want = [(t, p) for t, ts, p in media if t in (8, 9) and ts >= gop_start and not is_config(t, p)]
    got_media = [(m.type, m.payload) for m in got if not is_config(m.type, m.payload)]
    first_key = next(i for i, (t, p) in enumerate(got_media) if t == 9)
    check(is_keyframe(*got_media[first_key]), f"{label}: the joiner's first video frame is a key frame")
    pos = next((i for i, w in enumerate(want) if w == got_media[0]), -1)
    check(pos >= 0 and got_media == want[pos:], f"{label}: the joiner got the cached GOP across the jump and "
          f"everything after it, byte-exact ({len(got_media)} messages)")
    check(sum(1 for t, _ in got_media if t == 9) >= 25 * (joined_at - gop_start) // 1000,
          f"{label}: the joiner's GOP replay includes the frames from before the jump")
    check_continuous(f"{label}: joiner", joiner.messages)
    check(not watcher.closed, f"{label}: the player watching through the jump stayed connected")
    check_continuous(f"{label}: watcher", watcher.messages)
    w = [(m.type, m.payload) for m in watcher.messages if m.type in (8, 9)]
    check(w == [(t, p) for t, ts, p in media if t in (8, 9)], f"{label}: the watcher got every message, byte-exact")
    watcher.close()
    joiner.close()


hport = free_port()
# Hard limit 5 s of queued media: a 60 s jump read as backlog closes the joiner at once.
server = Server("ts-jump", extra_yaml=(
    "  player_queue: { soft_delay: 3s, hard_delay: 5s }\n"
    f"http:\n  listen: 127.0.0.1:{hport}\n")).start()
check(wait_port(hport), "HTTP listener is up")
src = make_media(os.path.join(server.dir, "src.flv"), seconds=7, fps=25, gop=50)
source = flv_media_messages(src)

run_case("forward", server, source, 0, 60000)
run_case("backward", server, source, 100000, 0)
run_case("wrap", server, source, 0xFFFFF000, 0x00001000)  # a jump across the 32-bit wrap

log = server.log_text()
check("event=slow_player" not in log, "no player was closed as a slow player")
check(log.count("event=timestamp_jump") >= 3, "each jump was logged")
metrics = urllib.request.urlopen(f"http://127.0.0.1:{hport}/metrics", timeout=5).read().decode()
line = next((ln for ln in metrics.splitlines() if 'sluice_guard_events_total{event="timestamp_jump"}' in ln), "")
check(line and int(float(line.split()[-1])) >= 3, f"the jumps are counted in /metrics ({line})")
check(server.stop() == 0, "server exits 0")
print("PASS")
