#!/usr/bin/python3
"""What an SRT caller is refused for, and what it sees (docs/srt.md, docs/security.md).

In the handshake (the connection never exists), with SRT's reject reason 1000 + an HTTP status:
  - a stream id Sluice does not read (mode bidirectional, no resource, a '..' segment): 1400;
  - an app that does not exist, or is no live app: 1404;
  - a publish key missing: 1401, wrong: 1403; an address the app's rules deny: 1403;
  - a wrong or missing passphrase (an app's own `srt.passphrase`): libsrt's own refusal, reason
    10 (BADSECRET) or 11 (UNSECURE).
A libsrt caller (ctypes) reads the exact reject reason. The real clients only show libsrt's text
for it (Debian's libsrt 1.5.1 logs the reject on stderr; none of them prints the code):
  - ffmpeg 5.1: `processAsyncConnectRequest: REJECT reported from HS processing: Application-defined
    rejection reason - not processing further`, then `Connection to srt://... failed: Input/output
    error`; exit status 1. A passphrase refusal says `Incorrect passphrase` or `Password required
    or unexpected` in the same line.
  - srt-live-transmit 1.5.1 (-a:no): the same libsrt line; it then ends, with exit status 0,
    mostly: about one time in twenty it stays after printing the refusal (its main thread waits
    for an event libsrt never gives it, with the server long done), so the test waits for the
    line, not for the exit, and stops it.
  - GStreamer 1.22 srtsink (auto-reconnect=false): `Failed to write to SRT socket: Error on SRT
    socket: Application-defined rejection reason`; srtsrc: `Failed to authenticate: Incorrect
    passphrase`; exit status 1.
Each refusal is logged (`event=srt_rejected stream_id=... code=... reason=...`, at most one line
a second, so the cases are a second apart) and counted in /metrics.

After the handshake (the connection is accepted, then closed by the server): an on_publish hook
that answers 403 (the hook is told protocol "srt" and the key), and an app's publishers limit.

A second publisher of a live name (publish_conflict: takeover, the default) takes the stream: the
first publisher's SRT connection is closed (its ffmpeg ends), and an RTMP player that keeps
playing gets a contiguous run of the first source's frames, then a contiguous run of the second
source's from a keyframe on, timestamps rising across the switch, and decodes it all."""
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from srt_tools import (Client, SrtCaller, TsSource, capture_media, contiguous_at, decoded, ffmpeg_publish,  # noqa: E402
                       ffmpeg_read, log_lines, make_ts_source, slt_uri, srt_close_line, srt_conns,
                       srt_server, steps_ok)

require_tools("ffmpeg", "srt-live-transmit", "gst-launch-1.0")
t_start = time.time()
REJECT_TEXT = "Application-defined rejection reason"
SECRET = "secret-pass-123"


class Hook:
    """on_publish: 403 {"reason": ...} for stream "deny", 200 {} otherwise; records the bodies."""

    def __init__(self):
        self.bodies = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                hook.bodies.append(body)
                deny = body.get("stream") == "deny"
                data = json.dumps({"reason": "hook says no"} if deny else {}).encode()
                self.send_response(403 if deny else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


hook = Hook()
vroot = workdir("srt-refusals-vod")
apps = f"""  live: {{ type: live, gop_cache: true }}
  secret: {{ type: live, srt: {{ passphrase: "{SECRET}" }} }}
  keyed: {{ type: live, publish: {{ keys: [k-one] }} }}
  walled: {{ type: live, publish: {{ deny: [127.0.0.0/8] }} }}
  capped: {{ type: live, limits: {{ publishers: 1, players_per_stream: 1 }} }}
  vod: {{ type: vod, root: {vroot} }}
"""
server, port, hport = srt_server("srt-refusals", apps=apps, http=True,
                                 extra_yaml=f"hooks:\n  on_publish: {hook.url}/publish\n")
d = server.dir
src_a = make_ts_source(os.path.join(d, "a.ts"), seconds=25)
src_b = make_ts_source(os.path.join(d, "b.ts"), seconds=25, tone=880, vf="negate")
A, B = TsSource(src_a), TsSource(src_b)
check(not set(A.frames) & set(B.frames), "the two sources share no picture")
procs = []


def ffmpeg_try(label, streamid, passphrase=None, seconds=8):
    """ffmpeg publishes (or reads, for a reader's stream id) once; (exit status, stderr, seconds)."""
    t0 = time.time()
    if streamid.startswith("publish:") or "m=publish" in streamid:
        c = ffmpeg_publish(d, src_a, port, streamid, passphrase=passphrase, loop=False, name="ff-" + label)
    else:
        c = ffmpeg_read(d, port, streamid, os.path.join(d, label + ".ts"), 2, passphrase=passphrase, name="ff-" + label)
    rc = c.wait(seconds)
    c.stop()
    return rc, c.stderr(), time.time() - t0


last_logged = [0.0]


def log_gap():
    """Refusals are logged at most once a second: wait for the next line to be free."""
    time.sleep(max(0.0, last_logged[0] + 1.1 - time.time()))


# --- refused in the handshake ------------------------------------------------------------------------
cases = [
    ("bidirectional", "#!::r=live/cam,m=bidirectional", 1400, "bad stream id"),
    ("no-resource", "#!::m=publish", 1400, "bad stream id"),
    ("dot-dot", "publish:live/a/../b", 1400, "invalid stream name"),
    ("unknown-app", "#!::r=nope/cam,m=publish", 1404, "no app 'nope'"),
    ("vod-app", "read:vod/clip", 1404, "not a live app"),
    ("missing-key", "publish:keyed/cam", 1401, ""),
    ("wrong-key", "#!::r=keyed/cam,m=publish,key=k-bad", 1403, ""),
    ("address-denied", "publish:walled/cam", 1403, ""),
]
metric0 = guard_events(hport).get("srt_rejected", 0)
for label, sid, code, reason in cases:
    log_gap()
    c = SrtCaller(port, sid)
    last_logged[0] = time.time()
    check(not c.connected and c.reject == code, f"{label}: {sid!r} is refused in the handshake with reason {code} "
                                                f"(got {'a connection' if c.connected else c.reject})")
    c.close()
    ok = wait_for(lambda: [l for l in log_lines(server, "event=srt_rejected", f"code={code} ")
                           if f'stream_id="{sid}"' in l and reason in l], 3)
    line = next((l for l in log_lines(server, "event=srt_rejected", f"code={code} ") if f'stream_id="{sid}"' in l), "")
    check(ok, f"{label}: the log has event=srt_rejected stream_id=\"{sid}\" code={code} "
              f"reason=\"{line.split('reason=', 1)[-1] if line else '...' + reason + '...'}")
    rc, err, took = ffmpeg_try(label, sid)
    last_logged[0] = time.time()  # its refusal may have been logged too
    check(rc not in (0, None) and REJECT_TEXT in err and took < 6,
          f"{label}: ffmpeg exits ({rc}) within {took:.1f} s and prints libsrt's '{REJECT_TEXT}' "
          f"({err.strip()[-200:]!r})")
check(guard_events(hport).get("srt_rejected", 0) - metric0 >= 2 * len(cases),
      "/metrics counts every handshake refusal (sluice_guard_events_total{event=\"srt_rejected\"})")

# srt-live-transmit and GStreamer on one refusal each.
def slt_try(label, streamid, passphrase=None):
    """srt-live-transmit tries to publish once: (its stderr, seconds until it printed libsrt's
    refusal or gave up waiting). It is stopped then (see the docstring: it does not always end)."""
    t0 = time.time()
    c = Client("slt-" + label, ["srt-live-transmit", "-a:no", "-chunk:1316", "file://con",
                                slt_uri(port, streamid, passphrase)], d, stdin=subprocess.PIPE)
    wait_for(lambda: "REJECT" in c.stderr() or "SRT target connected" in c.stderr() or not c.alive(), 6, step=0.02)
    took = time.time() - t0
    c.proc.stdin.close()
    c.stop()
    return c.stderr(), took


err, took = slt_try("wrong-key", "#!::r=keyed/cam,m=publish,key=k-bad")
check(REJECT_TEXT in err and "SRT target connected" not in err and took < 3,
      f"srt-live-transmit, refused (1403), prints '{REJECT_TEXT}' at once (after {took:.1f} s: "
      f"{err.strip()[-200:]!r})")
p = subprocess.run(["timeout", "8", "gst-launch-1.0", "filesrc", f"location={src_a}", "!", "srtsink",
                    f"uri=srt://127.0.0.1:{port}", "streamid=publish:nope/cam", "auto-reconnect=false"],
                   capture_output=True, text=True)
gst_err = p.stdout + p.stderr
check(p.returncode == 1 and f"Error on SRT socket: {REJECT_TEXT}" in gst_err,
      f"GStreamer srtsink, refused (1404), fails with 'Error on SRT socket: {REJECT_TEXT}' (exit {p.returncode})")

# --- an app's passphrase --------------------------------------------------------------------------------
c = SrtCaller(port, "publish:secret/cam")
check(not c.connected and c.reject == 11, f"secret: no passphrase is refused by libsrt (reason 11 UNSECURE; got {c.reject})")
c.close()
c = SrtCaller(port, "publish:secret/cam", passphrase="wrong-pass-456")
check(not c.connected and c.reject == 10, f"secret: a wrong passphrase is refused by libsrt (reason 10 BADSECRET; got {c.reject})")
c.close()
c = SrtCaller(port, "read:secret/cam", passphrase=SECRET)
check(c.connected, f"secret: the app's passphrase connects ({c.reject_text})")
c.close()
c = SrtCaller(port, "read:live/cam", passphrase=SECRET)
check(not c.connected and c.reject == 11, f"live: a passphrase where the app has none is refused (reason {c.reject})")
c.close()
rc, err, took = ffmpeg_try("secret-none", "publish:secret/cam")
check(rc not in (0, None) and "Password required or unexpected" in err,
      f"ffmpeg without the passphrase exits ({rc}) with libsrt's 'Password required or unexpected'")
rc, err, took = ffmpeg_try("secret-wrong", "publish:secret/cam", passphrase="wrong-pass-456")
check(rc not in (0, None) and "Incorrect passphrase" in err,
      f"ffmpeg with a wrong passphrase exits ({rc}) with libsrt's 'Incorrect passphrase'")
err, took = slt_try("secret-wrong", "publish:secret/cam", passphrase="wrong-pass-456")
check("Incorrect passphrase" in err and took < 3,
      f"srt-live-transmit with a wrong passphrase prints 'Incorrect passphrase' at once (after {took:.1f} s)")
p = subprocess.run(["timeout", "8", "gst-launch-1.0", "srtsrc", f"uri=srt://127.0.0.1:{port}", "streamid=read:secret/cam",
                    "passphrase=wrong-pass-456", "auto-reconnect=false", "!", "fakesink"], capture_output=True, text=True)
check(p.returncode == 1 and "Incorrect passphrase" in p.stdout + p.stderr,
      f"GStreamer srtsrc with a wrong passphrase fails with 'Incorrect passphrase' (exit {p.returncode})")
pub = ffmpeg_publish(d, src_a, port, "publish:secret/cam", passphrase=SECRET, name="secret-pub")
procs.append(pub)
check(wait_for(lambda: log_lines(server, "event=publish", "app=secret", "stream=cam", "proto=srt"), 8),
      "secret: ffmpeg with the app's passphrase publishes")
lines = probe(server.url("secret/cam"), "--duration", "2", timeout=10)
got = [f for _, f, _ in probe_events(lines, "video") if f["seq"] == "0"]
check(len(got) >= 30 and got[0]["key"] == "1", f"secret: an RTMP player gets its frames ({len(got)}), a keyframe first")
pub.stop()

# --- a right key -------------------------------------------------------------------------------------
pub = ffmpeg_publish(d, src_a, port, "#!::r=keyed/cam,m=publish,key=k-one", name="keyed-pub")
procs.append(pub)
check(wait_for(lambda: log_lines(server, "event=publish", "app=keyed", "stream=cam", "proto=srt"), 8),
      "keyed: ffmpeg with the key (#!::r=keyed/cam,m=publish,key=k-one) publishes")
body = next((b for b in hook.bodies if b.get("app") == "keyed"), {})
check(body.get("protocol") == "srt" and body.get("params", {}).get("key") == "k-one" and body.get("stream") == "cam",
      f"the on_publish hook is told protocol srt, the stream and the key ({body})")
pub.stop()

# --- refused after the handshake -------------------------------------------------------------------------
def closes_seen(label, streamid, send, tries=4, within=2.0):
    """`tries` callers are accepted, then closed by the server: each must see its connection
    closed within `within` s. (With libsrt 1.5.1 a listener that closes a socket at once after
    srt_accept can beat its own handshake answer: the caller ignores the shutdown, takes the
    answer, and believes itself connected until its peer idle timeout, 5 s. A plain libsrt
    listener does the same about one time in two; 5 ms later, never. So a few tries.)"""
    seen = []
    for _ in range(tries):
        c = SrtCaller(port, streamid)
        check(c.connected, f"{label}: the caller's handshake succeeds (the refusal comes once the connection exists)")
        took = c.wait_closed(within, send=send)
        c.close()
        check(took is not None, f"{label}: the caller sees the server close its connection within {within} s "
                                f"({', '.join(f'{t:.2f}' for t in seen + [took or within])} s)")
        seen.append(took)


closes_seen("hook", "publish:live/deny", send=True)
check(log_lines(server, "event=publish_rejected", "app=live", 'stream="deny"', "hook says no"),
      "hook: the log has event=publish_rejected ... with the hook's reason")
rc, err, took = ffmpeg_try("hook-deny", "publish:live/deny")
check(rc not in (0, None) and took < 8, f"hook: ffmpeg ends ({rc}) {took:.1f} s after the server closed its connection")
print(f"INFO ffmpeg refused by the hook prints: {err.strip()[-300:]!r}")

pub = ffmpeg_publish(d, src_a, port, "publish:capped/one", name="capped-one")
procs.append(pub)
check(wait_for(lambda: log_lines(server, "event=publish", "app=capped", "stream=one", "proto=srt"), 8),
      "limits: the first publisher of app capped publishes")
closes_seen("limits: a second publisher in the app", "publish:capped/two", send=True)
check(log_lines(server, "event=publish_rejected", "app=capped", 'stream="two"'),
      "limits: the log has event=publish_rejected app=capped stream=\"two\"")
reader = SrtCaller(port, "read:capped/one")
check(reader.connected and reader.wait_closed(1) is None, "limits: a first reader of capped/one is served")
closes_seen("limits: a second reader (players_per_stream: 1)", "read:capped/one", send=False)
reader.close()
check(log_lines(server, "event=play_rejected", "app=capped", 'stream="one"'),
      "limits: the log has event=play_rejected app=capped stream=\"one\"")
check(pub.alive(), "limits: the first publisher goes on")
pub.stop()

# --- takeover ----------------------------------------------------------------------------------------
pub_a = ffmpeg_publish(d, src_a, port, "#!::r=live/t,m=publish", name="takeover-a")
procs.append(pub_a)
check(wait_for(lambda: log_lines(server, "event=publish", "app=live", "stream=t ", "proto=srt"), 8), "takeover: A publishes live/t")
time.sleep(2)
player_out = os.path.join(d, "takeover.flv")
player = subprocess.Popen(["timeout", "-k", "2", "30", "ffmpeg", "-nostdin", "-loglevel", "error", "-i",
                           server.url("live/t"), "-map", "0", "-c", "copy", "-t", "9", "-f", "flv", player_out],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
time.sleep(3.5)
pub_b = ffmpeg_publish(d, src_b, port, "publish:live/t", name="takeover-b")
procs.append(pub_b)
check(wait_for(lambda: log_lines(server, "event=publish", "app=live", "stream=t ", "proto=srt", "takeovers=1"), 8),
      "takeover: B publishes live/t over A (event=publish ... takeovers=1)")
conns = srt_conns(server, "live/t", "publish")
check(len(conns) == 2, f"takeover: two SRT publishers of live/t were logged ({conns})")
check(wait_for(lambda: srt_close_line(server, conns[0]), 5), "takeover: A's SRT connection is closed by the server")
print("INFO " + srt_close_line(server, conns[0]))
check(log_lines(server, f"conn={conns[0]} ", "event=unpublish", "proto=srt"), "takeover: A's unpublish is logged with a reason")
rc_a = pub_a.wait(10)
check(rc_a not in (0, None), f"takeover: A's ffmpeg ends with an error ({rc_a})")
print(f"INFO ffmpeg A, replaced, prints: {pub_a.stderr().strip()[-300:]!r}")
player_err = player.communicate(timeout=30)[1].decode(errors="replace")
check(player.returncode == 0, f"takeover: the RTMP player played 9 s without an end ({player_err[-300:]!r})")
check(pub_b.alive(), "takeover: B is still publishing")
pub_b.stop()

m = capture_media(player_out)
v = [f["md5"] for f in m["video"]]
first_b = next((i for i, h in enumerate(v) if B.owns(h)), -1)
check(first_b > 25, f"takeover: the player got A's frames ({first_b}), then B's")
check(contiguous_at(v[:first_b], A.video) >= 0, "takeover: A's part is a contiguous run of A's frames")
check(len(v) - first_b > 50 and contiguous_at(v[first_b:], B.video) >= 0,
      f"takeover: B's part ({len(v) - first_b} frames) is a contiguous run of B's frames")
check(m["video"][first_b]["idr"] and m["video"][first_b]["key"], "takeover: B's part starts on a keyframe")
vt = [f["t"] for f in m["video"]]
check(all(b > a for a, b in zip(vt, vt[1:])) and vt[first_b] - vt[first_b - 1] < 1000 and
      steps_ok(vt[:first_b], 40, 1.01) and steps_ok(vt[first_b:], 40, 1.01),
      f"takeover: video timestamps rise by 40 ms, and on across the switch (+{vt[first_b] - vt[first_b - 1]} ms)")
a = [f["md5"] for f in m["audio"]]
first_b_audio = next((i for i, h in enumerate(a) if h in set(B.audio)), -1)
check(first_b_audio > 0 and contiguous_at(a[:first_b_audio], A.audio) >= 0 and
      contiguous_at(a[first_b_audio:], B.audio) >= 0, "takeover: the audio is a run of A's frames, then of B's")
at = [f["t"] for f in m["audio"]]
check(all(b >= a for a, b in zip(at, at[1:])), "takeover: audio timestamps never go back")
frames, _, err = decoded(m["clean"])
check(err == "" and len(frames) == len(v), f"takeover: the capture decodes without an error ({err[-200:]!r})")
check(contiguous_at(frames[:first_b], A.frames) >= 0 and contiguous_at(frames[first_b:], B.frames) >= 0,
      "takeover: the decoded pictures are a run of A's, then a run of B's")

for p in procs:
    p.stop()
check(server.alive(), "server still running")
rc = server.stop()
check(rc == 0, f"server exited 0 on SIGTERM (got {rc})")
check("AddressSanitizer" not in server.log_text(), "no AddressSanitizer report in the server's log")
print(f"INFO took {time.time() - t_start:.1f} s")
print("PASS")
