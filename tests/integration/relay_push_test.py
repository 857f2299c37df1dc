#!/usr/bin/python3
"""Push relays (docs/relays.md) between three real Sluice processes: ffmpeg publishes to A, whose
app pushes every stream to B and to C; B pushes on to C, so C gets the stream directly and through a
chain of three servers. Players on B and C get the publisher's packets byte for byte. C is killed
and restarted mid-stream: A's push comes back within its backoff and a new player on C starts on a
keyframe. When the publisher stops, A ends its pushes with FCUnpublish (B and C log the end of the
publication at once, not after a timeout). A target added through the API starts pushing the live
stream; removing it ends that push. The relay state is in the API and /metrics."""
import http.server
import json
import os
import threading
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg", "openssl")


def api(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            body = r.read()
            return r.status, json.loads(body) if body else None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def play(url, out, seconds):
    return subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", url, "-t", str(seconds), "-c", "copy",
                             "-f", "flv", "-y", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)



c_port, b_port, c_tls = free_port(), free_port(), free_port()
c_http, b_http, a_http = free_port(), free_port(), free_port()
apps_c = "  direct: { type: live }\n  chain: { type: live }\n  runtime: { type: live }\n  tls: { type: live }\n"
# C also takes RTMPS, with a self-signed certificate for localhost made here.
cert, key = make_cert(workdir("relay_push_certs"))


def start_c():
    return Server("relay_push_c", apps=apps_c, port=c_port,
                  extra_yaml=(f"http: {{ listen: 127.0.0.1:{c_http} }}\n"
                              f"rtmps: {{ listen: 127.0.0.1:{c_tls}, cert: {cert}, key: {key} }}\n")).start()


server_c = start_c()
server_b = Server("relay_push_b", extra_yaml=f"http: {{ listen: 127.0.0.1:{b_http} }}\n", port=b_port,
                  apps=f"  live:\n    type: live\n    push:\n      - url: rtmp://127.0.0.1:{c_port}/chain/\n").start()
# The name published on C/direct comes from the environment, as a platform's stream key would.
# The on_publish hook (a real HTTP server) adds one more target for the publication.
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"push": [{"url": f"rtmp://127.0.0.1:{c_port}/runtime/", "key": "fromhook"},
                                    "not a url"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
threading.Thread(target=hook.serve_forever, daemon=True).start()
server_a = Server("relay_push_a", extra_yaml=(f"http: {{ listen: 127.0.0.1:{a_http} }}\nworkers: 2\n"
                                              f"hooks: {{ on_publish: 'http://127.0.0.1:{hook.server_port}/publish' }}\n"),
                  apps=(f"  live:\n    type: live\n    push:\n"
                        f"      - url: rtmp://127.0.0.1:{b_port}/live\n"
                        f"      - url: rtmp://127.0.0.1:{c_port}/direct/\n        key_env: SLUICE_TEST_C_KEY\n"
                        f"        streams: [cam]\n"
                        # RTMPS targets: one that does not verify, one that does (and so refuses C's
                        # self-signed certificate).
                        f"      - {{ url: 'rtmps://localhost:{c_tls}/tls/', verify: false }}\n"
                        f"      - {{ url: 'rtmps://localhost:{c_tls}/tls/verified' }}\n"),
                  env={"SLUICE_TEST_C_KEY": "cam"}).start()
tmp = server_a.dir
src = make_media(os.path.join(tmp, "src.flv"), seconds=30)
source_tags = flv_tags(src)

try:
    pub = publish_ffmpeg(src, server_a.url("live/cam"))
    check(wait_for(lambda: len([r for r in api(a_http, "/api/v1/relays")[1]["push"] if r["state"] == "live"]) == 4, 10),
          "A's push targets to B, C, C over RTMPS and the hook's are live")
    check(wait_for(lambda: any(s["name"] == "runtime/fromhook" and s["live"] for s in api(c_http, "/api/v1/streams")[1]), 5),
          "the on_publish hook's target publishes on C under the key it gave")
    relays = api(a_http, "/api/v1/relays")[1]
    check(all(r["stream"] == "live/cam" for r in relays["push"]), f"all push live/cam ({relays['push']})")
    check(wait_for(lambda: any("certificate" in r["last_error"] for r in api(a_http, "/api/v1/relays")[1]["push"]), 5),
          f"the RTMPS target that verifies refuses the self-signed certificate ({relays['push']})")
    check(any(r["name"] == "(key)" for r in relays["push"]), "the target with a key does not show it")
    check(wait_for(lambda: any(r["state"] == "live" for r in api(b_http, "/api/v1/relays")[1]["push"]), 10),
          "B's push to C is live")
    time.sleep(1)
    outs = {n: os.path.join(tmp, n + ".flv") for n in ("b", "c_direct", "c_chain", "c_tls")}
    players = [play(server_b.url("live/cam"), outs["b"], 6), play(f"rtmp://127.0.0.1:{c_port}/direct/cam", outs["c_direct"], 6),
               play(f"rtmp://127.0.0.1:{c_port}/chain/cam", outs["c_chain"], 6),
               play(f"rtmp://127.0.0.1:{c_port}/tls/cam", outs["c_tls"], 6)]
    for p in players:
        p.wait(timeout=30)
    check_same_packets("player on B (A -> B)", outs["b"], source_tags, min_video=100, min_audio=100)
    check_same_packets("player on C (A -> C, the key as the name)", outs["c_direct"], source_tags, min_video=100, min_audio=100)
    check_same_packets("player on C through A -> B -> C", outs["c_chain"], source_tags, min_video=100, min_audio=100)
    check_same_packets("player on C of the RTMPS push", outs["c_tls"], source_tags, min_video=100, min_audio=100)

    metrics = urllib.request.urlopen(f"http://127.0.0.1:{a_http}/metrics", timeout=5).read().decode()
    check('sluice_relay_push_targets{state="live"} 4' in metrics, "/metrics counts the live push targets")

    # A target added at run time pushes the live stream; removing it ends that push.
    st, added = api(a_http, f"/api/v1/relays/push?app=live&url=rtmp%3A%2F%2F127.0.0.1%3A{c_port}%2Fruntime%2F", "POST")
    check(st == 201 and added["id"].startswith("r"), f"POST /api/v1/relays/push adds a target ({st} {added})")
    check(wait_for(lambda: any(s["name"] == "runtime/cam" and s["live"] for s in api(c_http, "/api/v1/streams")[1]), 10),
          "the added target publishes live/cam on C as runtime/cam")
    st, _ = api(a_http, f"/api/v1/relays/push/{added['id']}", "DELETE")
    check(st == 204, f"DELETE removes it ({st})")
    check(wait_for(lambda: not any(s["name"] == "runtime/cam" and s["live"] for s in api(c_http, "/api/v1/streams")[1]), 5),
          "and its push ends on C")
    st, _ = api(a_http, "/api/v1/relays/push?app=nope&url=rtmp%3A%2F%2Fx%2Fa", "POST")
    check(st == 404, f"a target for an unknown app is refused ({st})")
    st, _ = api(a_http, "/api/v1/relays/push?app=live&url=http%3A%2F%2Fx%2Fa", "POST")
    check(st == 400, f"a target that is not rtmp:// is refused ({st})")

    # Kill C mid-stream and bring it back on the same port: A (and B) come back within the backoff.
    server_c.stop(sig=9)
    check(wait_for(lambda: all(r["state"] != "live" for r in api(a_http, "/api/v1/relays")[1]["push"]
                               if r["url"].endswith("/direct")), 5), "A sees its target C go")
    check(pub.poll() is None, "the publisher is not disturbed by the dead target")
    b_mid = os.path.join(tmp, "b_mid.flv")
    b_player = play(server_b.url("live/cam"), b_mid, 3)
    time.sleep(2)
    server_c = start_c()
    t0 = time.time()
    check(wait_for(lambda: any(r["state"] == "live" and r["url"].endswith("/direct") for r in api(a_http, "/api/v1/relays")[1]["push"]), 8),
          "A's push to the restarted C is live again")
    back_s = time.time() - t0
    b_player.wait(timeout=20)
    check_same_packets("player on B while C was down", b_mid, source_tags, min_video=50, min_audio=50)
    after = os.path.join(tmp, "c_after.flv")
    p = play(f"rtmp://127.0.0.1:{c_port}/direct/cam", after, 4)
    p.wait(timeout=30)
    check_same_packets("player on C after its restart (starts on a keyframe)", after, source_tags, min_video=50, min_audio=50)
    attempts = [r for r in api(a_http, "/api/v1/relays")[1]["push"] if r["url"].endswith("/direct")][0]
    check(attempts["connects"] >= 2 and ("connect" in attempts["last_error"] or "closed" in attempts["last_error"]),
          f"the target's state says it reconnected ({attempts})")
    print(f"relay came back {back_s:.1f} s after C restarted")

    # The end: ffmpeg stops, A ends its pushes with FCUnpublish; B and C see the publication end.
    stop_proc(pub)
    check(wait_for(lambda: "event=publish_end stream=live/cam" in server_b.log_text(), 3),
          "B ends the publication at once when A's push sends FCUnpublish")
    check(wait_for(lambda: "event=publish_end stream=direct/cam" in server_c.log_text(), 3), "so does C")
    check(wait_for(lambda: api(a_http, "/api/v1/relays")[1]["push"] == [], 3), "A has no push targets left")
    for s in (server_a, server_b, server_c):
        check(s.alive(), "every server is still running")
    print("relay_push_test: OK")
finally:
    for s in (server_a, server_b, server_c):
        s.stop()
