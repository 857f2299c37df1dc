#!/usr/bin/python3
"""A reconnecting publisher takes its stream back at once (docs/live.md, "A second publisher of the
same name"), on a server with two worker loops.

- takeover (the default): ffmpeg A publishes; an RTMP probe, an ffmpeg RTMP player, rtmpdump and a
  curl HTTP-FLV reader play; A is stopped with SIGSTOP (no FIN, as after a network drop); ffmpeg B, another
  source (another picture and tone), publishes the same name and is live at once; later C takes
  it from B on the same loop (B's takeover of A crosses loops: RTMP connections go to the loops in
  turn). Every player's capture is a run of A's video packets, then B's, then C's, byte for byte and
  contiguous in their sources, each new run starting on a keyframe, timestamps rising throughout,
  no disconnect and no UnpublishNotify. SIGCONT A: none of its data reaches anyone, and ffmpeg A
  exits with an error; B, replaced while it sends, exits with the server's reason.
- keys: B with a wrong key is refused and A keeps the stream; with another valid key it takes it.
- reject: B is refused while A sends; after SIGSTOP A, B is refused until A has been quiet for
  publish_stale_after (2 s) and succeeds within 1 s after that.
Takeovers are counted in /metrics and shown by /api/v1/streams."""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from takeover_tools import Sources, capture_video, make_source, stream_info  # noqa: E402

require_tools("ffmpeg", "curl", "rtmpdump")

STALE_S = 2
hport = free_port()
apps = f"""  live: {{ type: live, gop_cache: true }}
  keyed: {{ type: live, publish: {{ keys: [k-one, k-two] }} }}
  strict: {{ type: live, publish_conflict: reject, publish_stale_after: {STALE_S}s }}
"""
server = Server("takeover", extra_yaml=f"workers: 2\nhttp:\n  listen: 127.0.0.1:{hport}\n", apps=apps).start()
check(wait_port(hport), "HTTP listener is up")
d = server.dir


src = Sources({"A": make_source(os.path.join(d, "a.flv"), "320x240", 440),
               "B": make_source(os.path.join(d, "b.flv"), "352x288", 660),
               "C": make_source(os.path.join(d, "c.flv"), "320x240", 880, pattern="smptebars")})
sources, owner_of, check_runs = src.paths, src.owner_of, src.check_runs


def api_stream(name):
    return stream_info(hport, name)


def metric(name):
    return guard_events(hport).get(name, 0)


# --- takeover: A, then B (another loop), then C (the same loop as B) ---------------------------------
url = server.url("live/t")
pub_a = publish_ffmpeg(sources["A"], url)
time.sleep(2.5)
watcher = probe_async(url, "--duration", "24", "--epoch")  # RTMP connection 1 after A
ff_out = os.path.join(d, "ffmpeg-player.flv")
ff_player = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", url, "-c", "copy", "-f", "flv",
                              ff_out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # connection 2
rd_out = os.path.join(d, "rtmpdump.flv")
rtmpdump = subprocess.Popen(["rtmpdump", "-q", "-r", url, "--live", "-o", rd_out],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # connection 3
curl_out = os.path.join(d, "http.flv")
curl = subprocess.Popen(["curl", "-s", "-o", curl_out, f"http://127.0.0.1:{hport}/live/t.flv"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(4)
pub_a.send_signal(signal.SIGSTOP)
time.sleep(1)
socket.create_connection(("127.0.0.1", server.port)).close()  # connection 4
time.sleep(0.3)
t_b = time.time()
pub_b = publish_ffmpeg(sources["B"], url)  # connection 5 after A: the other loop
check(wait_for(lambda: (api_stream("live/t") or {}).get("takeovers") == 1, 3), "B took the stream over")
b_since = api_stream("live/t")["publisher"]["since_unix_ms"] / 1000
check(b_since - t_b < 1.5, f"B's publish was accepted {b_since - t_b:.2f} s after it started (< 1.5)")
time.sleep(6)
socket.create_connection(("127.0.0.1", server.port)).close()  # connection 6: C lands on B's loop
time.sleep(0.3)
pub_c = publish_ffmpeg(sources["C"], url)  # connection 7
check(wait_for(lambda: (api_stream("live/t") or {}).get("takeovers") == 2, 3), "C took the stream over from B")
time.sleep(5)
pub_a.send_signal(signal.SIGCONT)  # a frozen encoder wakes up: its connection is gone
pub_a.communicate(timeout=20)
check(pub_a.returncode != 0, "ffmpeg A ends with an error")
time.sleep(3)
b_err = pub_b.communicate(timeout=20)[1].decode(errors="replace")
check("replaced by a new publisher" in b_err, "ffmpeg B was told why when C took over")

probe_lines = watcher.lines()
check(ff_player.poll() is None, "the ffmpeg player is still playing (no end of stream)")
check(curl.poll() is None, "the HTTP-FLV reader is still reading")
check(rtmpdump.poll() is None, "rtmpdump is still playing")
stop_proc(ff_player)
rtmpdump.send_signal(signal.SIGINT)
rtmpdump.wait(timeout=10)
curl.send_signal(signal.SIGINT)
curl.wait(timeout=10)
stop_proc(pub_c)

statuses = [l.split()[2] for l in probe_lines if l.startswith("status")]
check("NetStream.Play.UnpublishNotify" not in statuses, f"the probe was never told of an end ({statuses})")
check(probe_lines and probe_lines[-1] == "end reason=duration", f"the probe stayed connected ({probe_lines[-1:]})")
video = [f for _, f, _ in probe_events(probe_lines, "video") if f["seq"] == "0"]
check_runs("rtmp probe", [f["md5"] for f in video], [int(f["ts"]) for f in video], ["A", "B", "C"])
play_sent = int(probe_events(probe_lines, "play")[0][1]["epoch_ms"]) / 1000
first_b = next(ms for ms, f, _ in probe_events(probe_lines, "video") if owner_of.get(f["md5"]) == "B")
delay = play_sent + first_b / 1000 - b_since
check(delay < 1.0, f"B's first frame reached the probe {delay:.2f} s after B's publish was accepted (< 1)")
audio = [int(f["ts"]) for _, f, _ in probe_events(probe_lines, "audio") if f["seq"] == "0"]
check(all(b >= a for a, b in zip(audio, audio[1:])), "rtmp probe: audio timestamps keep rising")
for name, path in (("ffmpeg player", ff_out), ("rtmpdump", rd_out), ("HTTP-FLV reader", curl_out)):
    tags = flv_tags(path)
    vid = capture_video(path)
    check_runs(name, [m for _, m in vid][:-2], [ts for ts, _ in vid], ["A", "B", "C"])
    aud = [ts for t, ts, *_ in tags if t == 8]
    check(all(b >= a for a, b in zip(aud, aud[1:])), f"{name}: audio timestamps keep rising")
log = server.log_text()
check("replaced by a new publisher (on another loop)" in log, "B's takeover crossed loops")
check("replaced by a new publisher (conn " in log, "C's takeover was on the same loop")
check(metric("publish_takeover") == 2, "/metrics: 2 takeovers")

# --- keys: a wrong key changes nothing, another valid key takes over ---------------------------------
kurl = server.url("keyed/k")
pub_k1 = publish_ffmpeg(sources["A"], kurl + "?key=k-one")
time.sleep(2)
watcher = probe_async(kurl, "--duration", "9")
time.sleep(1)
wrong = subprocess.run(["timeout", "-k", "2", "15", "ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i",
                        sources["B"], "-c", "copy", "-f", "flv", kurl + "?key=wrong"], capture_output=True, text=True)
check(wrong.returncode != 0, "a publisher with a wrong key is refused")
check(pub_k1.poll() is None, "the publisher with the right key keeps its stream")
time.sleep(1)
pub_k2 = publish_ffmpeg(sources["B"], kurl + "?key=k-two")
lines = watcher.lines()
stop_proc(pub_k2)
pub_k1.wait(timeout=10)
video = [f for _, f, _ in probe_events(lines, "video") if f["seq"] == "0"]
check_runs("keyed probe", [f["md5"] for f in video], [int(f["ts"]) for f in video], ["A", "B"])

# --- reject: refused while A sends; A quiet for publish_stale_after: replaced -------------------------
surl = server.url("strict/s")
pub_s = publish_ffmpeg(sources["A"], surl)
time.sleep(2)
refused = subprocess.run(["timeout", "-k", "2", "15", "ffmpeg", "-nostdin", "-loglevel", "error", "-re", "-i",
                          sources["B"], "-c", "copy", "-f", "flv", surl], capture_output=True, text=True)
check(refused.returncode != 0 and "already publishing" in refused.stderr,
      f"reject: a second publisher is refused while the first sends ({refused.stderr.strip()[-160:]!r})")
pub_s.send_signal(signal.SIGSTOP)
t_stop = time.time()


def new_publisher_since(after):
    """When the current publisher of strict/s began, if that is after `after` (the API's view)."""
    pub = (api_stream("strict/s") or {}).get("publisher") or {}
    since = (pub.get("since_unix_ms") or 0) / 1000
    return since if since > after else None


winner, attempts = None, []
while time.time() - t_stop < STALE_S + 3 and winner is None:
    t_try = time.time() - t_stop
    p = publish_ffmpeg(sources["B"], surl)
    # Refused: ffmpeg exits. Accepted: the API shows a publisher that began after A went quiet.
    wait_for(lambda: p.poll() is not None or new_publisher_since(t_stop) is not None, 5, step=0.05)
    if new_publisher_since(t_stop) is not None:
        winner = p
        attempts.append((t_try, None))
    else:
        p.wait(timeout=10)
        attempts.append((t_try, p.returncode))
check(winner is not None, f"reject: a publisher takes over once the first is quiet ({attempts})")
took = new_publisher_since(t_stop) - t_stop
check(STALE_S - 0.1 <= took <= STALE_S + 1.0,
      f"reject: accepted {took:.2f} s after the first went quiet (publish_stale_after {STALE_S} s, within 1 s)")
check(all(rc not in (None, 0) for _, rc in attempts[:-1]), "reject: every earlier attempt was refused")
stop_proc(winner)
pub_s.send_signal(signal.SIGCONT)
pub_s.wait(timeout=20)
check(metric("publish_stale_replaced") == 1, "/metrics: 1 stale publisher replaced")
check(metric("publish_conflict_refused") >= 2, "/metrics: the refusals counted")

check(server.alive(), "server still running")
check(server.stop() == 0, "server exits 0")
print("PASS")
