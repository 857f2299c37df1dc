#!/usr/bin/python3
"""Relays with a foreign server (docs/relays.md): nginx with the RTMP module as a push target and as
an origin. ffmpeg publishes to Sluice; Sluice pushes the stream to nginx-rtmp; a Sluice app pulls it
back from nginx on demand. ffmpeg playing from nginx, and from Sluice through Sluice -> nginx ->
Sluice, gets the publisher's packets byte for byte. nginx is killed and restarted mid-stream: the
push comes back within its backoff and a player on nginx starts on a keyframe. When the publisher
stops, nginx ends the stream at once (FCUnpublish + deleteStream, nginx-rtmp-module issue 1595)."""
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import json
import re

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403

require_tools("ffmpeg")


def nginx_binary():
    # /usr/sbin is not on every user's PATH.
    for p in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if p and os.path.exists(p):
            return p
    skip("nginx not found: install nginx (tools/install-deps.sh test)")


def rtmp_module():
    for d in ("/usr/lib/nginx/modules", "/usr/lib64/nginx/modules"):
        p = os.path.join(d, "ngx_rtmp_module.so")
        if os.path.exists(p):
            return p
    skip("ngx_rtmp_module.so not found: install libnginx-mod-rtmp (tools/install-deps.sh test)")



def play(url, out, seconds):
    return subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", url, "-t", str(seconds), "-c", "copy",
                             "-f", "flv", "-y", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


module = rtmp_module()
nginx_bin = nginx_binary()
nginx_port, http_port = free_port(), free_port()
ndir = workdir("relay_nginx_peer")
with open(os.path.join(ndir, "nginx.conf"), "w") as f:
    f.write(f"""load_module {module};
daemon off;
master_process off;
worker_processes 1;
pid {ndir}/nginx.pid;
error_log {ndir}/error.log info;
events {{ worker_connections 256; }}
rtmp {{
  server {{
    listen 127.0.0.1:{nginx_port};
    chunk_size 4096;
    application live {{ live on; }}
  }}
}}
""")


def start_nginx():
    p = subprocess.Popen([nginx_bin, "-p", ndir, "-e", os.path.join(ndir, "error.log"), "-c", os.path.join(ndir, "nginx.conf")],
                         stdout=subprocess.DEVNULL, stderr=open(os.path.join(ndir, "stderr.log"), "a"))
    check(wait_port(nginx_port), "nginx-rtmp listens")
    return p


nginx = start_nginx()
server = Server("relay_nginx", extra_yaml=f"http: {{ listen: 127.0.0.1:{http_port} }}\n",
                apps=(f"  live:\n    type: live\n    push:\n      - url: rtmp://127.0.0.1:{nginx_port}/live\n"
                      f"  mirror:\n    type: live\n    pull: {{ upstreams: [rtmp://127.0.0.1:{nginx_port}/live], idle: 3s }}\n"))
server.start()
tmp = server.dir
src = make_media(os.path.join(tmp, "src.flv"), seconds=40)
source_tags = flv_tags(src)


def relays():
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/v1/relays", timeout=5) as r:
        return json.loads(r.read())


try:
    pub = publish_ffmpeg(src, server.url("live/cam"))
    check(wait_for(lambda: any(r["state"] == "live" for r in relays()["push"]), 10), "the push to nginx-rtmp is live")
    time.sleep(1.5)
    direct, mirrored = os.path.join(tmp, "nginx.flv"), os.path.join(tmp, "mirror.flv")
    players = [play(f"rtmp://127.0.0.1:{nginx_port}/live/cam", direct, 6), play(server.url("mirror/cam"), mirrored, 6)]
    for p in players:
        p.wait(timeout=40)
    check_same_packets("ffmpeg playing from nginx-rtmp (Sluice pushed it)", direct, source_tags, min_video=100, min_audio=100)
    check_same_packets("ffmpeg playing Sluice -> nginx -> Sluice (pull from nginx)", mirrored, source_tags,
                       min_video=100, min_audio=100)
    check(wait_for(lambda: relays()["pull"] == [], 10), "the pull from nginx ends when its player has gone (idle 3s)")

    nginx.kill()
    nginx.wait()
    check(wait_for(lambda: all(r["state"] != "live" for r in relays()["push"]), 5), "Sluice sees nginx go")
    time.sleep(1.5)
    nginx = start_nginx()
    check(wait_for(lambda: any(r["state"] == "live" for r in relays()["push"]), 8), "the push to the restarted nginx is live again")
    time.sleep(1)
    after = os.path.join(tmp, "nginx_after.flv")
    p = play(f"rtmp://127.0.0.1:{nginx_port}/live/cam", after, 4)
    p.wait(timeout=30)
    check_same_packets("player on nginx after its restart", after, source_tags, min_video=40, min_audio=40)

    # The end of the publication reaches nginx at once: Sluice's push connection sends deleteStream
    # (after FCUnpublish) before it goes. (nginx-rtmp itself does not tell its players.)
    errlog_path = os.path.join(ndir, "error.log")
    pushers = re.findall(r"\*(\d+) publish: name='cam'", open(errlog_path).read())
    check(pushers, "nginx logged Sluice's publish")
    last = pushers[-1]
    stop_proc(pub)
    t0 = time.time()
    check(wait_for(lambda: f"*{last} deleteStream" in open(errlog_path).read(), 3),
          f"nginx gets deleteStream from the push as soon as the publisher stops ({time.time() - t0:.1f} s)")
    check(server.alive(), "Sluice still runs")
    print("relay_nginx_test: OK")
finally:
    server.stop()
    stop_proc(nginx)
